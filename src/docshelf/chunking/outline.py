"""What the reStructuredText, AsciiDoc and MDX chunkers share: a file's outline by line numbers.

Each of those scanners reads the prepared text line by line and gives two things:
- the visible lines: the file's own lines, one for one, with what is not prose taken out (an MDX
  import, an AsciiDoc comment, a reStructuredText field list at the top become empty lines, or
  lose the part that is no prose), so line numbers stay those of the file;
- its headings, each by the index of its first line and of the line after it, with a level.

`outline` turns them into the sections the section packer cuts (markdown.pack_sections), with the
breadcrumb of each: so every format keeps the packer's guarantees (the byte bound, cuts between
lines, overlap inside one section, exact 1-based line ranges).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from docshelf.chunking.markdown import HEADING_SEPARATOR, Chunk, Section, _title, pack_sections
from docshelf.chunking.text import prepare


class Heading(NamedTuple):
    """A heading by 0-based line indexes: its first line and the line after its last."""

    line: int
    body: int
    level: int
    title: str


class Outline(NamedTuple):
    """A file as the packer sees it: its visible text (the same lines as the prepared file) and
    its sections, by offsets into that text."""

    text: str
    sections: list[Section]


def outline(lines: Sequence[str], headings: Sequence[Heading], top: str = "") -> Outline:
    """The sections of the visible `lines`, cut at `headings` (in order, not overlapping), each
    with its breadcrumb: the titles of the headings above it by level, after `top` (a title the
    file states outside its headings, such as front matter's) when no heading has level 1 or
    less."""
    text = "\n".join(lines)
    starts = [0] * (len(lines) + 1)
    at = 0
    for i, line in enumerate(lines):
        starts[i] = at
        at += len(line) + 1
    starts[len(lines)] = len(text)

    def offset(index: int) -> int:
        return starts[min(index, len(lines))]

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    start, body, crumb = 0, 0, ""
    for heading in headings:
        sections.append(Section(offset(start), offset(body), offset(heading.line), crumb))
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        title = _title(" ".join(heading.title.split()))
        crumb = parent + HEADING_SEPARATOR + title if parent and title else parent or title
        stack.append((heading.level, crumb))
        start, body = heading.line, heading.body
    sections.append(Section(offset(start), offset(body), len(text), crumb))
    if top and not any(h.level <= 1 for h in headings):
        top = _title(" ".join(top.split()))
        sections = [
            s._replace(heading=top + HEADING_SEPARATOR + s.heading if s.heading else top)
            for s in sections
        ]
    return Outline(text, sections)


def split_outline(path: str, found: Outline) -> list[Chunk]:
    """The chunks of an outline, as the Markdown chunker packs its sections."""
    return pack_sections(path, found.text, found.sections)


def prepared_lines(text: str) -> list[str]:
    """The prepared text's lines (newlines normalised, a byte order mark dropped)."""
    return prepare(text).split("\n")
