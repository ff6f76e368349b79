"""The composition root: the one place that wires docshelf's parts together for the faces
(the command line, later the MCP server)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from docshelf.chunking import Chunk, TextChunk, chunk_text, split_markdown
from docshelf.config import Config
from docshelf.errors import ConfigError
from docshelf.workspace import DocFile, read_local

# numpy, httpx and the store drivers load only when a command needs them, so that `docshelf
# --help` and `docshelf chunk` start at once; hence the imports inside the functions below.
if TYPE_CHECKING:
    from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
    from docshelf.indexer import IndexResult, ProgressCallback
    from docshelf.rows import StoredHit
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


def index_source(
    config: Config,
    source: str = ".",
    *,
    rev: str | None = None,
    docs: Sequence[str] | None = None,
    workspace: str | None = None,
    progress: ProgressCallback | None = None,
) -> IndexResult:
    """Sync a workspace (a path or a clone URL), index the resolved commit unless it already is,
    make it current and prune the refs nobody pins.

    Raises:
        WorkspaceError: the source cannot be read or the revision resolved.
        IndexingError: the commit could not be indexed; the previous ref keeps serving.
        StoreError, EmbeddingError, ConfigError: the store or the embedder cannot be set up.
    """
    from docshelf.indexer import Indexer  # noqa: PLC0415 - see the imports above
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    ws = open_workspace(source, docs=docs, name=workspace, mirrors_dir=Path(config.mirror_dir))
    ref = ws.sync(rev)
    embedder = configured_embedder(config)
    with open_configured_store(config, embedder) as store:
        indexer = Indexer(store, embedder, ws)
        try:
            return indexer.index(ref, progress)
        finally:
            indexer.close()


@dataclass(frozen=True, slots=True)
class PruneReport:
    workspace: str
    current: str | None
    pinned: list[str]
    removed: int


def prune_store(config: Config, workspace: str | None = None) -> list[PruneReport]:
    """Delete every ref but the current and the pinned ones, in one workspace or in all.
    A workspace with no current ref is left as it is.

    Raises:
        StoreError: there is no store there yet, it cannot be written, or no such workspace.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    reports = []
    with open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search) as store:
        names = store.workspaces()
        if workspace is not None:
            if workspace not in names:
                raise ConfigError(_unknown_workspace(workspace, names))
            names = [workspace]
        for name in names:
            current = store.current(name)
            removed = 0 if current is None else store.prune(name, {current})
            reports.append(PruneReport(name, current, sorted(store.pinned_refs(name)), removed))
    return reports


def search_current(
    config: Config, query: str, *, workspace: str | None = None, k: int = 5
) -> tuple[str, str, list[StoredHit]]:
    """The k chunks of a workspace's current ref nearest to `query` (by text with the none
    embedder), with the workspace and the ref answered from. The search issue replaces this
    with hybrid retrieval.

    Raises:
        ConfigError: no workspace indexed, or several and none named.
        StoreError, EmbeddingError: the store or the embedder failed.
    """
    embedder = configured_embedder(config)
    with open_configured_store(config, embedder) as store:
        names = store.workspaces()
        if workspace is None:
            if len(names) != 1:
                raise ConfigError(_unknown_workspace(None, names))
            workspace = names[0]
        elif workspace not in names:
            raise ConfigError(_unknown_workspace(workspace, names))
        ref = store.current(workspace)
        if ref is None:
            raise ConfigError(
                f"workspace {workspace} has no current ref yet; index it with docshelf index"
            )
        if embedder is None:
            return workspace, ref, store.search_text(workspace, ref, query, k)
        vector = embedder.embed([query])[0]
        return workspace, ref, store.search(workspace, ref, vector, k)


def _unknown_workspace(name: str | None, names: Sequence[str]) -> str:
    if not names:
        return "the store holds no workspace yet; index one with docshelf index [PATH|URL]"
    listed = ", ".join(names)
    if name is None:
        return f"the store holds several workspaces ({listed}); name one with --workspace"
    return f"no workspace {name} in the store; it holds {listed}"


@dataclass(frozen=True, slots=True)
class WorkspaceStatus:
    name: str
    current: str | None
    chunks_per_ref: dict[str, int]
    pinned: list[str]


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
                WorkspaceStatus(
                    name,
                    store.current(name),
                    store.ref_counts(name),
                    sorted(store.pinned_refs(name)),
                )
                for name in store.workspaces()
            ],
        )
