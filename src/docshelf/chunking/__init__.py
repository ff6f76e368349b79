"""Chunkers: pure functions from a file's text to retrievable pieces. No I/O.

`chunk_file` is the one rule from a file to its chunker: `docshelf index` stores exactly what it
returns, and `docshelf chunk` shows exactly that.
"""

from __future__ import annotations

import os
from typing import Literal

from docshelf.chunking.markdown import Chunk, embedding_input, split_markdown
from docshelf.chunking.paragraphs import TextChunk, chunk_text, estimate_tokens
from docshelf.chunking.text import prepare
from docshelf.config import MARKDOWN_SUFFIXES, TEXT_SUFFIXES

# Which chunker a documentation file gets: sections for Markdown, paragraphs for plain text.
Kind = Literal["markdown", "text"]

__all__ = [
    "Chunk",
    "Kind",
    "TextChunk",
    "chunk_file",
    "chunk_text",
    "embedding_input",
    "estimate_tokens",
    "kind_of",
    "paragraph_chunks",
    "split_markdown",
]


def kind_of(name: str) -> Kind | None:
    """Which chunker a file gets by its name, or None when docshelf does not read such files."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def chunk_file(path: str, text: str, kind: Kind) -> list[Chunk]:
    """The chunks of one documentation file, as the index stores them: Markdown by sections,
    text by paragraphs (each with the line range of its own content, and no heading)."""
    if kind == "markdown":
        return split_markdown(path, text)
    return paragraph_chunks(path, text)[0]


def paragraph_chunks(path: str, text: str) -> tuple[list[Chunk], list[TextChunk]]:
    """The paragraph chunker's pieces of `text` as chunks with line ranges, and the pieces
    themselves (their offsets count in the prepared text), in the same order."""
    prepared = prepare(text)
    pieces = chunk_text(prepared)
    chunks = []
    for piece in pieces:
        start_line = prepared.count("\n", 0, piece.char_start) + 1
        last = max(piece.char_end - 1, 0)
        end_line = start_line + prepared.count("\n", piece.char_start, last)
        chunks.append(Chunk(path, piece.chunk_index, "", piece.text, start_line, end_line))
    return chunks, pieces
