"""The reStructuredText chunker: a file cut at its section titles, as docutils reads them, and at
its reference entries; a chunk's text is what the rendered page shows (rst_visible.py, with
rst_nested.py for markup inside indented blocks; rst_syntax.py reads docutils' syntax).

Constraints:
- Pure and deterministic, no I/O: the same text always gives the same outline.
- The visible lines are the file's own lines one for one, so line numbers stay the file's.
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
- Linear time: each line is read a bounded number of times (the scanner reads the lines of an
  indented block once, marking those where markup of its own may start, and only marked
  blocks are read again), and every pattern is anchored with bounded backtracking, so a
  megabyte line or 100k lines of adornment take well under a second. The common blocks (a
  paragraph of one line, a bullet, a directive) are read inline in the scanner's loops, as the
  methods they stand for would read them.
- Breadcrumb titles are plain words (rst_syntax._plain).
- Its modules import down only: rst.py, rst_nested.py, rst_visible.py, rst_syntax.py (the
  visible text reaches the scan through rst_visible._Scanned); of docshelf, only chunking's
  own modules and config.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from docshelf.chunking.markdown import Chunk
from docshelf.chunking.outline import Heading, Outline, outline, prepared_lines, split_outline
from docshelf.chunking.rst_nested import _Nested
from docshelf.chunking.rst_syntax import (
    _BULLETS,
    _CONTENT_MARKUP,
    _DIRECTIVE,
    _ENUMERATOR,
    _EXPLICIT_AT,
    _MARKUP,
    _OPTION_MARKER,
    _TARGET,
    _TITLE_SCAN,
    _as_docutils_reads,
    _enumerators,
    _is_field_marker,
    _is_grid_border,
    _ordinal,
    _plain,
    _width,
)
from docshelf.chunking.rst_visible import (
    _Entry,
    _fence,
    _next_text,
    _show_directive,
    _show_literal_mark,
    _shown_lines,
)
from docshelf.chunking.text import prepare

# docutils keeps a title whose adornment is shorter than it from this length on (with a
# warning), and reads a shorter lone adornment line as text rather than a transition.
_LONG_ADORNMENT = 4
# docutils' `nonalphanum7bit`: the characters an adornment line may repeat.
_ADORNMENT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# The lines of one repeated adornment character that a construct tested before adornments takes:
# a bullet, a line block, explicit markup, an anonymous target, a doctest.
_EARLIER_CONSTRUCTS = frozenset(("-", "+", "*", "|", "..", "__", ">>>"))
# looks_like_rst reads this many non-blank lines from the top: where a document's title is.
_SNIFF_LINES = 30
# What may follow a letter that starts an enumerator: "a." or "b)", or a roman numeral's next.
_AFTER_ENUMERATOR_LETTER = frozenset(".)ivxlcdmIVXLCDM")


# A title: (the overline, or the title when there is none; the line after the underline; the
# underline's character, doubled when an overline matches it; the text; whether the adornment
# is at least as wide as the title). A plain tuple, as outline.Heading is.
_Title = tuple[int, int, str, str, bool]


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


def _outline(lines: list[str], headings: list[Heading]) -> Outline:
    """outline() of the lines and headings, given the lines between the headings' lines joined
    (the same text, cut at the same offsets): outline() then adds up a handful of lengths where
    it would add up one per line."""
    last = len(lines)
    if 16 * len(headings) > last:
        return outline(lines, headings)
    groups: list[str] = []
    cut: list[Heading] = []
    start = 0  # the first line of the group being gathered
    for line, body, level, title in headings:
        if line < start or body < line:
            return outline(lines, headings)  # out of order: nothing to gather
        # Past the end, a line index stays as it is: outline() takes it as the end.
        at, body_at = line, body
        if line < last:
            if line > start:
                groups.append("\n".join(lines[start:line]))
                start = line
            at = len(groups)
        if body < last:
            if body > start:
                groups.append("\n".join(lines[start:body]))
                start = body
            body_at = len(groups)
        cut.append((at, body_at, level, title))
    groups.append("\n".join(lines[start:]))
    return outline(groups, cut)


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
        # The lines where markup may start inside an indented block, found as the blocks are
        # read, in order (-1 first): indented explicit markup, and a line that ends in "::"
        # before a blank line (a list item's text may start a literal block).
        self.marks = [-1]
        self.own = lines  # as written: code keeps them
        self.entries: list[_Entry] = []
        # Entries of an unknown domain without a body: (line, the next text's line, what the
        # line shows unless that text is a title, whose target the entry is).
        self.bodiless: list[tuple[int, int, str]] = []

    def run(self) -> None:
        """Read the lines: the most common blocks here, the others by block()."""
        i, n, block, text, lines = 0, self.n, self.block, self.text, self.lines
        explicit, marks = self.explicit, self.marks
        while i < n:
            s = lines[i]
            if not s:
                i += 1
                continue
            first = s[0]
            if first.isalpha() and s[1:2] not in _AFTER_ENUMERATOR_LETTER:
                self.top = False  # most blocks: no construct but text starts with a word
                if i + 1 < n and not lines[i + 1] and not s.endswith("::"):
                    i += 2  # a paragraph of one line, as text() reads it, and a blank line
                else:
                    i = text(i)
            elif first in _BULLETS and (len(s) == 1 or s[1] == " "):
                # A bullet list item, as block() reads it (no adornment: one character long,
                # it is one of _EARLIER_CONSTRUCTS or no 7-bit one, and else its second is " ").
                self.top = False
                j = i + 1  # indented_end(i + 1)
                while j < n:
                    t = lines[j]
                    if not t:
                        if lines[j - 1][-2:] == "::":
                            marks.append(j - 1)
                    elif t[0] != " ":
                        break
                    elif ".." in t and _EXPLICIT_AT.match(t) is not None:
                        marks.append(j)
                    j += 1
                if marks[-1] >= i:
                    self.content(i, j)
                i = j
            elif first == "." and s[1:3] == ". ":
                top, self.top = self.top, False
                i = explicit(i, top)  # as block() reads it
            else:
                i = block(i)

    def block(self, i: int) -> int:
        """The Body state: what the line at i starts, in docutils' order of transitions (run()
        reads a bullet item and `.. ` explicit markup itself, as this does)."""
        s = self.lines[i]
        if not s:
            return i + 1
        first = s[0]
        if first == " ":
            end = self.indented_end(i)  # a block quote
            return self.content(i, end) if self.holds_markup(i, end) else end
        top, self.top = self.top, False
        if first == "." and s[1:3] == ". ":
            return self.explicit(i, top)  # no construct tested before it takes ".. " and words
        if first in _ADORNMENT and s not in _EARLIER_CONSTRUCTS and not s.strip(first):
            return self.adornment(i)  # no construct tested before it takes such a line
        if first in _BULLETS and (len(s) == 1 or s[1] == " "):
            end = self.indented_end(i + 1)
            return self.content(i, end) if self.holds_markup(i, end) else end
        if first.isalnum() or first in "(#":
            m = _ENUMERATOR.match(s)
            if m is not None and self.is_list_item(i, m):
                end = self.indented_end(i + 1)
                return self.content(i, end) if self.holds_markup(i, end) else end
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
            return self.content(j, end) if self.holds_markup(j, end) else end
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
        lines, n = self.lines, self.n
        s = lines[i]
        if (m := _DIRECTIVE.match(s)) is not None:
            end = i + 1  # indented_end(i + 1), the most common block read here
            marks = self.marks
            while end < n:
                t = lines[end]
                if not t:
                    if lines[end - 1][-2:] == "::":
                        marks.append(end - 1)
                elif t[0] != " ":
                    break
                elif ".." in t and _EXPLICIT_AT.match(t) is not None:
                    marks.append(end)
                end += 1
            if self.markup:
                _show_directive(self, i, end, m.group(1))
            return end
        if _TARGET.match(s):
            end = i + 1  # until_blank_end(i + 1), then hide()
            while end < n and lines[end][:1] == " ":
                end += 1
            self.visible[i:end] = [""] * (end - i)
            self.top = top
            return end
        if (m := _CONTENT_MARKUP.match(s)) is not None:
            end = self.indented_end(i + 1)
            if self.markup:
                _show_directive(self, i, end, m.group("directive"))
            return end
        if not s[2:].strip() and (i + 1 >= n or not lines[i + 1]):
            end = i + 1  # an empty comment: its line alone
        else:
            end = self.indented_end(i + 1)  # a comment and its indented block
        self.hide(i, end, top)
        return end

    def content(self, start: int, end: int, entry: int = 0) -> int:
        """The indented block on lines [start, end), which may hold markup of its own (inside an
        entry's description when `entry` is 1), read when the top level's markup is; returns
        `end`."""
        marks = self.marks
        if marks[-1] < start or not self.markup:
            return end  # as holds_markup() says, or no markup is read
        low = bisect_left(marks, start)
        _Nested(self, start, end, marks[low : bisect_left(marks, end, low)], entry).run()
        return end

    def holds_markup(self, start: int, end: int) -> bool:
        """Whether the block on lines [start, end), just read, may hold markup of its own (its
        lines are the last that `marks` has read)."""
        return self.marks[-1] >= start

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
        """The first line from j on that is neither blank nor indented; the lines where markup
        may start inside the block go to `marks`."""
        lines, n, marks = self.lines, self.n, self.marks
        while j < n:
            s = lines[j]
            if not s:
                if j and lines[j - 1][-2:] == "::":
                    marks.append(j - 1)
            elif s[0] != " ":
                break
            elif ".." in s and _EXPLICIT_AT.match(s) is not None:
                marks.append(j)
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
