"""Chunkers: pure functions from a file's text to retrievable pieces. No I/O."""

from docshelf.chunking.markdown import Chunk, embedding_input, split_markdown
from docshelf.chunking.paragraphs import TextChunk, chunk_text, estimate_tokens

__all__ = [
    "Chunk",
    "TextChunk",
    "chunk_text",
    "embedding_input",
    "estimate_tokens",
    "split_markdown",
]
