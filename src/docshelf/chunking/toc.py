"""A file's table of contents: each heading the chunker cuts at, with its title, its depth and
the lines of its section (the heading's line to the line before the next heading of the same or
a higher level), read from the same scanners that cut the chunks, so the outline an agent
browses names the very sections the hits come from."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from docshelf.chunking.asciidoc import outline_asciidoc
from docshelf.chunking.markdown import HEADING_SEPARATOR, _sections
from docshelf.chunking.mdx import outline_mdx
from docshelf.chunking.outline import Outline
from docshelf.chunking.rst import looks_like_rst, outline_rst
from docshelf.chunking.text import prepare, text_lines

_NEWLINE = re.compile("\n")


class TocEntry(NamedTuple):
    """One heading: its depth (1 for the file's top headings), title and 1-based lines."""

    depth: int
    title: str
    start_line: int
    end_line: int


def file_toc(text: str, kind: str) -> list[TocEntry]:
    """The headings of a file of `kind` (markdown, mdx, rst, asciidoc or text), in order; a
    plain text file (paragraphs, no headings) has none."""
    if kind == "text" and looks_like_rst(text):
        kind = "rst"
    if kind == "markdown":
        body = prepare(text)
        # Headings and definition lists' entries; not the text after a list, which is its
        # heading's again (a section with no heading line of its own).
        found = _sections(body, entries=True)
        sections = found[:1] + [s for s in found[1:] if s.body_start > s.start]
    elif kind in _OUTLINES:
        body, sections = _OUTLINES[kind](text)
    else:
        return []
    total = len(text_lines(text))
    newlines = [m.start() for m in _NEWLINE.finditer(body)]
    starts: list[tuple[int, str, int]] = []  # (depth, title, 1-based line)
    # Each section's breadcrumb is its parent's, the separator and its title: the parent is the
    # nearest open heading whose breadcrumb starts this one (a title may hold the separator
    # itself). A title over every heading (front matter's) is the first section's breadcrumb.
    top = sections[0].heading if sections else ""
    stack: list[str] = (
        [top]
        if top
        and all(
            s.heading == top or s.heading.startswith(top + HEADING_SEPARATOR) for s in sections[1:]
        )
        else []
    )
    floor = len(stack)
    for section in sections[1:]:  # the first is what comes before the first heading
        crumb = section.heading
        while len(stack) > floor and not (
            crumb == stack[-1] or crumb.startswith(stack[-1] + HEADING_SEPARATOR)
        ):
            stack.pop()
        parent = stack[-1] if stack else ""
        if crumb == parent:  # a heading without a title keeps its parent's breadcrumb
            title = ""
        else:
            title = crumb[len(parent) + len(HEADING_SEPARATOR) :] if parent else crumb
        stack.append(crumb)
        depth = len(stack) - floor
        starts.append((depth, title, bisect_right(newlines, section.start - 1) + 1))
    if not starts:
        return []
    least = min(depth for depth, _, _ in starts)
    entries = []
    for i, (depth, title, line) in enumerate(starts):
        end = total
        for later_depth, _, later_line in starts[i + 1 :]:
            if later_depth <= depth:
                end = later_line - 1
                break
        entries.append(TocEntry(depth - least + 1, title, line, max(end, line)))
    return entries


_OUTLINES: dict[str, Callable[[str], Outline]] = {
    "mdx": outline_mdx,
    "rst": outline_rst,
    # The text after a description list stays in its last entry's section: an outline lists
    # headings, and that text's section (named as the title the list sits in) is none.
    "asciidoc": partial(outline_asciidoc, resume=False),
}
