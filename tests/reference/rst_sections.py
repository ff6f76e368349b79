"""The reference for the reStructuredText chunker: docutils' own parser, run over files given on
the command line, printing one JSON object: {"files": [{"path", "titles", "error"}...]}, where
`titles` are the titles of the sections that hold content of their own, in document order.

Plain docutils does not know Sphinx's directives and roles (code-block, versionadded, :func:...).
Every directive is read by one generic directive here: its arguments (unless they only name a
language, a file or a condition) and its content parsed as nested body elements are the content,
never a section (nested parses do not allow titles, as in docutils' own body directives); a few
that render nothing by themselves (module, highlight, include...) give nothing. Unknown roles
render as Sphinx shows them: the explicit title of `title <target>`, else the target without a
leading `!`, and only its last dotted part after a leading `~`.

A lone top section stays a section (doctitle_xform off): the document title counts when it holds
content. A section holds content when a child other than its title and subsections, targets,
comments, substitution definitions, transitions and messages has text, or is an image.

Run with the project's virtual environment (docutils is in the dev extras):
    .venv/bin/python tests/reference/rst_sections.py FILE...
"""

from __future__ import annotations

import json
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import docutils.core
from docutils import nodes, utils
from docutils.parsers.rst import Directive, directives, roles

# Worker processes at most: docutils takes most of a second per thousand lines.
MAX_WORKERS = 8
# Directives whose arguments name a language, a module, a file or a condition: not content.
NAME_ARGUMENTS = frozenset(
    {"code-block", "sourcecode", "code", "only", "highlight", "literalinclude", "tab-set"}
)
# Directives that render nothing of their own where they stand.
SILENT = frozenset(
    {
        "module",
        "currentmodule",
        "py:module",
        "py:currentmodule",
        "automodule",
        "highlight",
        "default-role",
        "default-domain",
        "role",
        "index",
        "include",
        "meta",
        "tabularcolumns",
        "sectionauthor",
        "moduleauthor",
        "codeauthor",
        "contents",
        "sectnum",
        "title",
        "towncrier-draft-entries",
    }
)
# Code directives: their content is a literal block, not markup.
CODE = frozenset({"code-block", "sourcecode", "code", "literalinclude", "parsed-literal"})
# Substitution-only directives docutils handles well itself.
KEPT = frozenset({"replace", "unicode", "date"})
NOT_CONTENT = (
    nodes.title,
    nodes.subtitle,
    nodes.section,
    nodes.target,
    nodes.comment,
    nodes.substitution_definition,
    nodes.system_message,
    nodes.pending,
    nodes.transition,
)
_EXPLICIT = re.compile(r"(.*?)\s*<([^<>]*)>\s*$", re.DOTALL)


class AnyOptions(dict[str, Any]):
    """Accepts every option name (docutils reads only truthy specs, hence the one entry)."""

    def __init__(self) -> None:
        super().__init__(class_=directives.unchanged)

    def __getitem__(self, key: str) -> Any:
        return directives.unchanged

    def __contains__(self, key: object) -> bool:
        return True


class GenericDirective(Directive):
    required_arguments = 0
    optional_arguments = 100
    final_argument_whitespace = True
    option_spec = AnyOptions()
    has_content = True

    def run(self) -> list[nodes.Node]:
        name = self.name.lower()
        if name in SILENT:
            return []
        node = nodes.container()
        if self.arguments and name not in NAME_ARGUMENTS:
            node += nodes.paragraph(text=" ".join(self.arguments))
        if self.content:
            if name in CODE:
                node += nodes.literal_block(text="\n".join(self.content))
            else:
                self.state.nested_parse(self.content, self.content_offset, node)
        return [node] if node.children else []


def generic_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    text = utils.unescape(text)
    explicit = _EXPLICIT.match(text)
    if explicit and explicit.group(1).strip():
        shown = explicit.group(1)
    else:
        shown = (explicit.group(2) if explicit else text).strip().lstrip("!")
        if shown.startswith("~"):
            shown = shown[1:].rsplit(".", 1)[-1]
    return [nodes.literal(rawtext, shown)], []


_standard_role = roles.role
_standard_directive = directives.directive


def role(name: str, language: Any, lineno: int, reporter: Any) -> tuple[Any, list[Any]]:
    found, messages = _standard_role(name, language, lineno, reporter)
    return (found, messages) if found is not None else (generic_role, [])


def directive(name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
    if name.lower() in KEPT:
        return _standard_directive(name, language, document)
    return GenericDirective, []


roles.role = role
directives.directive = directive

SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "line_length_limit": 1 << 30,
    "input_encoding": "utf-8",
}


def holds_content(section: nodes.section) -> bool:
    for child in section.children:
        if isinstance(child, NOT_CONTENT):
            continue
        if isinstance(child, (nodes.image, nodes.figure)) or child.astext().strip():
            return True
    return False


def titles(path: str) -> list[str]:
    with open(path, encoding="utf-8-sig") as f:
        text = f.read()
    doctree = docutils.core.publish_doctree(text, source_path=path, settings_overrides=SETTINGS)
    found = []
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        if title is not None and holds_content(section):
            found.append(title.astext())
    return found


def read(path: str) -> dict[str, Any]:
    try:
        return {"path": path, "titles": titles(path), "error": None}
    except Exception as e:  # a file docutils cannot read is reported, not dropped
        return {"path": path, "titles": [], "error": f"{type(e).__name__}: {e}"}


def main(paths: list[str]) -> None:
    # The largest files first, spread over the cores: a long changelog takes seconds alone.
    biggest_first = sorted(paths, key=lambda p: -os.path.getsize(p))
    with ProcessPoolExecutor(max_workers=min(os.cpu_count() or 1, MAX_WORKERS)) as pool:
        found = dict(zip(biggest_first, pool.map(read, biggest_first), strict=True))
    json.dump({"files": [found[p] for p in paths]}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
