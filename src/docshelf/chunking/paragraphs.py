"""The paragraph chunker: text cut at blank lines, for plain text and for Markdown on request.

Rules:
1. Split on blank lines. A fenced code block is a block of its own and blank lines inside it do
   not split it. A paragraph longer than `max_chars` is cut on word boundaries (after a line break
   or a blank when one lies in the second half of the budget, else exactly at the budget).
2. Adjacent small pieces are merged up to `max_chars`, joined by the gap they had in the source.
3. The tail of each chunk's own text (at most `overlap_chars`, clamped to `max_chars // 4`, cut at
   a word boundary and never holding a fence line) is copied to the front of the next chunk, so a
   match near a boundary is not lost.
4. A fenced block longer than `max_chars` is cut between its lines; every piece carries the
   original opening line and, when the block was closed, the closing line, so each piece renders
   as code. Such a piece exceeds `max_chars` only when the fence lines alone leave less than a
   quarter of the budget. Fence lines longer than the whole budget are not repeated: such a
   block is cut as a paragraph is.
5. `tokens = ceil(words / 0.75)` of the chunk's text before the overlap is copied in, an
   estimate for budgeting only.

Offsets index the text after CRLF and lone CR became LF and a leading byte order mark was dropped
(the text itself, when it has neither): `prepared[char_start:char_end]` is exactly the chunk's own
content, without the copied overlap or the repeated fence lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from docshelf.chunking.fences import MAY_OPEN_PATTERN, fence_end, fence_open, looks_like_fence
from docshelf.chunking.text import NON_BLANK, prepare
from docshelf.config import PARAGRAPH_MAX_CHARS, PARAGRAPH_OVERLAP_CHARS

# The lines that end a paragraph or open a fence: blank lines, and lines that may open a fence.
_BOUNDARY_LINE = r"(?:[^\S\n]*(?=\n|\Z)|" + MAY_OPEN_PATTERN + ")"
_BOUNDARY = re.compile(r"\n" + _BOUNDARY_LINE)
_BOUNDARY_AT_START = re.compile(_BOUNDARY_LINE)
_BLANK_RUN = re.compile(r"(?:\n[^\S\n]*(?=\n|\Z))+")
_BLANK = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class TextChunk:
    """One piece of a text file, with exact offsets of its own content."""

    chunk_index: int
    text: str
    char_start: int
    char_end: int
    tokens: int


@dataclass(slots=True)
class _Piece:
    start: int  # own content is source[start:end]
    end: int
    text: str | None = None  # what the chunk shows before overlap, when not source[start:end]
    fence_line: str | None = None  # set on a fence piece whose text opens with a repeated line


class _Block(NamedTuple):
    start: int
    end: int
    fence: str | None  # the marker when the block is a fenced code block
    closed: bool = False


def estimate_tokens(text: str) -> int:
    """ceil(words / 0.75): about four characters a token in English prose."""
    words = len(text.split())
    return (4 * words + 2) // 3


def chunk_text(
    text: str,
    max_chars: int = PARAGRAPH_MAX_CHARS,
    overlap_chars: int = PARAGRAPH_OVERLAP_CHARS,
) -> list[TextChunk]:
    """Cut `text` into chunks of about `max_chars` characters at paragraph boundaries.

    Raises:
        ValueError: `max_chars` is less than 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    overlap = min(max(overlap_chars, 0), max_chars // 4)
    source = prepare(text)

    pieces: list[_Piece] = []
    for block in _blocks(source):
        if block.end - block.start <= max_chars:
            pieces.append(_Piece(block.start, block.end))
        elif block.fence is None:
            pieces.extend(_hard_split(source, block.start, block.end, max_chars))
        else:
            pieces.extend(_split_fence(source, block, max_chars))

    merged: list[_Piece] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.text is None
            and piece.text is None
            and piece.end - last.start <= max_chars
        ):
            last.end = piece.end  # joined by the gap they had in the source
        else:
            merged.append(piece)

    chunks: list[TextChunk] = []
    previous: _Piece | None = None
    for piece in merged:
        text = piece.text if piece.text is not None else source[piece.start : piece.end]
        body = text
        if previous is not None and overlap > 0:
            code = piece.fence_line is not None
            tail = _tail(source[previous.start : previous.end], overlap, code)
            room = max_chars - len(text) - 1
            if len(tail) > room:
                tail = _tail(tail, room, code) if room > 0 else ""
            if tail and piece.fence_line is not None:
                # Inside the fence, after the repeated opening line, so the code stays code.
                inner = text[len(piece.fence_line) + 1 :]
                body = f"{piece.fence_line}\n{tail}\n{inner}"
            elif tail:
                body = f"{tail}\n{text}"
        chunks.append(TextChunk(len(chunks), body, piece.start, piece.end, estimate_tokens(text)))
        previous = piece
    return chunks


def _blocks(source: str) -> list[_Block]:
    """Paragraphs and fenced blocks, trimmed of surrounding whitespace, in source order.

    Only blank lines and lines that may open a fence are visited (a regular expression finds the
    next one); a fence is jumped over by searching for its closing line.
    """
    blocks: list[_Block] = []
    n = len(source)

    def close(a: int, b: int, marker: str | None = None, closed: bool = False) -> None:
        visible = NON_BLANK.search(source, a, b)
        if visible is not None:
            a = visible.start()
            while source[b - 1].isspace():
                b -= 1
            blocks.append(_Block(a, b, marker, closed))

    para = -1  # where the open paragraph starts
    pos = 0  # the first line not yet visited or known to be paragraph text
    first_line = _BOUNDARY_AT_START.match(source) is not None
    while True:
        if first_line:
            s, first_line = 0, False
        else:
            m = _BOUNDARY.search(source, pos - 1) if pos else _BOUNDARY.search(source, 0)
            s = m.start() + 1 if m is not None else n + 1
        if s > pos and para < 0:
            para = pos  # the lines skipped over are paragraph text
        if s > n:
            break
        e = source.find("\n", s)
        e = e if e >= 0 else n
        line = source[s:e]
        fence = fence_open(line) if line.strip() else None
        if fence is not None:
            if para >= 0:
                close(para, s)
                para = -1
            end = fence_end(source, e, fence)
            if end < 0:
                close(s, n, fence.marker)
                pos = n + 1
                break
            close(s, end, fence.marker, True)
            e = end
        elif not line.strip():
            if para >= 0:
                close(para, s)
                para = -1
            if (run := _BLANK_RUN.match(source, e)) is not None:
                e = run.end()  # the blank lines that follow change nothing
        elif para < 0:
            para = s  # looked like a fence, but is text
        if e >= n:
            pos = n + 1
            break
        pos = e + 1
    if para >= 0:
        close(para, n)
    return blocks


def _cut(window: str, limit: int) -> int:
    """Where to cut `window` (longer than `limit`): after the last line break or blank that lies in
    the second half of the budget, else exactly at `limit`."""
    floor = max(1, limit // 2)
    cut = window.rfind("\n", floor, limit + 1)
    if cut < 0:
        cut = max(window.rfind(" ", floor, limit + 1), window.rfind("\t", floor, limit + 1))
    return cut if cut >= floor else limit


def _hard_split(source: str, start: int, end: int, max_chars: int) -> list[_Piece]:
    """Cut source[start:end] on word boundaries into exact pieces of at most max_chars."""
    pieces: list[_Piece] = []
    pos = start
    while end - pos > max_chars:
        cut = _cut(source[pos : pos + max_chars + 1], max_chars)
        text = source[pos : pos + cut].rstrip()
        pieces.append(_Piece(pos, pos + len(text)))
        pos += cut
        while pos < end and source[pos].isspace():
            pos += 1
    if pos < end:
        pieces.append(_Piece(pos, end))
    return pieces


def _split_fence(source: str, block: _Block, max_chars: int) -> list[_Piece]:
    """Cut an oversized fenced block between its lines; each piece repeats the fence lines."""
    text = source[block.start : block.end]
    open_end = text.find("\n")
    if open_end < 0:  # a lone, very long opening line
        return _hard_split(source, block.start, block.end, max_chars)
    open_line = text[:open_end]
    close_line = ""
    inner_end = len(text)
    if block.closed:
        last_nl = text.rfind("\n")
        close_line = text[last_nl + 1 :]
        inner_end = last_nl if last_nl > open_end else open_end
    overhead = len(open_line) + 1 + (len(close_line) + 1 if block.closed else 0)
    if overhead > max_chars:
        # Fence lines longer than the whole budget, repeated in every piece, would multiply the
        # text: an opening line of 500k list markers over 500k characters of code made 300 MB.
        return _hard_split(source, block.start, block.end, max_chars)
    budget = max_chars - overhead
    if budget < max_chars // 4 or budget < 1:
        budget = max_chars  # the fence lines alone nearly fill the budget: let pieces run over

    # Group the inner lines (offsets relative to text) into spans of at most `budget`.
    spans: list[tuple[int, int]] = []
    group = -1
    pos = open_end + 1
    while pos <= inner_end:
        nl = text.find("\n", pos, inner_end)
        line_end = inner_end if nl < 0 else nl
        if line_end - pos > budget:
            if group >= 0:
                spans.append((group, pos - 1))
                group = -1
            cut_from = pos
            while line_end - cut_from > budget:
                cut = _cut(text[cut_from : cut_from + budget + 1], budget)
                spans.append((cut_from, cut_from + cut))
                cut_from += cut
            if cut_from < line_end:
                group = cut_from
        elif group < 0:
            group = pos
        elif line_end - group > budget:
            spans.append((group, pos - 1))
            group = pos
        if nl < 0:
            break
        pos = nl + 1
    if group >= 0:
        spans.append((group, inner_end))
    spans = [(a, b) for a, b in spans if text[a:b].strip()]
    if len(spans) <= 1:
        return [_Piece(block.start, block.end)]

    pieces: list[_Piece] = []
    last = len(spans) - 1
    closing = f"\n{close_line}" if block.closed else ""
    for i, (a, b) in enumerate(spans):
        own_start = 0 if i == 0 else a
        own_end = len(text) if i == last else b
        own = text[own_start:own_end]
        shown = own if i == 0 else f"{open_line}\n{own}"
        if i != last:
            shown += closing
        pieces.append(
            _Piece(
                block.start + own_start,
                block.start + own_end,
                shown,
                None if i == 0 else open_line,
            )
        )
    return pieces


def _tail(text: str, size: int, whole_lines: bool = False) -> str:
    """The last `size` characters of `text`, starting at a word boundary when one is inside them
    (at a line start, keeping indentation, for code), and after the last line that looks like a
    fence, so the overlap never opens or closes one."""
    if size <= 0:
        return ""
    tail = text[-size:]
    cut_inside = len(text) > size
    if whole_lines:
        if cut_inside and text[-size - 1] != "\n":
            tail = tail[tail.find("\n") + 1 :] if "\n" in tail else ""
        tail = tail.lstrip("\n") if tail.strip() else ""
    else:
        if cut_inside and not text[-size - 1].isspace() and (blank := _BLANK.search(tail)):
            tail = tail[blank.start() :]  # from the first word boundary inside the tail
        tail = tail.lstrip()
    if "`" in tail or "~" in tail:
        tail = _after_fence_lines(tail, whole_lines)
    return tail


def _after_fence_lines(tail: str, whole_lines: bool) -> str:
    """What follows the last line of `tail` that looks like a fence, stripped as `_tail` strips.

    Stripping prose drops leading Unicode whitespace, which may bring a fence marker to the start
    of the first line kept ("\u2028```" looks like no fence; stripped, it is "```"), so that line is
    judged as it will be copied, and dropped too when it looks like one.
    """
    lines = tail.split("\n")
    start = next((i + 1 for i in range(len(lines) - 1, -1, -1) if looks_like_fence(lines[i])), 0)
    if start == 0:
        return tail
    if whole_lines:
        rest = "\n".join(lines[start:])
        return rest.lstrip("\n") if rest.strip() else ""
    while True:
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start == len(lines):
            return ""
        if not looks_like_fence(lines[start].lstrip()):
            return "\n".join(lines[start:]).lstrip()
        start += 1
