"""The composition root: the one place that wires docshelf's parts together for the faces
(the command line, later the MCP server)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from docshelf.chunking import Chunk, TextChunk, chunk_text, split_markdown
from docshelf.workspace import DocFile, read_local

ChunkerChoice = Literal["auto", "markdown", "paragraph"]


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    file: DocFile
    chunks: list[Chunk] | list[TextChunk]


def chunk_file(file: DocFile, chunker: ChunkerChoice = "auto") -> ChunkedFile:
    """Cut one file: Markdown by sections and text by paragraphs, unless a chunker is forced."""
    use = chunker if chunker != "auto" else ("paragraph" if file.kind == "text" else "markdown")
    if use == "markdown":
        return ChunkedFile(file, split_markdown(file.path, file.text))
    return ChunkedFile(file, chunk_text(file.text))


def chunk_paths(paths: Iterable[Path], chunker: ChunkerChoice = "auto") -> list[ChunkedFile]:
    """Read the named files and directories and cut each file.

    Raises:
        WorkspaceError: a path is missing, holds no documentation, or is not UTF-8.
    """
    return [chunk_file(f, chunker) for f in read_local(paths)]
