"""The AsciiDoc chunker: a file cut at its section titles as Asciidoctor reads them, then packed
by the section packer (outline.split_outline), which gives every chunk its guarantees.

Constraints:
- Pure and deterministic, no I/O: an include directive is a line of text, never followed; the
  lines between conditional directives are kept whatever the condition.
- Linear in the input: each line is visited once, with checks that are plain string tests or
  patterns that cannot backtrack over a line more than a bounded number of times; a delimited
  block's closing line is found by a dictionary of the open delimiters, however deep they nest.
- The visible text keeps every line of the file, one for one: a line that is no prose (the
  document header's author, revision and attribute lines, an attribute entry, a comment line or
  block, a conditional directive) becomes an empty line, so line numbers stay the file's.
- Section titles are found where Asciidoctor looks for them, at a block boundary outside every
  delimited block: "== Title" (one '=' per level, up to six, or Markdown's '#'), or a line with
  an underline of '=', '-', '~', '^' or '+' as long as it, give or take one. A line inside a
  delimited block (listing, literal, example, sidebar, quote, table, passthrough, open, comment,
  fenced code), a literal paragraph, a list item or a paragraph is never a title; a title after
  [discrete] or [float] is a heading of its own section's content, not a section.
- The block metadata just above a title (attribute lines, anchors, block titles, and the blank
  lines and comments between them) starts its heading; a block title is never a section title.
- A breadcrumb's titles are plain words: inline formatting marks, macros (kept: their text) and
  anchors are taken out, and {name} references are replaced by the attribute entries defined
  above the title and Asciidoctor's built-in character attributes; any other reference stays as
  written, as Asciidoctor leaves it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from docshelf.chunking.markdown import Chunk
from docshelf.chunking.outline import Heading, Outline, outline, split_outline
from docshelf.chunking.text import prepare
from docshelf.config import MAX_TITLE_CHARS

# Asciidoctor's reader strips the end of every line as Ruby's String#rstrip does.
_RSTRIP = " \t\n\v\f\r\x00"
# Only this much of a title is cleaned into breadcrumb words: the breadcrumb cuts it shorter, and
# the cleaning patterns then stay cheap whatever a title line's length.
_TITLE_INPUT_CHARS = 2 * MAX_TITLE_CHARS

# A delimited block's opening line is its closing line: two characters for an open block, four or
# more of one character for the others (a table's first character may differ), three backticks
# and an optional language for fenced code, which closes on three backticks. What one holds:
# blocks, lines shown as they are, a comment, a table's cells (lines shown as they are but for
# comment lines: an AsciiDoc cell is a document of its own, whose entries stay in it).
_COMPOUND, _VERBATIM, _COMMENT, _TABLE = range(4)
_DELIMITED = {
    **dict.fromkeys(("----", "....", "++++"), _VERBATIM),
    **dict.fromkeys(("====", "****", "____"), _COMPOUND),
    **dict.fromkeys(("|===", ",===", ":===", "!==="), _TABLE),
    "////": _COMMENT,
}
_DELIMITER_HEADS = frozenset(tip[:2] for tip in _DELIMITED) | {"--", "``"}
_DELIMITER_FIRST = frozenset(head[0] for head in _DELIMITER_HEADS)
_FENCE = "```"
# Styles that change what an open block ("--") or a quote block holds.
_OPEN_VERBATIM_STYLES = frozenset({"listing", "literal", "source", "pass", "verse"})
# Styles that make a paragraph verbatim: its lines are content, whatever they look like.
_VERBATIM_STYLES = frozenset({"literal", "listing", "source", "verse"})
_DISCRETE_STYLES = frozenset({"discrete", "float"})

# The scanner's state between blocks: at a block boundary, in a paragraph (or a list item's
# text), after a blank line in a list, in a verbatim paragraph, in a [comment] paragraph.
_BOUNDARY, _PARAGRAPH, _LIST_GAP, _VERBATIM_PARAGRAPH, _COMMENT_PARAGRAPH = range(5)
# The terminator of a list item's literal paragraph, which takes every line up to a blank one or a
# list continuation (in a description list, up to the next item too), and which Asciidoctor then
# reads as the item's blocks: a block of its own, that no line of the file closes.
_REGION = "\n"

# Asciidoctor's patterns for lines, each matched against a whole stripped line (fullmatch) or at
# its start (match).
_ATTRIBUTE_ENTRY = re.compile(r":(!?\w[^:]*+):(?:[ \t]+(.*))?")
_BLOCK_ANCHOR = re.compile(r"\[\[(?:|(?:[^\W\d]|:)[\w\-:.]*+(?:, *+.+)?)\]\]")
_BLOCK_ATTRIBUTES = re.compile(r"\[(?:|[\w.#%{,\"'].*)\]")
_BLOCK_TITLE = re.compile(r"\.\.?[^ \t.]")
_LIST_ITEM = re.compile(
    r"[ \t]*+(-|\*++|\u2022|\.++|[0-9]++\.|[a-zA-Z]\.|[IVXivx]++\))[ \t]|(<(?:[0-9]++|\.)>)[ \t]"
)
_DESCRIPTION_MARK = re.compile(r"(?::{2,4}+|;;)(?=[ \t]|$)")
_BREAK = re.compile(r"'{3,}+|<{3,}+| {0,3}+([-*_])( *+)\1\2\1")
_BLOCK_MACRO = re.compile(r"(?:image|video|audio)::\S(?:.*\S)?\[.*\]|toc::\[.*\]")
_CONDITIONAL = re.compile(r"(?:ifn?def|endif)::[^\s\[]*+\[\]|ifeval::\[.+\]")
_ALNUM = re.compile(r"[^\W_]")
_STYLE_END = re.compile(r"[#.%]")
_TERM = (":", ";")  # how a description list's marker ends
_REVISION_COMMA = re.compile(r",(?!:)")
_SETEXT_LEVELS = {"=": 0, "-": 1, "~": 2, "^": 3, "+": 4}
_SECTION_ANCHOR = re.compile(r"\[\[(?:[^\W\d]|:)[\w\-:.]*+(?:, *+.+)?\]\]")
_CONTINUATIONS = (" \\", " +")

# Inline markup in titles, taken out for the breadcrumb. (Negated classes bound every scan by
# the next delimiter, so a title of markup characters costs linear time.)
_ATTRIBUTE_REFERENCE = re.compile(r"(\\)?\{(\w[\w-]*+)\}")
_PASSTHROUGH = re.compile(r"\+\+\+([^+]+)\+\+\+|\+\+([^+]+)\+\+|pass:[a-z,]*+\[([^\]]*)\]")
_MACRO = re.compile(
    r"\b(xref|link|mailto|kbd|btn|menu|icon|image|stem|latexmath|asciimath|footnote|footnoteref"
    r"|anchor|indexterm2?|(?:https?|ftp|irc|file)(?=://)):([^\s\[]*+)\[([^\]]*)\]"
)
_INLINE_ANCHOR = re.compile(r"\[\[\[?[^\[\]]*\]\]\]?|\(\(\([^()]*\)\)\)")
_INDEX_TERM = re.compile(r"\(\(([^()]*)\)\)")
_CROSS_REFERENCE = re.compile(r"<<([^<>,]*)(?:,([^<>]*))?>>")
_ROLE = re.compile(r"\[[^\[\]]*\](?=[#*_`])")
_UNCONSTRAINED = re.compile(r"\*\*([^*]+)\*\*|__([^_]+)__|``([^`]+)``|##([^#]+)##")
_CONSTRAINED = re.compile(
    r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?!\w)|(?<![\w_])_([^_\s](?:[^_]*[^_\s])?)_(?!\w)"
    r"|(?<![\w`])`([^`\s](?:[^`]*[^`\s])?)`(?!\w)|(?<![\w#])#([^#\s](?:[^#]*[^#\s])?)#(?!\w)"
    r"|(?<![\w+])\+([^+\s](?:[^+]*[^+\s])?)\+(?!\w)|\^([^\^\s]+)\^|~([^~\s]+)~"
)
_ESCAPE = re.compile(r"\\(?=[*_`#+^~{\[<(])")
_MARKUP = re.compile(r"[*_`#+^~{\[<(:\\]")
_WORD = re.compile(r"\w")

# Asciidoctor's built-in attributes that stand for a character (or a blank, or nothing).
_CHARACTER_NAMES = (
    "amp apos asterisk backslash backtick brvbar caret cpp deg endsb gt ldquo lsquo lt plus pp"
    " quot rdquo rsquo startsb tilde two-colons two-semicolons vbar"
)
_CHARACTERS = "& ' * \\ ` \u00a6 ^ C++ \u00b0 ] > \u201c \u2018 < + ++ \" \u201d \u2019 [ ~ :: ;; |"
_BUILT_IN_ATTRIBUTES = {
    **dict(zip(_CHARACTER_NAMES.split(), _CHARACTERS.split(), strict=True)),
    **dict.fromkeys(("nbsp", "sp"), " "),
    **dict.fromkeys(("blank", "empty", "wj", "zwsp"), ""),
}


_Title = tuple[int, str, int]  # level, text, lines (1, or 2 with an underline): a plain tuple


class _Open(NamedTuple):
    """A delimited block that has not closed yet."""

    terminator: str
    kind: int
    attached: bool  # opened by a list continuation: the list item goes on after it closes
    marker: str  # the marker of the list it is attached to


def split_asciidoc(path: str, text: str) -> list[Chunk]:
    """Cut an AsciiDoc file into chunks: one section per section title, sections without a body
    dropped, each kept section packed into pieces of at most MAX_CHUNK_BYTES bytes of UTF-8."""
    return split_outline(path, outline_asciidoc(text))


def outline_asciidoc(text: str) -> Outline:
    """The visible lines and the sections of an AsciiDoc file (raw text, prepared here)."""
    scanner = _Scanner(prepare(text).split("\n"))
    scanner.run()
    return outline(scanner.visible, scanner.headings)


class _Scanner:
    """One pass over the lines, keeping what Asciidoctor's parser would know at each: the open
    delimited blocks, whether a block boundary, a paragraph or a list is under way, and the
    block metadata (attribute lines, anchors, block titles) waiting for the next block."""

    def __init__(self, raw: list[str]) -> None:
        self.lines = [line.rstrip(_RSTRIP) for line in raw]
        self.visible = raw
        self.headings: list[Heading] = []
        self.attributes: dict[str, str] = {}
        self.stack: list[_Open] = []
        self.open_at: dict[str, int] = {}  # an open block's terminator -> its place in stack
        self.mode = _BOUNDARY
        self.in_list = False
        self.marker = ""  # the list's first item's marker: an item with the same one is a sibling
        self.wants_text = False  # its item has a term and no text yet: it takes the next line
        self.gap = 0  # blank lines since the list's last line
        self.continued = False  # the line before was a list continuation ("+")
        self.literal = False  # the paragraph under way is indented: its comments are content
        self.meta_start = -1  # the first line of the metadata waiting for the next block
        self.style = ""  # the style the waiting metadata gives the next block
        self.block_title = False  # the waiting metadata holds a block title
        self.started = False  # a block or a section came: a level-0 title is no document title

    def run(self) -> None:
        lines, n = self.lines, len(self.lines)
        styled = self._styled_paragraph
        modes = (self._boundary, self._paragraph, self._list_gap, styled, styled)
        i = 0
        while i < n:
            s = lines[i]
            if self.stack and (after := self._in_block(i, s)) >= 0:
                i = after
            elif s[:1] in ("i", "e") and _CONDITIONAL.fullmatch(s):
                self.visible[i] = ""  # the preprocessor takes the line out: nothing changes
                i += 1
            elif (after := modes[self.mode](i, s)) >= 0:
                i = after
            else:  # the line ends what was under way and starts a block
                self.mode = _BOUNDARY
                i = self._boundary(i, s)
        if self.meta_start >= 0:  # metadata that no block follows: nothing to show
            self.visible[self.meta_start :] = [""] * (n - self.meta_start)

    def _in_block(self, i: int, s: str) -> int:
        """Read the line at `i` inside a delimited block: a closing line (its own or an outer
        block's), or a line of a block that holds no blocks; -1 for a line of one that does."""
        if s and s[0] in _DELIMITER_FIRST and (k := self.open_at.get(s)) is not None:
            self._close(i, k)
            return i + 1
        if (k := self.open_at.get(_REGION)) is not None and (
            not s
            or s == "+"
            or (self.stack[k].marker.endswith(_TERM) and _marker(s) == self.marker)
        ):
            self._close(i, k)
            if not s:
                self.mode, self.gap = _LIST_GAP, 1
            self.continued, self.wants_text = s == "+", _wants_text(s)
            return i + 1
        kind = self.stack[-1].kind
        if kind == _COMPOUND:
            return -1
        if kind == _COMMENT or _CONDITIONAL.fullmatch(s) or (kind == _TABLE and _is_comment(s)):
            self.visible[i] = ""
        return i + 1

    def _styled_paragraph(self, i: int, s: str) -> int:
        """A verbatim paragraph takes every line up to a blank one or a list continuation; a
        [comment] paragraph takes what a paragraph takes, and blanks it."""
        if not s or s == "+":
            return -1
        if self.mode == _VERBATIM_PARAGRAPH:
            return i + 1
        if _breaks_paragraph(s):
            return -1
        self.visible[i] = ""
        return i + 1

    def _paragraph(self, i: int, s: str) -> int:
        """Take the line at `i` into the paragraph or list under way and return the next line to
        read; -1 when the line ends the paragraph and starts a block there."""
        if not s:
            self.gap += 1
            if not self.continued or self.gap > 1:  # a continuation reaches over one blank
                self.mode, self.continued = _LIST_GAP if self.in_list else _BOUNDARY, False
            return i + 1
        self.gap = 0
        if not self.literal and _is_comment(s):
            self.visible[i] = ""
            return i + 1
        if not self.in_list:
            return -1 if _breaks_paragraph(s) else i + 1
        terminator = _delimiter(s)
        if self.continued and _marker(s) == self.marker:  # the next item: it ends the continuation
            self.continued, self.wants_text = False, _wants_text(s)
        elif self.continued:  # the line belongs to the list item, a block's first line included
            if terminator is not None:
                self._open(i, terminator, "", attached=True)
            elif s[0] in " \t":
                self._open(i, _REGION, "", attached=True)
                self.mode, self.literal = _PARAGRAPH, True
            elif s[0] == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
                self._entry(i, m)  # the attached block's metadata: the list reads on from i + 1
            elif not (s == "+" or _BLOCK_TITLE.match(s) or _is_attribute_line(s)):
                self.continued, self.wants_text = False, _wants_text(s)
            return i + 1
        if s == "+":
            self.continued = True
        elif terminator is not None or (self.marker.endswith(_TERM) and _is_attribute_line(s)):
            self.in_list = False  # a delimited block right after an item ends the list
            return -1
        self.wants_text = _wants_text(s)
        return i + 1

    def _list_gap(self, i: int, s: str) -> int:
        """Read the line at `i` after blank lines in a list: an item, a continuation, a literal
        paragraph or a term's text goes on with the list; anything else ends it (-1)."""
        if not s:
            self.gap += 1
            return i + 1
        if self.gap == 1 and (
            _delimiter(s) is not None or (self.marker.endswith(_TERM) and _is_attribute_line(s))
        ):
            pass  # Asciidoctor looks for these right after one blank line only
        elif s == "+" or self.wants_text or _marker(s):
            self.mode, self.continued, self.literal = _PARAGRAPH, s == "+", False
            self.wants_text, self.gap = s != "+" and _wants_text(s), 0
            return i + 1
        elif s[0] in " \t":
            self._open(i, _REGION, "", attached=True)
            self.mode, self.literal = _PARAGRAPH, True
            return i + 1
        self.in_list = False
        return -1

    def _boundary(self, i: int, s: str) -> int:
        """Read the line at `i` where a block may start: metadata for the next block, a section
        title, a delimited block, a list or a paragraph. Returns the next line to read."""
        if not s:
            return i + 1  # blank lines, comments and entries may separate metadata from its block
        first = s[0]
        if first == "/" and s.startswith("//"):
            if s[2:3] != "/":
                self.visible[i] = ""
                return i + 1
            if len(s) > 3 and s.count("/") == len(s):
                self._open(i, s, "", attached=False)
                return i + 1
        elif first == "[":
            if s.startswith("[["):
                if _BLOCK_ANCHOR.fullmatch(s):
                    return self._metadata(i)
            elif s.endswith("]") and _BLOCK_ATTRIBUTES.fullmatch(s):
                self.style = _style(s[1:-1]) or self.style
                return self._metadata(i)
        elif first == "." and _BLOCK_TITLE.match(s):
            self.block_title = True
            return self._metadata(i)
        elif first == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
            return self._entry(i, m)
        title = _section_title(s, self.lines[i + 1] if i + 1 < len(self.lines) else "")
        style = self.style
        discrete = style in _DISCRETE_STYLES
        if title is not None and not discrete and not self.stack:
            return self._heading(i, title)
        meta = self.meta_start if self.meta_start >= 0 else i
        self.meta_start, self.style, self.block_title, self.started = -1, "", False, True
        terminator = _delimiter(s)
        comment = False  # a comment block or paragraph: its metadata is no content either
        if terminator is not None:
            self._open(i, terminator, style, attached=False)
            comment = self.stack[-1].kind == _COMMENT
        elif style in _VERBATIM_STYLES:
            self.mode = _VERBATIM_PARAGRAPH
        elif _BREAK.fullmatch(s) or (s.endswith("]") and _BLOCK_MACRO.fullmatch(s)):
            pass  # a block of one line: the next line starts another
        elif marker := _marker(s):
            self.mode, self.in_list, self.continued, self.literal = _PARAGRAPH, True, False, False
            self.marker, self.gap = marker, 0
            self.wants_text = _wants_text(s)
        elif title is not None and discrete:
            return i + title[2]  # a discrete heading: content of the section it is in
        elif style == "comment":
            self.mode, comment = _COMMENT_PARAGRAPH, True
        else:
            self.mode, self.literal = _PARAGRAPH, first in " \t"
        if comment:
            self.visible[meta : i + 1] = [""] * (i + 1 - meta)
        return i + 1

    def _metadata(self, i: int) -> int:
        self.meta_start = i if self.meta_start < 0 else self.meta_start
        return i + 1

    def _heading(self, i: int, title: _Title) -> int:
        level, text, count = title
        start = self.meta_start if self.meta_start >= 0 else i
        body = i + count
        self.headings.append((start, body, level, _plain(text, self.attributes)))
        document_title = level == 0 and not self.started and not self.block_title
        self.meta_start, self.style, self.block_title, self.started = -1, "", False, True
        return self._header(body) if document_title else body

    def _header(self, i: int) -> int:
        """Blank the document header after its title: attribute entries and comments, then an
        author line, more of them, a revision line and more of them, as Asciidoctor reads it
        (any line that is not blank after the title is the author line)."""
        lines, n = self.lines, len(self.lines)
        i = self._header_entries(i)
        if i < n and lines[i]:
            self.visible[i] = ""  # the author line
            i = self._header_entries(i + 1)
            # Asciidoctor's revision pattern takes any line but one that starts with ':' and has
            # no comma that is not followed by ':'.
            revision = lines[i] if i < n else ""
            if revision and (revision[0] != ":" or _REVISION_COMMA.search(revision)):
                self.visible[i] = ""
                i = self._header_entries(i + 1)
        return i

    def _header_entries(self, i: int) -> int:
        """Blank the attribute entries, comment lines and comment blocks from `i` on."""
        lines, n = self.lines, len(self.lines)
        while i < n and (s := lines[i]):
            if _is_comment(s):
                self.visible[i] = ""
                i += 1
            elif s.startswith("////") and s.count("/") == len(s):
                try:
                    end = lines.index(s, i + 1) + 1
                except ValueError:
                    end = n  # an unclosed comment block runs to the end
                self.visible[i:end] = [""] * (end - i)
                i = end
            elif s[0] == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
                i = self._entry(i, m)
            else:
                break
        return i

    def _entry(self, i: int, m: re.Match[str]) -> int:
        """Record the attribute entry at `i` and blank it, with the lines its value continues on
        (a value ending in " \\" or " +"). Returns the line after it."""
        lines, n = self.lines, len(self.lines)
        name, value = m.group(1), m.group(2) or ""
        self.visible[i] = ""
        i += 1
        continuation = value[-2:] if value.endswith(_CONTINUATIONS) else ""
        if continuation:
            parts = [value[:-2].rstrip()]
            while i < n and lines[i]:
                self.visible[i] = ""
                part = lines[i].lstrip()
                i += 1
                if not part.endswith(continuation):
                    parts.append(part)
                    break
                parts.append(part[:-2].rstrip())
            value = " ".join(parts)
        if name.startswith("!") or name.endswith("!"):
            self.attributes.pop(name.strip("!").lower(), None)
        else:
            value = _resolve(value[:_TITLE_INPUT_CHARS], self.attributes)
            self.attributes[name.lower()] = value[:_TITLE_INPUT_CHARS]
        return i

    def _open(self, i: int, terminator: str, style: str, attached: bool) -> None:
        kind = _DELIMITED.get(terminator[:4], _VERBATIM)  # fenced code: verbatim
        if terminator in ("--", _REGION) or (terminator[:4] == "____" and style == "verse"):
            kind = _VERBATIM if style in _OPEN_VERBATIM_STYLES else _COMPOUND
            kind = _COMMENT if style == "comment" else kind
        if kind == _COMMENT:
            self.visible[i] = ""
        self.open_at[terminator] = len(self.stack)
        self.stack.append(_Open(terminator, kind, attached, self.marker))
        self.mode, self.in_list, self.continued = _BOUNDARY, False, False

    def _close(self, i: int, k: int) -> None:
        """Close the block at stack[k] on its terminator at line `i`, and every block inside it
        (Asciidoctor cuts a block at its terminator before it reads what the block holds)."""
        closing = self.stack[k]
        if closing.kind == _COMMENT:
            self.visible[i] = ""
        for inner in self.stack[k:]:
            del self.open_at[inner.terminator]
        del self.stack[k:]
        self.mode = _PARAGRAPH if closing.attached else _BOUNDARY
        self.in_list, self.continued, self.literal, self.gap = closing.attached, False, False, 0
        self.marker = closing.marker if closing.attached else self.marker
        if closing.kind != _COMMENT:  # a comment block's neighbours keep their metadata
            self.meta_start, self.style, self.block_title = -1, "", False


def _delimiter(s: str) -> str | None:
    """The line that closes the delimited block `s` opens, or None when it opens none."""
    n = len(s)
    if n < 2 or s[:2] not in _DELIMITER_HEADS:
        return None
    if n == 2:
        return s if s == "--" else None
    if s[0] == "`":
        return _FENCE if s.startswith(_FENCE) and not s.startswith("````") else None
    tip = n > 3 and s[:4] in _DELIMITED
    return s if tip and (n == 4 or s.count(s[3], 1) == n - 1) else None


def _is_comment(s: str) -> bool:
    return s.startswith("//") and s[2:3] != "/"


def _is_attribute_line(s: str) -> bool:
    return (
        s.startswith("[")
        and s.endswith("]")
        and (_BLOCK_ATTRIBUTES.fullmatch(s) is not None or _BLOCK_ANCHOR.fullmatch(s) is not None)
    )


def _breaks_paragraph(s: str) -> bool:
    """Whether the line ends a paragraph and starts a block: a delimiter or an attribute line."""
    return _delimiter(s) is not None or _is_attribute_line(s)


def _marker(s: str) -> str:
    """A list item's marker as Asciidoctor tells siblings: "*", "1.", "a.", "i)", "<1>", "::"
    (a description list's term), or "" for a line that starts no list item."""
    m = _LIST_ITEM.match(s)
    if m is None:
        mark = _term_mark(s)
        return mark.group(0) if mark is not None else ""
    marker = m.group(1) or "<1>"
    if marker[-1] == ")":
        return "I)" if marker[0].isupper() else "i)"
    if len(marker) > 1 and marker[-1] == "." and marker[0] != ".":
        return "1." if marker[0].isdigit() else "A." if marker[0].isupper() else "a."
    return marker


def _term_mark(s: str) -> re.Match[str] | None:
    """The mark after a description list's term ("::" in "term:: text"), or None."""
    if ("::" not in s and ";;" not in s) or _is_comment(s):
        return None
    return _DESCRIPTION_MARK.search(s, len(s) - len(s.lstrip(" \t")) + 1)


def _wants_text(s: str) -> bool:
    """Whether the line is a description list's term without text ("term::")."""
    mark = _term_mark(s)
    return mark is not None and mark.end() == len(s) and _LIST_ITEM.match(s) is None


def _style(inner: str) -> str:
    """The block style an attribute line sets ("source" of "[source%linenums,ruby]")."""
    first = inner.partition(",")[0].strip()
    if not first or "=" in first or first[0] in "\"'":
        return ""
    return _STYLE_END.split(first, 1)[0]


def _section_title(s: str, next_line: str) -> _Title | None:
    """The section title that starts at the line `s` (with `next_line` after it), or None."""
    first = s[:1]
    if first in ("=", "#"):
        markers = len(s) - len(s.lstrip(first))
        if markers <= 6 and markers < len(s) and s[markers] in " \t":
            title = s[markers:].lstrip(" \t")
            closing = s[:markers]
            if len(title) > markers and title.endswith(closing) and title[-markers - 1] in " \t":
                title = title[:-markers].rstrip(" \t")
            return markers - 1, _without_anchor(title), 1
    level = _SETEXT_LEVELS.get(next_line[:1])
    if (
        level is not None
        and abs(len(s) - len(next_line)) < 2
        and first != "."
        and next_line.count(next_line[0]) == len(next_line)
        and _ALNUM.search(s) is not None
    ):
        return level, _without_anchor(s), 2
    return None


def _without_anchor(title: str) -> str:
    """The title without a trailing inline anchor (" [[id]]"), which names the section."""
    if title.endswith("]]"):
        at = title.rfind(" [[")
        if at > 0 and _SECTION_ANCHOR.fullmatch(title, at + 1):
            return title[:at].rstrip(" \t")
    return title


def _resolve(text: str, attributes: dict[str, str]) -> str:
    """`text` with its attribute references replaced where the attribute is known."""
    if "{" not in text:
        return text

    def value(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(0)[1:]  # escaped: the reference itself, as written
        name = m.group(2).lower()
        found = attributes.get(name, _BUILT_IN_ATTRIBUTES.get(name))
        return m.group(0) if found is None else found

    return _ATTRIBUTE_REFERENCE.sub(value, text)


def _macro_text(m: re.Match[str]) -> str:
    name, target, text = m.group(1), m.group(2), m.group(3).strip()
    if name in ("image", "footnote", "footnoteref", "anchor", "indexterm"):
        return ""  # renders no words in the title (an image, a note's number, an anchor)
    if name == "menu":
        return f"{target} {text}"
    if text:
        return text.strip('"')
    return f"{name}:{target}" if name in ("https", "http", "ftp", "irc", "file") else target


def _plain(title: str, attributes: dict[str, str]) -> str:
    """A section title as the plain words a breadcrumb shows: attribute references resolved,
    macros, anchors and formatting marks taken out. Never empty when the title has words."""
    raw = " ".join(title[:_TITLE_INPUT_CHARS].split())
    if _MARKUP.search(raw) is None:
        return raw
    plain = _PASSTHROUGH.sub(lambda m: m.group(1) or m.group(2) or m.group(3) or "", raw)
    plain = _resolve(plain, attributes)[:_TITLE_INPUT_CHARS]
    if "[" in plain:
        plain = _MACRO.sub(_macro_text, plain)
        plain = _INLINE_ANCHOR.sub("", plain)
        plain = _ROLE.sub("", plain)
    if "((" in plain:
        plain = _INLINE_ANCHOR.sub("", plain)
        plain = _INDEX_TERM.sub(r"\1", plain)
    if "<<" in plain:
        plain = _CROSS_REFERENCE.sub(lambda m: (m.group(2) or "").strip() or m.group(1), plain)
    plain = _UNCONSTRAINED.sub(_first_group, plain)
    plain = _CONSTRAINED.sub(_first_group, _CONSTRAINED.sub(_first_group, plain))  # `+x+` too
    plain = " ".join(_ESCAPE.sub("", plain).split())
    if _WORD.search(plain) is None and _WORD.search(raw) is not None:
        return raw
    return plain


def _first_group(m: re.Match[str]) -> str:
    return next((g for g in m.groups() if g is not None), "")
