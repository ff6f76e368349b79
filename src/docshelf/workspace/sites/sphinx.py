"""Sphinx: `conf.py`, read by pattern as text (never imported, never run), and the
`sphinx.configuration` that `.readthedocs.yaml` names.

The folder of conf.py is the source. Reads `exclude_patterns` (relative to the source),
`templates_path`, `locale_dirs` (translations' message catalogs; default `locale`),
`source_suffix` (what Sphinx renders: `.rst` by default, `.md` with MyST) and `language`.
A conf.py is taken for Sphinx's when Read the Docs names it, when its text reads like one, or,
when it cannot be read, when a root document (index.rst ...) lies beside it.
"""

from __future__ import annotations

import re

from docshelf.workspace.sites import patterns, yamlish
from docshelf.workspace.sites.layout import (
    Draft,
    Read,
    Tree,
    glob_under,
    join,
    parent,
    site_configs,
)

GENERATOR = "Sphinx"
CONFIG_NAME = "conf.py"
READTHEDOCS = (".readthedocs.yaml", ".readthedocs.yml")
DEFAULT_SUFFIXES = (".rst",)
# MyST (or the older recommonmark) makes Markdown files pages too.
MARKDOWN_EXTENSIONS = ("myst_parser", "myst_nb", "recommonmark")
DEFAULT_LOCALE_DIRS = ("locale",)
DEFAULT_TEMPLATES = ("_templates",)
# What `sphinx-quickstart` and real conf.py files say, one of which a Sphinx conf.py holds.
_SPHINX_WORDS = re.compile(
    r"\b(?:sphinx|extensions|html_theme|master_doc|root_doc|exclude_patterns|source_suffix)\b"
)
# The documents Sphinx starts from, when an unreadable conf.py needs company to be Sphinx's.
ROOT_DOCUMENTS = ("index.rst", "index.md", "contents.rst", "index.txt")


def detect(tree: Tree, read: Read) -> list[Draft]:
    named = _readthedocs_confs(tree, read)
    drafts = []
    for config in site_configs(tree, CONFIG_NAME):
        source = parent(config)
        text = read(config)
        if text is None:
            prefix = "" if source == "." else source + "/"
            if config not in named and not any(tree.is_file(prefix + d) for d in ROOT_DOCUMENTS):
                continue
            drafts.append(_fallback(config, "could not be read"))
            continue
        code = patterns.uncommented(text, python=True)
        if config not in named and not _SPHINX_WORDS.search(code):
            continue
        try:
            drafts.append(_draft(config, source, code))
        except ValueError as e:
            drafts.append(_fallback(config, f"could not be parsed ({e})"))
    return drafts


def _fallback(config: str, why: str) -> Draft:
    # Not knowing source_suffix, Markdown pages are kept: MyST is common.
    draft = Draft(GENERATOR, config, [parent(config)], (*DEFAULT_SUFFIXES, ".md"))
    draft.note = f"{config} {why}"
    return draft


def _draft(config: str, source: str, code: str) -> Draft:
    suffixes = [s for s in _assigned(code, "source_suffix") if s.startswith(".")]
    suffixes = suffixes or list(DEFAULT_SUFFIXES)
    if any(name in code for name in MARKDOWN_EXTENSIONS):
        suffixes.append(".md")
    draft = Draft(GENERATOR, config, [source], tuple(suffixes))
    for pattern in _assigned(code, "exclude_patterns"):
        found = glob_under(source, pattern, gitignore=False)
        if found:
            draft.not_read.append(found)
    for name in _assigned(code, "locale_dirs") or list(DEFAULT_LOCALE_DIRS):
        folder = join(source, name)
        if folder:
            draft.translations.append(folder)
    for name in _assigned(code, "templates_path") or list(DEFAULT_TEMPLATES):
        folder = join(source, name)
        if folder:
            draft.not_read.append(folder)
    language = re.search(r"""^language\s*=\s*(['"])([\w-]+)\1""", code, re.MULTILINE)
    if language:
        draft.language = language.group(2)
    return draft


def _assigned(code: str, name: str) -> list[str]:
    """The string literals given to `name` by assignment, `+=`, `.append()` or `.extend()`."""
    found = []
    for match in re.finditer(rf"^\s*{name}\s*(?:\+?=)\s*", code, re.MULTILINE):
        rest = code[match.end() :]
        head = re.match(r"""[rRbBuU]?('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""", rest)
        if head:
            found.append(patterns.literal(head.group(1)))
        elif rest[:1] in "[({":
            found += patterns.strings(patterns.block(code, match.end()))
    for match in re.finditer(rf"\b{name}\s*\.\s*(?:append|extend)\s*(?=\()", code):
        found += patterns.strings(patterns.block(code, match.end()))
    return found


def _readthedocs_confs(tree: Tree, read: Read) -> set[str]:
    """The conf.py files that Read the Docs configs name (paths from the top of the tree)."""
    named = set()
    for config in site_configs(tree, *READTHEDOCS):
        text = read(config)
        try:
            data = yamlish.parse(text) if text is not None else None
        except ValueError:
            continue
        path = yamlish.text(yamlish.get(data, "sphinx", "configuration"))
        if path and (resolved := join(".", path)):
            named.add(resolved)
    return named
