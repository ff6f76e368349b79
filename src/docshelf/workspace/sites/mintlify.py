"""Mintlify: `docs.json` (or the older `mint.json`); its folder holds the pages.

`snippets/` holds the reusable text pages import (`/snippets/...` from the site's folder, the
include base). Reads the navigation's languages: the default one (marked `default`, else the
first) is the site's language, the others' folders are translations. `docs.json` is a common
name: it is Mintlify's only when it has a `navigation` (or names Mintlify's schema).
"""

from __future__ import annotations

import json
from typing import Any

from docshelf.workspace.sites.layout import Draft, Read, Tree, join, load, parent, site_configs

GENERATOR = "Mintlify"
CONFIG_NAMES = ("docs.json", "mint.json")
# The pages Mintlify renders.
SUFFIXES = (".mdx", ".md")
# Mintlify's folder of reusable text that pages import: never a page of its own.
SNIPPETS_DIR = "snippets"


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, *CONFIG_NAMES):
        site = parent(config)
        draft = Draft(GENERATOR, config, [site], SUFFIXES)
        data = load(draft, read, json.loads)
        if config.endswith("docs.json") and not _is_mintlify(data):
            continue  # another tool's docs.json, or one that cannot say it is Mintlify's
        languages = _languages(data)
        if languages:
            draft.language = languages[0]
            draft.translations += [p for lang in languages[1:] if (p := join(site, lang))]
        snippets = join(site, SNIPPETS_DIR)
        if snippets:
            draft.not_read.append(snippets)
        draft.include_bases.append(site)
        drafts.append(draft)
    return drafts


def _is_mintlify(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    return "navigation" in data or "mintlify" in str(data.get("$schema", ""))


def _languages(data: Any) -> list[str]:
    """The navigation's language codes, the default first."""
    navigation = data.get("navigation") if isinstance(data, dict) else None
    entries = navigation.get("languages") if isinstance(navigation, dict) else None
    codes = [
        (bool(e.get("default")), str(e["language"]))
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict) and isinstance(e.get("language"), str)
    ]
    return [code for _, code in sorted(codes, key=lambda c: not c[0])]
