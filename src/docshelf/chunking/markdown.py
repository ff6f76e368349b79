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

from docshelf.chunking.fences import fence_open
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
_FRONT_MATTER_END = re.compile(r"\n(?:---|\.\.\.)[^\S\n]*(?=\n|\Z)")
_FRONT_MATTER_TITLE = re.compile(r"^title[ \t]*:(.*)$", re.MULTILINE)
# A line the section scanner must visit: blank, indented, or starting with a significant
# character after at most three spaces. Matched from the newline before it.
_EVENT = re.compile(r"\n[ ]{0,3}(?:[#`~=*_+|<>0-9-]|[^\S\n]|(?=\n|\Z))")
_NON_BLANK = re.compile(r"\S")
_BLANK_LINE = re.compile(r"\n[^\S\n]*(?=\n|\Z)")
_BACKTICK_CLOSE = re.compile(r"\n[ \t]*(`{3,})[ \t]*(?=\n|\Z)")
_TILDE_CLOSE = re.compile(r"\n[ \t]*(~{3,})[ \t]*(?=\n|\Z)")
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
    """Offsets into the prepared text."""

    start: int  # where the section starts: its heading's first line, when it has a heading
    body_start: int  # where the line after the heading starts
    end: int  # where the next section starts
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


def prepare(text: str) -> str:
    """The text chunks are cut from and counted in: newlines normalised, a byte order mark
    dropped."""
    text = normalize_newlines(text)
    return text[1:] if text.startswith("\ufeff") else text


def split_markdown(path: str, text: str) -> list[Chunk]:
    """Cut a Markdown file into chunks: one section per heading, sections without a body dropped,
    each kept section packed into pieces of at most MAX_CHUNK_BYTES bytes of UTF-8."""
    text = prepare(text)
    chunks: list[Chunk] = []
    line_at, line_no = 0, 1  # line_no is the number of the line at offset line_at
    for section in _sections(text):
        span = _trim(text, section)
        if span is None:
            continue  # blank, or nothing but the heading: structure, not content
        a, b = span
        line_no += text.count("\n", line_at, a)
        line_at = a
        piece = text[a:b]
        if len(piece) <= MAX_CHUNK_BYTES and (
            piece.isascii() or len(piece.encode()) <= MAX_CHUNK_BYTES
        ):
            last = line_no + piece.count("\n")
            chunks.append(Chunk(path, len(chunks), section.heading, piece, line_no, last))
            continue
        body = text.count("\n", a, section.body_start) if section.body_start > a else 0
        for content, first, last in _pack(piece.split("\n"), body):
            chunks.append(
                Chunk(path, len(chunks), section.heading, content, line_no + first, line_no + last)
            )
    return chunks


def _trim(text: str, section: _Section) -> tuple[int, int] | None:
    """The section's span from its first to its last non-blank line, or None when it has no
    non-blank line after its heading."""
    m = _NON_BLANK.search(text, section.start, section.end)
    if m is None:
        return None
    k = section.end
    while text[k - 1].isspace():
        k -= 1
    if k <= section.body_start:
        return None
    a = text.rfind("\n", section.start, m.start()) + 1 or section.start
    b = text.find("\n", k, section.end)
    return a, b if b >= 0 else section.end


def _front_matter(text: str) -> tuple[int, str]:
    """The offset just after YAML front matter (0 without any), and its title."""
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return 0, ""
    m = _FRONT_MATTER_END.search(text, first_end)
    if m is None:
        return 0, ""
    end = m.end() + 1 if m.end() < len(text) else m.end()
    title = _FRONT_MATTER_TITLE.search(text, first_end, m.start() + 1)
    return end, _title(_unquote(title.group(1).strip())) if title else ""


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


def _sections(text: str) -> list[_Section]:
    """Split the text at ATX and setext headings outside fences and HTML blocks, with each
    section's breadcrumb.

    Only lines that can change the scanner's state are visited: a regular expression finds the
    next blank, indented or significant line, and fences and HTML blocks are jumped over by
    searching for their end, so plain prose and code cost no Python work per line.
    """
    n = len(text)
    body_start, fm_title = _front_matter(text)
    sections: list[_Section] = []
    stack: list[tuple[int, str]] = []
    has_h1 = False
    start, head_end, crumb = body_start, body_start, ""
    para = -1  # offset of the open paragraph's first line, -1 when none is open
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

    s = body_start  # start of the line to visit; the first line is always visited
    while s <= n:
        e = text.find("\n", s)
        if e < 0:
            e = n
        line = text[s:e]
        jump = -1  # where a fence or HTML block that opens on this line ends (its last "\n")
        stripped = line.lstrip(" ")
        if not stripped.strip():
            para = -1
        else:
            first = stripped[0]
            indented = len(line) - len(stripped) > 3 or first == "\t"
            if first in "`~" or first == "\t":
                marker = fence_open(line)
                if marker is not None:
                    para, jump = -1, _fence_end(text, e, marker)
                    indented = True  # nothing else to do with this line
            if indented:
                pass  # indented code, or a lazy continuation of the open paragraph
            elif first not in _SIGNIFICANT:
                if para < 0:
                    para, para_setext = s, True
            elif first == "#" and (m := _ATX.fullmatch(stripped)) is not None:
                heading(s, min(e + 1, n), len(m.group(1)), _atx_title(m.group(2) or ""))
                para = -1
            elif (
                first in "=-"
                and para >= 0
                and para_setext
                and _SETEXT_UNDERLINE.fullmatch(stripped)
            ):
                title = " ".join(part.strip() for part in text[para : s - 1].split("\n"))
                heading(para, min(e + 1, n), 1 if first == "=" else 2, _title(title))
                para = -1
            elif (
                first == "-"
                and _SETEXT_UNDERLINE.fullmatch(stripped)
                and len(stripped.rstrip(" \t")) >= 3
            ):
                para = -1  # a thematic break
            elif first == "<" and (ends := _html_block(stripped, para >= 0)) is not None:
                para = -1
                if not (ends and _html_closed(stripped, ends)):
                    jump = _html_end(text, e, ends)
            elif _THEMATIC_BREAK.fullmatch(stripped):
                para = -1
            elif first in ">|" or _LIST_ITEM.match(stripped):
                # Block quotes, table rows and list items never carry a setext title.
                if para < 0:
                    para = s
                para_setext = False
            elif "|" in stripped and _TABLE_DELIMITER.fullmatch(stripped):
                para_setext = False
            elif para < 0:
                para, para_setext = s, True
        if jump >= 0:
            e = jump
        if e >= n:
            break
        # Skip to the next line that is blank, indented or starts with a significant character.
        # The plain lines skipped over open a paragraph when none is open.
        m = _EVENT.search(text, e)
        s = m.start() + 1 if m is not None else n + 1
        if s > e + 1 and para < 0:
            para, para_setext = e + 1, True
    sections.append(_Section(start, head_end, n, crumb))
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


def _fence_end(text: str, e: int, marker: str) -> int:
    """The offset of the newline ending the fence opened by the line that ends at `e` (the end of
    the text when the fence is never closed)."""
    closes = _BACKTICK_CLOSE if marker[0] == "`" else _TILDE_CLOSE
    pos = e
    while (m := closes.search(text, pos)) is not None:
        if len(m.group(1)) >= len(marker):
            return m.end()
        pos = m.end()
    return len(text)


def _html_end(text: str, e: int, ends: str) -> int:
    """The offset of the newline ending the HTML block that starts on the line ending at `e`."""
    if ends == "":
        m = _BLANK_LINE.search(text, e)
        return m.start() if m is not None else len(text)  # the blank line is visited next
    if ends == "</":
        m = _HTML_RAW_END.search(text, e)
        at = m.start() if m is not None else -1
    else:
        at = text.find(ends, e)
    if at < 0:
        return len(text)
    line_end = text.find("\n", at)
    return line_end if line_end >= 0 else len(text)


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


def _pack(lines: list[str], body: int) -> Iterator[tuple[str, int, int]]:
    """Pack a section's lines (the first and last not blank; `body` the index of the first line
    after the heading) into (content, first index, last index) pieces of at most MAX_CHUNK_BYTES.

    Cuts fall only between lines. A later piece starts with the trailing whole body lines of the
    piece before it that fit in OVERLAP_BYTES (never the heading). A line longer than the budget
    becomes pieces of its own, cut at character boundaries, without overlap.
    """
    start, end = 0, len(lines)
    sizes = [len(line) if line.isascii() else len(line.encode()) for line in lines]

    def span(a: int, b: int) -> int:  # bytes of lines a..b (inclusive) joined by "\n"
        return sum(sizes[a : b + 1]) + (b - a)

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
        size = sizes[j]
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
            floor = max(first + 1, body)
            overlap = -1  # bytes of lines k..last
            while k - 1 >= floor:
                grown = sizes[k - 1] + (overlap + 1 if overlap >= 0 else 0)
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
