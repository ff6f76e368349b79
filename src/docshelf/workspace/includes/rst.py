"""Sphinx's include and literalinclude directives in reStructuredText (MyST's fenced form is read
by markdown.py and resolved here).

Constraints:
- A directive is found only where docutils parses one: never in a literal block, a comment or
  the body of a directive whose body is code or data.
- A relative target resolves against the page being built (`document`), not the included file;
  a leading '/' against the site's source folder; `<name>` is a docutils standard file.
- literalinclude, and include with `:literal:` or `:code:`, take the target as code.
"""

from __future__ import annotations

import re

from docshelf.workspace.includes.model import NO_SOURCE_DIR, STANDARD_FILE, Include, Syntax
from docshelf.workspace.includes.paths import Resolved, Site, folder_of, join

# The syntaxes a reStructuredText file may hold, when the caller does not name its generator's.
SYNTAXES: tuple[Syntax, ...] = ("sphinx-include", "sphinx-literalinclude")

# An explicit markup line: `.. name:: argument`. A directive name may hold single colons
# (`py:function`); docutils allows one space before the `::`.
_RST_DIRECTIVE = re.compile(
    r"([ \t]*+)\.\.[ \t]++([A-Za-z0-9](?:[\w+.\-]|:(?!:))*+) ?::(?:[ \t]++(.*+)|[ \t]*+)"
)
_RST_EXPLICIT = re.compile(r"([ \t]*+)\.\.(?:[ \t]|$)")
# Directives whose body is code or data, never parsed as reStructuredText.
_RST_LITERAL_DIRECTIVES = frozenset(
    {
        "code",
        "code-block",
        "sourcecode",
        "literalinclude",
        "parsed-literal",
        "raw",
        "math",
        "csv-table",
        "doctest",
        "testcode",
        "testoutput",
        "testsetup",
        "testcleanup",
        "ipython",
        "jupyter-execute",
        "prompt",
        "productionlist",
        "graphviz",
        "digraph",
        "graph",
        "mermaid",
        "uml",
        "plantuml",
    }
)


def scan_rst(
    path: str, lines: list[str], on: frozenset[Syntax], site: Site, document: str | None
) -> list[Include]:
    found: list[Include] = []
    folder = folder_of(document if document is not None else path)
    skip: int | None = None  # lines indented deeper than this are a literal or comment body
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        number = i
        if not line.strip():
            continue
        indent = _indent(line)
        if skip is not None:
            if indent > skip:
                continue
            skip = None
        m = _RST_DIRECTIVE.fullmatch(line)
        if m is not None:
            name = m.group(2).lower()
            syntax: Syntax | None = None
            if name == "include":
                syntax = "sphinx-include"
            elif name == "literalinclude":
                syntax = "sphinx-literalinclude"
            if syntax is not None and syntax in on:
                written = (m.group(3) or "").strip()
                options: list[str] = []
                while i < len(lines) and lines[i].strip() and _indent(lines[i]) > indent:
                    body = lines[i].strip()
                    if body.startswith(":"):
                        options.append(body)
                    elif not written:  # the argument on the next line
                        written = body
                    i += 1
                include = rst_include(number, i, syntax, written, options, folder, site)
                found.append(include)
            if name in _RST_LITERAL_DIRECTIVES:
                skip = indent
            continue
        explicit = _RST_EXPLICIT.match(line)
        if explicit is not None:
            rest = line[explicit.end() :].lstrip()
            if not rest.startswith(("_", "[", "|")):  # a comment: its body is not parsed
                bare = not rest
                if not bare or (i < len(lines) and lines[i].strip()):
                    skip = indent
            continue
        body = line.strip()
        # The paragraph's literal block follows (a line of colons only is a title's adornment).
        if body.endswith("::") and (body != ":" * len(body) or body == "::"):
            skip = indent
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _sphinx_path(written: str, folder: str, site: Site) -> Resolved:
    if written.startswith("<") and written.endswith(">"):
        return Resolved(None, STANDARD_FILE)
    if written.startswith("/") and not written.startswith("//"):
        if not site.bases:
            return Resolved(None, NO_SOURCE_DIR)
        return join(site.bases[0], written.lstrip("/"))
    return join(folder, written)


def rst_include(
    line: int,
    end_line: int,
    syntax: Syntax,
    written: str,
    options: list[str],
    folder: str,
    site: Site,
) -> Include:
    """A Sphinx include (reST directive or MyST fence) with its options, resolved from `folder`."""
    names = {o.split(":")[1] for o in options if o.count(":") >= 2}
    as_code = syntax == "sphinx-literalinclude" or bool(names & {"literal", "code"})
    resolved = _sphinx_path(written, folder, site)
    return Include(
        line,
        end_line,
        syntax,
        written,
        resolved.target,
        resolved.problem,
        as_code,
        " ".join(options),
    )
