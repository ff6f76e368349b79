"""The reStructuredText chunker: a file cut at its section titles, as docutils reads them.

Constraints:
- Pure and deterministic, no I/O: the same text always gives the same outline.
- The visible lines are the file's own lines one for one, so line numbers stay the file's. What
  is no prose becomes an empty line: comments (`.. note to self` and their indented block),
  hyperlink targets (`.. _label:`) and the field list at the top of the document (`:orphan:`,
  `:tocdepth: 2` before anything else). Directive bodies, admonitions and literal blocks are
  content and stay.
- Section titles follow docutils' parser (docutils.parsers.rst.states), read at the top level
  of the document, where alone docutils allows sections: a title is the first line of a text
  block underlined, or over- and underlined, by one repeated non-alphanumeric 7-bit character.
  An adornment shorter than its title counts only from 4 characters (docutils warns, and keeps
  the title); an overline must equal its underline. Levels go by each style's first appearance;
  a title that would skip a level is no section. Nothing inside an indented block (block quote,
  literal block, directive, comment or list item body), a paragraph, a table, a doctest or a
  line block is a title, and an adornment line alone between blank lines is a transition.
- Linear time: each line is read a bounded number of times, and every pattern is anchored with
  bounded backtracking, so a megabyte line or 100k lines of adornment take well under a second.
- Breadcrumb titles are plain words: inline literals, roles, references, emphasis,
  substitutions and escapes lose their markup (but a title with words never becomes empty).
"""

from __future__ import annotations

import re
import unicodedata

from docshelf.chunking.markdown import Chunk
from docshelf.chunking.outline import Heading, Outline, outline, prepared_lines, split_outline
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
    rf"|\|(?! |$)|{_SIMPLENAME} ?::(?: +|$))"
)
_TARGET = re.compile(r"\.\. +_(?! |$)")
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_DIGITS = (
    ("M", 1000), ("CM", 900), ("D", 500), ("CD", 400), ("C", 100), ("XC", 90), ("L", 50),
    ("XL", 40), ("X", 10), ("IX", 9), ("V", 5), ("IV", 4), ("I", 1),
)  # fmt: skip
# A role's name, as `:py:func:` before or after interpreted text (bounded: role names are short).
# A character that may start or end inline markup in a title.
_MARKUP = re.compile(r"[\\`*|:_]")
_ROLE = re.compile(r":((?:(?!_)\w)(?:[-._+:]?(?:(?!_)\w)){0,60}):")


# A title: (the overline, or the title when there is none; the line after the underline; the
# underline's character, doubled when an overline matches it; the text; whether the adornment
# is at least as wide as the title). A plain tuple, as outline.Heading is.
_Title = tuple[int, int, str, str, bool]


def split_rst(path: str, text: str) -> list[Chunk]:
    """Cut a reStructuredText file into chunks: one section per title, packed like Markdown's."""
    return split_outline(path, outline_rst(text))


def outline_rst(text: str) -> Outline:
    """The visible lines and sections of a reStructuredText file."""
    scan = _Scan(prepared_lines(text))
    scan.run()
    return outline(scan.visible, _headings(scan.titles))


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


class _Scan:
    """docutils' Body state machine at the top level, by line index: each method reads the
    construct that starts at a line and returns the index of the line after it."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = [
            _as_docutils_reads(line)
            if "\t" in line or "\v" in line or "\f" in line
            else line.rstrip()
            for line in lines
        ]
        self.n = len(lines)
        self.visible = list(lines)
        self.titles: list[_Title] = []
        self.top = True  # nothing yet but blank lines, comments, targets and field lists

    def run(self) -> None:
        i, n, block = 0, self.n, self.block
        while i < n:
            i = block(i)

    def block(self, i: int) -> int:
        """The Body state: what the line at i starts, in docutils' order of transitions."""
        s = self.lines[i]
        if not s:
            return i + 1
        first = s[0]
        if first == " ":
            return self.indented_end(i)  # a block quote
        top, self.top = self.top, False
        if first in _ADORNMENT and s not in _EARLIER_CONSTRUCTS and not s.strip(first):
            return self.adornment(i)  # no construct tested before it takes such a line
        if first in _BULLETS and (len(s) == 1 or s[1] == " "):
            return self.indented_end(i + 1)
        if first.isalnum() or first in "(#":
            m = _ENUMERATOR.match(s)
            if m is not None and self.is_list_item(i, m):
                return self.indented_end(i + 1)
        if first == ":" and _is_field_marker(s):
            end = self.indented_end(i + 1)
            if top:
                self.hide(i, end, top)
            return end
        if first in "-+/" and (m := _OPTION_MARKER.match(s)) is not None:
            end = self.indented_end(i + 1)
            if s[m.end() :] or any(self.lines[k] for k in range(i + 1, end)):
                return end
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
            return self.after_paragraph(i, j)
        if s[0] == " ":
            return self.indented_end(j)  # a definition list item
        if s[0] in _ADORNMENT and not s.strip(s[0]):
            title = self.lines[i]
            width = len(title) if title.isascii() else _width(title)
            if width <= len(s) or len(s) >= _LONG_ADORNMENT:
                self.titles.append((i, j + 1, s[0], title, width <= len(s)))
                return j + 1
        end = self.text_block_end(j, flush_left=True)
        return self.after_paragraph(end - 1, end)

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
        elif _CONTENT_MARKUP.match(s):
            return self.indented_end(i + 1)
        elif not s[2:].strip() and (i + 1 >= self.n or not self.lines[i + 1]):
            end = i + 1  # an empty comment: its line alone
        else:
            end = self.indented_end(i + 1)
        self.hide(i, end, top)
        return end

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
        for k in range(start, end):
            self.visible[k] = ""
        self.top = top


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
