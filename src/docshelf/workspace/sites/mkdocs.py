"""MkDocs: `mkdocs.yml` (or `.yaml`), wherever it is in the tree.

Reads `docs_dir` (default `docs` beside the config), `exclude_docs` (gitignore lines, relative to
docs_dir), `INHERIT` (one level), the `pymdownx.snippets` extension's `base_path` (where
`--8<--` includes resolve: include-only folders outside docs_dir are not current docs), and the
default language (the i18n plugin's default locale, else `theme.language`).
"""

from __future__ import annotations

from docshelf.workspace.sites import yamlish
from docshelf.workspace.sites.layout import (
    Draft,
    Read,
    Tree,
    glob_under,
    inside,
    join,
    load,
    parent,
    site_configs,
)

GENERATOR = "MkDocs"
CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
# The pages MkDocs renders; any other file under docs_dir is copied to the site as it is.
SUFFIXES = (".md", ".markdown")
DEFAULT_DOCS_DIR = "docs"
# Snippets resolve from the folder mkdocs runs in (the config's, usually) when no base_path is set.
DEFAULT_SNIPPETS_BASE = "."
# MkDocs leaves a docs_dir's `templates/` folder out of every build (its default exclude_docs).
TEMPLATES_DIR = "templates"


def detect(tree: Tree, read: Read) -> list[Draft]:
    return [_draft(tree, read, config) for config in site_configs(tree, *CONFIG_NAMES)]


def _draft(tree: Tree, read: Read, config: str) -> Draft:
    site = parent(config)
    draft = Draft(GENERATOR, config, [], SUFFIXES)
    data = load(draft, read, _mapping)
    if isinstance(data, dict) and "docs_dir" not in data and isinstance(data.get("INHERIT"), str):
        base = join(site, str(data["INHERIT"]))
        text = read(base) if base else None
        try:
            inherited = _mapping(text) if text is not None else {}
        except ValueError:
            inherited = {}
        data = {**inherited, **data}
    docs_dir = yamlish.text(yamlish.get(data, "docs_dir")) or DEFAULT_DOCS_DIR
    root = join(site, docs_dir)
    if root is None:
        draft.note = f"{config}: docs_dir {docs_dir!r} leaves the repository"
        return draft
    draft.roots.append(root)
    for line in (yamlish.text(yamlish.get(data, "exclude_docs")) or "").splitlines():
        pattern = glob_under(root, line, gitignore=True)
        if pattern:
            draft.not_read.append(pattern)
    templates = join(root, TEMPLATES_DIR)
    if templates and tree.is_dir(templates):
        draft.not_read.append(templates)
    for base in _snippet_bases(data):
        for folder in (join(".", base), join(site, base)):
            if folder is None or not tree.is_dir(folder) or folder in draft.include_bases:
                continue
            draft.include_bases.append(folder)
            if not inside(root, folder):  # a base holding the docs is no include-only folder
                draft.not_read.append(folder)
    draft.language = _language(data) or draft.language
    return draft


def _mapping(text: str) -> dict[str, yamlish.Data]:
    data = yamlish.parse(text)
    if not isinstance(data, dict):
        raise ValueError("not a mapping of settings")
    return data


def _extension(data: yamlish.Data, name: str) -> yamlish.Data:
    extensions = yamlish.get(data, "markdown_extensions")
    if isinstance(extensions, dict):
        return extensions.get(name, {}) if name in extensions else None
    for item in extensions if isinstance(extensions, list) else []:
        if item == name:
            return {}
        if isinstance(item, dict) and name in item:
            return item[name] or {}
    return None


def _snippet_bases(data: yamlish.Data) -> list[str]:
    snippets = _extension(data, "pymdownx.snippets")
    if snippets is None:
        return []
    return yamlish.texts(yamlish.get(snippets, "base_path")) or [DEFAULT_SNIPPETS_BASE]


def _language(data: yamlish.Data) -> str | None:
    plugins = yamlish.get(data, "plugins")
    for plugin in plugins if isinstance(plugins, list) else [plugins]:
        i18n = yamlish.get(plugin, "i18n")
        languages = yamlish.get(i18n, "languages")
        for language in languages if isinstance(languages, list) else []:
            if isinstance(language, dict) and language.get("default") == "true":
                return yamlish.text(language.get("locale"))
        found = yamlish.text(yamlish.get(i18n, "default_language"))
        if found:
            return found
    return yamlish.text(yamlish.get(data, "theme", "language"))
