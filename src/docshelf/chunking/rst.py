"""The reStructuredText chunker: a file cut at its section titles, as docutils reads them, and at
its reference entries; a chunk's text is what the rendered page shows.

Constraints:
- Pure and deterministic, no I/O: the same text always gives the same outline.
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
  inside an inline literal too: one search over the whole text is what keeps this cheap);
  inline literals, emphasis and code lines stay as written.
- Section titles follow docutils' parser (docutils.parsers.rst.states), read at the top level
  of the document, where alone docutils allows sections: a title is the first line of a text
  block underlined, or over- and underlined, by one repeated non-alphanumeric 7-bit character.
  An adornment shorter than its title counts only from 4 characters (docutils warns, and keeps
  the title); an overline must equal its underline. Levels go by each style's first appearance;
  a title that would skip a level is no section. Nothing inside an indented block (block quote,
  literal block, directive, comment or list item body), a paragraph, a table, a doctest or a
  line block is a title, and an adornment line alone between blank lines is a transition.
- Reference entries are sections too, one level below the title (or entry) they sit in: an
  object description with a body (`.. option:: -c, --concurrency`, `confval`, `envvar`,
  `describe`, the Python domain's and autodoc's objects, any domain's `domain:type`, and unknown
  directives that name one thing, such as Celery's `.. setting:: broker_url`). Its name is the
  last crumb of its chunks and its directive line shows it, so an excerpt starts with the name.
  Like a title's, its section runs to the next heading of its level or above (a section cannot
  resume its parent's text: an outline's sections are headings, and `docshelf outline` lists
  them). An entry without a body is a line of text (its name), or, right before a title, that
  title's target (an empty line).
- Linear time: each line is read a bounded number of times, and every pattern is anchored with
  bounded backtracking, so a megabyte line or 100k lines of adornment take well under a second.
  Roles are taken out by two searches over the whole text; markup inside indented blocks is
  read only in the blocks where a search found its lines (indented explicit markup, `::` line
  ends), and where each nested block ends is found by a search that never goes back over a
  line.
- Breadcrumb titles are plain words: inline literals, roles, references, emphasis,
  substitutions and escapes lose their markup (but a title with words never becomes empty).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from operator import methodcaller
from typing import Any

from docshelf.chunking.markdown import Chunk
from docshelf.chunking.outline import Heading, Outline, outline, prepared_lines, split_outline
from docshelf.chunking.text import prepare
from docshelf.config import MAX_TITLE_CHARS

# docutils expands tabs to stops every 8 columns before it reads indentation.
_TAB_WIDTH = 8
# docutils keeps a title whose adornment is shorter than it from this length on (with a
# warning), and reads a shorter lone adornment line as text rather than a transition.
_LONG_ADORNMENT = 4
# docutils' `nonalphanum7bit`: the characters an adornment line may repeat.
_ADORNMENT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_BULLETS = frozenset("-+*\u2022\u2023\u2043")
# The lines of one repeated adornment character that a construct tested before adornments takes:
# a bullet, a line block, explicit markup, an anonymous target, a doctest.
_EARLIER_CONSTRUCTS = frozenset(("-", "+", "*", "|", "..", "__", ">>>"))
# looks_like_rst reads this many non-blank lines from the top: where a document's title is.
_SNIFF_LINES = 30
# Only this much of a title line is read for its breadcrumb, which keeps MAX_TITLE_CHARS.
_TITLE_SCAN = 4 * MAX_TITLE_CHARS
# What may follow a letter that starts an enumerator: "a." or "b)", or a roman numeral's next.
_AFTER_ENUMERATOR_LETTER = frozenset(".)ivxlcdmIVXLCDM")
# Enumerators longer than this are no list item (Python's int() refuses 4300 digits).
_MAX_ENUMERATOR_DIGITS = 100

# docutils' body patterns, anchored at the start of a line (re.match); none can backtrack
# further than a bounded distance or once over the line.
_ENUM = r"(?:[0-9]+|[a-zA-Z]|[ivxlcdm]+|[IVXLCDM]+|#)"
_ENUMERATOR = re.compile(
    rf"(?:\((?P<parens>{_ENUM})\)|(?P<rparen>{_ENUM})\)|(?P<period>{_ENUM})\.)(?: +|$)"
)
_OPTARG = r"(?:[a-zA-Z][a-zA-Z0-9_-]*|<[^<>]+>)"
_OPTION = (
    rf"(?:[-+][a-zA-Z0-9](?: ?{_OPTARG})?"
    rf"|(?:--|/)[a-zA-Z0-9][a-zA-Z0-9_-]*(?:[ =]{_OPTARG})?)"
)
_OPTION_MARKER = re.compile(rf"{_OPTION}(?:, {_OPTION})*(?:  +| ?$)")
_SIMPLENAME = r"(?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*"
# Explicit markup that is not a comment: footnotes, citations, substitution definitions and
# directives (all content), and hyperlink targets (markup only).
_CONTENT_MARKUP = re.compile(
    rf"\.\. +(?:\[(?:[0-9]+|#(?:{_SIMPLENAME})?|\*|{_SIMPLENAME})\](?: +|$)"
    rf"|\|(?! |$)|(?P<directive>{_SIMPLENAME}) ?::(?: +|$))"
)
_TARGET = re.compile(r"\.\. +_(?! |$)")
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_DIGITS = (
    ("M", 1000), ("CM", 900), ("D", 500), ("CD", 400), ("C", 100), ("XC", 90), ("L", 50),
    ("XL", 40), ("X", 10), ("IX", 9), ("V", 5), ("IV", 4), ("I", 1),
)  # fmt: skip
# A character that may start or end inline markup in a title.
_MARKUP = re.compile(r"[\\`*|:_]")
# A role's name, as `:py:func:` before or after interpreted text (bounded: role names are short).
_ROLE = re.compile(r":((?:(?!_)\w)(?:[-._+:]?(?:(?!_)\w)){0,60}):")

# --- The visible text ---------------------------------------------------------------------------

# Indented explicit markup, matched from the newline before it; a paragraph's `::` line end.
_EXPLICIT_AT = re.compile(r" *\.\.(?= |\n|\Z)")
# Both as searched in the text as written: they find the lines whose rstrip() they would match.
_NESTED_EXPLICIT = re.compile(r"\n +\.\.(?= |[^\S\n]*+(?:\n|\Z))")
_LITERAL_MARK = re.compile(r"::(?=[^\S\n]*+(?:\n|\Z))")
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
# Where a match ends, called in C.
_END = methodcaller("end")
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
# What an open block is: code (fenced), a hidden body (no prose) or an entry's body.
_IN_CODE, _IN_HIDDEN, _IN_ENTRY, _IN_TOC = 0, 1, 2, 3


# A title: (the overline, or the title when there is none; the line after the underline; the
# underline's character, doubled when an overline matches it; the text; whether the adornment
# is at least as wide as the title). A plain tuple, as outline.Heading is.
_Title = tuple[int, int, str, str, bool]


# An entry's section by line indexes: (its first line, its body's first line, how many entries
# it sits in, its name).
_Entry = tuple[int, int, int, str]


def split_rst(path: str, text: str) -> list[Chunk]:
    """Cut a reStructuredText file into chunks: one section per title and per reference entry,
    packed like Markdown's; a chunk's text is the visible text of its lines."""
    return split_outline(path, outline_rst(text))


def outline_rst(text: str, *, entries: bool = True) -> Outline:
    """The visible lines and sections of a reStructuredText file; with `entries` False, its
    sections are its titles alone (the sections docutils sees)."""
    text = prepare(text)
    own = text.split("\n")
    plain = "\t" not in text and "\v" not in text and "\f" not in text
    scan = _Scan(own, _shown_lines(own) if "`" in text else own.copy(), plain, True)
    # The searches read the text as written where docutils reads each line the same.
    scan.nested = _nested_lines(text if plain else "\n".join(scan.lines))
    scan.next_nested = scan.nested[0] if scan.nested else scan.n
    scan.run()
    if scan.bodiless:
        titles = {t[0] for t in scan.titles}
        for line, following, words in scan.bodiless:
            if following not in titles:
                scan.visible[line] = words
    headings = _headings(scan.titles)
    if entries and scan.entries:
        headings = _with_entries(headings, scan.entries)
    return _outline(scan.visible, headings)


def _shown_lines(own: list[str]) -> list[str]:
    """The lines with their roles and references shown as their text, each line read on its
    own (neither pattern crosses a line end), and only the lines that hold a backquote."""
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


def _outline(lines: list[str], headings: list[Heading]) -> Outline:
    """outline() of the lines and headings, given the lines between the headings' lines joined
    (the same text, cut at the same offsets): outline() then adds up a handful of lengths where
    it would add up one per line."""
    last = len(lines)
    cuts = sorted({k for line, body, _, _ in headings for k in (line, body) if 0 < k < last})
    if len(cuts) * 8 > last:
        return outline(lines, headings)
    at = {0: 0}
    groups: list[str] = []
    start = 0
    for k in cuts:
        at[k] = len(groups) + 1
        groups.append("\n".join(lines[start:k]))
        start = k
    groups.append("\n".join(lines[start:]))
    end = len(groups)
    return outline(
        groups,
        [
            (at[line] if line < last else end, at[body] if body < last else end, level, title)
            for line, body, level, title in headings
        ],
    )


def looks_like_rst(text: str) -> bool:
    """Whether a text (a Django-style `.txt`) reads as reStructuredText: among its first
    non-blank lines, a title with words is underlined (optionally overlined too) by an
    adornment at least as wide as it."""
    lines = prepared_lines(text)
    seen, cut = 0, len(lines)
    for i, line in enumerate(lines):
        seen += bool(line.strip())
        if seen >= _SNIFF_LINES:
            cut = i + 1
            break
    scan = _Scan(lines[:cut])
    scan.run()
    return any(full and any(c.isalnum() for c in text) for _, _, _, text, full in scan.titles)


def _headings(titles: list[_Title]) -> list[Heading]:
    """docutils' levels: a style's level is its rank by first appearance; a title whose new or
    known style would go more than one level below the current section is no section."""
    levels: dict[str, int] = {}  # each style's level
    level = 0
    headings: list[Heading] = []
    append = headings.append
    for line, body, style, text, _ in titles:
        new = levels.get(style) or len(levels) + 1
        if new > level + 1:
            continue
        if new > len(levels):
            levels[style] = new
        level = new
        if len(text) <= _TITLE_SCAN and _MARKUP.search(text) is None:
            append((line, body, new, text.strip()))  # as _plain reads it, without the call
        else:
            append((line, body, new, _plain(text)))
    return headings


def _with_entries(headings: list[Heading], entries: list[_Entry]) -> list[Heading]:
    """The titles' headings with the entries' (both in line order) among them: an entry one
    level below the title it sits under, and one more for each entry it sits in."""
    merged: list[Heading] = []
    append = merged.append
    level = 0  # the level of the title the entries sit under
    at, count = 0, len(headings)
    for line, body, depth, name in entries:
        while at < count and headings[at][0] < line:
            append(headings[at])
            level = headings[at][2]
            at += 1
        append((line, body, level + depth + 1, name))
    merged.extend(headings[at:])
    return merged


class _Scan:
    """docutils' Body state machine at the top level, by line index: each method reads the
    construct that starts at a line and returns the index of the line after it."""

    def __init__(
        self,
        lines: list[str],
        visible: list[str] | None = None,
        plain: bool = False,
        markup: bool = False,
    ) -> None:
        """`visible` starts as the lines shown (the lines themselves by default); `plain` says
        no line holds a tab, vertical tab or form feed; with `markup`, the top level's markup
        is taken out of the visible lines and its entries found."""
        if plain:
            self.lines = list(map(str.rstrip, lines))
        else:
            self.lines = [
                _as_docutils_reads(line)
                if "\t" in line or "\v" in line or "\f" in line
                else line.rstrip()
                for line in lines
            ]
        self.n = len(lines)
        self.visible = list(lines) if visible is None else visible
        self.titles: list[_Title] = []
        self.top = True  # nothing yet but blank lines, comments, targets and field lists
        self.markup = markup
        # The lines where markup may start inside an indented block (_nested_lines), in order.
        self.nested: list[int] = []
        self.nested_at = 0
        # nested[nested_at], or n when none is left: a block ending before it holds no markup.
        self.next_nested = self.n
        self.own = lines  # as written: code keeps them
        self.entries: list[_Entry] = []
        # Entries of an unknown domain without a body: (line, the next text's line, what the
        # line shows unless that text is a title, whose target the entry is).
        self.bodiless: list[tuple[int, int, str]] = []

    def run(self) -> None:
        """Read the lines: the most common blocks here, the others by block()."""
        i, n, block, text, lines = 0, self.n, self.block, self.text, self.lines
        explicit = self.explicit
        while i < n:
            s = lines[i]
            if not s:
                i += 1
                continue
            first = s[0]
            if first.isalpha() and s[1:2] not in _AFTER_ENUMERATOR_LETTER:
                self.top = False
                i = text(i)  # most blocks: no construct but text starts with a word
            elif first in _BULLETS and (len(s) == 1 or s[1] == " "):
                self.top = False  # a bullet list item, as block() reads it
                j = i + 1
                while j < n and lines[j][:1] in ("", " "):
                    j += 1
                if self.next_nested < j:
                    self.content(i, j)
                i = j
            elif first == "." and s[1:3] == ". ":
                top, self.top = self.top, False
                i = explicit(i, top)  # as block() reads it
            else:
                i = block(i)

    def block(self, i: int) -> int:
        """The Body state: what the line at i starts, in docutils' order of transitions."""
        s = self.lines[i]
        if not s:
            return i + 1
        first = s[0]
        if first == " ":
            end = self.indented_end(i)  # a block quote
            return self.content(i, end) if self.next_nested < end else end
        top, self.top = self.top, False
        if first == "." and s[1:3] == ". ":
            return self.explicit(i, top)  # no construct tested before it takes ".. " and words
        if first in _BULLETS and (len(s) == 1 or s[1] == " "):
            end = self.indented_end(i + 1)  # a bullet, tested first as the most common: no
            return self.content(i, end) if self.next_nested < end else end  # adornment is one
        if first in _ADORNMENT and s not in _EARLIER_CONSTRUCTS and not s.strip(first):
            return self.adornment(i)  # no construct tested before it takes such a line
        if first.isalnum() or first in "(#":
            m = _ENUMERATOR.match(s)
            if m is not None and self.is_list_item(i, m):
                end = self.indented_end(i + 1)
                return self.content(i, end) if self.next_nested < end else end
        if first == ":" and _is_field_marker(s):
            end = self.indented_end(i + 1)
            if top:
                self.hide(i, end, top)
                return end
            return self.content(i, end)
        if first in "-+/" and (m := _OPTION_MARKER.match(s)) is not None:
            end = self.indented_end(i + 1)
            if s[m.end() :] or any(self.lines[k] for k in range(i + 1, end)):
                return self.content(i, end)
            return self.text(i)  # an option without a description is text
        if s.startswith(">>>") and (len(s) == 3 or s[3] == " "):
            return self.text_block_end(i, flush_left=False)
        if first == "|" and (len(s) == 1 or s[1] == " "):
            end = i
            while end < self.n and self.lines[end][:1] == "|" and self.lines[end][1:2] in ("", " "):
                end = self.until_blank_end(end + 1)
            return end
        if first == "+" and _is_grid_border(s):
            return self.grid_table_end(i)
        if first == "=" and " " in s and not s.strip("= "):
            return self.simple_table_end(i)
        if s.startswith("..") and (len(s) == 2 or s[2] == " "):
            return self.explicit(i, top)
        if s.startswith("__") and (len(s) == 2 or s[2] == " "):
            end = self.until_blank_end(i + 1)  # an anonymous target
            self.hide(i, end, top)
            return end
        return self.text(i)

    def text(self, i: int) -> int:
        """The Text state: line i opens a text block, which is a title, a definition list item
        or a paragraph."""
        j = i + 1
        if j >= self.n:
            return j
        s = self.lines[j]
        if not s:
            return self.after_paragraph(i, j) if self.lines[i].endswith("::") else j
        if s[0] == " ":
            end = self.indented_end(j)  # a definition list item
            return self.content(j, end) if self.next_nested < end else end
        if s[0] in _ADORNMENT and not s.strip(s[0]):
            title = self.lines[i]
            width = len(title) if title.isascii() else _width(title)
            if width <= len(s) or len(s) >= _LONG_ADORNMENT:
                self.titles.append((i, j + 1, s[0], title, width <= len(s)))
                return j + 1
        lines, end = self.lines, j + 1  # a paragraph, to its first blank or indented line
        while end < self.n and lines[end][:1] not in ("", " "):
            end += 1
        return self.after_paragraph(end - 1, end) if lines[end - 1].endswith("::") else end

    def adornment(self, i: int) -> int:
        """The Line state: line i is an adornment, so an overline, a transition or (when it is
        too short for either) text."""
        over = self.lines[i]
        short = len(over) < _LONG_ADORNMENT
        j = i + 1
        if j >= self.n or not self.lines[j]:
            return self.text(i) if short else j  # a transition
        title = self.lines[j]
        if title[0] in _ADORNMENT and not title.strip(title[0]):
            return self.text(i) if short else j + 1  # two adornments: docutils reports it
        k = j + 1
        if k >= self.n or self.lines[k] != over:
            return self.text(i) if short else min(k + 1, self.n)  # no matching underline
        width = _width(title)
        if width > len(over) and short:
            return self.text(i)
        title = title.strip()
        self.titles.append((i, k + 1, over[0] * 2, title, width <= len(over)))
        return k + 1

    def explicit(self, i: int, top: bool) -> int:
        """Explicit markup: a directive, footnote, citation or substitution definition (content
        with its indented block), a hyperlink target or a comment (hidden)."""
        s = self.lines[i]
        if _TARGET.match(s):
            end = self.until_blank_end(i + 1)
        elif (m := _CONTENT_MARKUP.match(s)) is not None:
            end = self.indented_end(i + 1)
            if self.markup:
                self.content_markup(i, end, m.group("directive"))
            return end
        elif not s[2:].strip() and (i + 1 >= self.n or not self.lines[i + 1]):
            end = i + 1  # an empty comment: its line alone
        else:
            end = self.indented_end(i + 1)
        self.hide(i, end, top)
        return end

    def content_markup(self, i: int, end: int, directive: str | None) -> None:
        """A directive (named `directive`), footnote, citation or substitution definition on
        line i, its block ending before line `end`: the directive's line shows its words; code
        is fenced, entries are sections, bodies of no prose and substitution definitions are
        hidden."""
        lines, visible = self.lines, self.visible
        shown = visible[i]
        if directive is None:
            if lines[i][2:].lstrip(" ")[:1] == "|":
                visible[i:end] = [""] * (end - i)
            else:
                visible[i] = shown.lstrip()[2:].lstrip()  # a footnote keeps its label
                self.content(i + 1, end)
            return
        name = directive.lower()
        argument = shown[shown.find("::") + 2 :].strip()  # its roles shown as text
        shows = _shows(name, argument)
        head = i + 1
        if head < end and lines[head]:  # options, or an entry's further signatures
            head = _head(lines, visible, i, 0, shows is _IS_ENTRY)
        visible[i] = ""
        if shows is _IS_CODE:
            body = _next_text(lines, head)
            if body < end:
                self.code(i, body, end, "", _language(name, argument))
        elif shows is _IS_HIDDEN:
            visible[i + 1 : end] = [""] * (end - i - 1)
        elif shows is _IS_TOC:
            _show_toc(lines, visible, i, head, end)
        elif shows is _IS_ENTRY:
            if _next_text(lines, head) < end:
                title = _entry_name(name, argument)
                self.entries.append((i, head, 0, title))
                visible[i] = argument
                self.content(head, end, 1)
            elif _describes_object(name):
                visible[i] = argument
            else:
                self.bodiless.append((i, end, argument))
        else:
            if shows:
                visible[i] = shows
            self.content(head, end)

    def content(self, start: int, end: int, entry: int = 0) -> int:
        """The indented block on lines [start, end), which may hold markup of its own (inside an
        entry's description when `entry` is 1); returns `end`."""
        if self.next_nested >= end:
            return end
        nested = self.nested
        first = bisect_left(nested, start, self.nested_at)
        at = bisect_left(nested, end, first)
        self.nested_at = at
        self.next_nested = nested[at] if at < len(nested) else self.n
        if at > first:
            _Nested(self, start, end, nested[first:at], entry).run()
        return end

    def code(self, opener: int, body: int, end: int, lead: str, language: str) -> None:
        """Fence the code on lines [body, end): the opener line (a directive's, or the blank
        line before a literal block) opens it with its language and the blank line ending it
        closes it; without that blank line (at the end of the file, say) the code is left
        unfenced. Code is shown as written."""
        lines, visible, own = self.lines, self.visible, self.own
        closer = end - 1
        if closer == self.n - 1 and not own[closer]:
            closer -= 1  # the empty string after the last newline is no line of the file
        if closer > body and not lines[closer]:
            code = own[body:closer]
            visible[body:closer] = code
            fence = _fence(code)
            visible[opener] = lead + fence + language
            visible[closer] = lead + fence
        else:
            visible[body:end] = own[body:end]

    def is_list_item(self, i: int, m: re.Match[str]) -> bool:
        """docutils' test of an enumerated list item: a valid enumerator, and the next line is
        blank, indented or starts with the next enumerator; else the line is text."""
        kind = m.lastgroup or "period"
        ordinal, sequence = _ordinal(m.group(kind))
        if ordinal is None:
            return False
        j = i + 1
        if j >= self.n or self.lines[j][:1] in ("", " "):
            return True
        following = _enumerators(ordinal + 1, sequence, kind)
        return following is not None and self.lines[j].startswith(following)

    def after_paragraph(self, last: int, j: int) -> int:
        """Where the next block starts after a paragraph that ends on line `last`, j being the
        line after it: past the literal block that follows a paragraph ending in "::"."""
        line = self.lines[last]
        if not line.endswith("::") or (len(line) - 2 - len(line[:-2].rstrip("\\"))) % 2:
            return j
        end = self.indented_end(j)
        if any(self.lines[k] for k in range(j, end)) or end >= self.n:
            if self.markup and j < self.n and not self.lines[j]:
                body = _next_text(self.lines, j)
                if body < end:
                    _show_literal_mark(self.visible, last)
                    self.code(j, body, end, "", "")
            return end
        quote = self.lines[end][0]
        if quote not in _ADORNMENT:
            return end
        while end < self.n and self.lines[end][:1] == quote:  # a quoted literal block
            end += 1
        return end

    def grid_table_end(self, i: int) -> int:
        end = self.text_block_end(i, flush_left=True)
        for k in range(i, end):
            if self.lines[k][0] not in "+|":
                return k
        return end

    def simple_table_end(self, i: int) -> int:
        """docutils' isolate_simple_table: the table ends at its second border after the top,
        or at a border followed by a blank line; without one it runs to the end."""
        width, found, found_at = len(self.lines[i]), 0, -1
        for k in range(i + 1, self.n):
            line = self.lines[k]
            if line[:1] == "=" and not line.strip("= "):
                if len(line) != width:
                    return k + 1
                found, found_at = found + 1, k
                if found == 2 or k == self.n - 1 or not self.lines[k + 1]:
                    return k + 1
        return found_at + 1 if found else self.n

    def indented_end(self, j: int) -> int:
        """The first line from j on that is neither blank nor indented."""
        lines, n = self.lines, self.n
        while j < n and lines[j][:1] in ("", " "):
            j += 1
        return j

    def until_blank_end(self, j: int) -> int:
        """The first line from j on that is blank or not indented."""
        lines, n = self.lines, self.n
        while j < n and lines[j][:1] == " ":
            j += 1
        return j

    def text_block_end(self, j: int, flush_left: bool) -> int:
        """The first line from j on that is blank (or indented, when the block is flush left)."""
        lines, n = self.lines, self.n
        while j < n and lines[j] and not (flush_left and lines[j][0] == " "):
            j += 1
        return j

    def hide(self, start: int, end: int, top: bool) -> None:
        self.visible[start:end] = [""] * (end - start)
        self.top = top


class _Nested:
    """Explicit markup and literal blocks inside one of the top level's indented blocks (a
    note's body, a list item, an entry's description), read at the lines the search of the
    whole text found (`marks`). The blocks that change what their lines are (code, hidden
    bodies, entries) are kept on a stack; where each ends (its first non-blank line indented no
    deeper than the line that opened it) is looked for from the line where the last look
    stopped, so no line is read twice but where it closes a block."""

    def __init__(self, scan: _Scan, start: int, end: int, marks: list[int], outer: int) -> None:
        self.scan = scan
        self.lines = scan.lines
        self.visible = scan.visible
        self.start, self.end = start, end
        self.marks = marks  # the lines in [start, end) where markup may start, in order
        self.outer = outer  # 1 when this block is a top-level entry's description, else 0
        # Open blocks, innermost last: [kind, the indentation their lines are deeper than, ...].
        self.stack: list[list[Any]] = []
        self.searched = start  # no open block ends before this line
        self.explicit_end = -1  # the line after the last explicit construct's head

    def run(self) -> None:
        lines, previous = self.lines, -1
        for i in self.marks:
            if i == previous:
                continue  # both searches found the line
            previous = i
            self.close_before(i)
            if self.readable(i):
                if _EXPLICIT_AT.match(lines[i]) is not None:
                    self.explicit(i)
                else:
                    self.literal(i)
        self.close_before(self.end)

    def readable(self, i: int) -> bool:
        """Whether line i is read: not hidden already, nor code, nor in a hidden body."""
        stack = self.stack
        return bool(self.visible[i]) and not (stack and stack[-1][0] != _IN_ENTRY)

    def close_before(self, line: int) -> None:
        """Close the open blocks that end before `line`, or at it (at the block's end, all)."""
        stack, lines = self.stack, self.lines
        while stack and self.searched < line:
            # The first line from `searched` on that is not blank and is indented no deeper
            # than the innermost block's line.
            deeper = " " * (stack[-1][1] + 1)
            found = self.searched
            while found < line and (not lines[found] or lines[found].startswith(deeper)):
                found += 1
            self.searched = found
            if found == line:
                break
            self.close(stack.pop(), found)
        if line >= self.end:
            while stack:
                self.close(stack.pop(), self.end)
            return
        if stack:
            s = lines[line]
            indent = len(s) - len(s.lstrip(" "))
            while stack and indent <= stack[-1][1]:
                self.close(stack.pop(), line)

    def close(self, block: list[Any], end: int) -> None:
        """Close a block whose lines end before line `end`."""
        kind = block[0]
        if kind == _IN_CODE:
            _, _, opener, body, lead, language = block
            self.scan.code(opener, body, end, lead, language)
        elif kind == _IN_HIDDEN:
            start = block[2]
            if end > start:
                self.visible[start:end] = [""] * (end - start)
        elif kind == _IN_TOC:
            _show_toc(self.lines, self.visible, block[2], block[3], end)

    def starts_block(self, i: int, k: int) -> bool:
        """Whether explicit markup on line i, indented by k, starts a construct (rather than
        going on with the paragraph above it)."""
        if i in (0, self.explicit_end):
            return True
        prev = self.lines[i - 1]
        if not prev:
            return True
        pk = len(prev) - len(prev.lstrip(" "))
        if k < pk or prev.startswith("..", pk):
            return True
        return k > pk and k != _content_indent(prev, pk)

    def explicit(self, i: int) -> None:
        """Explicit markup on line i."""
        lines, visible = self.lines, self.visible
        s = lines[i]
        k = len(s) - len(s.lstrip(" "))
        if not self.starts_block(i, k):
            return
        self.searched = max(self.searched, i + 1)
        self.explicit_end = i + 1
        shown = visible[i]
        lead = shown[: len(shown) - len(shown.lstrip())]
        if _TARGET.match(s, k):  # a hyperlink target, with its indented lines
            j = i + 1
            while j < self.end and lines[j][: k + 1].isspace():
                j += 1
            visible[i:j] = [""] * (j - i)
            self.explicit_end = j
            return
        m = _CONTENT_MARKUP.match(s, k)
        directive = m.group("directive") if m is not None else None
        if directive is None:
            if m is not None and s[k + 2 :].lstrip(" ")[:1] != "|":
                visible[i] = lead + shown.lstrip()[2:].lstrip()  # a footnote keeps its label
            else:  # a comment or a substitution definition, with its indented block
                visible[i] = ""
                self.stack.append([_IN_HIDDEN, k, i + 1])
            return
        name = directive.lower()
        argument = shown[shown.find("::", len(lead)) + 2 :].strip()  # its roles shown as text
        shows = _shows(name, argument)
        head = _head(lines, visible, i, k, shows is _IS_ENTRY)
        self.explicit_end = head
        visible[i] = ""
        if shows is _IS_CODE:
            body = _next_text(lines, head)
            if body < self.end and _indent(lines[body]) > k:
                language = _language(name, argument)
                self.stack.append([_IN_CODE, k, i, body, lead, language])
        elif shows is _IS_HIDDEN:
            self.stack.append([_IN_HIDDEN, k, i + 1])
        elif shows is _IS_TOC:
            self.stack.append([_IN_TOC, k, i, head])
        elif shows is _IS_ENTRY:
            body = _next_text(lines, head)
            if body < self.end and _indent(lines[body]) > k:
                title = _entry_name(name, argument)
                depth = sum(block[0] == _IN_ENTRY for block in self.stack) + self.outer
                self.scan.entries.append((i, head, depth, title))
                self.stack.append([_IN_ENTRY, k, title])
                visible[i] = lead + argument
            elif _describes_object(name):
                visible[i] = lead + argument
            else:
                self.scan.bodiless.append((i, body, lead + argument))
        elif shows:
            visible[i] = lead + shows

    def literal(self, i: int) -> None:
        """Line i ends in "::": when it ends a paragraph and an indented block follows after a
        blank line, that is a literal block, fenced from the blank line on."""
        lines, visible = self.lines, self.visible
        if i + 1 >= self.end or lines[i + 1]:
            return  # no blank line after it
        s = lines[i]
        if (len(s) - 2 - len(s[:-2].rstrip("\\"))) % 2:
            return  # an escaped colon
        base = _content_indent(s, _indent(s))
        body = _next_text(lines, i + 1)
        if body >= self.end or _indent(lines[body]) <= base:
            return
        _show_literal_mark(visible, i)
        self.searched = max(self.searched, i + 1)
        self.stack.append([_IN_CODE, base, i + 1, body, " " * _indent(s), ""])


# What _shows answers for a directive line that shows no words of its own (compared by identity).
_IS_CODE, _IS_HIDDEN, _IS_ENTRY, _IS_TOC = "\0code", "\0hidden", "\0entry", "\0toc"


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
    if j >= n or not lines[j]:
        return j
    if signatures:
        while j < n and lines[j] and _indent(lines[j]) > k and not _is_option(lines[j]):
            j += 1
    if j < n and lines[j] and _indent(lines[j]) > k and _is_option(lines[j]):
        while j < n and lines[j] and _indent(lines[j]) > k:
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


def _nested_lines(text: str) -> list[int]:
    """The indexes of the lines where markup may start inside an indented block: indented
    explicit markup, and lines ending in "::" (a list item's text may start a literal block)."""
    newline = text.find("\n")
    first = text if newline < 0 else text[:newline]
    found = [0] if first[:1] == " " and _EXPLICIT_AT.match(first.rstrip()) is not None else []
    # Where each match ends is on its line (an explicit one starts at the newline before it),
    # so the newlines are counted once, in order.
    ends = [*map(_END, _NESTED_EXPLICIT.finditer(text)), *map(_END, _LITERAL_MARK.finditer(text))]
    ends.sort()
    at, line = 0, 0
    for end in ends:
        line += text.count("\n", at, end)
        at = end
        found.append(line)
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content_indent(line: str, indent: int) -> int:
    """Where the text of a line indented by `indent` starts: after a bullet or an enumerator."""
    first = line[indent : indent + 1]
    if first in _BULLETS and line[indent + 1 : indent + 2] in ("", " "):
        return indent + 1 + _indent(line[indent + 1 :])
    if first.isalnum() or first in "(#":
        m = _ENUMERATOR.match(line, indent)
        if m is not None:
            return m.end()
    return indent


def _is_option(line: str) -> bool:
    """Whether a line is a field marker, as a directive's option is."""
    option = line.lstrip(" ")
    return option[:1] == ":" and _is_field_marker(option)


def _as_docutils_reads(line: str) -> str:
    """A line as docutils' string2lines gives it: vertical tabs and form feeds as spaces, tabs
    expanded, trailing whitespace dropped."""
    if "\v" in line or "\f" in line:
        line = line.replace("\v", " ").replace("\f", " ")
    if "\t" in line:
        line = line.expandtabs(_TAB_WIDTH)
    return line.rstrip()


def _width(text: str) -> int:
    """docutils' column_width: wide East Asian characters count two, combining ones none."""
    if text.isascii():
        return len(text)
    width = 0
    for c in text:
        if unicodedata.combining(c):
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


def _is_grid_border(s: str) -> bool:
    """docutils' grid table top, `+-[-+]+-+`."""
    return len(s) >= 5 and s[1] == s[-2] == "-" and s[-1] == "+" and not s.strip("+-")


def _is_field_marker(s: str) -> bool:
    """docutils' field marker `:name: `, read by hand: the name is not empty, starts with no
    colon or space, ends with no space, and ends at the first colon followed by a space or the
    end of the line; a backslash escapes the next character, and a colon before a backquote
    ends the search."""
    n = len(s)
    if n < 3 or s[1] in ": ":
        return False
    i = 1
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == ":":
            after = s[i + 1 : i + 2]
            if after in ("", " "):
                return s[i - 1] != " "
            if after == "`":
                return False
        i += 1
    return False


def _ordinal(text: str) -> tuple[int | None, str]:
    """docutils' parse_enumerator: an enumerator's value and sequence (None when invalid)."""
    if text == "#":
        return 1, "#"
    if text in ("i", "I"):
        return 1, "lowerroman" if text == "i" else "upperroman"
    if text.isdigit():
        return (int(text) if len(text) <= _MAX_ENUMERATOR_DIGITS else None), "arabic"
    if len(text) == 1:
        lower = text.islower()
        return ord(text) - ord("a" if lower else "A") + 1, "loweralpha" if lower else "upperalpha"
    sequence = "lowerroman" if text.islower() else "upperroman"
    if not _ROMAN.fullmatch(text.upper()):
        return None, sequence
    value, at, upper = 0, 0, text.upper()
    for digit, worth in _ROMAN_DIGITS:
        while upper.startswith(digit, at):
            value, at = value + worth, at + len(digit)
    return value, sequence


def _enumerators(ordinal: int, sequence: str, kind: str) -> tuple[str, str] | None:
    """docutils' make_enumerator: the next item's enumerator and the auto-enumerator, each with
    the space after it; None when the sequence has no such item."""
    prefix = "(" if kind == "parens" else ""
    suffix = "." if kind == "period" else ")"
    if sequence == "#":
        label = "#"
    elif sequence == "arabic":
        label = str(ordinal)
    elif sequence.endswith("alpha"):
        if ordinal > 26:
            return None
        label = chr(ord("a") + ordinal - 1)
    else:
        if not 0 < ordinal < 5000:
            return None
        label = ""
        for digit, worth in _ROMAN_DIGITS:
            count, ordinal = divmod(ordinal, worth)
            label += digit * count
    label = label.lower() if sequence.startswith("lower") else label.upper()
    return f"{prefix}{label}{suffix} ", f"{prefix}#{suffix} "


def _plain(title: str) -> str:
    """A title's words without inline markup: ``literal`` and *emphasis* keep their text,
    :role:`text <target>` and `link <url>`_ their text, :role:`~a.b` its last part, |name| its
    name; escapes are resolved and a reference's trailing underscores dropped. A title with
    words is never left without them."""
    t = title[:_TITLE_SCAN]
    if _MARKUP.search(t) is None:
        return t.strip()
    if t.count("``") % 2 == 0 and t.count("`") == 2 * t.count("``"):
        parts = t.split("``")  # inline literals alone (``broker_url``): their text as it is
        if all(parts[1::2]) and not any(_MARKUP.search(part) for part in parts[0::2]):
            plain = "".join(parts).strip()
            return plain if any(ch.isalnum() for ch in plain) else title.strip()
    n = len(t)
    out: list[str] = []
    role = ""  # the role written before the interpreted text that follows
    token_start = 0  # where the current run of non-blank characters starts
    i = 0
    while i < n:
        c = t[i]
        if c.isspace():
            token_start = i + 1
        if c == "\\":
            if i + 1 < n and not t[i + 1].isspace():
                out.append(t[i + 1])
            i += 2
            continue
        if c == "`" and t.startswith("``", i):
            end = t.find("``", i + 2)
            if end > i + 2:
                out.append(t[i + 2 : end])
                i = end + 2
                continue
        elif c == "`":
            end = _closing(t, "`", i + 1)
            if end > i + 1:
                inner, i = t[i + 1 : end], end + 1
                if (m := _ROLE.match(t, i)) is not None:
                    role, i = m.group(1), m.end()
                elif t.startswith("_", i):
                    i += 2 if t.startswith("__", i) else 1
                out.append(_interpreted(inner, role))
                role = ""
                continue
        elif c == ":" and (m := _ROLE.match(t, i)) is not None and t.startswith("`", m.end()):
            role, i = m.group(1), m.end()
            continue
        elif c in "*|":
            mark = "**" if t.startswith("**", i) else c
            end = _closing(t, mark, i + len(mark))
            if end > i + len(mark) and not t[i + len(mark)].isspace() and not t[end - 1].isspace():
                out.append(_unescape(t[i + len(mark) : end]))
                i = end + len(mark)
                if c == "|" and t.startswith("_", i):
                    i += 2 if t.startswith("__", i) else 1
                continue
        elif c == "_" and t.startswith("_`", i):
            i += 1  # an inline target: `text` follows
            continue
        elif c == "_" and out and out[-1][-1:].isalnum() and t[token_start] != "_":
            k = i + (2 if t.startswith("__", i) else 1)
            if k >= n or not (t[k].isalnum() or t[k] == "_"):
                i = k  # a reference: `name_`
                continue
        out.append(c)
        i += 1
    plain = "".join(out).strip()
    if not any(ch.isalnum() for ch in plain):
        return title.strip()
    return plain


def _closing(t: str, mark: str, start: int) -> int:
    """Where the next `mark` not escaped by a backslash starts, from `start`; -1 if none."""
    at = t.find(mark, start)
    while at > 0 and t[at - 1] == "\\":
        at = t.find(mark, at + 1)
    return at


def _interpreted(inner: str, role: str) -> str:
    """Interpreted text as Sphinx shows it: the explicit title of `title <target>`, else the
    target, its last dotted part after a `~`; :pep: and :rfc: name their document."""
    inner = _unescape(inner).strip()
    role = role.lower()
    lt = inner.rfind("<")
    if inner.endswith(">") and lt >= 0 and (lt == 0 or inner[lt - 1].isspace()):
        shown = inner[:lt].strip()
        if shown:
            return shown
        inner = inner[lt + 1 : -1].strip()
    if role in ("pep", "pep-reference"):
        return f"PEP {inner}"
    if role in ("rfc", "rfc-reference"):
        return f"RFC {inner}"
    if role:
        inner = inner.lstrip("!")
        if inner.startswith("~"):
            inner = inner[1:].rsplit(".", 1)[-1]
    return inner


def _unescape(text: str) -> str:
    """Backslash escapes resolved: an escaped character stays, an escaped blank goes."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            if i + 1 < n and not text[i + 1].isspace():
                out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
