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
from collections import Counter
from collections.abc import Iterable

from docshelf.chunking import Chunk
from docshelf.chunking.markdown import HEADING_SEPARATOR

_WORD = re.compile(r"\w+")

# The share of content-bearing sections, per file on average, whose titles must agree.
GOAL = 0.95


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
