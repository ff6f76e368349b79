"""The composition root: the one place that wires docshelf's parts together for the faces (the
command line, the MCP server and the Python API). It alone knows the concrete stores and
embedders; `Service` is everything a face may call, so no face touches a store or an indexer."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from docshelf.app.names import short_names
from docshelf.app.service import SEARCH_ATTEMPTS, Pins, Served, Service
from docshelf.app.status import PinState, recorded
from docshelf.chunking import (
    Chunk,
    Kind,
    TextChunk,
    chunk_as,
    effective_kind,
    paragraph_chunks,
)
from docshelf.config import EMBED_BATCH_SIZE, Config
from docshelf.errors import ConfigError
from docshelf.reading import DocsOutline, Reading, WorkspaceOverview
from docshelf.search import Answer
from docshelf.workspace import DocFile, Selection, Skipped, read_local

# numpy, httpx and the store drivers load only when a command needs them, so that `docshelf
# --help` and `docshelf chunk` start at once; hence the imports inside the functions below.
if TYPE_CHECKING:
    from docshelf.embedders import LocalEmbedder, OpenAIEmbedder

    # Re-exported: the faces name the indexer's result types through app.
    from docshelf.indexer import IndexResult as IndexResult
    from docshelf.indexer import Progress as Progress
    from docshelf.indexer import ProgressCallback as ProgressCallback
    from docshelf.stores import SQLiteStore
    from docshelf.stores.postgres import PostgresStore
    from docshelf.workspace import Workspace

Embedder: TypeAlias = "LocalEmbedder | OpenAIEmbedder"
Store: TypeAlias = "SQLiteStore | PostgresStore"

__all__ = [
    "SEARCH_ATTEMPTS",
    "Answer",
    "DocsOutline",
    "Pins",
    "Reading",
    "Served",
    "Service",
    "WorkspaceOverview",
    "short_names",
]

_log = logging.getLogger("docshelf.app")

# The model id and width a store records when it is made with the `none` embedder.
NO_MODEL = ("none", 0)

ChunkerChoice = Literal["auto", "markdown", "mdx", "rst", "asciidoc", "paragraph"]


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """A file and its chunks; for the paragraph chunker, also its pieces with their offsets."""

    file: DocFile
    chunks: list[Chunk]
    pieces: list[TextChunk] | None = None


@dataclass(frozen=True, slots=True)
class ChunkedDocs:
    files: list[ChunkedFile]
    skipped: list[Skipped]


# The kind whose chunker `docshelf chunk --chunker` forces on every file.
_FORCED: dict[str, Kind] = {
    "markdown": "markdown",
    "mdx": "mdx",
    "rst": "rst",
    "asciidoc": "asciidoc",
    "paragraph": "text",
}


def chunk_doc(file: DocFile, chunker: ChunkerChoice = "auto") -> ChunkedFile:
    """Cut one file as the index does (chunking.chunk_file: by its suffix and, for a .txt file,
    by its content), unless a chunker is forced."""
    kind = effective_kind(file.kind, file.text) if chunker == "auto" else _FORCED[chunker]
    chunks = chunk_as(file.path, file.text, kind)
    pieces = paragraph_chunks(file.path, file.text)[1] if kind == "text" else None
    return ChunkedFile(file, chunks, pieces)


def chunk_paths(paths: Iterable[Path], chunker: ChunkerChoice = "auto") -> ChunkedDocs:
    """Read the named files and directories as the index reads them, and cut each file.

    Raises:
        WorkspaceError: a path is missing, holds no documentation, or is not UTF-8.
    """
    docs = read_local(paths)
    return ChunkedDocs([chunk_doc(f, chunker) for f in docs.files], docs.skipped)


def indexing_batch(config: Config) -> int:
    """How many texts the indexer hands the embedder at once: EMBED_BATCH_SIZE, or more when
    --batch-size asks the local model for larger batches (an OpenAI-compatible endpoint's
    requests are capped at EMBED_BATCH_SIZE by its embedder, whatever the indexer hands it)."""
    return max(EMBED_BATCH_SIZE, config.batch_size or 0)


def configured_embedder(config: Config, *, serving: bool = False) -> Embedder | None:
    """The configured embedder (not loaded yet), or None for `--embedder none`; `serving`: for
    a server that syncs (embedders.make_embedder).

    Raises:
        ConfigError: the embedder options do not fit together.
    """
    from docshelf.embedders import make_embedder  # noqa: PLC0415 - see the imports above

    return make_embedder(config, serving=serving)


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
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workspace: str | None = None,
    progress: ProgressCallback | None = None,
) -> IndexResult:
    """Sync a workspace (a path or a clone URL), index the resolved commit unless it already is,
    make it current and prune the refs nobody pins. With no docs roots or globs given, the
    workspace reads the docs its current ref was indexed with (or finds them, the first time).

    Raises:
        WorkspaceError: the source cannot be read or the revision resolved.
        IndexingError: the commit could not be indexed; the previous ref keeps serving.
        StoreError, EmbeddingError, ConfigError: the store or the embedder cannot be set up.
    """
    from docshelf.indexer import Indexer  # noqa: PLC0415 - see the imports above
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    ws = open_workspace(
        source,
        docs=docs,
        include=include,
        exclude=exclude,
        name=workspace,
        mirrors_dir=Path(config.mirror_dir),
    )
    embedder = configured_embedder(config)
    with open_configured_store(config, embedder) as store:
        _adopt_stored_selection(ws, store)
        ref = ws.sync(rev)
        indexer = Indexer(store, embedder, ws, batch_size=indexing_batch(config))
        try:
            result = indexer.index(ref, progress)
        finally:
            indexer.close()
    if result.already_indexed:
        result = dataclasses.replace(result, roots=ws.roots_at(ref))
    return result


def _adopt_stored_selection(ws: Workspace, store: Store) -> None:
    """Unless the caller named the docs, read those the workspace's current ref holds: the
    roots and globs given once are kept by every later sync."""
    if ws.chosen:
        return
    current = store.current(ws.name)
    stored = None if current is None else store.selection(ws.name, current)
    if stored is not None:
        ws.selection = Selection.from_key(stored)


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
        StoreError: there is no store there yet, or it cannot be written.
        ConfigError: the store holds no such workspace.
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


def search_answer(
    config: Config,
    query: str,
    *,
    top_k: object = 5,
    ref: str | Sequence[str] | None = None,
    mode: str | None = None,
    workspace: str | None = None,
    path: str | None = None,
) -> Answer:
    """The answer `docs_search` gives: the top_k excerpts for `query` from `ref` (a commit id,
    or a branch or tag of a workspace that is a local repository; NAME=REV values with several
    workspaces) or the current ref, of the files under `path` (a folder or a glob), from the
    workspace named or from all of the store's, ranked together.

    Raises:
        ConfigError: the query, top_k, mode, path or workspace is refused.
        NotIndexedError: nothing is indexed for the workspace yet.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or git failed.
    """
    with open_service(config, workspace=workspace) as service:
        pins = service.resolve_all([ref] if isinstance(ref, str) else list(ref or ()))
        return service.search(query, top_k, ref=pins, mode=mode, path=path)


def open_reader(config: Config, *, workspace: str | None = None) -> Service:
    """A service that reads and outlines the indexed docs (and searches them by words only):
    the store opened as it is, no model loaded; the workspace named, or all of the store's.

    Raises:
        ConfigError: no workspace in the store, or none of that name.
        StoreError: the store cannot be opened.
    """
    from docshelf.search import Searcher  # noqa: PLC0415 - see the imports above
    from docshelf.stores import open_store  # noqa: PLC0415

    store = open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search)
    try:
        names = store.workspaces()
        if not names:
            raise ConfigError(_unknown_workspace(workspace, names))
        chosen = [_stored_name(workspace, names)] if workspace is not None else names
        labels = short_names(chosen) if len(chosen) > 1 else {chosen[0]: chosen[0]}
        served = [
            Served(
                name,
                labels[name],
                Searcher(
                    store, None, name, index_hint=f"docshelf index {name}", label=labels[name]
                ),
            )
            for name in chosen
        ]
    except BaseException:
        store.close()
        raise
    return Service(store, None, served=served)


def open_service(
    config: Config,
    *,
    source: str | None = None,
    sources: Sequence[str] = (),
    docs: Sequence[str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workspace: str | None = None,
    workspaces: Sequence[str] = (),
) -> Service:
    """Open the store and the embedder, and choose the workspaces: the sources' (paths or
    clone URLs, synced by `Service.sync`), else the ones named, else every workspace in the
    store. `source` and `workspace` are one of each (the docs options and `workspace` name the
    workspace of a single source).

    Raises:
        ConfigError: no workspace in the store, or one named that it does not hold.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or a source.
    """
    from docshelf.indexer import Indexer  # noqa: PLC0415 - see the imports above
    from docshelf.search import Searcher  # noqa: PLC0415
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    all_sources = ([source] if source is not None else []) + list(sources)
    named = ([workspace] if workspace is not None else []) + list(workspaces)
    if len(all_sources) > 1 and (docs or include or exclude or named):
        raise ConfigError(
            "--docs, --include, --exclude and --workspace name the docs of one SOURCE; serve "
            "several sources with the docs each was indexed with (index each first)"
        )
    opened = [
        open_workspace(
            s,
            docs=docs,
            include=include,
            exclude=exclude,
            name=named[0] if named and len(all_sources) == 1 else None,
            mirrors_dir=Path(config.mirror_dir),
        )
        for s in all_sources
    ]
    embedder = configured_embedder(config, serving=bool(opened))
    store = open_configured_store(config, embedder)
    try:
        entries: list[tuple[str, str, Workspace | None]] = []
        if opened:
            for ws, given in zip(opened, all_sources, strict=True):
                _adopt_stored_selection(ws, store)
                entries.append((ws.name, given, ws))
        else:
            stored = store.workspaces()
            if not stored:
                raise ConfigError(_unknown_workspace(None, stored))
            chosen = [_stored_name(name, stored) for name in named] or stored
            entries = [(name, name, None) for name in dict.fromkeys(chosen)]
        names = [name for name, _, _ in entries]
        if len(set(names)) < len(names):
            raise ConfigError("the same workspace is named twice; name each once")
        labels = short_names(names) if len(names) > 1 else {names[0]: names[0]}
        batch = indexing_batch(config)
        served = []
        for name, given, source_ws in entries:
            hint = f"docshelf index {given}"
            searcher = Searcher(store, embedder, name, index_hint=hint, label=labels[name])
            indexer = (
                None if source_ws is None else Indexer(store, embedder, source_ws, batch_size=batch)
            )
            served.append(Served(name, labels[name], searcher, source_ws, indexer))
    except BaseException:
        store.close()
        raise
    return Service(store, embedder, served=served)


def _stored_name(name: str, stored: Sequence[str]) -> str:
    """The store's name of a workspace named by it or by the short name it is shown by.

    Raises:
        ConfigError: the store holds no such workspace.
    """
    if name in stored:
        return name
    by_label = {label: full for full, label in short_names(stored).items()}
    if name in by_label:
        return by_label[name]
    raise ConfigError(_unknown_workspace(name, stored))


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
    # When the current ref was indexed and what its read skipped (None: not recorded), and the
    # live pins with their holders and leases.
    indexed_at: str | None = None
    skipped: list[Skipped] | None = None
    pins: list[PinState] = dataclasses.field(default_factory=list)


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
        workspaces = []
        for name in store.workspaces():
            kept = recorded(store, name)
            workspaces.append(
                WorkspaceStatus(
                    name,
                    kept.current,
                    store.ref_counts(name),
                    sorted(store.pinned_refs(name)),
                    kept.indexed_at,
                    kept.skipped,
                    kept.pins,
                )
            )
        return StoreStatus(store.location, store.model_id, store.dim, workspaces)


def _api_config(
    config: Config | None, store: str | os.PathLike[str] | None, embedder: str | None
) -> Config:
    settings: dict[str, Any] = {}
    if store is not None:
        settings["store"] = os.fspath(store)
    if embedder is not None:
        settings["embedder"] = embedder
    return dataclasses.replace(config or Config(), **settings)


def index(
    source: str | os.PathLike[str] = ".",
    *,
    docs: Sequence[str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    rev: str | None = None,
    workspace: str | None = None,
    store: str | os.PathLike[str] | None = None,
    embedder: str | None = None,
    config: Config | None = None,
    progress: ProgressCallback | None = None,
) -> IndexResult:
    """Index a repository's docs, as `docshelf index` does: `source` is a path (~ allowed) or
    a clone URL, `docs` its docs folders (default: found, or those given before), `include`
    and `exclude` gitignore-style globs over the files, `rev` the revision (default HEAD),
    `store` a SQLite path or a PostgreSQL URL (default: the user's store), `embedder` local,
    openai or none; any other setting comes from `config`.

    Raises:
        WorkspaceError: the source cannot be read or the revision resolved.
        IndexingError: the commit could not be indexed; the previous ref keeps serving.
        StoreError, EmbeddingError, ConfigError: the store or the embedder cannot be set up.
    """
    return index_source(
        _api_config(config, store, embedder),
        os.fspath(source),
        rev=rev,
        docs=docs,
        include=include,
        exclude=exclude,
        workspace=workspace,
        progress=progress,
    )


def open(
    store: str | os.PathLike[str] | None = None,
    *,
    workspace: str | None = None,
    embedder: str | None = None,
    config: Config | None = None,
) -> Service:
    """Open an indexed store for searching and reading: `Service.search(query, top_k)`,
    `Service.read(path)` and `Service.outline(path)` answer as the tools do. Close it (or use it
    in a `with` block) when done. Every workspace of the store is served (searched together),
    or the one `workspace` names; `embedder` must be the one the store was indexed with.

    Raises:
        ConfigError: no workspace in the store, or none of that name.
        StoreError, EmbeddingError: the store or the embedder cannot be opened.
    """
    return open_service(_api_config(config, store, embedder), workspace=workspace)
