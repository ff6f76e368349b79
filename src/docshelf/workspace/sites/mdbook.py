"""mdBook: `book.toml`. Reads `[book] src` (default `src`, beside book.toml) and `language`;
`SUMMARY.md` in the source folder is the navigation, not a page of content.
"""

from __future__ import annotations

import tomllib
from typing import Any

from docshelf.workspace.sites.layout import Draft, Read, Tree, join, load, parent, site_configs

GENERATOR = "mdBook"
CONFIG_NAME = "book.toml"
# mdBook renders Markdown; other files in src are copied as they are (or included).
SUFFIXES = (".md",)
DEFAULT_SRC = "src"
SUMMARY = "SUMMARY.md"


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, CONFIG_NAME):
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        data: dict[str, Any] = load(draft, read, tomllib.loads) or {}
        book = data.get("book")
        book = book if isinstance(book, dict) else {}
        src = book.get("src")
        root = join(parent(config), src if isinstance(src, str) else DEFAULT_SRC)
        if root is None:
            continue
        draft.roots.append(root)
        draft.nav.append(f"{root}/{SUMMARY}" if root != "." else SUMMARY)
        if isinstance(book.get("language"), str):
            draft.language = book["language"]
        drafts.append(draft)
    return drafts
