"""A question whose words appear in a section of an .rst, .mdx or .adoc file finds it: the shared
docs trees (../shared/data/formats) indexed in place, as plain directories, and searched by the
words that set a sampled chunk apart."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

import docshelf
from docshelf.app import chunk_paths

TREES = {
    "rst": "requests/docs",
    "rst-sphinx": "pytest/doc",
    "mdx": "mdx-js/docs",
    "asciidoc": "asciidoctor-pdf/docs",
}
SUFFIXES = {"rst": ".rst", "rst-sphinx": ".rst", "mdx": ".mdx", "asciidoc": ".adoc"}
# Sections asked about per tree, and how many of them must be found in the top five.
ASKED = 25
FOUND = 0.9
_WORD = re.compile(r"[A-Za-z]{4,}")


@pytest.mark.parametrize("fmt", sorted(TREES))
def test_words_of_a_section_find_it(shared_data: Path, tmp_path: Path, fmt: str) -> None:
    tree = shared_data / "formats" / TREES[fmt]
    store = tmp_path / "store.sqlite3"
    result = docshelf.index(tree, store=store, embedder="none")
    assert result.files and result.chunks
    chunks = [
        c
        for f in chunk_paths([tree]).files
        if f.file.path.endswith(SUFFIXES[fmt])
        for c in f.chunks
        if c.heading and len(_WORD.findall(c.content)) >= 30
    ]
    assert len(chunks) >= ASKED
    # The question: five words of the section that few other chunks hold, as a person asking
    # about that passage would name what sets it apart.
    spread = Counter(w for c in chunks for w in {w.lower() for w in _WORD.findall(c.content)})
    rng = random.Random(f"docshelf-{fmt}")
    missed = []
    with docshelf.open(store, embedder="none") as service:
        for chunk in rng.sample(chunks, ASKED):
            words = sorted({w.lower() for w in _WORD.findall(chunk.content)})
            query = " ".join(sorted(words, key=lambda w: (spread[w], w))[:5])
            hits = service.search(query, top_k=5, mode="text").hits
            if not any(
                h.path == chunk.path
                and h.start_line <= chunk.end_line
                and h.end_line >= chunk.start_line
                for h in hits
            ):
                missed.append(f"{chunk.path}:{chunk.start_line} {query!r}")
    assert len(missed) <= ASKED * (1 - FOUND), missed
