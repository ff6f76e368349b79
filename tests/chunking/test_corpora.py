"""The chunkers on real documentation: ../shared/data/corpora (traefik, fastapi, rust-book)."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from docshelf.chunking import chunk_text, split_markdown
from docshelf.chunking.front_matter import front_matter
from docshelf.chunking.markdown import prepare, visible_markdown
from tests.chunking.invariants import check_markdown, check_paragraphs, section_lines

CORPORA = ["traefik", "fastapi", "rust-book"]


def corpus(shared_data: Path, name: str) -> list[tuple[str, str]]:
    root = shared_data / "corpora" / name
    files = sorted(root.rglob("*.md"))
    assert len(files) > 100
    return [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in files]


@pytest.mark.parametrize("name", CORPORA)
def test_real_docs_keep_every_invariant(shared_data: Path, name: str) -> None:
    for path, text in corpus(shared_data, name):
        chunks = split_markdown(path, text)
        # A page of nothing but an include line (and front matter) has no words of its own.
        body, _ = front_matter(prepare(text))
        assert chunks or not visible_markdown(path, text)[body:].strip(), f"{path} gave no chunks"
        check_markdown(path, text, chunks)
        check_paragraphs(text, chunk_text(text), 800, 120)


@pytest.mark.parametrize("name", CORPORA)
def test_headings_are_the_ones_a_commonmark_parser_finds(shared_data: Path, name: str) -> None:
    """Every top-level heading markdown-it sees, and no other line, starts a section."""
    parser = MarkdownIt("commonmark").enable("table")
    for path, text in corpus(shared_data, name):
        prepared = prepare(text)
        body_offset, _ = front_matter(prepared)
        skipped = prepared.count("\n", 0, body_offset)
        ours = {s.start + 1 for s in section_lines(text) if s.body_start > s.start}
        tokens = parser.parse(prepared[body_offset:])
        theirs = {
            t.map[0] + skipped + 1
            for t in tokens
            if t.type == "heading_open" and t.level == 0 and t.map is not None
        }
        assert ours == theirs, path
