"""Every adversarial example in ../shared/data/robustness chunks cleanly with both chunkers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docshelf.chunking import chunk_text, split_markdown
from tests.chunking.invariants import check_markdown, check_paragraphs

SETS = ["commonmark-spec-examples.json", "gfm-spec-examples.json", "markdown-it-fixtures.json"]


def examples(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    groups = [data] if isinstance(data, list) else list(data.values())
    return [example["markdown"] for group in groups for example in group]


@pytest.mark.parametrize("name", SETS)
def test_every_robustness_example_chunks_with_both_chunkers(shared_data: Path, name: str) -> None:
    texts = examples(shared_data / "robustness" / name)
    assert len(texts) > 50
    for text in texts:
        check_markdown("example.md", text, split_markdown("example.md", text))
        for max_chars, overlap in ((800, 120), (40, 10)):
            check_paragraphs(text, chunk_text(text, max_chars, overlap), max_chars, overlap)


@pytest.mark.parametrize("name", SETS)
def test_robustness_examples_glued_into_one_file_chunk_cleanly(
    shared_data: Path, name: str
) -> None:
    text = "\n".join(examples(shared_data / "robustness" / name))
    check_markdown("all.md", text, split_markdown("all.md", text))
    check_paragraphs(text, chunk_text(text), 800, 120)
