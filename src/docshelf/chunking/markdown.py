"""The section chunker: Markdown cut at its headings, then packed into pieces under a byte budget.

Constraints:
- Pure and deterministic: the same path and text always give the same chunks.
- Line numbers are 1-based and inclusive, counted in the text after CRLF and lone CR became LF, so
  a chunk can be cited as path:line. A chunk's content is exactly its lines joined by "\\n", except
  the pieces of one line longer than the budget, which are consecutive slices of that line.
- A heading-like line inside a fenced code block is content: a shell comment in a runbook's code
  sample is not a heading.
- No chunk exceeds MAX_CHUNK_BYTES of UTF-8, whatever the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from docshelf.chunking.fences import fence_closes, fence_open
from docshelf.config import MAX_CHUNK_BYTES, MAX_TITLE_CHARS, OVERLAP_BYTES

# Joins the titles of a heading breadcrumb: "Services > Checkout".
HEADING_SEPARATOR = " > "

# ATX heading after at most three spaces of indent: 1-6 '#', then a space, a tab or the end.
# (Every pattern here is linear: a line of a megabyte must not backtrack.)
_ATX = re.compile(r"(#{1,6})(?:[ \t](.*))?")
_SETEXT_UNDERLINE = re.compile(r"(=+|-+)[ \t]*")
_THEMATIC_BREAK = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}")
_LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# A GFM table delimiter row ("| --- | :-: |", "--- | ---"): pipes, dashes, colons and blanks.
_TABLE_DELIMITER = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
# HTML blocks (CommonMark 4.6): inside one, a heading-like line is HTML, not a heading. Each start
# pattern pairs with how its block ends: a closing string, or (None) the next blank line.
_HTML_RAW = re.compile(r"<(?:pre|script|style|textarea)(?:[ \t>]|$)", re.IGNORECASE)
_HTML_RAW_END = re.compile(r"</(?:pre|script|style|textarea)>", re.IGNORECASE)
_HTML_BLOCK_TAG = re.compile(
    r"</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd"
    r"|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset"
    r"|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol"
    r"|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr"
    r"|track|ul)(?:[ \t>]|/>|$)",
    re.IGNORECASE,
)
# Any other complete tag alone on its line; unlike the others it cannot interrupt a paragraph.
_HTML_LONE_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:[ \t][^<>]*)?/?>[ \t]*")
_HTML_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
_FRONT_MATTER_TITLE = re.compile(r"title[ \t]*:(.*)")
# Characters that can begin a line the scanner must look at closely (after up to 3 spaces).
_SIGNIFICANT = frozenset("#`~=-*_+|<>0123456789")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable piece of a Markdown file."""

    path: str
    index: int
    heading: str
    content: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class _Section:
    start: int  # first line (0-based), the heading's first line when there is a heading
    body_start: int  # first line after the heading
    end: int  # one past the last line
    heading: str


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def embedding_input(chunk: Chunk) -> str:
    """What is embedded for a chunk: its path and heading carry words a question uses when the
    body does not ("services.md", "Checkout")."""
    if chunk.heading:
        return f"{chunk.path}\n{chunk.heading}\n\n{chunk.content}"
    return f"{chunk.path}\n\n{chunk.content}"


def split_markdown(path: str, text: str) -> list[Chunk]:
    """Cut a Markdown file into chunks: one section per heading, sections without a body dropped,
    each kept section packed into pieces of at most MAX_CHUNK_BYTES bytes of UTF-8."""
    lines = normalize_newlines(text).split("\n")
    if lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    chunks: list[Chunk] = []
    for section in _sections(lines):
        for content, first, last in _split_section(lines, section):
            chunks.append(Chunk(path, len(chunks), section.heading, content, first + 1, last + 1))
    return chunks


def _front_matter(lines: list[str]) -> tuple[int, str]:
    """The index of the first line after YAML front matter (0 without any), and its title."""
    if lines[0].rstrip() != "---":
        return 0, ""
    title = ""
    for i in range(1, len(lines)):
        line = lines[i]
        if line.rstrip() in ("---", "..."):
            return i + 1, title
        m = _FRONT_MATTER_TITLE.fullmatch(line)
        if m is not None and not title:
            title = _title(_unquote(m.group(1).strip()))
    return 0, ""


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value


def _atx_title(rest: str) -> str:
    """The title of an ATX heading: an optional closing run of '#' after a blank is dropped."""
    title = rest.strip(" \t")
    unclosed = title.rstrip("#")
    if unclosed != title and (not unclosed or unclosed[-1] in " \t"):
        title = unclosed.rstrip(" \t")
    return _title(title)


def _title(title: str) -> str:
    if len(title) > MAX_TITLE_CHARS:
        return title[: MAX_TITLE_CHARS - 1] + "…"
    return title


def _sections(lines: list[str]) -> list[_Section]:
    """Split the lines at ATX and setext headings outside fences, with each section's breadcrumb."""
    body_start, fm_title = _front_matter(lines)
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    has_h1 = False
    start, head_end, crumb = body_start, body_start, ""
    fence: str | None = None
    html: str | None = None  # inside an HTML block: what ends it ("" for a blank line)
    para: int | None = None  # first line of the open paragraph
    para_setext = False  # whether that paragraph may be a setext heading's title

    def heading(first: int, after: int, level: int, title: str) -> None:
        nonlocal start, head_end, crumb, has_h1
        sections.append(_Section(start, head_end, first, crumb))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        crumb = HEADING_SEPARATOR.join(t for _, t in stack if t)
        has_h1 = has_h1 or level == 1
        start, head_end = first, after

    for i in range(body_start, len(lines)):
        line = lines[i]
        if fence is not None:
            if fence[0] in line and fence_closes(line, fence):
                fence = None
            continue
        stripped = line.lstrip(" ")
        if html is not None:
            if html == "":
                if stripped.strip():
                    continue
            elif html == "</":
                if _HTML_RAW_END.search(line) is None:
                    continue
                html = None
                continue
            else:
                if html not in line:
                    continue
                html = None
                continue
            html = None
        if not stripped.strip():
            para = None
            continue
        first = stripped[0]
        if first in "`~" or first == "\t":
            marker = fence_open(line)
            if marker is not None:
                fence, para = marker, None
                continue
        if len(line) - len(stripped) > 3 or first == "\t":
            continue  # indented code, or a lazy continuation of the open paragraph
        if first not in _SIGNIFICANT:
            if para is None:
                para, para_setext = i, True
            continue
        if first == "#":
            m = _ATX.fullmatch(stripped)
            if m is not None:
                heading(i, i + 1, len(m.group(1)), _atx_title(m.group(2) or ""))
                para = None
                continue
        elif first in "=-" and _SETEXT_UNDERLINE.fullmatch(stripped):
            if para is not None and para_setext:
                title = _title(" ".join(lines[j].strip() for j in range(para, i)))
                heading(para, i + 1, 1 if first == "=" else 2, title)
                para = None
                continue
            if first == "-" and len(stripped.rstrip()) >= 3:
                para = None  # a thematic break
                continue
        if first == "<" and (ends := _html_block(stripped, para is not None)) is not None:
            para = None
            html = None if ends and _html_closed(stripped, ends) else ends
        elif _THEMATIC_BREAK.fullmatch(stripped):
            para = None
        elif first in ">|" or _LIST_ITEM.match(stripped):
            # Block quotes, table rows and list items never carry a setext title.
            if para is None:
                para = i
            para_setext = False
        elif "|" in stripped and _TABLE_DELIMITER.fullmatch(stripped):
            para_setext = False
        elif para is None:
            para, para_setext = i, True
    sections.append(_Section(start, head_end, len(lines), crumb))
    if fm_title and not has_h1:
        sections = [
            _Section(
                s.start,
                s.body_start,
                s.end,
                fm_title + HEADING_SEPARATOR + s.heading if s.heading else fm_title,
            )
            for s in sections
        ]
    return sections


def _html_block(stripped: str, in_paragraph: bool) -> str | None:
    """When `stripped` starts an HTML block, what ends it: "" for the next blank line, "</" for
    the closing tag of a raw block, else a closing string. None when it starts none."""
    for start, end in _HTML_ENDS:
        if stripped.startswith(start) and (start != "<!" or stripped[2:3].isalpha()):
            return end
    if _HTML_RAW.match(stripped):
        return "</"
    if _HTML_BLOCK_TAG.match(stripped) or (not in_paragraph and _HTML_LONE_TAG.fullmatch(stripped)):
        return ""
    return None


def _html_closed(stripped: str, ends: str) -> bool:
    """Whether an HTML block ends on the line that starts it."""
    if ends == "</":
        return _HTML_RAW_END.search(stripped) is not None
    return ends in stripped[2:]


def _split_section(lines: list[str], section: _Section) -> Iterator[tuple[str, int, int]]:
    """Pack one section into (content, first line, last line) pieces of at most MAX_CHUNK_BYTES.

    Cuts fall only between lines. A later piece starts with the trailing whole body lines of the
    piece before it that fit in OVERLAP_BYTES (never the heading). A line longer than the budget
    becomes pieces of its own, cut at character boundaries, without overlap.
    """
    start, end = section.start, section.end
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if end <= start or end <= section.body_start:
        return  # nothing but the heading: structure, not content
    whole = "\n".join(lines[start:end])
    if len(whole) <= MAX_CHUNK_BYTES and (
        whole.isascii() or len(whole.encode()) <= MAX_CHUNK_BYTES
    ):
        yield whole, start, end - 1  # the common case: the section fits in one piece
        return
    # sizes[j - start]: bytes of line j
    sizes = [len(line) if line.isascii() else len(line.encode()) for line in lines[start:end]]

    def span(a: int, b: int) -> int:  # bytes of lines a..b (inclusive) joined by "\n"
        return sum(sizes[a - start : b + 1 - start]) + (b - a)

    def trimmed(a: int, b: int) -> tuple[int, int] | None:
        while a <= b and not lines[a].strip():
            a += 1
        while b >= a and not lines[b].strip():
            b -= 1
        return (a, b) if a <= b else None

    cur = start  # first line of the current piece
    cur_bytes = -1  # bytes of lines cur..j-1; -1 while the piece is empty
    fresh = False  # whether the piece holds a non-blank line that is not overlap
    j = start
    while j < end:
        size = sizes[j - start]
        blank = not lines[j].strip()
        if size > MAX_CHUNK_BYTES:
            if fresh and (piece := trimmed(cur, j - 1)) is not None:
                yield "\n".join(lines[piece[0] : piece[1] + 1]), piece[0], piece[1]
            if not blank:
                for fragment in hard_wrap(lines[j], MAX_CHUNK_BYTES):
                    yield fragment, j, j
            cur, cur_bytes, fresh = j + 1, -1, False
            j += 1
            continue
        if cur_bytes < 0:
            cur_bytes = size
        elif cur_bytes + 1 + size <= MAX_CHUNK_BYTES:
            cur_bytes += 1 + size
        elif not fresh:
            # Only overlap and blank lines so far: drop them rather than repeat a piece.
            cur, cur_bytes = j, size
        else:
            piece = trimmed(cur, j - 1)
            assert piece is not None  # the piece holds a fresh non-blank line
            yield "\n".join(lines[piece[0] : piece[1] + 1]), piece[0], piece[1]
            first, last = piece
            # Bytes after the overlap in the next piece: the blank lines cut from this one, then j.
            after = span(last + 1, j) + 1
            k = last + 1  # overlap starts at k; k == last + 1 means none
            floor = max(first + 1, section.body_start)
            overlap = -1  # bytes of lines k..last
            while k - 1 >= floor:
                grown = sizes[k - 1 - start] + (overlap + 1 if overlap >= 0 else 0)
                if grown > OVERLAP_BYTES or grown + after > MAX_CHUNK_BYTES:
                    break
                k, overlap = k - 1, grown
            while k <= last and not lines[k].strip():
                k += 1
            if k <= last:
                cur, cur_bytes = k, span(k, j)
            else:
                cur, cur_bytes = j, size
            fresh = False
        if not blank:
            fresh = True
        j += 1
    if fresh and (piece := trimmed(cur, end - 1)) is not None:
        yield "\n".join(lines[piece[0] : piece[1] + 1]), piece[0], piece[1]


def hard_wrap(line: str, budget: int) -> list[str]:
    """Cut `line` into consecutive pieces of at most `budget` bytes of UTF-8, never inside a
    character, preferring to cut after a space in the second half of a piece. The pieces joined
    give back the line."""
    if line.isascii():
        data: bytes | str = line
    else:
        data = line.encode()
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
        pieces.append(piece.decode() if isinstance(piece, bytes) else piece)
        pos = cut
    return pieces
