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
from itertools import accumulate
from typing import NamedTuple

from docshelf.chunking.markdown import HEADING_SEPARATOR, Chunk, Section, pack_sections
from docshelf.chunking.text import cut_title, prepare
from docshelf.config import MAX_TITLE_CHARS

# A heading by 0-based line indexes: (its first line, the line after its last, its level, its
# title). A plain tuple: the garbage collector stops tracking a tuple of numbers and strings,
# but walks every NamedTuple at each full collection (a quarter of the time of 250k titles).
Heading = tuple[int, int, int, str]


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
    last = len(lines)
    # starts[i]: where line i starts; a heading may end past the last line (a text's end).
    starts = [at + i for i, at in enumerate(accumulate(map(len, lines), initial=0))]
    starts[last] = len(text)

    sections: list[Section] = []
    append, new = sections.append, tuple.__new__  # Section(...) costs a Python call each
    stack: list[tuple[int, str]] = []
    start, body, crumb = 0, 0, ""
    for line, next_body, level, heading_title in headings:
        append(
            new(
                Section,
                (
                    starts[start if start < last else last],
                    starts[body if body < last else last],
                    starts[line if line < last else last],
                    crumb,
                ),
            )
        )
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        title = " ".join(heading_title.split())
        if len(title) > MAX_TITLE_CHARS:
            title = cut_title(title)
        crumb = parent + HEADING_SEPARATOR + title if parent and title else parent or title
        stack.append((level, crumb))
        start, body = line, next_body
    append(
        Section(
            starts[start if start < last else last],
            starts[body if body < last else last],
            len(text),
            crumb,
        )
    )
    if top and not any(level <= 1 for _, _, level, _ in headings):
        top = cut_title(" ".join(top.split()))
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
