"""The composition root: the one place that wires docshelf's parts together for the faces
(the command line, later the MCP server)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from docshelf.chunking import Chunk, TextChunk, chunk_text, split_markdown
from docshelf.config import Config
from docshelf.workspace import DocFile, read_local

# numpy, httpx and the store drivers load only when a command needs them, so that `docshelf
# --help` and `docshelf chunk` start at once; hence the imports inside the functions below.
if TYPE_CHECKING:
    from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
    from docshelf.stores import SQLiteStore
    from docshelf.stores.postgres import PostgresStore

Embedder: TypeAlias = "LocalEmbedder | OpenAIEmbedder"
Store: TypeAlias = "SQLiteStore | PostgresStore"

# The model id and width a store records when it is made with the `none` embedder.
NO_MODEL = ("none", 0)

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


def configured_embedder(config: Config) -> Embedder | None:
    """The configured embedder (not loaded yet), or None for `--embedder none`.

    Raises:
        ConfigError: the embedder options do not fit together.
    """
    from docshelf.embedders import make_embedder  # noqa: PLC0415 - see the imports above

    return make_embedder(config)


def open_configured_store(config: Config, embedder: Embedder | None) -> Store:
    """The configured store, created for the embedder's model or checked against it.

    Raises:
        StoreError: the store cannot be opened, or holds another model's embeddings.
        EmbeddingError: the model must be loaded to learn its width, and cannot be.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    model_id, dim = NO_MODEL if embedder is None else (embedder.model_id, embedder.dim)
    return open_store(config.store, model_id=model_id, dim=dim, ef_search=config.ef_search)


@dataclass(frozen=True, slots=True)
class WorkspaceStatus:
    name: str
    current: str | None
    chunks_per_ref: dict[str, int]


@dataclass(frozen=True, slots=True)
class StoreStatus:
    location: str
    model_id: str
    dim: int
    workspaces: list[WorkspaceStatus]


def store_status(config: Config) -> StoreStatus:
    """What the configured store holds, read without loading any model.

    Raises:
        StoreError: there is no store there yet, or it cannot be read.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    with open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search) as store:
        return StoreStatus(
            location=store.location,
            model_id=store.model_id,
            dim=store.dim,
            workspaces=[
                WorkspaceStatus(name, store.current(name), store.ref_counts(name))
                for name in store.workspaces()
            ],
        )
