"""Antora: `antora.yml`, the component descriptor; its folder holds `modules/<name>/`.

Each module's `pages/` are pages. Its `partials/` and `examples/` are include targets (not current
docs; `partial$`/`example$` resource ids resolve in the module folder, the include base). The
descriptor's `nav` lists the navigation files (default: each module's `nav.adoc`).
"""

from __future__ import annotations

from docshelf.workspace.sites import yamlish
from docshelf.workspace.sites.layout import Draft, Read, Tree, join, load, parent, site_configs

GENERATOR = "Antora"
CONFIG_NAME = "antora.yml"
# Antora's pages are AsciiDoc.
SUFFIXES = (".adoc",)
MODULES_DIR = "modules"
PAGES_DIR = "pages"
# A module's folders of text that pages include, never pages of their own.
INCLUDE_ONLY_DIRS = ("partials", "examples")
DEFAULT_NAV = "nav.adoc"


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, CONFIG_NAME):
        component = parent(config)
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        data = load(draft, read, yamlish.parse)
        modules = join(component, MODULES_DIR) or MODULES_DIR
        names, _ = tree.children(modules) if tree.is_dir(modules) else ([], [])
        for name in names:
            module = f"{modules}/{name}"
            draft.roots.append(f"{module}/{PAGES_DIR}")
            draft.include_bases.append(module)
            draft.not_read += [f"{module}/{d}" for d in INCLUDE_ONLY_DIRS]
        listed = [join(component, n) for n in yamlish.texts(yamlish.get(data, "nav"))]
        draft.nav = [n for n in listed if n] or [f"{modules}/{n}/{DEFAULT_NAV}" for n in names]
        drafts.append(draft)
    return drafts
