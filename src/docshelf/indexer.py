"""Indexing: a workspace revision -> chunks -> embeddings -> the store; pins and pruning.

Constraints:
- Indexing happens when the workspace syncs, never per session. `refresh` is the sync hook: it is
  bounded by a timeout and never raises, so a broken embedder degrades retrieval but cannot fail
  or hold the sync; the previous ref keeps serving.
- Runs are serialised in the order they were started (a first-come ticket lock in the process,
  and the store's lock per workspace across processes), so they cannot commit in the opposite
  order to the syncs that started them.
- A ref is written all or nothing: a ref that has any chunks has all of them. Every failure is
  wrapped with the ref, and nothing of a failed ref is written.
- Only what changed is embedded: each chunk's embedding input is hashed with the model id, and
  the stored vector of an identical chunk anywhere in the store is reused, whichever workspace
  embedded it (a fork or a second clone of the same docs embeds nothing twice).
- Memory does not grow with the corpus beyond a hash per chunk (and the files' texts of a small
  ref; a large ref's are read again from the workspace as they are needed): the stored vectors
  are looked up LOOKUP_WINDOW hashes at a time, the missing texts embedded a window at a time,
  every vector kept in a temporary file (`dim` * 4 bytes a distinct chunk, in the system's
  temporary folder), and the rows made one by one as the store writes them.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from typing import BinaryIO, Protocol

import numpy as np

from docshelf.chunking import Chunk, chunk_file, embedding_input, title_input
from docshelf.chunking.text import text_lines
from docshelf.config import (
    EMBED_BATCH_SIZE,
    INDEX_LOCK_TIMEOUT_SECONDS,
    NO_MODEL_ID,
    PIN_LEASE_SECONDS,
    REFRESH_TIMEOUT_SECONDS,
)
from docshelf.errors import DocshelfError, IndexingError
from docshelf.pins import PinKeeper, default_holder
from docshelf.rows import ChunkRow, FileRow, Vector
from docshelf.workspace import (
    DocFile,
    Docs,
    Layout,
    Selection,
    Skipped,
    included_heading,
    skipped_record,
)

log = logging.getLogger("docshelf.indexer")

# Indexing holds at most this many hashes' vectors from the store at once, and embeds a window
# of at most EMBED_WINDOW texts or EMBED_WINDOW_CHARS characters at a time, sorted by length
# within it, so that its memory does not grow with the corpus (BENCHMARKS.md).
LOOKUP_WINDOW = 4_096
EMBED_WINDOW = 8_192
EMBED_WINDOW_CHARS = 8_000_000


class Embedder(Protocol):
    """What the indexer needs of an embedder. One with nothing to say of its batches answers
    None to each `batch_*` member, and embeds documents as it embeds anything (its
    `embed_documents` calls `embed`), as OpenAIEmbedder does."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def batch_chars(self) -> int | None:
        """The characters of padded input a batch may hold, each text counted as the batch's
        longest; None: the indexer's batch size alone bounds a batch."""

    @property
    def batch_text_chars(self) -> int | None:
        """The most one text counts, in batch_chars and in the progress's work (the model
        reads no further); None: batch_chars, and a text's whole length in the work."""

    @property
    def batch_texts(self) -> int | None:
        """Texts a batch where the embedder wants more than the indexer's batch size at once
        (the local model on a GPU); None: the batch size."""

    def embed(self, texts: list[str]) -> Vector: ...

    def embed_documents(self, texts: list[str]) -> Vector:
        """The indexer's batches, through a path of the embedder's own for documents (the
        local model: torch only) or through `embed`."""


class Store(Protocol):
    """What the indexer needs of a store."""

    def has_chunks(self, workspace: str, ref: str) -> bool: ...

    def replace_doc_chunks(
        self, workspace: str, ref: str, rows: Iterable[ChunkRow], files: Iterable[FileRow] = ()
    ) -> None: ...

    def has_files(self, workspace: str, ref: str) -> bool: ...

    def embeddings_for(self, content_hashes: Sequence[str], model_id: str) -> dict[str, Vector]: ...

    def title_embeddings_for(
        self, title_hashes: Sequence[str], model_id: str
    ) -> dict[str, Vector]: ...

    def set_current(self, workspace: str, ref: str) -> None: ...

    def current(self, workspace: str) -> str | None: ...

    def set_selection(
        self, workspace: str, ref: str, selection: str, skipped: str = "[]"
    ) -> None: ...

    def selection(self, workspace: str, ref: str) -> str | None: ...

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int: ...

    def ref_counts(self, workspace: str) -> dict[str, int]: ...

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str: ...

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]: ...

    def remove_pin(self, pin_id: str) -> None: ...

    def pinned_refs(self, workspace: str) -> set[str]: ...

    def workspace_lock(
        self, workspace: str, timeout_seconds: float
    ) -> AbstractContextManager[None]: ...


class Source(Protocol):
    """What the indexer needs of a workspace: its name, the docs it was opened with (`chosen`
    when the caller named them), and the docs of one of its refs as a selection picks them,
    with their roots. Which selection is read is the indexer's choice (`Indexer._selection`)."""

    @property
    def name(self) -> str: ...

    @property
    def selection(self) -> Selection: ...

    @property
    def chosen(self) -> bool: ...

    def sync(self, rev: str | None = None, selection: Selection | None = None) -> str:
        """Bring the source up to date and return the ref of `rev` (default: its latest),
        read as `selection` picks the docs where the ref depends on them (a plain directory)."""
        ...

    def read_docs(self, ref: str, selection: Selection) -> Docs: ...

    def layout_at(self, ref: str, selection: Selection) -> Layout: ...


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an indexing run is: sent to the progress callback after each step."""

    phase: str  # "reading", "embedding", "writing" or "done"
    files: int = 0
    chunks: int = 0
    embedded: int = 0  # chunks whose vectors were computed so far
    to_embed: int = 0  # chunks whose vectors must be computed in all
    reused: int = 0  # chunks whose vectors came from the store
    # The embedding's work done and in all: characters of input, each text counted up to the
    # embedder's `batch_text_chars` (where the model's window is full), for the time left.
    work_done: int = 0
    work_total: int = 0


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True, slots=True)
class IndexResult:
    """What one `index` run did. `files` is None when the ref was already indexed (nothing read)."""

    workspace: str
    ref: str
    files: int | None
    skipped: list[Skipped]
    chunks: int
    embedded: int
    reused: int
    seconds: float
    already_indexed: bool
    pruned: int = 0
    prune_error: str | None = None
    # The docs roots of the selection read (named with --docs, or found), a ref already indexed
    # included; and the documentation files the --include and --exclude globs left out (0 when
    # nothing was read).
    roots: tuple[str, ...] = ()
    excluded: int = 0
    # Where the docs were found: the sites and what they leave out (the roots alone when named).
    layout: Layout | None = None


def content_hash(model_id: str, text: str) -> str:
    """The key under which a chunk's vector is stored and reused: its embedding input and model."""
    data = f"{model_id}\0{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def file_chunks(file: DocFile, included_in: Sequence[str] = ()) -> list[Chunk]:
    """A file's chunks, by the one rule `docshelf chunk` shows (chunking.chunk_file); a file
    that pages include names the page it appears in at the head of each breadcrumb."""
    chunks = chunk_file(file.path, file.text, file.kind)
    if not included_in:
        return chunks
    return [replace(c, heading=included_heading(c.heading, included_in)) for c in chunks]


class _FifoLock:
    """A lock granted in the order it was asked for; a waiter may give up at a deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._queue: deque[object] = deque()

    @contextmanager
    def hold(self, timeout: float | None) -> Iterator[None]:
        ticket = object()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._queue.append(ticket)
            try:
                while self._held or self._queue[0] is not ticket:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError
                    self._cond.wait(left)
            except BaseException:
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._held = True
        try:
            yield
        finally:
            with self._cond:
                self._held = False
                self._cond.notify_all()


class Indexer:
    """Indexes the refs of one workspace into a store, makes them current and prunes the rest."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        source: Source,
        *,
        batch_size: int = EMBED_BATCH_SIZE,
        refresh_timeout: float = REFRESH_TIMEOUT_SECONDS,
        lock_timeout: float = INDEX_LOCK_TIMEOUT_SECONDS,
        pin_lease: float = PIN_LEASE_SECONDS,
        holder: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise IndexingError(f"the embedding batch size must be 1 or more, not {batch_size}")
        self._store = store
        self._embedder = embedder
        self._source = source
        self._batch_size = batch_size
        self._refresh_timeout = refresh_timeout
        self._lock_timeout = lock_timeout
        self._holder = holder or default_holder()
        self._runs = _FifoLock()
        self._settled: str | None = None
        # The last ref this indexer indexed or found indexed, with its selection's key and where
        # its docs are: a settled ref (or one found indexed again) reports them without a read.
        self._reported: tuple[str, str, Layout] | None = None
        self._pins = PinKeeper(store, source.name, self._holder, pin_lease)
        # A ref's docs read ahead (`read_ahead`), with the key of the selection they were read
        # with: the next run of that ref takes them rather than reading them again.
        self._read_ahead: tuple[str, str, Docs] | None = None
        # Why the last refresh failed (what it logged), None after one that succeeded.
        self.last_failure: str | None = None

    @property
    def workspace(self) -> str:
        return self._source.name

    @property
    def model_id(self) -> str:
        return NO_MODEL_ID if self._embedder is None else self._embedder.model_id

    # -- indexing --------------------------------------------------------------------------

    def refresh(self, ref: str, progress: ProgressCallback | None = None) -> IndexResult | None:
        """The sync hook: index and promote `ref` within the refresh timeout.

        Never raises: a failure or a timeout is logged and returns None, and the previous ref
        keeps serving. A run still going at the timeout is cancelled at its next step, and
        writes nothing that becomes current.
        """
        cancel = threading.Event()
        outcome: list[IndexResult | BaseException] = []

        def run() -> None:
            try:
                outcome.append(self._index(ref, progress, cancel, self._refresh_timeout))
            except BaseException as e:  # handed to the waiting thread
                outcome.append(e)

        worker = threading.Thread(target=run, name=f"docshelf-refresh-{ref[:12]}", daemon=True)
        worker.start()
        worker.join(self._refresh_timeout)
        if worker.is_alive():
            cancel.set()
            self.last_failure = (
                f"indexing {ref} of workspace {self.workspace} took longer than "
                f"{self._refresh_timeout:.0f} s and was cancelled; the previous ref keeps "
                "serving. Check the embedder, or raise the refresh timeout"
            )
            log.error("%s", self.last_failure)
            return None
        result = outcome[0]
        if isinstance(result, BaseException):
            self.last_failure = str(result)
            log.error("%s", result)
            return None
        self.last_failure = None
        return result

    def sync(self, rev: str | None = None) -> str:
        """Sync the source and return the ref to index: `rev` (default: the latest) read with
        the docs a run reads (`_selection`), so a plain directory's ref names those docs alone,
        and `read_docs` of it with the same selection reads nothing again.

        Raises:
            WorkspaceError: the source cannot be synced or `rev` resolved, or the stored
                selection cannot be read.
            StoreError: the store cannot be read.
        """
        return self._source.sync(rev, self._selection())

    def index(
        self,
        ref: str,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexResult:
        """Index `ref` (unless it already is), make it current and prune the refs nobody pins.
        `cancel`, once set, stops the run at its next batch, before anything is written.

        Raises:
            IndexingError: the ref could not be read, embedded or written (nothing of it was
                written; the previous ref keeps serving), could not be made current, or the run
                was cancelled.
        """
        return self._index(ref, progress, cancel or threading.Event(), None)

    def _index(
        self,
        ref: str,
        progress: ProgressCallback | None,
        cancel: threading.Event,
        timeout: float | None,
    ) -> IndexResult:
        started = time.perf_counter()
        report = progress or _ignore
        try:
            with self._runs.hold(timeout):
                reported = self._reported
                if ref == self._settled and reported is not None and reported[0] == ref:
                    return self._already(ref, started, reported[2], 0, None)
                lock_timeout = self._lock_timeout if timeout is None else timeout
                with self._store.workspace_lock(self.workspace, lock_timeout):
                    selection = self._selection()
                    key = selection.key
                    # A ref indexed with other docs roots or globs is indexed again (its
                    # unchanged chunks keep their vectors).
                    # So is a ref indexed before the store kept each file's text.
                    if (
                        self._store.has_chunks(self.workspace, ref)
                        and self._store.selection(self.workspace, ref) == key
                        and self._store.has_files(self.workspace, ref)
                    ):
                        if reported is not None and reported[:2] == (ref, key):
                            layout = reported[2]
                        else:
                            layout = self._source.layout_at(ref, selection)
                        pruned, prune_error = self._promote(ref)
                        self._reported = (ref, key, layout)
                        return self._already(ref, started, layout, pruned, prune_error)
                    ahead, self._read_ahead = self._read_ahead, None
                    if ahead is not None and ahead[:2] == (ref, key):
                        docs = ahead[2]
                    else:
                        docs = self._source.read_docs(ref, selection)
                    with _Vectors(self._embedder) as vectors:
                        firsts: dict[str, str] = {}
                        hashes, embedded, reused = self._vectors(
                            docs, vectors, report, cancel, firsts
                        )
                        chunks = len(hashes)
                        titles = self._titles(firsts, cancel)
                        _check(cancel)
                        report(
                            Progress("writing", len(docs.files), chunks, embedded, embedded, reused)
                        )
                        # The rows are made as the store writes them, in its one transaction.
                        self._store.replace_doc_chunks(
                            self.workspace,
                            ref,
                            _rows(docs, hashes, vectors),
                            file_rows(docs.files, titles),
                        )
                    self._store.set_selection(
                        self.workspace, ref, key, skipped_record(docs.skipped)
                    )
                    _check(cancel)
                    pruned, prune_error = self._promote(ref)
                    self._reported = (ref, key, docs.layout or Layout(docs.roots))
        except TimeoutError as e:
            raise IndexingError(
                f"indexing {ref} of workspace {self.workspace}: another run of this workspace "
                "did not finish in time; the previous ref keeps serving"
            ) from e
        except DocshelfError as e:
            raise IndexingError(
                f"indexing {ref} of workspace {self.workspace}: {e}. Nothing of this ref was "
                "written; the previous ref keeps serving"
            ) from e
        result = IndexResult(
            workspace=self.workspace,
            ref=ref,
            files=len(docs.files),
            skipped=docs.skipped,
            chunks=chunks,
            embedded=embedded,
            reused=reused,
            seconds=time.perf_counter() - started,
            already_indexed=False,
            pruned=pruned,
            prune_error=prune_error,
            roots=docs.roots,
            excluded=docs.excluded,
            layout=docs.layout or Layout(docs.roots),
        )
        report(Progress("done", result.files or 0, chunks, embedded, embedded, reused))
        return result

    def read_ahead(self, ref: str) -> bool:
        """Read `ref`'s docs now (git's objects, no store write, no lock), for the next `index`
        of it to take: a manifest reads the next workspace while this one embeds. Not when the
        ref is indexed already with the same docs; the run checks the selection again under its
        lock and reads afresh when it changed. Whether it read.

        Raises:
            WorkspaceError: the docs cannot be read (the run would fail the same way).
            StoreError: the store cannot be read.
        """
        selection = self._selection()
        if (
            self._store.has_chunks(self.workspace, ref)
            and self._store.selection(self.workspace, ref) == selection.key
        ):
            return False
        self._read_ahead = (ref, selection.key, self._source.read_docs(ref, selection))
        return True

    def _selection(self) -> Selection:
        """The docs a run reads: those the caller named, else those the workspace's current ref
        was indexed with (what `docshelf index` was last told, so every later sync and index
        keeps it), else the workspace's own (found, the first time). Read under the workspace
        lock, so a run reads what the run before it stored.

        Raises:
            WorkspaceError: the stored selection cannot be read.
        """
        if self._source.chosen:
            return self._source.selection
        current = self._store.current(self.workspace)
        stored = None if current is None else self._store.selection(self.workspace, current)
        return self._source.selection if stored is None else Selection.from_key(stored)

    def _already(
        self,
        ref: str,
        started: float,
        layout: Layout,
        pruned: int,
        prune_error: str | None,
    ) -> IndexResult:
        chunks = self._store.ref_counts(self.workspace).get(ref, 0)
        return IndexResult(
            workspace=self.workspace,
            ref=ref,
            files=None,
            skipped=[],
            chunks=chunks,
            embedded=0,
            reused=0,
            seconds=time.perf_counter() - started,
            already_indexed=True,
            pruned=pruned,
            prune_error=prune_error,
            roots=layout.roots,
            layout=layout,
        )

    def _vectors(
        self,
        docs: Docs,
        vectors: _Vectors,
        report: ProgressCallback,
        cancel: threading.Event,
        firsts: dict[str, str],
    ) -> tuple[list[str], int, int]:
        """Every chunk's vector of `docs` into `vectors`, reused from the store or embedded, a
        window at a time: the content hash of every chunk in order, and how many chunks were
        embedded and how many reused; `firsts` gets each file's first chunk's heading. Neither
        the chunks nor their vectors are all held at once (vectors spills them to a temporary
        file), so memory does not grow with the corpus."""
        cap = None if self._embedder is None else self._embedder.batch_text_chars
        hashes: list[str] = []
        per_hash: dict[str, int] = {}
        costs: list[int] = []  # each distinct hash's work, in the order first seen
        for chunk in _chunks(docs):
            firsts.setdefault(chunk.path, chunk.heading)
            text = embedding_input(chunk)
            h = content_hash(self.model_id, text)
            hashes.append(h)
            if h in per_hash:
                per_hash[h] += 1
            else:
                per_hash[h] = 1
                costs.append(_cost(text, cap))
        report(Progress("reading", len(docs.files), len(hashes)))
        if self._embedder is None:
            return hashes, 0, 0
        # Of any workspace of the store: a fork or a second clone of the same docs embeds nothing.
        distinct = list(per_hash)
        for start in range(0, len(distinct), LOOKUP_WINDOW):
            _check(cancel)
            stored = self._store.embeddings_for(
                distinct[start : start + LOOKUP_WINDOW], self.model_id
            )
            for h, vector in stored.items():
                vectors.put(h, vector)
        reused = sum(per_hash[h] for h in distinct if h in vectors)
        to_embed = len(hashes) - reused
        work = sum(c for h, c in zip(distinct, costs, strict=True) if h not in vectors)
        del distinct, costs
        progress = functools.partial(Progress, "embedding", len(docs.files), len(hashes))
        report(progress(0, to_embed, reused, 0, work))
        done = work_done = 0
        window: dict[str, str] = {}
        size = 0

        def embed_window() -> None:
            nonlocal done, work_done
            for batch in self._batched(window, cancel):
                matrix = self._embed([window[h] for h in batch], done, to_embed)
                for h, vector in zip(batch, matrix, strict=True):
                    vectors.put(h, vector)
                done += sum(per_hash[h] for h in batch)
                work_done += sum(_cost(window[h], cap) for h in batch)
                report(progress(done, to_embed, reused, work_done, work))
            window.clear()

        for chunk, h in zip(_chunks(docs), hashes, strict=True):
            if h in vectors or h in window:
                continue
            text = embedding_input(chunk)
            window[h] = text
            size += len(text)
            if len(window) >= EMBED_WINDOW or size >= EMBED_WINDOW_CHARS:
                embed_window()
                size = 0
        if window:
            embed_window()
        return hashes, to_embed, reused

    def _titles(
        self, firsts: dict[str, str], cancel: threading.Event
    ) -> dict[str, tuple[str, Vector]]:
        """Each file's title (title_input of its path and first heading), by path: its hash and
        its vector, reused from the store (any ref of any workspace) or embedded. None without an
        embedder. A file without chunks has no title."""
        if self._embedder is None:
            return {}
        inputs = {path: title_input(path, heading) for path, heading in firsts.items()}
        hashes = {path: content_hash(self.model_id, text) for path, text in inputs.items()}
        found: dict[str, Vector] = {}
        distinct = list(dict.fromkeys(hashes.values()))
        for start in range(0, len(distinct), LOOKUP_WINDOW):
            _check(cancel)
            found.update(
                self._store.title_embeddings_for(
                    distinct[start : start + LOOKUP_WINDOW], self.model_id
                )
            )
        wanted = {h: inputs[path] for path, h in hashes.items() if h not in found}
        done = 0
        for batch in self._batched(wanted, cancel):
            matrix = self._embed([wanted[h] for h in batch], done, len(wanted), "file titles")
            found.update(zip(batch, np.asarray(matrix, dtype=np.float32), strict=True))
            done += len(batch)
        return {path: (h, found[h]) for path, h in hashes.items()}

    def _batched(self, texts: dict[str, str], cancel: threading.Event) -> Iterator[list[str]]:
        """The keys of `texts` in the batches they are embedded in: sorted by length, so each
        batch pads little (each distinct text once), cut by _batches; cancel checked before each."""
        order = sorted(texts, key=lambda h: len(texts[h]))
        first = 0
        for count in self._batches([texts[h] for h in order]):
            _check(cancel)
            yield order[first : first + count]
            first += count

    def _batches(self, texts: Sequence[str]) -> list[int]:
        """The sizes of the batches `texts` (sorted by length) are embedded in: at most the batch
        size each and, for an embedder that states one (`batch_chars`), at most that many
        characters of padded input, each text counted as the batch's longest, capped at its
        `batch_text_chars`. An embedder that wants more texts at once (`batch_texts`: the local
        model on a GPU) gets up to that many."""
        assert self._embedder is not None
        budget = self._embedder.batch_chars
        cap = self._embedder.batch_text_chars or budget
        most = max(self._batch_size, self._embedder.batch_texts or 0)
        sizes: list[int] = []
        size = longest = 0
        for text in texts:
            cost = len(text) if cap is None else min(len(text), cap)
            if size and (size >= most or (budget and (size + 1) * max(longest, cost) > budget)):
                sizes.append(size)
                size = longest = 0
            size += 1
            longest = max(longest, cost)
        if size:
            sizes.append(size)
        return sizes

    def _embed(self, texts: list[str], done: int, to_embed: int, what: str = "chunks") -> Vector:
        assert self._embedder is not None
        try:
            matrix = self._embedder.embed_documents(texts)
        except DocshelfError:
            raise
        except Exception as e:
            raise IndexingError(
                f"embedding {what} {done + 1} to {done + len(texts)} of {to_embed} failed: {e}"
            ) from e
        # The type says an array of one row a text, but an embedder is code of any origin: what
        # it returned is checked, and a count mismatch is never truncated by the zip.
        shape = getattr(matrix, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != len(texts):
            got = "no array" if shape is None else f"{shape[0] if shape else 0} vectors"
            raise IndexingError(
                f"embedding {what} {done + 1} to {done + len(texts)} of {to_embed}: the "
                f"embedder returned {got} for "
                f"{len(texts)} {what}; check the embedder (a count mismatch is never truncated)"
            )
        return matrix

    def _promote(self, ref: str) -> tuple[int, str | None]:
        """Make `ref` current, then prune every ref but current and the pinned ones. A prune
        failure is returned, not raised: stale rows cost disk, not correctness."""
        self._store.set_current(self.workspace, ref)
        self._settled = None
        try:
            pruned = self._store.prune(self.workspace, {ref, *self._pins.refs()})
            pinned = self._store.pinned_refs(self.workspace) | set(self._pins.refs())
        except DocshelfError as e:
            log.warning("pruning workspace %s after making %s current: %s", self.workspace, ref, e)
            return 0, str(e)
        # While another pinned ref survives, the next sync of this ref prunes again, collecting
        # the refs of sessions that have ended since.
        if not pinned - {ref}:
            self._settled = ref
        return pruned, None

    # -- pins ------------------------------------------------------------------------------

    def pin(self, ref: str) -> Callable[[], None]:
        """Keep `ref` out of every prune, in every process sharing the store, until the
        returned release is called. Release is idempotent; two pins need two releases.

        Raises:
            StoreError: the pin could not be recorded.
        """
        return self._pins.pin(ref)

    def pinned(self) -> list[str]:
        """The refs this process pins, one entry per pin."""
        return self._pins.refs()

    def close(self) -> None:
        """Release every pin this indexer holds and stop renewing them."""
        self._pins.close()


def _ignore(_: Progress) -> None:
    pass


def _check(cancel: threading.Event) -> None:
    if cancel.is_set():
        raise IndexingError("cancelled (a refresh's timeout, or the run was stopped)")


def file_rows(
    files: Iterable[DocFile], titles: dict[str, tuple[str, Vector]] | None = None
) -> Iterator[FileRow]:
    """What the store keeps of each file beside its chunks: its text, by content, with the
    number of lines the hits count in, and its title's hash and vector (`titles`, by path);
    made as the store takes them."""
    for f in files:
        data = f.text.encode("utf-8", "surrogatepass")
        title_hash, title = (titles or {}).get(f.path, (None, None))
        yield FileRow(
            f.path,
            f.text,
            hashlib.sha256(data).hexdigest(),
            len(text_lines(f.text)),
            title_hash,
            title,
        )


def _cost(text: str, cap: int | None) -> int:
    """A text's share of the embedding's work: its characters, up to `cap`."""
    return len(text) if cap is None else min(len(text), cap)


def _chunks(docs: Docs) -> Iterator[Chunk]:
    """The chunks of `docs`, file by file, cut as they are asked for (cutting is cheap: about
    a second for 20,000 chunks, against minutes to embed them)."""
    for f in docs.files:
        yield from file_chunks(f, docs.included.get(f.path, ()))


def _rows(docs: Docs, hashes: Sequence[str], vectors: _Vectors) -> Iterator[ChunkRow]:
    for c, h in zip(_chunks(docs), hashes, strict=True):
        yield ChunkRow(
            path=c.path,
            chunk=c.index,
            heading=c.heading,
            content=c.content,
            start_line=c.start_line,
            end_line=c.end_line,
            content_hash=h,
            embedding=vectors.get(h),
        )


class _Vectors(AbstractContextManager["_Vectors"]):
    """The vectors of one indexing run, by content hash, in a temporary file that is gone when
    the run ends: a slot of `dim` float32 numbers a distinct hash, read back one at a time as
    the store writes the rows. Without an embedder it holds nothing, and every row's vector
    is None."""

    def __init__(self, embedder: Embedder | None) -> None:
        self._none = embedder is None
        self._dim: int | None = None  # the first vector's: a store's vectors are of one width
        self._slots: dict[str, int] = {}
        self._file: BinaryIO | None = None
        self._unflushed = False

    def __contains__(self, content_hash: str) -> bool:
        return content_hash in self._slots

    def put(self, content_hash: str, vector: Vector) -> None:
        """Keep `vector` as the one of `content_hash` (the first one put, if several are).

        Raises:
            IndexingError: a vector of another width, or the temporary file cannot be written.
        """
        if content_hash in self._slots:
            return
        data = np.asarray(vector, dtype="<f4")
        if self._dim is None and data.ndim == 1:
            self._dim = len(data)
        if data.shape != (self._dim,):
            raise IndexingError(
                f"the embedder or the store gave a vector of shape {data.shape} among vectors "
                f"of {self._dim} dimensions"
            )
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="docshelf-vectors-")  # noqa: SIM115
            self._file.write(data.tobytes())
        except OSError as e:
            raise _spill_error(e) from e
        self._slots[content_hash] = len(self._slots)
        self._unflushed = True

    def get(self, content_hash: str) -> Vector | None:
        """The vector of `content_hash`; None without an embedder.

        Raises:
            IndexingError: the temporary file cannot be read back.
        """
        if self._none:
            return None
        assert self._file is not None and self._dim is not None
        width = self._dim * 4
        try:
            if self._unflushed:
                self._file.flush()
                self._unflushed = False
            data = os.pread(self._file.fileno(), width, self._slots[content_hash] * width)
        except OSError as e:
            raise _spill_error(e) from e
        if len(data) != width:
            raise _spill_error(OSError(f"read {len(data)} of {width} bytes"))
        return np.frombuffer(data, dtype="<f4").astype(np.float32)

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._slots.clear()


def _spill_error(e: OSError) -> IndexingError:
    return IndexingError(
        f"the temporary file of this run's vectors in {tempfile.gettempdir()} failed: {e}; "
        "free some space there, or point TMPDIR at a folder with room (1.5 KB a chunk with the "
        "default model)"
    )
