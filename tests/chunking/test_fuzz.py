"""Both chunkers on Markdown glued from the robustness corpora's pieces, and on pathological
shapes a megabyte-scale line scanner could take quadratic time on. bench/fuzz.py runs the same
properties for 100k examples, bench/pathological.py the shapes at a megabyte."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import chunk_text, split_markdown
from docshelf.config import PARAGRAPH_MAX_CHARS, PARAGRAPH_OVERLAP_CHARS
from tests.chunking.corpus_pieces import corpus_documents
from tests.chunking.invariants import check_markdown, check_paragraphs

# Inputs of this many characters: a linear chunker cuts each in milliseconds, a quadratic one
# takes minutes.
SHAPE_SIZE = 200_000
# Far above a linear time on a shared, slow machine, far below a quadratic one.
SHAPE_SECONDS = 2.0


@given(corpus_documents())
def test_every_invariant_holds_on_markdown_glued_from_corpus_pieces(text: str) -> None:
    chunks = split_markdown("glued.md", text)
    check_markdown("glued.md", text, chunks)
    assert split_markdown("glued.md", text) == chunks  # deterministic


@given(corpus_documents(), st.integers(1, 900), st.integers(-5, 400))
def test_every_paragraph_invariant_holds_on_corpus_pieces(
    text: str, max_chars: int, overlap: int
) -> None:
    chunks = chunk_text(text, max_chars, overlap)
    check_paragraphs(text, chunks, max_chars, overlap)


SHAPES = {
    # A table delimiter row's two runs of blanks: quadratic before they became possessive.
    "delimiter row of blanks": "--" + " " * SHAPE_SIZE + "|x\n---\n",
    "delimiter row of blanks after a paragraph": "a\n-:" + " " * SHAPE_SIZE + "|x\n---\n",
    "nested list markers, then a fence": "- " * (SHAPE_SIZE // 2) + "```\ncode\n",
    "nested list markers, then a backtick": "- " * (SHAPE_SIZE // 2) + "x`\n---\n",
    "unclosed fences in list items": "- ```\n" * (SHAPE_SIZE // 6),
    "nested list markers opening a fence of code": "- " * (SHAPE_SIZE // 4)
    + "```\n"
    + "code line\n" * (SHAPE_SIZE // 20),
    "thematic-break-like line": "*" * SHAPE_SIZE + "x\n---\n",
    "lone tag of blanks": "<a" + " " * SHAPE_SIZE + "\n---\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_pathological_shapes_chunk_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    sections = split_markdown("shape.md", text)
    paragraphs = chunk_text(text)
    assert time.perf_counter() - started < SHAPE_SECONDS
    check_markdown("shape.md", text, sections)
    check_paragraphs(text, paragraphs, PARAGRAPH_MAX_CHARS, PARAGRAPH_OVERLAP_CHARS)


def test_fence_lines_longer_than_the_budget_are_not_repeated_in_every_chunk() -> None:
    # Each piece of a split fence used to repeat its opening line: 100k list markers before the
    # fence made a 400 KB file into 80 MB of chunks.
    text = "- " * 100_000 + "```\n" + "code line\n" * 20_000
    chunks = chunk_text(text)
    check_paragraphs(text, chunks, PARAGRAPH_MAX_CHARS, PARAGRAPH_OVERLAP_CHARS)
    assert sum(len(c.text) for c in chunks) <= 2 * len(text)
    assert max(len(c.text) for c in chunks) <= PARAGRAPH_MAX_CHARS
