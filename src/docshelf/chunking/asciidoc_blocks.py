"""The AsciiDoc scanner's state, and its delimited blocks: opened, read, closed.

The scanner (asciidoc._Scanner) is this class with the readers of what lies between blocks
(paragraphs, lists, block metadata, section titles, the document header); here is what it knows
at each line, and what it does inside a delimited block.

Constraints:
- A delimited block's closing line is found by a dictionary of the open delimiters (their place
  on the stack), however deep they nest; closing a block closes every block inside it, as
  Asciidoctor cuts a block at its terminator before it reads what the block holds.
- The lines of a block that holds no blocks (listing, literal, passthrough, comment, table) are
  read in one loop, not a call for each: a preprocessor directive shows as nothing (in a listing
  too), a comment block's lines and a table's comment lines show as nothing, the others as they
  are (a table's cells are prose, marked for inline markup).
- A description list's items are reference entries (asciidoc.py merges them with the titles):
  an item's term starts a section named by the term as plain words, nested one deeper for each
  entry it sits in (a term of another mark in the same list, or a list in a block attached to
  an entry); a sibling's term, or a block after the list that is no part of the item (a
  paragraph, a delimited block, another list), ends it, and the text after it resumes under the
  title or entry the list sits in. The items of a description list inside a [tabs] block are
  tabs, not entries.
- Code stays code: a listing's or a literal block's delimiters show as a Markdown fence, the
  opening one with the language of its source attribute line ("```java" of "[source,java]" and
  "----"), longer than any run of backticks its lines start with; a block of code that shows no
  line (nothing but include directives) shows no fence either. Markdown's own fence shows as
  written; any other delimiter (example, sidebar, quote, open, table, passthrough, comment) as an
  empty line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from docshelf.chunking.asciidoc_inline import plain_title
from docshelf.chunking.asciidoc_lines import (
    COMMENT,
    COMPOUND,
    DELIMITED,
    DELIMITER_FIRST,
    FENCE,
    LIST_ITEM,
    TABLE,
    TERM,
    VERBATIM,
    is_comment,
    leading_ticks,
    list_marker,
    term_mark,
)
from docshelf.chunking.outline import Heading

# Asciidoctor's reader strips the end of every line as Ruby's String#rstrip does.
_RSTRIP = " \t\n\v\f\r\x00"
# Styles that change what an open block ("--") or a quote block holds.
_OPEN_VERBATIM_STYLES = frozenset({"listing", "literal", "source", "pass", "verse"})
# Verbatim blocks that are no code: their delimiters show as nothing, like a compound block's.
_NOT_CODE_STYLES = frozenset({"pass", "verse", "stem", "latexmath", "asciimath"})
# A source language a fence's info string can carry ("java", "c++", "objective-c").
_LANGUAGE = re.compile(r"[\w+#.-]+")
# Preprocessor lines, read even inside a verbatim block: a conditional or an include directive.
_DIRECTIVE = re.compile(r"(?:ifn?def|endif)::[^\s\[]*+\[\]|ifeval::\[.+\]|include::[^\[]*+\[.*\]")

# A reference entry, a description list's item, by 0-based line indexes: (the term's line, the
# line after its heading (the term's line itself when its text follows the term on it), how many
# entries it sits in, its name); one without a name is where the text after a list resumes under
# the title or entry its list sits in, that many entries deep. A plain tuple, as outline.Heading is.
Entry = tuple[int, int, int, str]

# The scanner's state between blocks: at a block boundary, in a paragraph (or a list item's
# text), after a blank line in a list, in a verbatim paragraph, in a [comment] paragraph.
BOUNDARY, PARAGRAPH, LIST_GAP, VERBATIM_PARAGRAPH, COMMENT_PARAGRAPH = range(5)
# The terminator of a list item's literal paragraph, which takes every line up to a blank one or a
# list continuation (in a description list, up to the next item too), and which Asciidoctor then
# reads as the item's blocks: a block of its own, that no line of the file closes.
REGION = "\n"


class _Open(NamedTuple):
    """A delimited block that has not closed yet."""

    terminator: str
    kind: int
    attached: bool  # opened by a list continuation: the list item goes on after it closes
    marker: str  # the marker of the list it is attached to
    fence: str  # a block of code: the Markdown fence its delimiters show as; "" for none
    line: int  # its opening line
    tabs: bool  # a [tabs] block: its description list's terms are tab labels, not entries


class BlockScanner:
    """What the scanner knows at each line: the open delimited blocks, whether a block
    boundary, a paragraph or a list is under way, and the block metadata (attribute lines,
    anchors, block titles) waiting for the next block; and how it reads delimited blocks."""

    def __init__(self, raw: list[str]) -> None:
        self.lines = [line.rstrip(_RSTRIP) for line in raw]
        self.visible = raw
        self.headings: list[Heading] = []
        self.attributes: dict[str, str] = {}
        self.stack: list[_Open] = []
        self.open_at: dict[str, int] = {}  # an open block's terminator -> its place in stack
        self.mode = BOUNDARY
        self.in_list = False
        self.marker = ""  # the list's first item's marker: an item with the same one is a sibling
        self.wants_text = False  # its item has a term and no text yet: it takes the next line
        self.gap = 0  # blank lines since the list's last line
        self.continued = False  # the line before was a list continuation ("+")
        self.literal = False  # the paragraph under way is indented: its comments are content
        self.meta_start = -1  # the first line of the metadata waiting for the next block
        self.style = ""  # the style the waiting metadata gives the next block
        self.block_title = False  # the waiting metadata holds a block title
        self.language: str | None = None  # the source language the waiting metadata names
        self.code_shown = False  # the open block of code has a line that shows
        self.code_ticks = False  # ... or one that starts with a backtick: its fence is longer
        # The innermost open block holds blocks and no list item's region is open: only an open
        # block's delimiter can close a block there (the other lines skip _in_block).
        self.compound = False
        self.started = False  # a block or a section came: a level-0 title is no document title
        self.marked: list[int] = []  # lines of prose that may hold inline markup ("[", "<<")
        self.entries: list[Entry] = []  # the reference entries and the resumes, in line order
        # The open entries, innermost last: (the depth of the stack where its list is, its mark).
        self.terms: list[tuple[int, str]] = []
        self.named = 0  # how many entries the text under way sits in (its breadcrumb names)
        self.attached_tabs = False  # a [tabs] attribute line waits for an attached block
        self.tabs = 0  # how many open blocks are [tabs] blocks

    def _in_block(self, i: int, s: str) -> int:
        """Read the line at `i` inside a delimited block: a closing line (its own or an outer
        block's), or a line of a block that holds no blocks; -1 for a line of one that does."""
        if s and s[0] in DELIMITER_FIRST and (k := self.open_at.get(s)) is not None:
            self._show_closing(i, self.stack[-1] if self.stack[-1].fence else self.stack[k])
            self._close(i, k)
            return i + 1
        if (k := self.open_at.get(REGION)) is not None and (
            not s
            or s == "+"
            or (self.stack[k].marker.endswith(TERM) and list_marker(s) == self.marker)
        ):
            self._close(i, k)
            if not s:
                self.mode, self.gap = LIST_GAP, 1
            elif s == "+":
                self.visible[i] = ""
            self.continued, self.wants_text = s == "+", s != "+" and self._item(i, s)
            return i + 1
        kind = self.stack[-1].kind
        if kind == COMPOUND:
            return -1
        if k is not None:  # a line may close the list item's region: one at a time
            return self._lines_as_they_are(i, i + 1, kind)
        return self._lines_as_they_are(i, len(self.lines), kind)

    def _lines_as_they_are(self, i: int, end: int, kind: int) -> int:
        """Read the lines from `i` of a block that holds no blocks, up to `end` or the next line
        that closes a block; returns that line. (One loop for the many lines of code, rather than
        a call for each.)"""
        lines, visible, open_at = self.lines, self.visible, self.open_at
        blank_all, table = kind == COMMENT, kind == TABLE
        shown = ticks = False
        while i < end:
            s = lines[i]
            if s:
                first = s[0]
                if first in DELIMITER_FIRST:
                    if s in open_at:
                        break
                    ticks = ticks or first == "`"
                if (
                    blank_all
                    or (first in "ie" and _DIRECTIVE.fullmatch(s))
                    or (table and is_comment(s))
                ):
                    visible[i] = ""
                else:
                    shown = True
                    if table and ("[" in s or "<<" in s):  # a table's cells are prose
                        self.marked.append(i)
            elif blank_all:
                visible[i] = ""
            i += 1
        self.code_shown = self.code_shown or shown
        self.code_ticks = self.code_ticks or ticks
        return i

    def _item(self, i: int, s: str) -> bool:
        """Show the line at `i` of a list without a description list's mark ("Java" of the tab
        label "Java::", "term: text" of "term:: text"), and note a term as an entry; whether it
        is a term without text."""
        mark = term_mark(s)
        if mark is None or LIST_ITEM.match(s) is not None:
            return False
        at, end = mark.span()
        if s[at - 1] not in " \t" and not self.tabs:
            self._entry_term(i, s, at, end)
        if end == len(s):
            self.visible[i] = s[:at].rstrip(" \t")
            return True
        self.visible[i] = s[:at] + (":" if s[at] == ":" else "") + s[end:]
        return False

    def _entry_term(self, i: int, s: str, at: int, end: int) -> None:
        """Note the term at `i` (its mark from `at` to `end`) as an entry: a sibling of the open
        entry of its mark in its list, which it ends with those inside it; else one deeper."""
        depth, mark, terms = len(self.stack), s[at:end], self.terms
        while terms and terms[-1][0] > depth:
            terms.pop()  # entries of lists in blocks that have closed
        for k in range(len(terms) - 1, -1, -1):
            if terms[k][0] < depth:
                break  # the entries of an outer list
            if terms[k][1] == mark:
                del terms[k:]
                break
        terms.append((depth, mark))
        term = s[:at].strip(" \t")
        if self.entries and self.entries[-1][0] >= i and not self.entries[-1][3]:
            self.entries.pop()  # a resume at this line: the entry starts here instead
        body = i if end < len(s) else i + 1
        self.entries.append((i, body, len(terms) - 1, plain_title(term, self.attributes) or term))
        self.named = len(terms)

    def _resume(self, i: int, depth: int) -> None:
        """End the entries of the lists at `depth` of the stack or deeper, and those of lists in
        blocks that have closed: the text from `i` on resumes under what they sit in."""
        terms = self.terms
        while terms and terms[-1][0] >= depth:
            terms.pop()
        if len(terms) < self.named:
            self.named = len(terms)
            self.entries.append((i, i, self.named, ""))

    def _open(
        self, i: int, terminator: str, style: str, attached: bool, language: str | None = None
    ) -> None:
        """Open the delimited block at `i`; a block of code's delimiter shows as a Markdown fence
        with the `language` its metadata names (or the document's source-language)."""
        kind = DELIMITED.get(terminator[:4], VERBATIM)  # fenced code: verbatim
        if terminator in ("--", REGION) or (terminator[:4] == "____" and style == "verse"):
            kind = VERBATIM if style in _OPEN_VERBATIM_STYLES else COMPOUND
            kind = COMMENT if style == "comment" else kind
        fence = ""
        if terminator in (FENCE, REGION):
            pass  # Markdown's own fence shows as written; a literal paragraph's line is text
        elif kind == VERBATIM and terminator[0] in "-." and style not in _NOT_CODE_STYLES:
            fence = FENCE
            if not language and style == "source":
                language = self.attributes.get("source-language", "")
            self.code_shown = self.code_ticks = False
            if language and (language.isalnum() or _LANGUAGE.fullmatch(language)):
                self.visible[i] = fence + language
            else:
                self.visible[i] = fence
        else:
            self.visible[i] = ""
        self.open_at[terminator] = len(self.stack)
        tabs = style == "tabs"
        self.tabs += tabs
        self.stack.append(_Open(terminator, kind, attached, self.marker, fence, i, tabs))
        self.mode, self.in_list, self.continued = BOUNDARY, False, False
        self.compound = kind == COMPOUND and REGION not in self.open_at

    def _show_closing(self, i: int, block: _Open) -> None:
        """Show the closing delimiter at `i` of `block` (the innermost block of code it closes,
        when it closes one, so that its fence closes too): a block of code's as its closing fence
        (longer than any run of backticks its lines start with; none at all for a block that
        shows no line), Markdown's own fence as written, any other as nothing."""
        if block.terminator == FENCE:
            return
        if not block.fence:
            self.visible[i] = ""
        elif not self.code_shown:
            self.visible[block.line] = self.visible[i] = ""
        else:
            fence = block.fence
            if self.code_ticks:
                ticks = max(map(leading_ticks, self.visible[block.line + 1 : i]))
                fence = "`" * max(len(fence), ticks + 1)
                self.visible[block.line] = fence + self.visible[block.line].lstrip("`")
            self.visible[i] = fence

    def _close(self, i: int, k: int) -> None:
        """Close the block at stack[k] on its terminator at line `i`, and every block inside it
        (Asciidoctor cuts a block at its terminator before it reads what the block holds)."""
        closing = self.stack[k]
        for inner in self.stack[k:]:
            del self.open_at[inner.terminator]
            self.tabs -= inner.tabs
        del self.stack[k:]
        self.compound = (
            bool(self.stack) and self.stack[-1].kind == COMPOUND and REGION not in self.open_at
        )
        self.mode = PARAGRAPH if closing.attached else BOUNDARY
        self.in_list, self.continued, self.literal, self.gap = closing.attached, False, False, 0
        self.marker = closing.marker if closing.attached else self.marker
        if closing.attached:  # the item goes on: entries of lists in the block end
            self._resume(i if closing.terminator == REGION else i + 1, len(self.stack) + 1)
        if closing.kind != COMMENT:  # a comment block's neighbours keep their metadata
            self.meta_start, self.style, self.block_title = -1, "", False
