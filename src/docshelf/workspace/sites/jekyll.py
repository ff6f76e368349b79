"""Jekyll: `_config.yml`. Its folder (or its `source`) is the site, its pages at any depth.

Jekyll renders no folder whose name starts with `_` but its collections (`collections:`, kept
under `collections_dir`); `_posts` and `_drafts` are the blog, `_includes` is where
`{% include %}` resolves (the include base). Reads `exclude` (paths and globs relative to the
site, beside Jekyll's own defaults) and `lang`.
"""

from __future__ import annotations

from docshelf.workspace.sites import yamlish
from docshelf.workspace.sites.layout import (
    Draft,
    Read,
    Tree,
    glob_under,
    join,
    load,
    parent,
    site_configs,
)

GENERATOR = "Jekyll"
CONFIG_NAME = "_config.yml"
SUFFIXES = (".md", ".markdown", ".mkdown", ".mkd")
INCLUDES_DIR = "_includes"
# Collections Jekyll always has; posts are the blog, which the shared rules leave out.
BUILT_IN_COLLECTIONS = ("posts", "drafts")
# What Jekyll leaves out of every site, whatever `exclude` says (its defaults).
DEFAULT_EXCLUDE = (
    "node_modules",
    "vendor/bundle/",
    "vendor/cache/",
    "vendor/gems/",
    "vendor/ruby/",
)


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, CONFIG_NAME):
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        data = load(draft, read, yamlish.parse)
        site = join(parent(config), yamlish.text(yamlish.get(data, "source")) or ".")
        if site is None:
            continue
        draft.roots.append(site)
        collections = yamlish.get(data, "collections")
        names = list(collections) if isinstance(collections, dict) else yamlish.texts(collections)
        kept = {f"_{n}" for n in [*names, *BUILT_IN_COLLECTIONS]}
        folders = [site]
        collections_dir = yamlish.text(yamlish.get(data, "collections_dir"))
        if collections_dir and (inner := join(site, collections_dir)):
            folders.append(inner)
        for folder in folders:
            dirs, _ = tree.children(folder) if tree.is_dir(folder) else ([], [])
            prefix = "" if folder == "." else folder + "/"
            draft.not_read += [prefix + d for d in dirs if d.startswith("_") and d not in kept]
        for pattern in DEFAULT_EXCLUDE:
            draft.exclude.append(glob_under(site, pattern, gitignore=False) or pattern)
        for pattern in yamlish.texts(yamlish.get(data, "exclude")):
            found = glob_under(site, pattern, gitignore=False)
            if found:
                draft.not_read.append(found)
        includes = join(site, INCLUDES_DIR)
        if includes:
            draft.include_bases.append(includes)
        draft.language = yamlish.text(yamlish.get(data, "lang")) or draft.language
        drafts.append(draft)
    return drafts
