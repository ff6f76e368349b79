"""Starlight: an Astro config (`astro.config.{mjs,js,ts,mts,cjs,cts}`) that uses the `starlight()`
integration, read by pattern, never run.

Pages are in `<srcDir>/content/docs` (Astro's srcDir, default `src`). Reads the integration's
`locales` (each key but `root` is a translation's folder) and `defaultLocale` (a folder, or
`root`: the pages at the top of content/docs), with the default locale's `lang`. An Astro config
that cannot be read is Starlight's when `src/content/docs` lies beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docshelf.workspace.sites import patterns
from docshelf.workspace.sites.layout import Draft, Read, Tree, join, load, parent, site_configs

GENERATOR = "Starlight"
CONFIG_NAMES = tuple(f"astro.config.{e}" for e in ("mjs", "js", "ts", "mts", "cjs", "cts"))
# Markdown, MDX and Markdoc pages.
SUFFIXES = (".md", ".mdx", ".mdoc")
DEFAULT_SRC_DIR = "src"
DOCS_DIR = "content/docs"
# The locale key of the pages at the top of content/docs.
ROOT_LOCALE = "root"


@dataclass(slots=True)
class _Config:
    starlight: bool = True
    src_dir: str = DEFAULT_SRC_DIR
    locales: list[str] = field(default_factory=list)
    default: str = ROOT_LOCALE
    language: str | None = None


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in site_configs(tree, *CONFIG_NAMES):
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        found = load(draft, read, _read)
        if found is not None and not found.starlight:
            continue  # an Astro site without Starlight
        docs = join(parent(config), f"{(found or _Config()).src_dir}/{DOCS_DIR}")
        if docs is None or (found is None and not tree.is_dir(docs)):
            continue
        found = found or _Config()
        if found.default != ROOT_LOCALE:
            docs_root = join(docs, found.default)
            draft.roots.append(docs_root or docs)
            draft.language = found.language or found.default
        else:
            draft.roots.append(docs)
            draft.language = found.language or draft.language
        for key in found.locales:
            folder = join(docs, key) if key not in (ROOT_LOCALE, found.default) else None
            if folder:
                draft.translations.append(folder)
        drafts.append(draft)
    return drafts


def _read(text: str) -> _Config:
    code = patterns.uncommented(text)
    call = re.search(r"\bstarlight\s*(?=\()", code)
    if not call:
        return _Config(starlight=False)
    found = _Config()
    src_dir = re.search(r"""\bsrcDir\s*:\s*(['"`])([^'"`]*)\1""", code)
    if src_dir:
        found.src_dir = src_dir.group(2)
    arguments = patterns.block(code, call.end())
    opening = arguments.find("{")
    options = patterns.block(arguments, opening) if opening >= 0 else "{}"
    locales = patterns.entry(options, "locales")
    if locales:
        found.locales = patterns.keys(locales)
    found.default = patterns.value(options, "defaultLocale") or ROOT_LOCALE
    default = patterns.entry(locales, found.default) if locales else None
    found.language = patterns.value(default, "lang") if default else None
    return found
