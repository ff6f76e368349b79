"""`docshelf index --manifest`: every workspace of a manifest indexed into one store with one
embedder (one model loaded for all), a failure reported and the rest carried on.

Constraints:
- Syncing (a clone URL's fetch, a commit resolved) waits on the network and git, embedding on
  the one model: up to `jobs` workspaces sync at once while their commits are indexed one at a
  time, in the manifest's order.
- A workspace that fails (a source that is not there, a ref that does not resolve, an indexing
  error) is an outcome with its error; the previous ref of that workspace keeps serving. A store
  or an embedder that cannot be set up fails the whole run before any workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.errors import DocshelfError
from docshelf.workspace.manifest import ManifestEntry, read_manifest

__all__ = [
    "DEFAULT_JOBS",
    "MAX_JOBS",
    "ManifestEntry",
    "ManifestOutcome",
    "index_manifest",
    "read_manifest",
]

if TYPE_CHECKING:
    from docshelf.config import Config
    from docshelf.indexer import Indexer, IndexResult

# Workspaces synced at once by default; at most MAX_JOBS.
DEFAULT_JOBS = 4
MAX_JOBS = 32


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
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    embedder = configured_embedder(config)
    outcomes: list[ManifestOutcome] = []
    with open_configured_store(config, embedder) as store:

        def synced(entry: ManifestEntry) -> tuple[Indexer, str]:
            ws = open_workspace(
                entry.source,
                docs=entry.docs,
                include=entry.include,
                exclude=entry.exclude,
                name=entry.name,
                mirrors_dir=Path(config.mirror_dir),
            )
            indexer = Indexer(store, embedder, ws, batch_size=indexing_batch(config))
            try:
                return indexer, indexer.sync(entry.ref)
            except BaseException:
                indexer.close()
                raise

        with ThreadPoolExecutor(max(1, min(jobs, MAX_JOBS)), "docshelf-sync") as pool:
            futures: list[Future[tuple[Indexer, str]]] = [
                pool.submit(synced, entry) for entry in entries
            ]
            try:
                for entry, future in zip(entries, futures, strict=True):
                    outcome = _indexed(entry, future)
                    outcomes.append(outcome)
                    if report is not None:
                        report(outcome)
            finally:  # a bug or an interrupt: the syncs not indexed release their pins
                for future in futures[len(outcomes) :]:
                    future.cancel()
                    if not future.cancelled() and future.exception() is None:
                        future.result()[0].close()
    return outcomes


def _indexed(entry: ManifestEntry, future: Future[tuple[Indexer, str]]) -> ManifestOutcome:
    try:
        indexer, ref = future.result()
    except DocshelfError as e:
        return ManifestOutcome(entry, None, str(e))
    try:
        return ManifestOutcome(entry, indexer.index(ref))
    except DocshelfError as e:
        return ManifestOutcome(entry, None, str(e))
    finally:
        indexer.close()
