"""Chunkers: pure functions from a file's text to retrievable pieces. No I/O.

`chunk_file` is the one rule from a file to its chunker: `docshelf index` stores exactly what it
returns, and `docshelf chunk` shows exactly that.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Literal

from docshelf.chunking.asciidoc import split_asciidoc
from docshelf.chunking.markdown import Chunk, embedding_input, split_markdown, title_input
from docshelf.chunking.mdx import split_mdx
from docshelf.chunking.paragraphs import TextChunk, chunk_text, estimate_tokens
from docshelf.chunking.rst import looks_like_rst, split_rst
from docshelf.chunking.text import prepare
from docshelf.config import (
    ASCIIDOC_SUFFIXES,
    MARKDOWN_SUFFIXES,
    MDX_SUFFIXES,
    RST_SUFFIXES,
    TEXT_SUFFIXES,
)

# Which chunker a documentation file gets: sections for Markdown, MDX, reStructuredText and
# AsciiDoc; paragraphs for plain text (unless it is reStructuredText, as Django writes it).
Kind = Literal["markdown", "mdx", "rst", "asciidoc", "text"]

_KIND_OF_SUFFIX: dict[str, Kind] = {
    **dict.fromkeys(MARKDOWN_SUFFIXES, "markdown"),
    **dict.fromkeys(MDX_SUFFIXES, "mdx"),
    **dict.fromkeys(RST_SUFFIXES, "rst"),
    **dict.fromkeys(ASCIIDOC_SUFFIXES, "asciidoc"),
    **dict.fromkeys(TEXT_SUFFIXES, "text"),
}

__all__ = [
    "Chunk",
    "Kind",
    "TextChunk",
    "chunk_as",
    "chunk_file",
    "chunk_text",
    "effective_kind",
    "embedding_input",
    "estimate_tokens",
    "kind_of",
    "paragraph_chunks",
    "split_asciidoc",
    "split_markdown",
    "split_mdx",
    "split_rst",
    "title_input",
]


def kind_of(name: str) -> Kind | None:
    """Which chunker a file gets by its name, or None when docshelf does not read such files."""
    return _KIND_OF_SUFFIX.get(os.path.splitext(name)[1].lower())


def chunk_file(path: str, text: str, kind: Kind) -> list[Chunk]:
    """The chunks of one documentation file, as the index stores them: Markdown, MDX,
    reStructuredText and AsciiDoc by their sections; text by paragraphs (each with the line
    range of its own content, and no heading), unless it is reStructuredText (looks_like_rst)."""
    return chunk_as(path, text, effective_kind(kind, text))


def chunk_as(path: str, text: str, kind: Kind) -> list[Chunk]:
    """The chunks of `text` by the chunker of `kind`, whatever the text looks like."""
    if kind == "text":
        return paragraph_chunks(path, text)[0]
    return _SECTION_CHUNKERS[kind](path, text)


# The section chunker of each markup kind.
_SECTION_CHUNKERS: dict[Kind, Callable[[str, str], list[Chunk]]] = {
    "markdown": split_markdown,
    "mdx": split_mdx,
    "rst": split_rst,
    "asciidoc": split_asciidoc,
}


def effective_kind(kind: Kind, text: str) -> Kind:
    """The chunker chunk_file gives a file of `kind`: "rst" for reStructuredText in a .txt."""
    return "rst" if kind == "text" and looks_like_rst(text) else kind


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
