"""The section chunker: Markdown cut at its headings, then packed into pieces under a byte budget.

Constraints:
- Pure and deterministic: the same path and text always give the same chunks.
- Line numbers are 1-based and inclusive, counted in the text after CRLF and lone CR became LF, so
  a chunk can be cited as path:line. A chunk's content is exactly its lines joined by "\\n", except
  the pieces of one line longer than the budget, which are consecutive slices of that line.
- A heading-like line inside a fenced code block is content: a shell comment in a runbook's code
  sample is not a heading.
- No chunk exceeds MAX_CHUNK_BYTES of UTF-8, whatever the input.
- A chunk's text is the page's visible text (markup.visible_text): the file's own lines, one for
  one, with site generators' markup taken out, so line numbers stay the file's. Sections are cut
  on the file as written, so the headings are those a CommonMark parser finds; breadcrumbs are
  plain words (markup.plain_title).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import AnyStr, NamedTuple

from docshelf.chunking.fences import MAY_OPEN_PATTERN, fence_end, fence_open
from docshelf.chunking.front_matter import front_matter, lead_text
from docshelf.chunking.html_blocks import html_block, html_closed, html_end
from docshelf.chunking.markup import (
    MARKUP_LINE_PATTERN,
    MARKUP_LINE_STARTS,
    plain_title,
    visible_text,
)
from docshelf.chunking.text import NON_BLANK, cut_title, from_utf8, prepare, utf8, utf8_size
from docshelf.config import MAX_CHUNK_BYTES, MAX_TITLE_CHARS, OVERLAP_BYTES

# Joins the titles of a heading breadcrumb: "Services > Checkout".
HEADING_SEPARATOR = " > "

# ATX heading after at most three spaces of indent: 1-6 '#', then a space, a tab or the end.
# (Every pattern here is linear: a line of a megabyte must not backtrack.)
_ATX = re.compile(r"(#{1,6})(?:[ \t](.*))?")
_UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*")
_THEMATIC_BREAK = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}")
_LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# A GFM table delimiter row ("| --- | :-: |", "--- | ---"): pipes, dashes, colons and blanks.
# (Possessive: two runs of blanks meet before the end, and a row like "--", a megabyte of spaces
# and "|x" would make a greedy pattern try every way of sharing the spaces between them.)
_TABLE_DELIMITER = re.compile(r"\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*")
# A line the section scanner must visit, matched from the newline before it: one that may be an
# ATX heading, a setext underline or an HTML block (after at most three spaces), or open a fence;
# else, in group 1, one that may be a site generator's markup (for the visible text only), or in
# group 2 a definition list's description (`: text`, after at most three spaces).
_EVENT_LINE = (
    r"(?:[ ]{0,3}+(?:#|<|=+[ \t]*(?=\n|\Z)|-+[ \t]*(?=\n|\Z))|"
    + MAY_OPEN_PATTERN
    + f"|({MARKUP_LINE_PATTERN})|([ ]{{0,3}}+:[ \t]))"
)
# Where a definition list ends: after a blank line, the first line that is not indented and is no
# description (matched from the newline ending the line before the blank one).
_DEFINITIONS_END = re.compile(r"\n[^\S\n]*+\n(?![ \t]|:[ \t]|[^\S\n]*+(?:\n|\Z))")
# A definition list's term is at most so many lines (each one a term of the same description).
_MAX_TERM_LINES = 3
# (The lookahead lets most lines fail on their first character, which halves the search time.)
_EVENT = re.compile(rf"\n(?=[#<=`~*+0-9{MARKUP_LINE_STARTS}-])" + _EVENT_LINE)
_EVENT_AT_START = re.compile(_EVENT_LINE)
# A byte that is not ASCII whitespace (as str.isspace() sees it).
_NON_ASCII_SPACE = re.compile(rb"[^\t\n\x0b\x0c\r\x1c-\x1f ]")
# Characters that can begin (after up to 3 spaces) a line that is more than paragraph text: a list
# item, a quote, a table row, a thematic break, a heading or a fence.
_SIGNIFICANT = frozenset("#`~=-*_+|<>0123456789")
# Characters that can begin a fence's opening line (with list markers before it, or a tab).
_FENCE_STARTS = frozenset("`~\t-+*0123456789")
# Go templates rendered into Markdown before a site is built (chezmoi's `install.md.tmpl`).
_TEMPLATE_SUFFIX = ".tmpl"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable piece of a Markdown file."""

    path: str
    index: int
    heading: str
    content: str
    start_line: int
    end_line: int


# A frozen dataclass's __init__ sets each field through object.__setattr__, which costs more than
# the rest of cutting a small section. The chunker fills the slots directly: same object, a
# third of the time.
_SET_CHUNK_FIELDS = tuple(getattr(Chunk, name).__set__ for name in Chunk.__slots__)


def _new_chunk(
    path: str, index: int, heading: str, content: str, start_line: int, end_line: int
) -> Chunk:
    chunk: Chunk = object.__new__(Chunk)
    set_path, set_index, set_heading, set_content, set_start, set_end = _SET_CHUNK_FIELDS
    set_path(chunk, path)
    set_index(chunk, index)
    set_heading(chunk, heading)
    set_content(chunk, content)
    set_start(chunk, start_line)
    set_end(chunk, end_line)
    return chunk


class Section(NamedTuple):
    """A section of a prepared text, by offsets into it; every format's scanner makes these."""

    start: int  # where the section starts: its heading's first line, when it has a heading
    body_start: int  # where the line after the heading starts
    end: int  # where the next section starts
    heading: str


def embedding_input(chunk: Chunk) -> str:
    """What is embedded for a chunk: its path and heading carry words a question uses when the
    body does not ("services.md", "Checkout")."""
    if chunk.heading:
        return f"{chunk.path}\n{chunk.heading}\n\n{chunk.content}"
    return f"{chunk.path}\n\n{chunk.content}"


def title_input(path: str, first_heading: str) -> str:
    """What is embedded for a file's title: the first part of its first chunk's heading (its
    title) and the words of its path, e.g. "AWS Lambda quotas (aws lambda developer guide
    gettingstarted limits)" for a page of that title at
    aws-lambda-developer-guide/gettingstarted-limits.md: a question names a page's subject in
    words its title or its file name often holds when no passage of it ranks high."""
    title = first_heading.split(" > ", 1)[0].strip()
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    words = " ".join(w for w in _PATH_WORD_BREAKS.split(stem) if w)
    return f"{title} ({words})" if title else f"({words})"


_PATH_WORD_BREAKS = re.compile(r"[/_\-.]+")


def split_markdown(path: str, text: str) -> list[Chunk]:
    """Cut a Markdown file into chunks: one section per heading, sections without a body dropped,
    each kept section packed into pieces of at most MAX_CHUNK_BYTES bytes of UTF-8. A chunk's
    text is the visible text of its lines (site generators' markup taken out)."""
    visible, sections = _visible_sections(path, prepare(text))
    return pack_sections(path, visible, sections)


def visible_markdown(path: str, text: str) -> str:
    """The text split_markdown cuts chunks from: the prepared text's lines, one for one, with
    site generators' markup taken out (markup.visible_text)."""
    return _visible_sections(path, prepare(text))[0]


def _visible_sections(path: str, text: str) -> tuple[str, list[Section]]:
    """The visible text of a prepared text and its sections, cut where the text's are. Front
    matter shows its description (markdown.lead_text), as the page's first text."""
    fences: list[int] = []
    lines: list[int] = []
    front = None
    if text.startswith("---"):
        end, title = front_matter(text)
        lead = lead_text(text, end) if end else None
        if lead is not None:
            text, front = lead + text[end:], (0, title)
    sections = _sections(text, fences, lines, entries=True, front=front)
    fences.append(len(text))
    found = visible_text(text, fences, lines, sections, path.endswith(_TEMPLATE_SUFFIX))
    return found if found is not None else (text, sections)


def pack_sections(path: str, text: str, sections: Iterable[Section]) -> list[Chunk]:
    """The chunks of a prepared text cut into `sections` (in order, covering it): sections
    without a body dropped, each kept one packed into pieces of at most MAX_CHUNK_BYTES bytes of
    UTF-8. Every format's chunker ends here, so the guarantees above hold for each."""
    chunks: list[Chunk] = []
    line_at, line_no = 0, 1  # line_no is the number of the line at offset line_at
    for start, body_start, end, heading in sections:
        visible_end = end  # one past the section's last character that is not whitespace
        while visible_end > start and text[visible_end - 1].isspace():
            visible_end -= 1
        if visible_end <= body_start:
            continue  # blank, or nothing but the heading: structure, not content
        a = start  # a section with a heading starts with it; one without, at its first text
        if start == body_start and (m := NON_BLANK.search(text, start, end)) is not None:
            a = text.rfind("\n", start, m.start()) + 1 or start
        b = text.find("\n", visible_end, end)
        piece = text[a : b if b >= 0 else end]
        line_no += text.count("\n", line_at, a)
        line_at = a
        if len(piece) <= MAX_CHUNK_BYTES and (
            piece.isascii() or len(utf8(piece)) <= MAX_CHUNK_BYTES
        ):
            last = line_no + piece.count("\n")
            chunks.append(_new_chunk(path, len(chunks), heading, piece, line_no, last))
            continue
        body = max(body_start - a, 0)
        packed = (
            _pack(piece, "\n", body)
            if piece.isascii()
            else _pack(utf8(piece), b"\n", utf8_size(piece[:body]))
        )
        for content, first, last in packed:
            chunks.append(
                _new_chunk(path, len(chunks), heading, content, line_no + first, line_no + last)
            )
    return chunks


def _atx_title(rest: str | None) -> str:
    """The title of an ATX heading: an optional closing run of '#' after a blank is dropped."""
    if not rest:
        return ""
    title = rest.strip(" \t")
    if title.endswith("#"):
        unclosed = title.rstrip("#")
        if not unclosed or unclosed[-1] in " \t":
            title = unclosed.rstrip(" \t")
    title = plain_title(title)
    return title if len(title) <= MAX_TITLE_CHARS else cut_title(title)


def _sections(
    text: str,
    fences: list[int] | None = None,
    lines: list[int] | None = None,
    entries: bool = False,
    front: tuple[int, str] | None = None,
) -> list[Section]:
    """Split the text at ATX and setext headings outside fences and HTML blocks, with each
    section's breadcrumb (plain words). `fences`, when given, gets each fenced code block's start
    (of its opening line) and end (of its closing line), flat; `lines` the start of each line,
    outside fences and HTML blocks, that may be a site generator's markup (markup.visible_text).
    With `entries`, a definition list's entries (a term, then `: description`) are sections too,
    one level below the heading they sit under, named by the term; the text after the list goes
    back to that heading's section. `front`: where the body starts and the front matter's
    title, when the caller read them (and took the front matter out).

    Only the lines that can start a heading, a fence or an HTML block are visited: a regular
    expression finds the next one, and fences and HTML blocks are jumped over by searching for
    their end. Whether a paragraph is open (all a setext underline or an HTML tag needs to know)
    is worked out only when such a line asks, from the lines since the last one that did.
    """
    n = len(text)
    body_start, fm_title = front_matter(text) if front is None else front
    if fm_title:
        fm_title = plain_title(fm_title)
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []  # (level, the breadcrumb down to that heading)
    has_h1 = False
    start, head_end, crumb = body_start, body_start, ""
    # The paragraph state is known at the start of the line at `known`: the offset of the open
    # paragraph's first line (-1 when none is open) and whether it may be a setext title.
    known, known_para, known_setext = body_start, -1, False
    list_end = n + 1  # where the open definition list ends, when an entry's section is open
    searched_from = found = found_end = n + 1  # the last search for a list's end, and its hit

    find, next_event, append, new = text.find, _EVENT.search, sections.append, tuple.__new__
    m = _EVENT_AT_START.match(text, body_start)
    s = body_start if m is not None else n + 1
    if s > n and (m := next_event(text, body_start - 1 if body_start else 0)) is not None:
        s = m.start() + 1
    while s <= n:
        e = find("\n", s)
        if e < 0:
            e = n
        if list_end <= s:  # the definition list ended: back to its heading's section
            append(new(Section, (start, head_end, list_end, crumb)))
            start = head_end = list_end
            crumb, list_end = stack[-1][1] if stack else "", n + 1
        if m is not None and m.lastindex:  # generator markup, or a description: no heading
            if m.lastindex == 1:
                if lines is not None:
                    lines.append(s)
            elif entries:
                if known != s:
                    para, setext = _paragraph(text, known, s, known_para, known_setext)
                    known, known_para, known_setext = s, para, setext
                term = _term(text, known_para, s) if known_para >= start else ""
                if term:  # a new entry: its term's lines are its heading
                    append(new(Section, (start, head_end, known_para, crumb)))
                    start, head_end = known_para, s
                    parent = stack[-1][1] if stack else ""
                    crumb = parent + HEADING_SEPARATOR + term if parent else term
                    if not searched_from <= e <= found:  # (a search reads the text once)
                        end = _DEFINITIONS_END.search(text, e)
                        searched_from, found = e, end.start() if end is not None else n
                        list_end = end.end() if end is not None else n + 1
                    else:
                        list_end = found_end
                    found_end = list_end
            if e >= n:
                break
            m = next_event(text, e)
            s = m.start() + 1 if m is not None else n + 1
            continue
        line = text[s:e]
        stripped = line.lstrip(" ")
        first = stripped[0]
        level = 0  # set when the line ends a heading that starts at `head`
        fence = None
        if first == "#":
            atx = _ATX.fullmatch(stripped)
            if atx is not None:
                head, level, title = s, len(atx.group(1)), _atx_title(atx.group(2))
                if lines is not None and "}" in line:
                    lines.append(s)  # an anchor may end it
        elif (first in _FENCE_STARTS or len(line) - len(stripped) > 3) and (
            "`" in line or "~" in line
        ):
            fence = fence_open(line)
        if fence is not None:
            closed_at = fence_end(text, e, fence)
            if fences is not None:
                fences += (s, closed_at if closed_at >= 0 else n)
            e = closed_at if closed_at >= 0 else n
            known, known_para = (e + 1 if e < n else n), -1
        elif first in "=-<":  # a setext underline or an HTML tag: it depends on the paragraph
            underline = first != "<" and _UNDERLINE.fullmatch(stripped) is not None
            if known == s:  # the line before settled the state
                para, setext = known_para, known_setext
            else:
                para, setext = _paragraph(text, known, s, known_para, known_setext)
            ends = html_block(stripped, para >= 0) if first == "<" else None
            if underline and para >= 0 and setext:
                head, level = para, 1 if first == "=" else 2
                title = text[para : s - 1]
                if "\n" in title:
                    title = " ".join(part.strip() for part in title.split("\n"))
                title = cut_title(plain_title(title.strip()))
            elif underline and first == "-" and len(stripped.rstrip(" \t")) >= 3:
                para = -1  # a thematic break
            elif ends is not None:
                para = -1
                if lines is not None and ends == "</" and stripped[1] in "sS":
                    lines.append(s)  # a script or a style
                if not (ends and html_closed(stripped, ends)):
                    e = html_end(text, e, ends)
            else:
                if lines is not None and stripped.startswith("<<<"):
                    lines.append(s)  # a code import
                para, setext = _advance(s, line, para, setext)
            known, known_para, known_setext = (e + 1 if e < n else n), para, setext
        if level:
            append(new(Section, (start, head_end, head, crumb)))
            while stack and stack[-1][0] >= level:
                stack.pop()
            parent = stack[-1][1] if stack else ""
            crumb = parent + HEADING_SEPARATOR + title if parent and title else parent or title
            stack.append((level, crumb))
            has_h1 = has_h1 or level == 1
            head_end = known = e + 1 if e < n else n
            start, known_para, list_end = head, -1, n + 1
        if e >= n:
            break
        m = next_event(text, e)
        s = m.start() + 1 if m is not None else n + 1
    if list_end < n:
        append(new(Section, (start, head_end, list_end, crumb)))
        start = head_end = list_end
        crumb = stack[-1][1] if stack else ""
    sections.append(Section(start, head_end, n, crumb))
    if fm_title and not has_h1:
        sections = [
            Section(
                s.start,
                s.body_start,
                s.end,
                fm_title + HEADING_SEPARATOR + s.heading if s.heading else fm_title,
            )
            for s in sections
        ]
    elif fm_title and front is not None:  # the page's lead, before its first heading
        sections[0] = sections[0]._replace(heading=fm_title)
    return sections


def _term(text: str, para: int, s: int) -> str:
    """The title of a definition list's entry whose term is the paragraph from `para` to the
    line at `s` (a description): its lines as plain words, joined by commas; empty when the
    paragraph is no term (a list item, a quote, a table, an earlier description, too long)."""
    if s - para > _MAX_TERM_LINES * (MAX_TITLE_CHARS + 1):
        return ""  # (bounded before it is split: a long paragraph of descriptions is no term)
    lines = text[para : s - 1].split("\n")
    if len(lines) > _MAX_TERM_LINES:
        return ""
    titles: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped[0] in ">|:" or _LIST_ITEM.match(stripped) is not None:
            return ""
        titles.append(plain_title(stripped))
    return cut_title(", ".join(title for title in titles if title))


def _paragraph(text: str, known: int, s: int, para: int, setext: bool) -> tuple[int, bool]:
    """The paragraph state at the start of the line at `s`, from the state at `known` (a line
    start at or before `s`) and the lines between, which hold no heading, fence or HTML block."""
    lines: list[tuple[int, str]] = []
    end = s - 1  # the newline ending the line before s
    while end >= known:
        begin = text.rfind("\n", known, end) + 1 or known
        line = text[begin:end]
        if not line.strip():
            para, setext = -1, False  # a blank line closes any paragraph
            break
        lines.append((begin, line))
        end = begin - 1
    for begin, line in reversed(lines):
        para, setext = _advance(begin, line, para, setext)
    return para, setext


def _advance(s: int, line: str, para: int, setext: bool) -> tuple[int, bool]:
    """The paragraph state after the non-blank line at `s`, which is no heading, no fence and
    starts no HTML block."""
    stripped = line.lstrip(" ")
    first = stripped[0]
    if len(line) - len(stripped) > 3 or first == "\t":
        return para, setext  # indented code, or a lazy continuation of the open paragraph
    if first not in _SIGNIFICANT:
        return (s, True) if para < 0 else (para, setext)
    if _THEMATIC_BREAK.fullmatch(stripped):
        return -1, False
    if first in ">|" or _LIST_ITEM.match(stripped):
        # Block quotes, table rows and list items never carry a setext title.
        return (s if para < 0 else para), False
    if "|" in stripped and _TABLE_DELIMITER.fullmatch(stripped):
        return para, False
    return (s, True) if para < 0 else (para, setext)


def _pack(data: AnyStr, newline: AnyStr, body: int) -> Iterator[tuple[str, int, int]]:
    """Pack a section into (content, first line, last line) pieces of at most MAX_CHUNK_BYTES.

    `data` is the section from its first to its last non-blank line: the text itself when it is
    ASCII, else its UTF-8 encoding, so offsets count bytes; `body` is the offset of the first line
    after the heading; line numbers count from the section's first line.

    Cuts fall only between lines. A later piece starts with the trailing whole body lines of the
    piece before it that fit in OVERLAP_BYTES (never the heading). A line longer than the budget
    becomes pieces of its own, cut at character boundaries, without overlap. A piece that would
    hold nothing but the heading (its first body line does not fit beside it) is not made: the
    breadcrumb carries the heading. Runs of lines that fit are taken in one step, found by
    searching for the last newline within the budget.
    """
    n = len(data)
    counted, counted_lines = 0, 0  # the number of lines before offset `counted`

    def line_of(offset: int) -> int:  # offsets asked for never decrease
        nonlocal counted, counted_lines
        counted_lines += data.count(newline, counted, offset)
        counted = offset
        return counted_lines

    def piece(a: int, b: int) -> tuple[str, int, int, int, int]:
        """data[a:b] without its blank edge lines: content, first and last line, and the offsets
        where its first line starts and its last line ends."""
        text = _decode(data[a:b])
        lead, stop = 0, len(text)
        if text[0].isspace():
            visible = NON_BLANK.search(text)
            assert visible is not None  # the piece holds a fresh non-blank line
            lead = text.rfind("\n", 0, visible.start()) + 1
        if text[-1].isspace():
            stop = text.find("\n", len(text.rstrip()))
            stop = stop if stop >= 0 else len(text)
        content = text[lead:stop] if lead or stop < len(text) else text
        first = line_of(a) + (text.count("\n", 0, lead) if lead else 0)
        start = a + utf8_size(text[:lead]) if lead else a
        end = b - utf8_size(text[stop:]) if stop < len(text) else b
        return content, first, first + content.count("\n"), start, end

    def news(a: int, b: int) -> bool:  # whether data[a:b] holds text of the body
        return b > body and _visible(data, max(a, body), b)

    # The piece is data[cur:end] (end < 0 while it is empty); it is `fresh` once it holds body text
    # that no piece before it held: only overlap, blank lines or the heading make no piece.
    cur, end, fresh = 0, -1, False
    j = 0  # where the next line starts
    while True:
        line_end = data.find(newline, j)
        if line_end < 0:
            line_end = n
        if line_end - j > MAX_CHUNK_BYTES:
            if fresh:
                yield piece(cur, end)[:3]
            if _visible(data, j, line_end):
                at = line_of(j)
                for fragment in hard_wrap(_decode(data[j:line_end]), MAX_CHUNK_BYTES):
                    if not fragment.isspace():  # a long run of blanks is no chunk
                        yield fragment, at, at
            end, fresh = -1, False
            if line_end >= n:
                break
            j = line_end + 1
            continue
        if end < 0 or (not fresh and line_end - cur > MAX_CHUNK_BYTES):
            # Start a piece here; a piece of only overlap and blank lines is dropped, not repeated.
            cur, end, fresh = j, line_end, news(j, line_end)
        elif line_end - cur <= MAX_CHUNK_BYTES:
            end, fresh = line_end, fresh or news(j, line_end)
        else:
            content, first, last, first_start, last_end = piece(cur, end)
            yield content, first, last
            # The overlap: the longest run of whole body lines ending the piece, not its first
            # line, within OVERLAP_BYTES, that leaves room for the line at j.
            lower = max(last_end - OVERLAP_BYTES, line_end - MAX_CHUNK_BYTES, body, first_start + 1)
            k = lower if data[lower - 1 : lower] == newline else data.find(newline, lower) + 1
            while 0 < k <= last_end:  # the overlap starts at a line that is not blank
                k_end = _line_end(data, newline, k)
                if _visible(data, k, k_end):
                    break
                k = k_end + 1
            cur = k if 0 < k <= last_end else j
            end, fresh = line_end, news(j, line_end)
        # Take every following line that still fits, in one step.
        limit = cur + MAX_CHUNK_BYTES
        if n <= limit:
            fresh = fresh or news(end, n)
            end = n
        else:
            q = data.rfind(newline, end + 1, limit + 1)
            if q > end:
                fresh = fresh or news(end, q)
                end = q
        if end >= n:
            break
        j = end + 1
    if fresh:
        yield piece(cur, end)[:3]


def _decode(data: str | bytes) -> str:
    return from_utf8(data) if isinstance(data, bytes) else data


def _line_end(data: AnyStr, newline: AnyStr, start: int) -> int:
    end = data.find(newline, start)
    return end if end >= 0 else len(data)


def _visible(data: str | bytes, a: int, b: int) -> bool:
    """Whether data[a:b] (whole lines) holds a character that is not whitespace."""
    if isinstance(data, str):
        return NON_BLANK.search(data, a, b) is not None
    m = _NON_ASCII_SPACE.search(data, a, b)
    while m is not None:
        if data[m.start()] < 0x80:
            return True
        # A non-ASCII character: whether its line is blank needs the decoded text.
        start = data.rfind(b"\n", a, m.start()) + 1 or a
        end = data.find(b"\n", m.start(), b)
        end = end if end >= 0 else b
        if from_utf8(data[start:end]).strip():
            return True
        m = _NON_ASCII_SPACE.search(data, end, b)
    return False


def hard_wrap(line: str, budget: int) -> list[str]:
    """Cut `line` into consecutive pieces of at most `budget` bytes of UTF-8, never inside a
    character, preferring to cut after a space in the second half of a piece. The pieces joined
    give back the line."""
    if line.isascii():
        data: bytes | str = line
    else:
        data = utf8(line)
    pieces: list[str] = []
    pos, n = 0, len(data)
    while pos < n:
        cut = min(pos + budget, n)
        if cut < n:
            if isinstance(data, bytes):
                while data[cut] & 0xC0 == 0x80:  # a UTF-8 continuation byte
                    cut -= 1
                space = data.rfind(b" ", pos + budget // 2, cut)
            else:
                space = data.rfind(" ", pos + budget // 2, cut)
            if space > pos:
                cut = space + 1
        piece = data[pos:cut]
        pieces.append(from_utf8(piece) if isinstance(piece, bytes) else piece)
        pos = cut
    return pieces
