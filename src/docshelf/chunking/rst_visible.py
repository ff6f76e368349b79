"""The visible text of a reStructuredText file (rst.py): what the rendered page shows on each of
its lines, where they hold markup.

Constraints:
- The visible lines are the file's own lines one for one, so line numbers stay the file's. A line
  of markup only becomes an empty line: comments (`.. note to self` and their indented block),
  hyperlink targets (`.. _label:`), substitution definitions, the field list at the top of the
  document (`:orphan:`), directive lines and their option lines (`:maxdepth: 2`), and the bodies
  of directives that render no prose (`index`, `raw`, `meta`). The words a directive line
  carries stay on it: an admonition's title or label ("Note: ..."), a version note as Sphinx
  renders it ("Added in version 5.1."), a reference entry's name. Directive bodies stay; a
  toctree's entries show as the list of links Sphinx renders (a `Title <doc>` entry as its
  title, none for a `:hidden:` toctree).
- Code stays code: a `code-block` (or `code`, `sourcecode`) and its block become a Markdown fence
  with its language on the same lines, the directive line opening it and the blank line that
  ends the block closing it; a literal block after `::` is fenced the same way from the blank
  line before it (and its paragraph shows one colon, as docutils renders it). A block without a
  blank line after it is left unfenced, so no line is ever added.
- Roles and hyperlink references inside lines show their text: :class:`~a.B` as `B`,
  :ref:`title <target>` and `title <url>`_ as `title` (:pep:`8` as `8`, and a role written
  inside an inline literal too); inline literals, emphasis and code lines stay as written. Only
  the lines that hold a backquote are read for them, each on its own (no pattern reads past a
  line's end), by patterns that never backtrack.
- Reads and writes the scan's lists in place (the `_Scanned` protocol, rst._Scan); imports
  nothing of the scanner, so rst.py and rst_nested.py can both use it.
"""

from __future__ import annotations

import re
from typing import Protocol

from docshelf.chunking.rst_syntax import _MARKUP, _TITLE_SCAN, _is_option, _plain

# A role, `:py:func:`, and the interpreted text after it: its explicit title (before `<target>`),
# the last part of a `~dotted.name`, else all of it; then a hyperlink reference, `title <url>`_
# or `name`_, as its title. Each is found from a literal character, reads no further than the
# next backquote or line end, and never backtracks (possessive runs; the text is words and the
# blanks between them, so that blanks before `<target>` stay out of it).
_SHOWN_TEXT = r"(?P<shown>(?:[^`<\n ]++| ++(?=[^`<\n ]))*+) *+(?:<[^`>\n]*+>)?`"
_ROLE_TEXT = re.compile(
    r":[A-Za-z][\w.+-]{0,40}+(?::[A-Za-z][\w.+-]{0,40}+)?:`(?:~(?:[^`\n.]*+\.)*+|!)?" + _SHOWN_TEXT
)
_REFERENCE = re.compile(r"`(?<![`:\w]`)(?=[^`<\n ])" + _SHOWN_TEXT + r"__?(?!\w)")
# A fence longer than any run of backquotes opening a line of the code it holds.
_FENCE = "```"
_FENCE_IN_CODE = re.compile(r"\n *(`{3,})")

# Directives by what their line, options and body become. Names are matched in lower case.
# Code: a fence, with the language the first argument names (None) or the one given.
_CODE: dict[str, str | None] = {
    "code-block": None,
    "code": None,
    "sourcecode": None,
    "code-tab": None,
    "parsed-literal": "",
    "doctest": "pycon",
    "testcode": "python",
    "testsetup": "python",
    "testcleanup": "python",
    "testoutput": "",
    "ipython": "ipython",
    "jupyter-execute": "python",
    "mermaid": "mermaid",
    "graphviz": "dot",
    "graph": "dot",
    "digraph": "dot",
    "plantuml": "plantuml",
    "uml": "plantuml",
}
# No prose where they stand: the line, its options and its body become empty.
_HIDDEN = frozenset(
    {
        "contents", "index", "raw", "meta", "include", "literalinclude", "image",
        "highlight", "sectnum", "section-numbering", "default-role", "default-domain", "role",
        "title", "tabularcolumns", "sectionauthor", "moduleauthor", "codeauthor", "module",
        "currentmodule", "program", "target-notes", "header", "footer", "todolist",
        "autosummary", "autoclasstree", "automodsumm", "inheritance-diagram",
        "spelling:word-list", "click", "argparse", "unicode", "replace", "date",
    }
)  # fmt: skip
# Containers: the line and its options become empty, the body stays.
_SILENT = frozenset(
    {
        "only", "ifconfig", "container", "compound", "hlist", "glossary", "epigraph",
        "highlights", "pull-quote", "rst-class", "cssclass", "tab-set", "tabs", "grid",
        "grid-item", "automodule", "figure", "math", "productionlist", "line-block", "class-list",
    }
)  # fmt: skip
# Titled blocks: the line shows its argument, the title a reader sees.
_TITLED = frozenset(
    {
        "admonition", "topic", "sidebar", "rubric", "table", "csv-table", "list-table", "tab",
        "tab-item", "group-tab", "dropdown", "card", "grid-item-card", "centered", "details",
    }
)  # fmt: skip
# Admonitions: the line shows the label Sphinx renders, then any text written on it.
_LABELS = {
    "attention": "Attention",
    "caution": "Caution",
    "danger": "Danger",
    "error": "Error",
    "hint": "Hint",
    "important": "Important",
    "note": "Note",
    "tip": "Tip",
    "warning": "Warning",
    "seealso": "See also",
    "todo": "Todo",
}
# Version notes, as Sphinx 7.3 and later render them: "Added in version 5.1."
_VERSIONS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
# Object descriptions: reference entries (the standard domain's, the Python domain's without
# its prefix, autodoc's), sections named by their argument.
_ENTRIES = frozenset(
    {
        "option", "cmdoption", "confval", "envvar", "describe", "object", "function", "class",
        "method", "attribute", "data", "exception", "decorator", "decoratormethod",
        "staticmethod", "classmethod", "property", "type", "autoclass", "autofunction",
        "automethod", "autoattribute", "autoexception", "autodata", "autoproperty",
        "autodecorator",
    }
)  # fmt: skip
# Entries named by their whole argument ("-c, --concurrency"); others by what comes before "(".
_WHOLE_NAMES = frozenset({"option", "cmdoption", "confval", "envvar", "describe", "object"})
# Sphinx's domains: `domain:type` is an entry unless the type is one of these.
_DOMAINS = frozenset({"py", "std", "c", "cpp", "js", "rst", "rb", "php", "go", "http", "math"})
_DOMAIN_DIRECTIVES = frozenset(
    {"module", "currentmodule", "namespace", "namespace-push", "namespace-pop", "alias"}
)
# Each directive named above, by what its line shows (one look-up for the common ones).
_KIND = {
    **dict.fromkeys(_ENTRIES, "entry"),
    **dict.fromkeys(_TITLED, "titled"),
    **dict.fromkeys(_VERSIONS, "version"),
    **dict.fromkeys(_LABELS, "label"),
    **dict.fromkeys(_SILENT, "silent"),
    **dict.fromkeys(_HIDDEN, "hidden"),
    **dict.fromkeys(_CODE, "code"),
}
# What _shows answers for a directive line that shows no words of its own (compared by identity).
_IS_CODE, _IS_HIDDEN, _IS_ENTRY, _IS_TOC = "\0code", "\0hidden", "\0entry", "\0toc"


# An entry's section by line indexes: (its first line, its body's first line, how many entries
# it sits in, its name).
_Entry = tuple[int, int, int, str]


class _Scanned(Protocol):
    """What the visible text reads and writes of the scan of a file (rst._Scan)."""

    lines: list[str]  # the lines as docutils reads them
    visible: list[str]  # the lines shown, rewritten in place
    entries: list[_Entry]
    # Entries of an unknown domain without a body: (line, the next text's line, what the line
    # shows unless that text is a title, whose target the entry is).
    bodiless: list[tuple[int, int, str]]

    def content(self, start: int, end: int, entry: int = 0) -> int:
        """Read the indented block on lines [start, end) for markup of its own."""
        ...

    def code(self, opener: int, body: int, end: int, lead: str, language: str) -> None:
        """Fence the code on lines [body, end) from the opener line."""
        ...


def _shown_lines(own: list[str]) -> list[str]:
    """The lines with their roles and references shown as their text, each line read on its
    own (neither pattern reads past a line's end), and only the lines that hold a backquote."""
    visible = own.copy()
    # Each pattern's one group is the text shown, so joining what split() gives is what sub()
    # would, without a Match object and a call for each role.
    role, reference, join = _ROLE_TEXT.split, _REFERENCE.split, "".join
    for i in [i for i, line in enumerate(own) if "`" in line]:
        line = own[i]
        if ":`" in line:
            line = join(role(line))
        if "`_" in line:
            line = join(reference(line))
        visible[i] = line
    return visible


def _show_directive(scan: _Scanned, i: int, end: int, directive: str | None) -> None:
    """A directive (named `directive`), footnote, citation or substitution definition on line i
    at the top level, its block ending before line `end`: the directive's line shows its words;
    code is fenced, entries are sections, bodies of no prose and substitution definitions are
    hidden."""
    lines, visible = scan.lines, scan.visible
    shown = visible[i]
    if directive is None:
        if lines[i][2:].lstrip(" ")[:1] == "|":
            visible[i:end] = [""] * (end - i)
        else:
            visible[i] = shown.lstrip()[2:].lstrip()  # a footnote keeps its label
            scan.content(i + 1, end)
        return
    name = directive.lower()
    argument = shown[shown.find("::") + 2 :].strip()  # its roles shown as text
    shows = _IS_CODE if name in _CODE else _shows(name, argument)
    head = i + 1
    if head < end and lines[head]:  # options, or an entry's further signatures
        head = _head(lines, visible, i, 0, shows is _IS_ENTRY)
    visible[i] = ""
    if shows is _IS_CODE:
        body = head  # the first line of text, if any before `end`
        while body < end and not lines[body]:
            body += 1
        if body < end:
            scan.code(i, body, end, "", _language(name, argument))
    elif shows is _IS_HIDDEN:
        visible[i + 1 : end] = [""] * (end - i - 1)
    elif shows is _IS_TOC:
        _show_toc(lines, visible, i, head, end)
    elif shows is _IS_ENTRY:
        if _next_text(lines, head) < end:
            title = _entry_name(name, argument)
            scan.entries.append((i, head, 0, title))
            visible[i] = argument
            scan.content(head, end, 1)
        elif _describes_object(name):
            visible[i] = argument
        else:
            scan.bodiless.append((i, end, argument))
    else:
        if shows:
            visible[i] = shows
        scan.content(head, end)


def _shows(name: str, argument: str) -> str:
    """What a directive's line shows: the words it carries ("" for none), or _IS_CODE,
    _IS_HIDDEN or _IS_ENTRY."""
    kind = _KIND.get(name)
    if kind == "code":
        return _IS_CODE
    if kind == "hidden":
        return _IS_HIDDEN
    if name == "toctree":
        return _IS_TOC
    if kind == "silent":
        return ""
    if kind == "label":
        return f"{_LABELS[name]}: {argument}" if argument else _LABELS[name]
    if kind == "version":
        version, _, words = argument.partition(" ")
        words = words.strip()
        if words:
            return f"{_VERSIONS[name]} {version}: {words}"
        return f"{_VERSIONS[name]} {version}." if version else _VERSIONS[name]
    if kind == "titled" or not argument:
        return argument
    if kind == "entry":
        return _IS_ENTRY
    domain, _, object_type = name.rpartition(":")
    if domain in _DOMAINS and object_type not in _DOMAIN_DIRECTIVES:
        return _IS_ENTRY
    if kind is None and " " not in argument.split("(", 1)[0]:
        return _IS_ENTRY  # an object of an unknown domain: it names one thing
    return argument


def _describes_object(name: str) -> bool:
    """Whether an entry directive renders its object's description even without a body (an
    autodoc or domain directive does; an unknown one alone before a title is that title's
    target, as Celery's `.. setting:: broker_url` is)."""
    return _KIND.get(name) == "entry" or name.rpartition(":")[0] in _DOMAINS


def _head(lines: list[str], visible: list[str], i: int, k: int, signatures: bool) -> int:
    """The line after the head of the directive on line i, indented by k: its line, an entry's
    further signature lines, and its options, which become empty lines but for an entry's
    values ("type: int")."""
    n = len(lines)
    j = i + 1
    deeper = " " * (k + 1)  # how a line indented deeper than k starts (lines are rstripped)
    while j < n and lines[j].startswith(deeper):
        if _is_option(lines[j]):
            break
        if not signatures:
            return j
        j += 1  # a further signature
    else:
        return j  # no options
    while j < n and lines[j].startswith(deeper):
        shown = visible[j]
        option = shown.lstrip()
        colon = option.find(":", 1) if option[:1] == ":" else -1
        value = option[colon + 1 :].strip() if colon > 0 else ""
        if signatures and value:
            visible[j] = shown[: len(shown) - len(option)] + option[1:colon] + ": " + value
        else:
            visible[j] = ""
        j += 1
    return j


def _next_text(lines: list[str], j: int) -> int:
    """The first non-blank line from j on (the count of lines for none)."""
    n = len(lines)
    while j < n and not lines[j]:
        j += 1
    return j


def _language(name: str, argument: str) -> str:
    language = _CODE[name]
    return argument.split(" ", 1)[0] if language is None else language


def _entry_name(name: str, argument: str) -> str:
    """An entry's title: its whole argument for an option or a setting ("-c, --concurrency"),
    else the name before its signature's parameters ("send_task")."""
    title = argument
    if name.rpartition(":")[2] not in _WHOLE_NAMES:
        title = argument.split("(", 1)[0].strip() or argument
    if _MARKUP.search(title) is not None or len(title) > _TITLE_SCAN:
        title = _plain(title)
    return title


def _fence(code: list[str]) -> str:
    """A fence no line of the code can close: longer than any run of backquotes opening one."""
    joined = "\n".join(code)
    if "```" not in joined:
        return _FENCE
    return "`" * (max(len(run) for run in _FENCE_IN_CODE.findall("\n" + joined)) + 1)


def _show_toc(lines: list[str], visible: list[str], i: int, head: int, end: int) -> None:
    """A toctree's entries, on lines [head, end), as the list of links Sphinx renders: an entry
    `Title <doc>` shows its title, a document's name stays; a `:hidden:` toctree shows none."""
    if any(line.strip() == ":hidden:" for line in lines[i + 1 : head]):
        visible[head:end] = [""] * (end - head)
        return
    for k in range(head, end):
        shown = visible[k]
        if shown.endswith(">") and (at := shown.rfind(" <")) > 0 and shown[:at].strip():
            visible[k] = shown[:at].rstrip()


def _show_literal_mark(visible: list[str], i: int) -> None:
    """A paragraph's "::" as docutils renders it: one colon after a word, none after a blank,
    and a line of "::" alone goes."""
    shown = visible[i].rstrip()
    if shown.strip() == "::":
        visible[i] = ""
    elif shown[-3:-2].isspace():
        visible[i] = shown[:-2].rstrip()
    else:
        visible[i] = shown[:-1]
