"""Docusaurus: `docusaurus.config.{js,mjs,cjs,ts,mts,cts}`, read by pattern, never run.

Reads each docs instance (the classic preset's `docs: {...}` and every
`@docusaurus/plugin-content-docs` entry): its `path`, relative to the config's folder (default
`docs`), and its `exclude` globs; the blog's `path` (default `blog`); `i18n.defaultLocale`. Not
current docs: `versioned_docs/` (and `<id>_versioned_docs/`), the blog, `i18n/`, and the `_`
files and folders Docusaurus renders as no page (partials).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docshelf.workspace.sites import patterns
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

GENERATOR = "Docusaurus"
CONFIG_NAMES = tuple(f"docusaurus.config.{e}" for e in ("js", "mjs", "cjs", "ts", "mts", "cts"))
# The pages the docs plugin renders.
SUFFIXES = (".md", ".mdx")
DEFAULT_DOCS_DIR = "docs"
DEFAULT_BLOG_DIR = "blog"
# Beside the config: translations, and copies of the docs per released version.
I18N_DIR = "i18n"
VERSIONED_DOCS = re.compile(r"(?:.+_)?versioned_docs")
# Docusaurus makes no page of a file or folder whose name starts with "_" (its default exclude).
PARTIALS = "**/_*"

_DOCS_PLUGIN = re.compile(
    r"""['"](?:@docusaurus/plugin-content-docs|content-docs)['"]\s*,\s*(?=\{)"""
)
_BLOG_PLUGIN = re.compile(
    r"""['"](?:@docusaurus/plugin-content-blog|content-blog)['"]\s*,\s*(?=\{)"""
)


@dataclass(slots=True)
class _Config:
    docs: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    blogs: list[str] = field(default_factory=list)
    language: str | None = None
    docs_off: bool = False


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, *CONFIG_NAMES):
        site = parent(config)
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        found = load(draft, read, _read) or _Config()
        for docs in found.docs or ([] if found.docs_off else [DEFAULT_DOCS_DIR]):
            root = join(site, docs)
            if root is None:
                continue
            draft.roots.append(root)
            for pattern in [PARTIALS, *found.exclude]:
                glob = glob_under(root, pattern, gitignore=False)
                if glob:
                    draft.not_read.append(glob)
        for blog in found.blogs or [DEFAULT_BLOG_DIR]:
            folder = join(site, blog)
            if folder:
                draft.not_read.append(folder)
        i18n = join(site, I18N_DIR)
        if i18n:
            draft.translations.append(i18n)
        site_dirs, _ = tree.children(site)
        prefix = "" if site == "." else site + "/"
        draft.not_read += [prefix + d for d in site_dirs if VERSIONED_DOCS.fullmatch(d)]
        draft.language = found.language or draft.language
        drafts.append(draft)
    return drafts


def _read(text: str) -> _Config:
    code = patterns.uncommented(text)
    theme = [(s, s + len(b)) for s, b in patterns.blocks_after(code, r"\bthemeConfig")]
    found = _Config()

    def own(start: int) -> bool:
        return not any(a <= start < b for a, b in theme)

    docs_blocks = [b for s, b in patterns.blocks_after(code, r"(?<![\w$.])docs") if own(s)]
    docs_blocks += [patterns.block(code, m.end()) for m in _DOCS_PLUGIN.finditer(code)]
    for block in docs_blocks:
        if block.startswith("{"):
            found.docs.append(patterns.value(block, "path") or DEFAULT_DOCS_DIR)
            found.exclude += patterns.strings(patterns.entry(block, "exclude") or "")
    found.docs_off = bool(re.search(r"(?<![\w$.])docs\s*:\s*false\b", code))
    blog_blocks = [b for s, b in patterns.blocks_after(code, r"(?<![\w$.])blog") if own(s)]
    blog_blocks += [patterns.block(code, m.end()) for m in _BLOG_PLUGIN.finditer(code)]
    for block in blog_blocks:
        if block.startswith("{"):
            found.blogs.append(patterns.value(block, "path") or DEFAULT_BLOG_DIR)
    for _, block in patterns.blocks_after(code, r"(?<![\w$.])i18n"):
        found.language = patterns.value(block, "defaultLocale") or found.language
    return found
