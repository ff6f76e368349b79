"""The chunkers' invariants, checked the same way by the property, robustness and corpus tests."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise

from docshelf.chunking import Chunk, TextChunk
from docshelf.chunking.fences import Fence, fence_closes, fence_open, looks_like_fence
from docshelf.chunking.front_matter import front_matter
from docshelf.chunking.markdown import _visible_sections, visible_markdown
from docshelf.chunking.outline import Outline
from docshelf.chunking.text import prepare, utf8_size
from docshelf.config import MAX_CHUNK_BYTES, OVERLAP_BYTES


def markdown_lines(text: str) -> list[str]:
    return prepare(text).split("\n")


@dataclass(frozen=True)
class SectionLines:
    start: int  # 0-based line indexes
    body_start: int
    end: int
    heading: str


def section_lines(text: str) -> list[SectionLines]:
    """The chunker's sections, with line indexes instead of offsets (of the visible text, whose
    lines are the file's one for one)."""
    text, sections = _visible_sections("page.md", prepare(text))
    n, count = len(text), text.count("\n") + 1

    def index(offset: int) -> int:
        if offset == n and not text.endswith("\n"):
            return count
        return text.count("\n", 0, offset)

    return [
        SectionLines(index(s.start), index(s.body_start), index(s.end), s.heading) for s in sections
    ]


def fenced_lines(text: str) -> set[int]:
    """0-based indexes of the lines inside fenced code blocks, fence lines included, by the rules
    the fence module states, read line by line apart from the chunker's scanner. Front matter is
    skipped; the rules know nothing of HTML blocks, inside which a fence line is HTML."""
    prepared = prepare(text)
    body, _ = front_matter(prepared)
    first = prepared.count("\n", 0, body)
    inside: set[int] = set()
    fence: Fence | None = None
    for i, line in enumerate(prepared.split("\n")[first:], first):
        if fence is not None:
            inside.add(i)
            if fence_closes(line, fence):
                fence = None
        elif (fence := fence_open(line)) is not None:
            inside.add(i)
    return inside


def check_markdown(path: str, text: str, chunks: list[Chunk]) -> None:
    """The packer's guarantees on the visible lines (markup taken out), which are the file's own
    lines one for one, each the file's line or the file's line with parts taken out."""
    lines = markdown_lines(text)
    visible = visible_markdown(path, text).split("\n")
    assert len(visible) == len(lines), "the visible text keeps every line of the file"
    for shown_line, own in zip(visible, lines, strict=True):
        assert _is_subsequence(shown_line, own), (shown_line, own)
    sections = section_lines(text)
    _check_sections(path, visible, sections, chunks)

    # No heading line lies inside a fence (checked where no HTML can hide a fence line).
    inside = set() if "<" in text else fenced_lines(text)
    for s in sections:
        if s.body_start > s.start:
            assert s.start not in inside, f"line {s.start + 1} is in a fence but was a heading"


def _check_sections(
    path: str, lines: list[str], sections: list[SectionLines], chunks: list[Chunk]
) -> None:
    """The packer's guarantees: the byte bound, whole lines (or slices of one over-long line),
    one section per chunk with its breadcrumb, no body line lost, overlap only within a section."""
    section_of = {}
    for n, s in enumerate(sections):
        for j in range(s.start, s.end):
            section_of[j] = n
    covered: set[int] = set()
    fragments: dict[int, list[str]] = {}
    for i, c in enumerate(chunks):
        assert c.path == path
        assert c.index == i
        assert utf8_size(c.content) <= MAX_CHUNK_BYTES, (i, utf8_size(c.content))
        assert c.content.strip(), "a chunk is never blank"
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        whole = "\n".join(lines[c.start_line - 1 : c.end_line])
        if c.content != whole:
            # Only a line longer than the budget is cut, into consecutive slices.
            assert c.start_line == c.end_line
            assert utf8_size(whole) > MAX_CHUNK_BYTES
            fragments.setdefault(c.start_line - 1, []).append(c.content)
        first = section_of[c.start_line - 1]
        assert section_of[c.end_line - 1] == first, "a chunk never spans two sections"
        assert c.heading == sections[first].heading
        covered.update(range(c.start_line - 1, c.end_line))
    for j, pieces in fragments.items():
        # Consecutive slices of the line; only slices of nothing but blanks are left out.
        assert "".join("".join(pieces).split()) == "".join(lines[j].split())
        assert all(piece in lines[j] for piece in pieces)

    # Every non-blank body line of a kept section is in some chunk.
    for s in sections:
        body = [j for j in range(s.body_start, s.end) if lines[j].strip()]
        for j in body:
            assert j in covered, f"line {j + 1} is lost"

    # Overlap: only between neighbours of one section, only whole body lines, within budget.
    for prev, nxt in pairwise(chunks):
        if nxt.start_line > prev.end_line or prev.start_line == prev.end_line == nxt.start_line:
            continue
        section = sections[section_of[nxt.start_line - 1]]
        assert section_of[prev.end_line - 1] == section_of[nxt.start_line - 1]
        assert nxt.start_line - 1 >= section.body_start, "overlap never repeats the heading"
        shared = "\n".join(lines[nxt.start_line - 1 : prev.end_line])
        assert len(shared.encode()) <= OVERLAP_BYTES
        assert nxt.content.startswith(shared + "\n")


def check_paragraphs(
    text: str, chunks: list[TextChunk], max_chars: int, overlap_chars: int
) -> None:
    source = prepare(text)
    clamp = min(max(overlap_chars, 0), max_chars // 4)
    position = 0
    previous: TextChunk | None = None
    for i, c in enumerate(chunks):
        assert c.chunk_index == i
        assert position <= c.char_start < c.char_end <= len(source)
        own = source[c.char_start : c.char_end]
        assert own.strip(), "own content is never blank"
        assert own in c.text
        # Whitespace is all that lies between one chunk's content and the next.
        assert not source[position : c.char_start].strip(), "text between chunks is lost"
        position = c.char_end
        fence_lines = [line for line in c.text.split("\n") if looks_like_fence(line)]
        outside_fences = "\n".join(ln for ln in c.text.split("\n") if not looks_like_fence(ln))
        assert len(outside_fences.strip()) <= max_chars, "only fence lines may exceed the budget"
        if not fence_lines:
            assert len(c.text) <= max_chars
        # The text is [fence opener] [copied tail] own content [fence closer]; the tokens are
        # estimated on all of it but the tail.
        tails = [_overlap(prefix, previous, source, clamp) for prefix in _prefixes(c.text, own)]
        words = len(c.text.split())
        assert any(
            tail is not None and c.tokens == -(-(words - len(tail.split())) * 4 // 3)
            for tail in tails
        ), c
        previous = c
    assert not source[position:].strip(), "text after the last chunk is lost"


def _prefixes(text: str, own: str) -> list[str]:
    """What may come before the own content: all of the text before it, when the text ends with
    it or with it and a repeated fence closer."""
    closer = text.rsplit("\n", 1)[-1]
    endings = [own] + ([f"{own}\n{closer}"] if looks_like_fence(closer) else [])
    return [text[: len(text) - len(end)] for end in endings if text.endswith(end)]


def _overlap(prefix: str, previous: TextChunk | None, source: str, clamp: int) -> str | None:
    """The copied tail in `prefix` ("" for none) when `prefix` is empty, or a repeated fence
    opener and/or a tail of the previous chunk's own content within the clamp that holds no fence
    line; None when it is anything else."""
    if not prefix:
        return ""
    if not prefix.endswith("\n"):
        return None
    lines = prefix[:-1].split("\n")
    if looks_like_fence(lines[0]):
        lines = lines[1:]  # the repeated opener
    tail = "\n".join(lines)
    if not tail:
        return ""
    valid = (
        previous is not None
        and len(tail) <= clamp
        and source[previous.char_start : previous.char_end].endswith(tail)
        and not any(looks_like_fence(line) for line in lines)
    )
    return tail if valid else None


def fence_balanced(text: str) -> bool:
    """Whether every fence opened in `text` is closed in it."""
    fence: Fence | None = None
    for line in text.split("\n"):
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
        else:
            fence = fence_open(line)
    return fence is None


def check_outline(path: str, text: str, found: Outline, chunks: list[Chunk]) -> None:
    """The section packer's guarantees for a format read through an outline (reStructuredText,
    AsciiDoc, MDX): every check of check_markdown, on the outline's visible lines, which are the
    file's own lines one for one (so line numbers are the file's), each the file's line or the
    file's line with parts taken out."""
    lines = markdown_lines(text)
    visible = found.text.split("\n")
    assert len(visible) == len(lines), "the visible text keeps every line of the file"
    for shown_line, own in zip(visible, lines, strict=True):
        assert shows_line(shown_line, own), (shown_line, own)
    n, count = len(found.text), len(visible)
    starts = [0]
    for line in visible[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def index(offset: int, end: bool = False) -> int:
        """The 0-based index of the line starting at `offset`; the end of the text, as a
        section's end, is one past the last line."""
        if offset == n and (end or (n and not found.text.endswith("\n"))):
            return count
        at = bisect_right(starts, offset) - 1
        assert starts[at] == offset, "a section starts at the start of a line"
        return at

    sections = [
        SectionLines(index(s.start), index(s.body_start), index(s.end, end=True), s.heading)
        for s in found.sections
    ]
    assert sections and sections[0].start == 0 and sections[-1].end == count
    for a, b in pairwise(sections):
        assert a.start <= a.body_start <= a.end == b.start
    _check_sections(path, visible, sections, chunks)


def _is_subsequence(part: str, whole: str) -> bool:
    it = iter(whole)
    return all(ch in it for ch in part)


# A line a format writes in place of its own markup: the fence of a code block (AsciiDoc's
# `----`, reStructuredText's `.. code-block::` and `::` literal blocks) on a delimiter, directive
# or blank line; and the words a directive line shows as Sphinx renders it ("Note", "Added in
# version 5.1.").
_FENCE_LINE = re.compile(r"[ \t]*(?:`{3,}|~{3,})[\w+#.-]*")
_MARKUP_LINE = re.compile(
    r"[ \t]*(?:-{4,}|\.{4,}|`{3,}.*|~{3,}.*|\.\.[ \t]+[\w:-]+::.*|.*::)?[ \t]*"
)
_DIRECTIVE_LINE = re.compile(r"[ \t]*\.\.[ \t]+[\w:-]+::")


def shows_line(shown: str, own: str) -> bool:
    """Whether `shown` is what a chunker may show for the file's line `own`: the line with parts
    taken out, a fence where the file delimits code, or a directive's words."""
    if _is_subsequence(shown, own):
        return True
    if _FENCE_LINE.fullmatch(shown) and _MARKUP_LINE.fullmatch(own):
        return True
    return _DIRECTIVE_LINE.match(own) is not None
