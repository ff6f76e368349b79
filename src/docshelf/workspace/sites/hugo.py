"""Hugo: `hugo.{toml,yaml,yml,json}`, `config.{...}` beside a Hugo layout, or the same names in
`config/_default/`.

Reads `contentDir` (default `content`), `defaultContentLanguage` (default `en`), the languages'
own `contentDir`s, and `module.mounts` whose target is the content (a mount for another language
is a translation). Hugo resolves include shortcodes from the content folder, so it is the include
base. A section whose `_index.md`/`index.md` front matter makes it headless (`headless: true`,
or a cascade with `render: never`) is include-only: only the folders that look it (a name
starting with `_`, or a shared-content name) are read to find out, a few at most.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from docshelf.workspace.sites import yamlish
from docshelf.workspace.sites.layout import Draft, Read, Tree, join, load, parent, vendored
from docshelf.workspace.sites.locales import same_language

GENERATOR = "Hugo"
# The content formats Hugo renders (AsciiDoc and reStructuredText through external helpers).
SUFFIXES = (".md", ".markdown", ".mdown", ".adoc", ".asciidoc", ".rst", ".org")
EXTENSIONS = ("toml", "yaml", "yml", "json")
# `config.*` is any tool's name: it is Hugo's only beside one of Hugo's own folders.
HUGO_DIRS = ("content", "archetypes", "layouts", "themes")
DEFAULT_CONTENT_DIR = "content"
# New-content templates: Markdown that is no page.
ARCHETYPES_DIR = "archetypes"
# Section folders that may be headless bundles of shared text, and how many index files (at
# most) are read per site to tell: each is a small file, read only to decide this.
SHARED_NAMES = frozenset({"common", "shared", "snippets", "partials", "includes", "fragments"})
MAX_HEADLESS_READS = 8
INDEX_FILES = ("_index.md", "index.md")
_FRONT_MATTER = re.compile(r"\A(?:---\n(.*?)\n---|\+\+\+\n(.*?)\n\+\+\+|(\{.*?\n\}))", re.DOTALL)
_HEADLESS = re.compile(r"""\bheadless"?\s*[:=]\s*true\b|\brender"?\s*[:=]\s*["']?never\b""")


def detect(tree: Tree, read: Read) -> list[Draft]:
    drafts = []
    for config, site in _configs(tree):
        draft = Draft(GENERATOR, config, [], SUFFIXES)
        data = _lower(load(draft, read, _parser(config)) or {})
        if not isinstance(data, dict):
            data = {}
        language = str(data.get("defaultcontentlanguage") or draft.language)
        draft.language = language
        for folder, lang in _content_dirs(data, language):
            path = join(site, folder)
            if path is None:
                continue
            if lang is None or same_language(lang, language):
                draft.roots.append(path)
            else:
                draft.translations.append(path)
        draft.include_bases = list(draft.roots)
        archetypes = join(site, ARCHETYPES_DIR)
        if archetypes:
            draft.not_read.append(archetypes)
        draft.not_read += _headless(tree, read, draft.roots)
        drafts.append(draft)
    return drafts


def _configs(tree: Tree) -> list[tuple[str, str]]:
    """Each Hugo config with its site's folder (above `config/_default/` for one in there)."""
    found = []
    for name in ("hugo", "config"):
        for path in tree.named(*(f"{name}.{e}" for e in EXTENSIONS)):
            folder = parent(path)
            default = folder == "config/_default" or folder.endswith("/config/_default")
            site = parent(parent(folder)) if default else folder
            if vendored(site):
                continue
            prefix = "" if site == "." else site + "/"
            if name == "hugo" or any(tree.is_dir(prefix + d) for d in HUGO_DIRS):
                found.append((path, site))
    return found


def _parser(config: str) -> Callable[[str], Any]:
    if config.endswith(".toml"):
        return tomllib.loads
    if config.endswith(".json"):
        return json.loads
    return yamlish.parse


def _lower(data: Any) -> Any:
    """Hugo's keys are case-insensitive: contentDir and contentdir are one key."""
    if isinstance(data, dict):
        return {str(k).lower(): _lower(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_lower(v) for v in data]
    return data


def _content_dirs(data: dict[str, Any], language: str) -> list[tuple[str, str | None]]:
    """The content folders, each with its language (None: every language)."""
    module = data.get("module")
    mounts = module.get("mounts") if isinstance(module, dict) else None
    found: list[tuple[str, str | None]] = []
    for mount in mounts if isinstance(mounts, list) else []:
        if not isinstance(mount, dict) or not isinstance(mount.get("source"), str):
            continue
        target = str(mount.get("target", "")).strip("/")
        if target != "content" and not target.startswith("content/"):
            continue
        sites = mount.get("sites")
        matrix = sites.get("matrix") if isinstance(sites, dict) else None
        languages = matrix.get("languages") if isinstance(matrix, dict) else None
        if mount.get("lang"):
            languages = [mount["lang"]]
        if isinstance(languages, list) and languages:
            found += [(mount["source"], str(lang)) for lang in languages]
        else:
            found.append((mount["source"], None))
    if found:
        return found
    languages = data.get("languages")
    for lang, settings in languages.items() if isinstance(languages, dict) else []:
        if isinstance(settings, dict) and isinstance(settings.get("contentdir"), str):
            found.append((settings["contentdir"], str(lang)))
    if not any(lang is None or same_language(lang, language) for _, lang in found):
        found.append((str(data.get("contentdir") or DEFAULT_CONTENT_DIR), None))
    return found


def _headless(tree: Tree, read: Read, roots: list[str]) -> list[str]:
    found = []
    reads = 0
    for root in roots:
        dirs, _ = tree.children(root)
        prefix = "" if root == "." else root + "/"
        for name in dirs:
            if not (name.startswith("_") or name.lower() in SHARED_NAMES):
                continue
            indexes = [f"{prefix}{name}/{i}" for i in INDEX_FILES]
            index = next((i for i in indexes if tree.is_file(i)), None)
            if index is None or reads >= MAX_HEADLESS_READS:
                continue
            reads += 1
            text = read(index)
            match = _FRONT_MATTER.match(text.replace("\r\n", "\n")) if text else None
            if match and _HEADLESS.search(next(g for g in match.groups() if g is not None)):
                found.append(prefix + name)
    return found
