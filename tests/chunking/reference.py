"""How a chunker's sections are compared with a format's reference parser.

Per file, the reference parser names the sections that hold content (a body of their own besides
the title and their subsections); the chunker's sections are the last crumbs of its chunks'
breadcrumbs. Titles are compared as words: inline markup (``code``, *emphasis*, roles, links)
renders differently in each parser, the words do not. A file's agreement is the share of the
reference's content-bearing titles that are among the chunker's; the goal is the average over the
files of a tree.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from docshelf.chunking import Chunk
from docshelf.chunking.markdown import HEADING_SEPARATOR
from docshelf.chunking.outline import Outline

_WORD = re.compile(r"\w+")

# The share of content-bearing sections, per file on average, whose titles must agree.
GOAL = 0.95


def under_titles(chunks: Iterable[Chunk], titles: Outline) -> list[Chunk]:
    """The `chunks`, each named by the title it sits under: the breadcrumb of the section of
    `titles` (the file's outline without reference entries, which are docshelf's sections and
    no reference parser's) that holds its first line."""
    starts, line, at = [], 0, 0  # the first line of each title's section
    for section in titles.sections:
        line += titles.text.count("\n", at, section.start)
        at = section.start
        starts.append(line)
    return [
        replace(c, heading=titles.sections[bisect_right(starts, c.start_line - 1) - 1].heading)
        for c in chunks
    ]


def words(title: str) -> str:
    """A title as its words, lower case: "``docshelf chunk`` *options*" -> "docshelf chunk
    options"."""
    return " ".join(_WORD.findall(title.casefold().replace("_", " ")))


def last_crumbs(chunks: Iterable[Chunk]) -> Counter[str]:
    return Counter(words(c.heading.split(HEADING_SEPARATOR)[-1]) for c in chunks if c.heading)


def agreement(reference: Iterable[str], chunks: Iterable[Chunk]) -> float | None:
    """The share of the reference's content-bearing titles (with repeats) found among the last
    crumbs of the chunks; None for a file whose reference has no titled section with content."""
    wanted = Counter(words(t) for t in reference)
    wanted.pop("", None)
    if not wanted:
        return None
    ours = last_crumbs(chunks)
    found = sum(min(n, ours[title]) for title, n in wanted.items())
    return found / sum(wanted.values())


def average(shares: Iterable[float | None]) -> float:
    kept = [s for s in shares if s is not None]
    assert kept, "no file had a titled section with content"
    return sum(kept) / len(kept)
