"""Nextra: a Next.js config (`next.config.{js,mjs,ts,cjs,mts}`) that uses `nextra`, read by
pattern, never run.

Pages are in `content/` (Nextra 4) or `pages/` (Nextra 2 and 3), beside the config or under
`src/`; else the `app/` folder when it holds MDX. Reads `i18n.defaultLocale`: pages named
`page.<lang>.mdx` beside the default language's are translations (the shared rules). Next.js
makes no page of a name starting with `_` (`_app.mdx`, `_meta.json`, private folders).
"""

from __future__ import annotations

import re

from docshelf.workspace.sites import patterns
from docshelf.workspace.sites.layout import (
    Draft,
    Read,
    Tree,
    glob_under,
    join,
    parent,
    site_configs,
)

GENERATOR = "Nextra"
CONFIG_NAMES = tuple(f"next.config.{e}" for e in ("js", "mjs", "ts", "cjs", "mts"))
SUFFIXES = (".md", ".mdx")
# Where Nextra 4 (content/) and Nextra 2-3 (pages/) keep pages, beside the config or in src/.
PAGE_DIRS = ("content", "src/content", "pages", "src/pages")
# Nextra 4 without a content folder: page.mdx files in the app router's folders.
APP_DIRS = ("app", "src/app")
# Next.js routes no name starting with "_": _app.mdx, _meta files, private folders.
PRIVATE = "**/_*"


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, *CONFIG_NAMES):
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        text = read(config)
        if text is None or not re.search(r"\bnextra\b", text):
            continue  # another Next.js app, or one that cannot say it uses Nextra
        try:
            language = _language(text)
        except ValueError as e:
            language, draft.note = None, f"{config} could not be parsed ({e})"
        site = parent(config)
        folders = [p for d in PAGE_DIRS if (p := join(site, d)) and tree.docs_under(p)]
        folders = folders or [p for d in APP_DIRS if (p := join(site, d)) and tree.docs_under(p)]
        for root in folders:
            draft.roots.append(root)
            glob = glob_under(root, PRIVATE, gitignore=False)
            if glob:
                draft.not_read.append(glob)
        draft.language = language or draft.language
        drafts.append(draft)
    return drafts


def _language(text: str) -> str | None:
    code = patterns.uncommented(text)
    for _, block in patterns.blocks_after(code, r"(?<![\w$.])i18n"):
        found = patterns.value(block, "defaultLocale")
        if found:
            return found
    return None
