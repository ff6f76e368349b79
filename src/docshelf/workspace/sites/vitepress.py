"""VitePress: `.vitepress/config.{js,mjs,ts,mts,cjs,cts}`, read by pattern, never run. The
project root is the folder holding `.vitepress/`.

Reads `srcDir` (relative to the project root, default the root itself), `srcExclude` (globs
relative to srcDir), `locales` (each key but `root` is a translation's folder; the root locale's
`lang` is the default language) and `rewrites` that serve a folder at the site's root
(`'en/:rest*': ':rest*'`: that folder holds the current docs). `public/` holds static assets.
`@/` in an include names srcDir, the include base.
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
    vendored,
)

GENERATOR = "VitePress"
CONFIG_NAMES = tuple(f"config.{e}" for e in ("js", "mjs", "ts", "mts", "cjs", "cts"))
CONFIG_DIR = ".vitepress"
# VitePress makes pages of Markdown only.
SUFFIXES = (".md",)
# Static assets, copied to the site as they are.
PUBLIC_DIR = "public"
# The locale key of the pages at the top of srcDir.
ROOT_LOCALE = "root"
# A rewrite that serves a folder's pages at the site's root: 'en/:rest*' -> ':rest*'.
_FOLDER_TO_ROOT = re.compile(r"([^:*()/]+)/:(\w+)\*?")


@dataclass(slots=True)
class _Config:
    src_dir: str = "."
    src_exclude: list[str] = field(default_factory=list)
    locales: list[str] = field(default_factory=list)
    language: str | None = None
    root_folder: str | None = None


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config in tree.named(*CONFIG_NAMES):
        folder = parent(config)
        if folder.rsplit("/", 1)[-1] != CONFIG_DIR:
            continue
        project = parent(folder)
        if vendored(project):
            continue
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        found = load(draft, read, _read) or _Config()
        src = join(project, found.src_dir)
        if src is None:
            continue
        root = join(src, found.root_folder) if found.root_folder else src
        draft.roots.append(root or src)
        draft.include_bases.append(src)
        for pattern in found.src_exclude:
            glob = glob_under(src, pattern, gitignore=False)
            if glob:
                draft.not_read.append(glob)
        draft.translations += [p for key in found.locales if (p := join(src, key))]
        draft.not_read.append(join(src, PUBLIC_DIR) or PUBLIC_DIR)
        draft.language = found.language or draft.language
        drafts.append(draft)
    return drafts


def _read(text: str) -> _Config:
    code = patterns.uncommented(text)
    found = _Config()
    src_dir = re.search(r"""\bsrcDir\s*:\s*(['"`])([^'"`]*)\1""", code)
    if src_dir:
        found.src_dir = src_dir.group(2) or "."
    for _, block in patterns.blocks_after(code, r"\bsrcExclude"):
        found.src_exclude += patterns.strings(block)
    lang = re.search(r"""(?:^|[{,\s])lang\s*:\s*(['"])([\w-]+)\1""", code)
    for _, block in patterns.blocks_after(code, r"\blocales"):
        if not block.startswith("{"):
            continue
        keys = patterns.keys(block)
        found.locales = [k for k in keys if k != ROOT_LOCALE]
        root = patterns.entry(block, ROOT_LOCALE)
        found.language = patterns.value(root, "lang") if root else None
        break
    if found.language is None and lang:
        found.language = lang.group(2)
    for _, block in patterns.blocks_after(code, r"\brewrites"):
        pairs = re.findall(r"""(['"])(.*?)\1\s*:\s*(['"])(.*?)\3""", block)
        for _, source, _, target in pairs:
            match = _FOLDER_TO_ROOT.fullmatch(source)
            if match and target in (f":{match.group(2)}*", f":{match.group(2)}"):
                found.root_folder = match.group(1)
        break
    return found
