"""A manifest's workspaces: `docshelf index --manifest` indexes each into one store with one
embedder (one model loaded for all), a failure reported and the rest carried on; `docshelf
serve --manifest` serves them, reading the manifest again at each sync round.

Constraints:
- Syncing (a clone URL's fetch, a commit resolved) and reading a commit's docs wait on the
  network and git, embedding on the one model: up to `jobs` workspaces ahead sync and read
  their docs at once. INDEXING_AT_ONCE commits are indexed at once, and they take turns at the
  model (`_TakingTurns`): one commit's chunking, lookups of stored vectors and write overlap
  another's embedding. Outcomes are reported in the manifest's order.
- A workspace that fails (a source that is not there, a ref that does not resolve, an indexing
  error) is an outcome with its error; the previous ref of that workspace keeps serving. A store
  or an embedder that cannot be set up fails the whole run before any workspace.
- Served, an entry that cannot be opened (a path not there yet, a URL that cannot be cloned) is
  logged and left out, and tried again at the next reload; an entry that did not change keeps
  its indexer and its shown name, so a session's pin of it holds across reloads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.app.names import short_names
from docshelf.app.service import Served, Service, merge_lists
from docshelf.errors import ConfigError, DocshelfError
from docshelf.workspace.manifest import ManifestEntry, read_manifest

__all__ = [
    "DEFAULT_JOBS",
    "MAX_JOBS",
    "ManifestEntry",
    "ManifestOutcome",
    "index_manifest",
    "open_manifest_service",
    "read_manifest",
]

if TYPE_CHECKING:
    from docshelf.app.service import Embedder
    from docshelf.config import Config
    from docshelf.indexer import Embedder as IndexingEmbedder
    from docshelf.indexer import Indexer, IndexResult
    from docshelf.rows import Vector
    from docshelf.stores.contract import Store
    from docshelf.workspace import Workspace

_log = logging.getLogger("docshelf.app")

# Workspaces synced at once by default; at most MAX_JOBS.
DEFAULT_JOBS = 4
MAX_JOBS = 32

# Commits of a manifest indexed at once (at most `jobs`): while one embeds, the other chunks,
# looks its vectors up and writes. The model embeds for one at a time.
INDEXING_AT_ONCE = 2

# Vectors the commits indexed at once share (_TakingTurns): 8,192 of the local model's 384
# dimensions are 12 MiB.
SHARED_VECTORS = 8_192


@dataclass(frozen=True, slots=True)
class ManifestOutcome:
    """What indexing one entry of a manifest did: its result, or the error that stopped it."""

    entry: ManifestEntry
    result: IndexResult | None
    error: str | None = None


def index_manifest(
    config: Config,
    entries: Sequence[ManifestEntry],
    *,
    jobs: int = DEFAULT_JOBS,
    report: Callable[[ManifestOutcome], None] | None = None,
) -> list[ManifestOutcome]:
    """Index each entry's commit (its ref, else its tracked branch) as `docshelf index` does,
    make it current and prune; `report` gets each outcome as it is known, in manifest order.

    Raises:
        StoreError, EmbeddingError, ConfigError: the store or the embedder cannot be set up.
    """
    from docshelf.app import (  # noqa: PLC0415 - the app imports this module
        configured_embedder,
        indexing_batch,
        open_configured_store,
    )
    from docshelf.indexer import Indexer  # noqa: PLC0415 - numpy loads with the indexer

    embedder = configured_embedder(config)
    shared = None if embedder is None else _TakingTurns(embedder)
    outcomes: list[ManifestOutcome] = []
    with open_configured_store(config, embedder) as store:

        def synced(entry: ManifestEntry) -> tuple[Indexer, str]:
            ws = _opened(entry, config)
            indexer = Indexer(store, shared, ws, batch_size=indexing_batch(config))
            try:
                ref = indexer.sync(entry.ref)
                # Read its docs now, while an earlier workspace embeds; a failure here is
                # the index's to report, in its own words.
                with contextlib.suppress(DocshelfError):
                    indexer.read_ahead(ref)
                return indexer, ref
            except BaseException:
                indexer.close()
                raise

        ahead = max(1, min(jobs, MAX_JOBS))
        with (
            ThreadPoolExecutor(ahead, "docshelf-sync") as pool,
            ThreadPoolExecutor(min(ahead, INDEXING_AT_ONCE), "docshelf-index") as indexing,
        ):
            # At most `ahead` workspaces synced (and read) before their turn: memory holds the
            # docs of a few, however long the manifest.
            futures: list[Future[tuple[Indexer, str]]] = [
                pool.submit(synced, entry) for entry in entries[:ahead]
            ]
            indexed: list[Future[ManifestOutcome]] = []
            stop = threading.Event()  # set: the commits under way stop at their next batch

            def index_next() -> None:
                n = len(indexed)
                indexed.append(indexing.submit(_indexed, entries[n], futures[n], stop))
                if n + ahead < len(entries):
                    futures.append(pool.submit(synced, entries[n + ahead]))

            try:
                for _ in entries[: min(ahead, INDEXING_AT_ONCE)]:
                    index_next()
                for n in range(len(entries)):
                    outcome = indexed[n].result()
                    outcomes.append(outcome)
                    if len(indexed) < len(entries):
                        index_next()
                    if report is not None:
                        report(outcome)
            except BaseException:
                stop.set()
                raise
            finally:  # a bug or an interrupt: the syncs not indexed release their pins
                # An index under way closes its own; one not started never will.
                unstarted = [
                    futures[n] for n in range(len(outcomes), len(indexed)) if indexed[n].cancel()
                ]
                for future in [*unstarted, *futures[len(indexed) :]]:
                    future.cancel()
                    if not future.cancelled() and future.exception() is None:
                        future.result()[0].close()
        if any(o.result is not None for o in outcomes):
            merge_lists(store)  # when the current refs have moved on enough
    return outcomes


class _TakingTurns:
    """An embedder that embeds for one caller at a time: the commits indexed at once take
    turns at the model (which would only share the same cores), and do the rest meanwhile.
    A text one of them embedded lately (the last SHARED_VECTORS) is not embedded again for the
    other: two forks side by side in a manifest look their vectors up in the store before
    either has written them."""

    def __init__(self, embedder: IndexingEmbedder) -> None:
        self._embedder = embedder
        self._turn = threading.Lock()
        self._recent: OrderedDict[str, Vector] = OrderedDict()

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def dim(self) -> int:
        return self._embedder.dim

    @property
    def batch_chars(self) -> int | None:
        return self._embedder.batch_chars

    @property
    def batch_text_chars(self) -> int | None:
        return self._embedder.batch_text_chars

    @property
    def batch_texts(self) -> int | None:
        return self._embedder.batch_texts

    def embed(self, texts: list[str]) -> Vector:
        with self._turn:
            return self._embedder.embed(texts)

    def embed_documents(self, texts: list[str]) -> Vector:
        import numpy as np  # noqa: PLC0415 - numpy loads with the indexer

        with self._turn:
            new = list(dict.fromkeys(t for t in texts if t not in self._recent))
            if not texts or len(new) == len(texts):
                matrix = self._embedder.embed_documents(texts)
                if getattr(matrix, "shape", (0,))[0] == len(texts):
                    self._keep(zip(texts, matrix, strict=True))
                return matrix  # else the indexer's check names the fault
            fresh: dict[str, Vector] = {}
            if new:
                matrix = self._embedder.embed_documents(new)
                if getattr(matrix, "shape", (0,))[0] != len(new):
                    return matrix
                fresh = dict(zip(new, matrix, strict=True))
            rows = [fresh[t] if t in fresh else self._recent[t] for t in texts]
            self._keep(fresh.items())
            return np.stack(rows)

    def _keep(self, vectors: Iterable[tuple[str, Vector]]) -> None:
        for text, vector in vectors:
            self._recent[text] = vector
            if len(self._recent) > SHARED_VECTORS:
                self._recent.popitem(last=False)


def _indexed(
    entry: ManifestEntry, future: Future[tuple[Indexer, str]], stop: threading.Event
) -> ManifestOutcome:
    try:
        indexer, ref = future.result()
    except DocshelfError as e:
        return ManifestOutcome(entry, None, str(e))
    try:
        return ManifestOutcome(entry, indexer.index(ref, cancel=stop))
    except DocshelfError as e:
        return ManifestOutcome(entry, None, str(e))
    finally:
        indexer.close()


def _opened(entry: ManifestEntry, config: Config) -> Workspace:
    """The entry's workspace, as `docshelf index SOURCE` with its options opens it.

    Raises:
        WorkspaceError: the source cannot be opened (a URL is cloned here, the first time).
    """
    from docshelf.workspace import open_workspace  # noqa: PLC0415 - see index_manifest

    return open_workspace(
        entry.source,
        docs=entry.docs,
        include=entry.include,
        exclude=entry.exclude,
        name=entry.name,
        mirrors_dir=Path(config.mirror_dir),
    )


def open_manifest_service(
    config: Config, path: Path, *, jobs: int = DEFAULT_JOBS, create: bool = True
) -> Service:
    """A service of the manifest's workspaces, each synced at its `ref` (else its HEAD), that
    reads the manifest again at each `Service.reload`: workspaces added start being served,
    those removed stop. The store is created when it is not there yet and `create`.

    Raises:
        ConfigError: the manifest is refused, or none of its workspaces can be opened.
        StoreError, EmbeddingError: the store or the embedder cannot be set up.
    """
    from docshelf.app import (  # noqa: PLC0415 - the app imports this module
        configured_embedder,
        open_configured_store,
        open_read_store,
    )

    read_manifest(path)  # refused before any store or model is opened
    embedder = configured_embedder(config, serving=True)
    store = open_configured_store(config, embedder, create=create)
    reads = None
    try:
        reads = open_read_store(config, store)
        choose = _Chooser(config, path, store, embedder, jobs)
        served = choose([])
        if not served:
            raise ConfigError(
                f"none of the workspaces of manifest {path} can be opened: "
                + "; ".join(choose.failures)
            )
        return Service(store, embedder, served, reload=choose, read_store=reads)
    except BaseException:
        if reads is not None:
            reads.close()
        store.close()
        raise


class _Chooser:
    """What a manifest service serves: the manifest read again, its new entries opened (up to
    `jobs` at once: a URL is cloned the first time), the unchanged ones kept as they are."""

    def __init__(
        self, config: Config, path: Path, store: Store, embedder: Embedder | None, jobs: int
    ) -> None:
        self._config, self._path, self._store, self._embedder = config, path, store, embedder
        self._jobs = max(1, min(jobs, MAX_JOBS))
        self.failures: list[str] = []

    def __call__(self, current: Sequence[Served]) -> list[Served]:
        """The workspaces to serve now, in the manifest's order.

        Raises:
            ConfigError: the manifest is refused.
        """
        entries = read_manifest(self._path)
        held = {s.origin: s for s in current if s.origin is not None}
        new = [e for e in entries if e not in held]
        with ThreadPoolExecutor(min(self._jobs, max(1, len(new))), "docshelf-open") as pool:
            opened = dict(zip(new, pool.map(self._open, new), strict=True))
        self.failures = [f"{e.label}: {opened[e]}" for e in new if isinstance(opened[e], str)]
        for failure in self.failures:
            _log.error("manifest %s: %s; tried again at the next sync", self._path, failure)
        chosen: list[Served] = []
        for entry in entries:
            one = held.get(entry) or opened[entry]
            if isinstance(one, Served):
                chosen.append(one)
        return _labelled(chosen, current)

    def _open(self, entry: ManifestEntry) -> Served | str:
        from docshelf.app import indexing_batch  # noqa: PLC0415 - the app imports this module
        from docshelf.indexer import Indexer  # noqa: PLC0415 - numpy loads with the indexer

        try:
            ws = _opened(entry, self._config)
        except DocshelfError as e:
            return str(e)
        indexer = Indexer(self._store, self._embedder, ws, batch_size=indexing_batch(self._config))
        hint = f"docshelf index --manifest {self._path}"
        return Served(ws.name, ws.name, hint, ws, indexer, rev=entry.ref, origin=entry)


def _labelled(chosen: list[Served], current: Sequence[Served]) -> list[Served]:
    """`chosen` with their shown names: a workspace served before keeps its own; a new one gets
    its short name, numbered when another already shows it."""
    before = {s.name: s.label for s in current}
    short = short_names([s.name for s in chosen])
    taken = {before[s.name] for s in chosen if s.name in before}
    labelled = []
    for served in chosen:
        label = before.get(served.name)
        if label is None:
            label = wanted = short[served.name]
            n = 1
            while label in taken:
                n += 1
                label = f"{wanted}-{n}"
            taken.add(label)
        labelled.append(
            served if label == served.label else dataclasses.replace(served, label=label)
        )
    return labelled
