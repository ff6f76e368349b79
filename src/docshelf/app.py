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

from docshelf.chunking import (
    Chunk,
    Kind,
    TextChunk,
    chunk_as,
    effective_kind,
    paragraph_chunks,
)
from docshelf.config import EMBED_BATCH_SIZE, Config
from docshelf.errors import ConfigError, DocshelfError, NotIndexedError, WorkspaceError
from docshelf.search import DEFAULT_TOP_K
from docshelf.workspace import COMMIT_ID, DocFile, Selection, Skipped, read_local

# numpy, httpx and the store drivers load only when a command needs them, so that `docshelf
# --help` and `docshelf chunk` start at once; hence the imports inside the functions below.
if TYPE_CHECKING:
    from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
    from docshelf.indexer import Indexer

    # Re-exported: the faces name the indexer's result types through app.
    from docshelf.indexer import IndexResult as IndexResult  # noqa: PLC0414
    from docshelf.indexer import Progress as Progress  # noqa: PLC0414
    from docshelf.indexer import ProgressCallback as ProgressCallback  # noqa: PLC0414
    from docshelf.search import Answer, Searcher
    from docshelf.stores import SQLiteStore
    from docshelf.stores.postgres import PostgresStore
    from docshelf.workspace import Workspace

Embedder: TypeAlias = "LocalEmbedder | OpenAIEmbedder"
Store: TypeAlias = "SQLiteStore | PostgresStore"

_log = logging.getLogger("docshelf.app")

# The model id and width a store records when it is made with the `none` embedder.
NO_MODEL = ("none", 0)

ChunkerChoice = Literal["auto", "markdown", "mdx", "rst", "asciidoc", "paragraph"]

# A search reads the current ref, then that ref's rows: a sync (of this process or another) that
# promotes a new ref in between may prune those rows under it, leaving fewer excerpts or none.
# Such a search is asked again, from the new current ref; promotions are a sync apart (a second
# at least), so the second try holds.
SEARCH_ATTEMPTS = 3


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
    ref: str | None = None,
    mode: str | None = None,
    workspace: str | None = None,
) -> Answer:
    """The answer `docs_search` gives: the top_k excerpts for `query` from `ref` (a commit id,
    or a branch or tag of a workspace that is a local repository) or the current ref.

    Raises:
        ConfigError: the query, top_k, mode or workspace is refused.
        NotIndexedError: nothing is indexed for the workspace yet.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or git failed.
    """
    with open_service(config, workspace=workspace) as service:
        return service.search(query, top_k, ref=service.resolve(ref), mode=mode)


@dataclass
class Service:
    """What a long-running server needs, built once: the store, the embedder and the searcher of
    one workspace; with a source to sync, also the indexer (background syncs and pins)."""

    store: Store
    embedder: Embedder | None
    searcher: Searcher
    source: Workspace | None
    indexer: Indexer | None

    @property
    def workspace(self) -> str:
        return self.searcher.workspace

    @property
    def text_only(self) -> bool:
        """Whether searches match words only (a store made without an embedder)."""
        return self.searcher.default_mode == "text"

    @property
    def can_sync(self) -> bool:
        """Whether the service has a source to sync (SOURCE was given)."""
        return self.source is not None and self.indexer is not None

    def current(self) -> str | None:
        """The workspace's current ref, or None when nothing is indexed yet.

        Raises:
            StoreError: the store cannot be read.
        """
        return self.store.current(self.workspace)

    def pin(self, rev: str) -> tuple[str, Callable[[], None]]:
        """`rev` resolved to a commit, pinned in the store when the service has the source (so
        that prunes keep it), and the call that releases the pin.

        Raises:
            WorkspaceError: `rev` names no commit.
            StoreError: the pin could not be recorded.
        """
        commit = self.resolve(rev)
        assert commit is not None
        if self.indexer is None:
            return commit, _nothing
        return commit, self.indexer.pin(commit)

    def warm_up(self, query: str) -> None:
        """Answer `query` once and drop the answer: loads the model and the current ref's
        vectors before the first real call.

        Raises:
            DocshelfError: the search failed (nothing indexed, the model or the store).
        """
        self.searcher.search(query, 1)

    def resolve(self, rev: str | None) -> str | None:
        """`rev` as a full commit id: resolved by git when the workspace is a repository (no
        fetch), else taken as given when it already is one.

        Raises:
            WorkspaceError: `rev` names no commit.
        """
        if rev is None:
            return None
        if self.source is not None:
            return self.source.resolve(rev)
        if COMMIT_ID.fullmatch(rev):  # a full commit id, or a plain directory's ref
            return rev
        from docshelf.workspace import open_workspace  # noqa: PLC0415 - see the imports above

        # The default workspace name is the repository's path: resolve there when it is one.
        if Path(self.workspace).is_dir():
            here = open_workspace(self.workspace, mirrors_dir=Path(self.workspace))
            return here.resolve(rev)
        raise WorkspaceError(
            f"{rev!r} is not a full commit id, and the workspace {self.workspace} is not a "
            "local repository to resolve it in; give the full commit id"
        )

    def search(
        self,
        query: object,
        top_k: object = DEFAULT_TOP_K,
        *,
        ref: str | None = None,
        mode: str | None = None,
    ) -> Answer:
        """The `top_k` excerpts for `query` (`Answer.hits`, best first) from `ref` (a full
        commit id, see `resolve`) or the current ref; asked again when the current ref moved
        during the search (its rows may have been pruned under it). `mode` is hybrid, vector or
        text (default: hybrid, or text for a store made without an embedder).

        Raises:
            ConfigError: the query, top_k or mode is refused.
            NotIndexedError: nothing is indexed for the workspace yet.
            EmbeddingError, StoreError: the embedder or the store failed.
        """
        attempt = 1
        while True:
            try:
                answer = self.searcher.search(query, top_k, ref=ref, mode=mode)
            except NotIndexedError:
                if attempt == SEARCH_ATTEMPTS or self.store.current(self.workspace) is None:
                    raise
            else:
                # A pinned ref's rows are kept by its pin; only an answer from current can race.
                if (
                    answer.ref == ref
                    or attempt == SEARCH_ATTEMPTS
                    or answer.ref == self.store.current(self.workspace)
                ):
                    return answer
            attempt += 1

    def sync(self) -> IndexResult | None:
        """Sync the source and refresh the index (the background sync's step): bounded, and a
        failure is logged, never raised.

        Raises:
            ConfigError: the service has no source to sync.
        """
        if self.source is None or self.indexer is None:
            raise ConfigError("nothing to sync: give the repository (SOURCE) to serve")
        try:
            ref = self.source.sync()
        except DocshelfError as e:
            _log.error("syncing %s: %s", self.workspace, e)
            return None
        return self.indexer.refresh(ref)

    def close(self) -> None:
        if self.indexer is not None:
            self.indexer.close()
        self.store.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_service(
    config: Config,
    *,
    source: str | None = None,
    docs: Sequence[str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    workspace: str | None = None,
) -> Service:
    """Open the store and the embedder, and choose the workspace: the source's (a path or a
    clone URL, synced by `Service.sync`), the one named, or the store's only one.

    Raises:
        ConfigError: no workspace in the store, or several and none named.
        StoreError, EmbeddingError, WorkspaceError: the store, the embedder or the source.
    """
    from docshelf.indexer import Indexer  # noqa: PLC0415 - see the imports above
    from docshelf.search import Searcher  # noqa: PLC0415
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    ws = None
    if source is not None:
        ws = open_workspace(
            source,
            docs=docs,
            include=include,
            exclude=exclude,
            name=workspace,
            mirrors_dir=Path(config.mirror_dir),
        )
    embedder = configured_embedder(config)
    store = open_configured_store(config, embedder)
    try:
        if ws is not None:
            _adopt_stored_selection(ws, store)
            name = ws.name
        else:
            names = store.workspaces()
            if workspace is None and len(names) != 1:
                raise ConfigError(_unknown_workspace(None, names))
            name = workspace or names[0]
            if name not in names:
                raise ConfigError(_unknown_workspace(name, names))
        hint = f"docshelf index {source or name}"
        searcher = Searcher(store, embedder, name, index_hint=hint)
        batch = indexing_batch(config)
        indexer = None if ws is None else Indexer(store, embedder, ws, batch_size=batch)
    except BaseException:
        store.close()
        raise
    return Service(store, embedder, searcher, ws, indexer)


def _nothing() -> None:
    pass


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
    """Open an indexed store for searching: `Service.search(query, top_k)` answers as
    `docs_search` does. Close it (or use it in a `with` block) when done. `workspace` is needed
    when the store holds several; `embedder` must be the one the store was indexed with.

    Raises:
        ConfigError: no workspace in the store, or several and none named.
        StoreError, EmbeddingError: the store or the embedder cannot be opened.
    """
    return open_service(_api_config(config, store, embedder), workspace=workspace)
