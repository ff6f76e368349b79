"""The composition root: the one place that wires docshelf's parts together for the faces (the
command line, the MCP server and the Python API). It alone knows the concrete stores and
embedders; `Service` is everything a face may call, so no face touches a store or an indexer."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from docshelf.app.manifest import DEFAULT_JOBS, MAX_JOBS, open_manifest_service
from docshelf.app.names import short_names
from docshelf.app.polling import Poller, spread
from docshelf.app.service import (
    SEARCH_ATTEMPTS,
    Embedder,
    Pins,
    Reloaded,
    Served,
    Service,
    merge_lists,
)
from docshelf.app.status import ServiceState, workspace_state
from docshelf.chunking import (
    Chunk,
    Kind,
    TextChunk,
    chunk_as,
    effective_kind,
    paragraph_chunks,
)
from docshelf.config import (
    EMBED_BATCH_SIZE,
    NO_MODEL,
    READ_MAX_BYTES,
    READ_MAX_LINES,
    Config,
)
from docshelf.errors import ConfigError
from docshelf.paths import MAX_PATH_BYTES
from docshelf.reading import (
    MAX_LINE_NUMBER,
    OVERVIEW_PAGE,
    DocsOutline,
    Reading,
    WorkspaceOverview,
    WorkspacesPage,
)
from docshelf.search import (
    DEFAULT_PER_FILE,
    DEFAULT_TOP_K,
    MAX_MAX_TOKENS,
    MAX_TOP_K,
    MIN_MAX_TOKENS,
    MIN_PER_FILE,
    MIN_TOP_K,
    MODES,
    TOKENS_PER_EXCERPT,
    Answer,
    Hit,
    check_max_tokens,
)
from docshelf.shown import listed as listed_names
from docshelf.workspace import DocFile, Skipped, read_local

# numpy, httpx and the store drivers load only when a command needs them, so that `docshelf
# --help` and `docshelf chunk` start at once; hence the imports inside the functions below.
if TYPE_CHECKING:
    # Re-exported: the faces name the indexer's result types through app.
    from docshelf.indexer import IndexResult as IndexResult
    from docshelf.indexer import Progress as Progress
    from docshelf.indexer import ProgressCallback as ProgressCallback
    from docshelf.stores.contract import Store
    from docshelf.workspace import Workspace

# The bounds and types the faces name (their schemas, help and descriptions) come through app.
__all__ = [
    "DEFAULT_JOBS",
    "DEFAULT_PER_FILE",
    "DEFAULT_TOP_K",
    "MAX_JOBS",
    "MAX_LINE_NUMBER",
    "MAX_MAX_TOKENS",
    "MAX_PATH_BYTES",
    "MAX_TOP_K",
    "MIN_MAX_TOKENS",
    "MIN_PER_FILE",
    "MIN_TOP_K",
    "MODES",
    "OVERVIEW_PAGE",
    "READ_MAX_BYTES",
    "READ_MAX_LINES",
    "SEARCH_ATTEMPTS",
    "TOKENS_PER_EXCERPT",
    "Answer",
    "DocsOutline",
    "Hit",
    "Pins",
    "Poller",
    "Reading",
    "Reloaded",
    "Served",
    "Service",
    "ServiceState",
    "WorkspaceOverview",
    "WorkspacesPage",
    "check_max_tokens",
    "open_manifest_service",
    "short_names",
    "spread",
]

_log = logging.getLogger("docshelf.app")

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


def open_configured_store(
    config: Config, embedder: Embedder | None, *, create: bool = True
) -> Store:
    """The configured store, checked against the embedder's model, and created for it when
    `create` (only indexing makes a store: a search of a store that is not there is refused).

    Raises:
        StoreError: the store cannot be opened, is not there and may not be created, or holds
            another model's embeddings.
        EmbeddingError: the model must be loaded to learn its width, and cannot be.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    model_id, dim = NO_MODEL if embedder is None else (embedder.model_id, embedder.dim)
    return open_store(
        config.store, model_id=model_id, dim=dim, ef_search=config.ef_search, create=create
    )


def open_as_indexed(config: Config) -> tuple[Store, Embedder | None]:
    """The configured store, which must be there, and the embedder to search it with: the store
    knows how it was indexed, so a store made with the none embedder is searched by words with no
    embedder named, and `--embedder none` searches a model's store by words (no model loaded).

    Raises:
        StoreError: no store is there, it cannot be opened, or holds another model's embeddings.
        ConfigError, EmbeddingError: the embedder cannot be set up.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    store = open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search)
    if store.model_id == NO_MODEL[0] or config.embedder == "none":
        return store, None
    store.close()  # opened again below, checked against the model
    embedder = configured_embedder(config)
    return open_configured_store(config, embedder, create=False), embedder


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
        indexer = Indexer(store, embedder, ws, batch_size=indexing_batch(config))
        try:
            ref = indexer.sync(rev)
            result = indexer.index(ref, progress)
        finally:
            indexer.close()
        merge_lists(store)  # when the current refs have moved on enough
    return result


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
    per_file: object = None,
) -> Answer:
    """The answer `docs_search` gives: the top_k excerpts for `query` from `ref` (a commit id,
    or a branch or tag of a workspace that is a local repository; NAME=REV values with several
    workspaces) or the current ref, of the files under `path` (a folder or a glob), from the
    workspace named or from all of the store's, ranked together; at most `per_file` of one file.

    Raises:
        ConfigError: the query, top_k, per_file, mode, path or workspace is refused.
        NotIndexedError: nothing is indexed for the workspace yet.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or git failed.
    """
    with open_service(config, workspace=workspace) as service:
        pins = service.resolve_all([ref] if isinstance(ref, str) else list(ref or ()))
        return service.search(query, top_k, ref=pins, mode=mode, path=path, per_file=per_file)


def open_reader(config: Config, *, workspace: str | None = None) -> Service:
    """A service that reads and outlines the indexed docs (and searches them by words only):
    the store opened as it is, no model loaded; the workspace named, or all of the store's.

    Raises:
        ConfigError: no workspace in the store, or none of that name.
        StoreError: there is no store there, or it cannot be opened.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    store = open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search)
    return _serving(config, store, None, lambda: _stored(store, [workspace] if workspace else []))


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
    create: bool = True,
) -> Service:
    """Open the store and the embedder, and choose the workspaces: the sources' (paths or
    clone URLs, synced by `Service.sync`), else the ones named, else every workspace in the
    store. `source` and `workspace` are one of each (the docs options and `workspace` name the
    workspace of a single source). With sources, the store is created when it is not there yet
    and `create` (`docshelf serve` creates it only when it syncs); without sources, it must be
    there, and is searched as it was indexed (`open_as_indexed`).

    Raises:
        ConfigError: no workspace in the store, or one named that it does not hold.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or a source.
    """
    from docshelf.workspace import open_workspace  # noqa: PLC0415 - see the imports above

    all_sources = ([source] if source is not None else []) + list(sources)
    named = ([workspace] if workspace is not None else []) + list(workspaces)
    if not all_sources:
        store, embedder = open_as_indexed(config)
        return _serving(config, store, embedder, lambda: _stored(store, named))
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
    embedder = configured_embedder(config, serving=True)
    store = open_configured_store(config, embedder, create=create)
    return _serving(
        config,
        store,
        embedder,
        lambda: [
            (ws.name, f"docshelf index {given}", ws)
            for ws, given in zip(opened, all_sources, strict=True)
        ],
    )


# A workspace to serve: its name in the store, the command that indexes it, and the source to
# sync (None: served as it is indexed).
_Entry: TypeAlias = "tuple[str, str, Workspace | None]"


def _stored(store: Store, named: Sequence[str]) -> list[_Entry]:
    """The store's workspaces to serve: those `named` (by name or shown name), else all.

    Raises:
        ConfigError: the store holds no workspace, or none of a name.
    """
    stored = store.workspaces()
    if not stored:
        raise ConfigError(_unknown_workspace(named[0] if named else None, stored))
    chosen = [_stored_name(name, stored) for name in named] or stored
    return [(name, f"docshelf index {name}", None) for name in dict.fromkeys(chosen)]


def _serving(
    config: Config, store: Store, embedder: Embedder | None, choose: Callable[[], list[_Entry]]
) -> Service:
    """The service of the workspaces `choose` names, each shown by its short name, with an
    indexer for each that has a source; the store is closed when that fails.

    Raises:
        ConfigError: the same workspace twice.
    """
    from docshelf.indexer import Indexer  # noqa: PLC0415 - see the imports above

    served: list[Served] = []
    reads = None
    try:
        reads = open_read_store(config, store)
        chosen = choose()
        names = [name for name, _, _ in chosen]
        if len(set(names)) < len(names):
            raise ConfigError("the same workspace is named twice; name each once")
        labels = short_names(names) if len(names) > 1 else {names[0]: names[0]}
        batch = indexing_batch(config)
        for name, hint, source in chosen:
            indexer = None
            if source is not None:
                indexer = Indexer(store, embedder, source, batch_size=batch)
            served.append(Served(name, labels[name], hint, source, indexer))
        return Service(store, embedder, served, read_store=reads)
    except BaseException:
        for one in served:
            if one.indexer is not None:
                one.indexer.close()
        if reads is not None:
            reads.close()
        store.close()
        raise


def check_read_store(config: Config) -> None:
    """Refuse a read store that is not a PostgreSQL replica of a PostgreSQL store.

    Raises:
        ConfigError: the store or the read store is not a PostgreSQL URL.
    """
    from docshelf.stores import is_postgres_url  # noqa: PLC0415 - see the imports above

    if config.read_store is None:
        return
    if not is_postgres_url(config.store) or not is_postgres_url(config.read_store):
        raise ConfigError(
            "--read-store names a PostgreSQL streaming replica of --store, which must be a "
            "PostgreSQL database too (postgresql://...)"
        )


def open_read_store(config: Config, store: Store) -> Store | None:
    """The streaming replica `config.read_store` names, opened as it is (nothing is written to
    it), checked against `store`'s model and width; None when none is named.

    Raises:
        ConfigError: a read store beside a store that is not PostgreSQL, or one that is not.
        StoreError: the replica cannot be reached, holds no store, or another model's.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    check_read_store(config)
    if config.read_store is None:
        return None
    return open_store(
        config.read_store,
        model_id=store.model_id,
        dim=store.dim,
        ef_search=config.ef_search,
        create=False,
    )


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
    listed = listed_names(names)
    if name is None:
        return f"the store holds several workspaces ({listed}); name one with --workspace"
    return f"no workspace {name} in the store; it holds {listed}"


def store_status(config: Config, workspace: str | None = None) -> ServiceState:
    """What the configured store holds, read without loading any model: per workspace (by its
    name) its current ref, when that was indexed and what its read skipped, each ref's chunks and
    the live pins; of every workspace, or of the one named (by name or shown name).

    Raises:
        StoreError: there is no store there yet, or it cannot be read.
        ConfigError: the store holds no workspace of that name.
    """
    from docshelf.stores import open_store  # noqa: PLC0415 - see the imports above

    with open_store(config.store, model_id=None, dim=None, ef_search=config.ef_search) as store:
        names = store.workspaces()
        if workspace is not None:
            names = [_stored_name(workspace, names)]
        workspaces = [workspace_state(store, name) for name in names]
        text_only = store.model_id == NO_MODEL[0]
        return ServiceState(store.location, store.model_id, store.dim, text_only, workspaces)


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
