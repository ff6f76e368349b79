"""The embedded store: one SQLite file, exact vector search with numpy, full text with FTS5.

- WAL mode, so searches go on while an index is written; every write is one IMMEDIATE
  transaction, so a ref has all of its rows or none, and a failure leaves the old rows.
- Vectors are float32 blobs. A search multiplies the query by the ref's matrix, loaded once and
  kept in memory; the ref's largest row id (ids are never reused) tells when it changed, also when
  another process wrote it, so a stale matrix is never served.
- Full text: FTS5 with the porter stemmer over path, heading and content, ranked by bm25().
- Each thread has its own connection: sqlite3 connections must not be shared across threads.
- Pins are rows whose lease is unix seconds from time.time(); a prune reads them inside its own
  IMMEDIATE transaction, which every other writer (add_pin among them) waits for.
- The indexing lock of a workspace is an flock on a file beside the database, so the kernel
  releases it when its holder exits, however it exits; a lock per file in this process makes the
  threads of one process wait for each other as plainly.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from docshelf.errors import StoreError
from docshelf.rows import ChunkRow, StoredHit, Vector, check_unit, unit_query
from docshelf.stores.migrations import migrations
from docshelf.stores.pins import (
    LOCK_POLL_SECONDS,
    check_lease,
    check_timeout,
    lock_busy,
    new_pin_id,
)

# Seconds a connection waits for another process's write to finish before it gives up: an index
# write of a large ref takes a few seconds; a minute means something is stuck.
BUSY_TIMEOUT_SECONDS = 60.0

# Switching a file to WAL needs it to itself for a moment, and SQLite answers "database is locked"
# at once, without waiting, when another process has it open then (two processes opening a new
# store together: `docshelf serve` and `docshelf index`, say). The switch is tried again this often
# until BUSY_TIMEOUT_SECONDS have passed.
WAL_RETRY_SECONDS = 0.01

# Refs whose vector matrices stay in memory: current and a few pinned ones. 100k chunks of 384
# dimensions take 150 MB, so the cache is bounded.
MATRIX_CACHE_REFS = 4

# Refs of at least this many chunks are searched through a float16 copy of their vectors, with
# torch: a search of float32 rows reads the whole matrix (150 MB at 100k chunks) and is bound by
# memory bandwidth; float16 halves what is read. The float16 scores are only a first pass: every
# chunk that could still be in the top k, given a bound on float16's rounding, is scored again
# exactly from its stored float32 vector, so the results are exact. Smaller refs are searched in
# float32 with numpy, and never load torch.
HALF_PRECISION_MIN_ROWS = 20_000

# Added to the bound on a float16 score's error, for the rounding of its float32 accumulation
# (at most about 384 * 2**-24 for unit vectors, 40 times less than this).
ACCUMULATION_SLACK = 1e-3

# Full-text queries use at most this many words; a pasted page must not become a huge query.
MAX_QUERY_TERMS = 64

# bm25() column weights (path, heading, content): a word of the file's path says most about which
# document a chunk is in, one of its heading more than one of its text. Chosen on the sweep of
# bench/retrieval.py with the fusion settings of search.py (BENCHMARKS.md, "Retrieval quality").
BM25_WEIGHTS = (3.0, 2.0, 1.0)

# search_text joins the best this-many-times-k matches of the whole full-text index to their rows
# first: enough for the current ref and a pinned one or two to share the prefix.
TEXT_PREFIX_PER_HIT = 4

# A longer prefix than this goes straight to the join of every match (SQLite allows 32766
# parameters in one statement).
MAX_TEXT_PREFIX = 8000

# Words too common to rank by. FTS5 has no stop list; without this, "how do I ..." matches every
# chunk and ranks thousands of rows. PostgreSQL's english configuration drops the same words.
_STOP_LIST = (
    "a an and are as at be but by do does for from had has have how i if in into is it its me "
    "my no not of on or our so such that the their then there these they this to was we were "
    "what when where which who why will with you your"
)
STOP_WORDS = frozenset(_STOP_LIST.split())

_WORD = re.compile(r"\w+")

# Hex digits of a workspace's hash in the name of its lock file: any workspace name becomes a safe
# file name, and 64 bits keep two workspaces of one store from sharing a file.
LOCK_NAME_HEX_DIGITS = 16

# The indexing lock file is for this user only, as the database should be.
LOCK_FILE_MODE = 0o600

_SELECT_HIT = "SELECT id, path, chunk, heading, content, start_line, end_line FROM chunks"


@dataclass(frozen=True, slots=True)
class _Matrix:
    token: int  # the ref's largest row id when loaded
    ids: np.ndarray[Any, np.dtype[np.int64]]
    # float32 rows of a small ref; a large one keeps only `half`, a float16 torch tensor.
    vectors: Vector | None
    half: Any = None
    # The largest distance of a float16 row from its float32 original.
    half_error: float = 0.0


class SQLiteStore:
    """Chunks of every workspace in one SQLite file. Thread-safe."""

    def __init__(
        self,
        path: Path,
        model_id: str,
        dim: int,
        half_precision_rows: int = HALF_PRECISION_MIN_ROWS,
    ) -> None:
        self.path = path
        self.half_precision_rows = half_precision_rows
        self.location = str(path)
        self.model_id = model_id
        self.dim = dim
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._matrices: OrderedDict[tuple[str, str], _Matrix] = OrderedDict()
        self._matrices_lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        model_id: str | None,
        dim: int | None,
        half_precision_rows: int = HALF_PRECISION_MIN_ROWS,
    ) -> SQLiteStore:
        """Open the store at `path`, creating it for `model_id`/`dim` when it does not exist.

        Raises:
            StoreError: the file cannot be opened or created, is not a docshelf store, or was
                created for another model or width; or it does not exist and no model is given.
        """
        if (model_id is None) != (dim is None):
            raise ValueError("give both model_id and dim, or neither")
        if not path.exists():
            if model_id is None:
                raise StoreError(
                    f"no docshelf store at {path}: nothing is indexed there yet. "
                    "Check --store and DOCSHELF_STORE, or index into this store first with "
                    "docshelf index"
                )
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(
                    f"cannot create the folder of the store {path}: {e.strerror}. "
                    "Choose another place with --store or DOCSHELF_STORE"
                ) from e
        store = cls(path, model_id or "", dim or 0, half_precision_rows)
        try:
            store._migrate(model_id, dim)
        except BaseException:
            store.close()
            raise
        return store

    # -- connections and schema ------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"the store {self.path} is closed")
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
            _use_wal(conn)
            # WAL with synchronous=NORMAL never corrupts the file; a power cut may lose the last
            # commit, which the next sync indexes again.
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as e:
            advice = _advice(e, self.path)
            if advice is None:
                advice = (
                    "Check that it is a docshelf store and that this user may read and write it "
                    "and its folder"
                )
            raise StoreError(f"cannot open the store {self.path}: {e}. {advice}") from e
        self._local.conn = conn
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            advice = _advice(e, self.path) or "Check the disk and the file's permissions"
            raise StoreError(f"{action} in {self.path} failed: {e}. {advice}") from e
        except UnicodeEncodeError as e:  # a lone surrogate, from a name that was not UTF-8
            raise StoreError(
                f"{action} in {self.path} failed: a name or text is not valid Unicode "
                f"({e.reason}); rename the file or leave it out"
            ) from e

    @contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back on any error."""
        conn = self._connect()
        with self._write_lock, self._errors(action):
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            finally:
                # After an error, and after a COMMIT that failed (a full disk): the connection
                # must leave the transaction, or every later BEGIN on this thread fails.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def _migrate(self, model_id: str | None, dim: int | None) -> None:
        with self._transaction("upgrading the schema") as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            applied = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
            known = migrations("sqlite")
            newer = sorted(applied - {v for v, _, _ in known})
            if newer:
                raise StoreError(
                    f"the store {self.path} has schema version {newer[-1]}, newer than this "
                    f"docshelf knows ({len(known)}): upgrade docshelf to use it"
                )
            pending = [m for m in known if m[0] not in applied]
            if pending and not applied and model_id is None:
                raise StoreError(
                    f"{self.path} is not a docshelf store, or nothing is indexed there yet. "
                    "Check --store and DOCSHELF_STORE, or index into this store first with "
                    "docshelf index"
                )
            for version, name, sql in pending:
                # executescript would commit the open transaction; run statement by statement.
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, _now())
                )
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if not meta:
                assert model_id is not None and dim is not None
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("model_id", model_id), ("dim", str(dim))],
                )
                meta = {"model_id": model_id, "dim": str(dim)}
        stored_model, stored_dim = meta["model_id"], int(meta["dim"])
        if model_id is not None and (stored_model, stored_dim) != (model_id, dim):
            raise StoreError(
                f"the store {self.path} holds embeddings of {stored_model} ({stored_dim} "
                f"dimensions), but the configured embedder is {model_id} ({dim} dimensions). "
                "Use a new store (--store PATH) for the new model, or delete this file and index "
                f"again with it; or configure {stored_model} again"
            )
        self.model_id, self.dim = stored_model, stored_dim

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        with self._matrices_lock:
            self._matrices.clear()
        self._local = threading.local()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ----------------------------------------------------------------------------

    def replace_doc_chunks(self, workspace: str, ref: str, rows: Iterable[ChunkRow]) -> None:
        """Make `rows` the whole of `ref`, in one transaction.

        Raises:
            StoreError: the write failed or a row's embedding does not fit the store; the ref's
                previous rows are untouched.
        """
        with self._transaction(f"writing ref {ref} of workspace {workspace}") as conn:
            conn.execute("DELETE FROM chunks WHERE workspace = ? AND ref = ?", (workspace, ref))
            conn.executemany(
                "INSERT INTO chunks (workspace, ref, path, chunk, heading, content, start_line, "
                "end_line, content_hash, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ((workspace, ref, *row.columns(), self._blob(row)) for row in rows),
            )
        self._forget(workspace, ref)

    def _blob(self, row: ChunkRow) -> bytes | None:
        vector = row.embedding
        if vector is None:
            if self.dim:
                raise StoreError(
                    f"chunk {row.chunk} of {row.path} has no embedding, but the store holds "
                    f"{self.model_id} vectors; embed it first"
                )
            return None
        if vector.shape != (self.dim,) or vector.dtype != np.float32:
            raise StoreError(
                f"chunk {row.chunk} of {row.path} has a {vector.dtype} embedding of shape "
                f"{vector.shape}, but the store holds {self.dim}-dimensional float32 "
                f"{self.model_id} vectors"
            )
        check_unit(vector, row)
        return np.asarray(vector, dtype="<f4").tobytes()

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int:
        """Delete every ref of `workspace` but `keep_refs` and the pinned refs, and the
        workspace's expired pins; returns how many refs went.

        The pins are read in the same transaction as the delete: a pin added before the prune
        began is never missed.
        """
        keep = sorted(set(keep_refs))
        marks = ",".join("?" * len(keep))
        with self._transaction(f"pruning workspace {workspace}") as conn:
            now = time.time()
            conn.execute(
                "DELETE FROM pins WHERE workspace = ? AND expires_at <= ?", (workspace, now)
            )
            gone = [
                r
                for (r,) in conn.execute(
                    "SELECT DISTINCT ref FROM chunks WHERE workspace = ? AND ref NOT IN "
                    "(SELECT ref FROM pins WHERE workspace = ? AND expires_at > ?)"
                    + (f" AND ref NOT IN ({marks})" if keep else ""),
                    (workspace, workspace, now, *keep),
                )
            ]
            conn.executemany(
                "DELETE FROM chunks WHERE workspace = ? AND ref = ?", [(workspace, r) for r in gone]
            )
        for ref in gone:
            self._forget(workspace, ref)
        return len(gone)

    def set_current(self, workspace: str, ref: str) -> None:
        with self._transaction(f"making {ref} current in workspace {workspace}") as conn:
            conn.execute(
                "INSERT INTO current_ref VALUES (?, ?, ?) ON CONFLICT (workspace) "
                "DO UPDATE SET ref = excluded.ref, updated_at = excluded.updated_at",
                (workspace, ref, _now()),
            )

    # -- pins and the indexing lock --------------------------------------------------------

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str:
        """Keep `ref` out of every prune for `lease_seconds`; returns the pin's id.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """
        lease = check_lease(lease_seconds)
        pin_id = new_pin_id()
        with self._transaction(f"pinning ref {ref} of workspace {workspace}") as conn:
            conn.execute(
                "INSERT INTO pins (id, workspace, ref, holder, expires_at) VALUES (?, ?, ?, ?, ?)",
                (pin_id, workspace, ref, holder, time.time() + lease),
            )
        return pin_id

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]:
        """Make the given pins expire `lease_seconds` from now; returns the ids still live.

        A pin that expired or was removed is not revived: a prune may have deleted its ref.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """
        lease = check_lease(lease_seconds)
        wanted = list(dict.fromkeys(pin_ids))
        live: set[str] = set()
        if not wanted:
            return live
        with self._transaction("renewing pins") as conn:
            now = time.time()
            for pin_id in wanted:
                renewed = conn.execute(
                    "UPDATE pins SET expires_at = ? WHERE id = ? AND expires_at > ?",
                    (now + lease, pin_id, now),
                )
                if renewed.rowcount:
                    live.add(pin_id)
        return live

    def remove_pin(self, pin_id: str) -> None:
        """Release a pin; removing one that is gone already does nothing."""
        with self._transaction("removing a pin") as conn:
            conn.execute("DELETE FROM pins WHERE id = ?", (pin_id,))

    def pinned_refs(self, workspace: str) -> set[str]:
        """The refs of `workspace` with at least one unexpired pin."""
        with self._errors(f"reading the pins of workspace {workspace}"):
            rows = self._connect().execute(
                "SELECT DISTINCT ref FROM pins WHERE workspace = ? AND expires_at > ?",
                (workspace, time.time()),
            )
            return {str(ref) for (ref,) in rows}

    @contextmanager
    def workspace_lock(self, workspace: str, timeout_seconds: float) -> Iterator[None]:
        """Hold the indexing lock of `workspace` for the block, waiting up to `timeout_seconds`.

        One holder at a time, among the threads of this process and every other process.

        Raises:
            ConfigError: the timeout is negative or not a number.
            StoreError: another holder kept the lock for the whole wait, or its file beside the
                store cannot be opened.
        """
        waited = check_timeout(timeout_seconds)
        deadline = time.monotonic() + waited
        lock_path = self._lock_path(workspace)
        in_process = _PROCESS_LOCKS.get(os.path.realpath(lock_path))
        if not in_process.acquire(timeout=_lock_wait(deadline)):
            raise lock_busy(workspace, self.location, waited)
        try:
            fd = _open_lock_file(lock_path)
            try:
                _flock_until(fd, deadline, lambda: lock_busy(workspace, self.location, waited))
                try:
                    yield
                finally:
                    # Also for a child that was forked with this descriptor and shares the lock.
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        finally:
            in_process.release()

    def _lock_path(self, workspace: str) -> Path:
        digest = hashlib.sha256(workspace.encode("utf-8", "surrogatepass")).hexdigest()
        return self.path.with_name(f"{self.path.name}.{digest[:LOCK_NAME_HEX_DIGITS]}.lock")

    # -- reads -----------------------------------------------------------------------------

    def current(self, workspace: str) -> str | None:
        with self._errors("reading the current ref"):
            row = (
                self._connect()
                .execute("SELECT ref FROM current_ref WHERE workspace = ?", (workspace,))
                .fetchone()
            )
        return None if row is None else str(row[0])

    def has_chunks(self, workspace: str, ref: str) -> bool:
        with self._errors(f"looking up ref {ref}"):
            (found,) = (
                self._connect()
                .execute(
                    "SELECT EXISTS (SELECT 1 FROM chunks WHERE workspace = ? AND ref = ?)",
                    (workspace, ref),
                )
                .fetchone()
            )
        return bool(found)

    def ref_counts(self, workspace: str) -> dict[str, int]:
        with self._errors("counting chunks"):
            rows = self._connect().execute(
                "SELECT ref, count(*) FROM chunks WHERE workspace = ? GROUP BY ref ORDER BY ref",
                (workspace,),
            )
            return {str(ref): int(n) for ref, n in rows}

    def workspaces(self) -> list[str]:
        with self._errors("listing workspaces"):
            rows = self._connect().execute(
                "SELECT DISTINCT workspace FROM chunks UNION SELECT workspace FROM current_ref "
                "ORDER BY 1"
            )
            return [str(w) for (w,) in rows]

    def embeddings_for(
        self, workspace: str, content_hashes: Sequence[str], model_id: str
    ) -> dict[str, Vector]:
        """Stored vectors of chunks with these content hashes, made by `model_id`."""
        if model_id != self.model_id or not self.dim:
            return {}
        found: dict[str, Vector] = {}
        wanted = list(dict.fromkeys(content_hashes))
        # SQLite allows 32766 parameters per statement; stay well below.
        step = 500
        with self._errors("looking up stored embeddings"):
            conn = self._connect()
            for i in range(0, len(wanted), step):
                part = wanted[i : i + step]
                rows = conn.execute(
                    "SELECT content_hash, embedding FROM chunks WHERE workspace = ? AND "
                    f"content_hash IN ({','.join('?' * len(part))}) AND embedding IS NOT NULL",
                    (workspace, *part),
                )
                for content_hash, blob in rows:
                    found[content_hash] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def search(self, workspace: str, ref: str, vector: Vector, k: int) -> list[StoredHit]:
        """The k chunks of `ref` nearest to `vector` by cosine similarity, nearest first.

        Raises:
            StoreError: the store cannot be read, holds no vectors, or `vector` has another
                width or is not a finite, non-zero vector.
        """
        if not self.dim:
            raise StoreError(
                f"the store {self.path} holds no embeddings (it was made with the none "
                "embedder); search it by text"
            )
        query = unit_query(vector, self.dim, self.model_id)
        if k < 1:
            return []
        conn = self._connect()
        with self._errors(f"searching ref {ref}"), _snapshot(conn):
            # The matrix and the rows of the hits come from one snapshot: a write of the same
            # ref between the two reads would otherwise leave ids whose rows are gone.
            matrix = self._matrix(conn, workspace, ref)
            n = len(matrix.ids)
            if n == 0:
                return []
            if matrix.vectors is not None:
                scores = matrix.vectors @ query
                top = np.argpartition(scores, -k)[-k:] if k < n else np.arange(n)
                score_of = {int(matrix.ids[i]): float(scores[i]) for i in top}
            else:
                score_of = self._half_precision_top(conn, matrix, query, k)
            ids = list(score_of)
            rows = conn.execute(
                f"{_SELECT_HIT} WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        hits = [StoredHit.from_columns(row[1:], score_of[row[0]]) for row in rows]
        hits.sort(key=lambda h: (-h.score, h.path, h.chunk))
        return hits

    def search_text(self, workspace: str, ref: str, query: str, k: int) -> list[StoredHit]:
        """The k chunks of `ref` that best match the words of `query` (bm25), best first.

        The full-text index holds every ref; joining each match to its row to keep the ref's
        costs more than ranking them (35 against 11 ms for 12,700 matches of 19,347 chunks). So
        the best TEXT_PREFIX_PER_HIT * k matches of the whole index are joined first: when k of
        them belong to the ref, and the k-th does not tie the last of the prefix, they are the
        ref's k best, since every better one of the ref is in the prefix. Otherwise (other refs
        crowd the prefix) all matches are joined.
        """
        match = fts_query(query)
        if match is None or k < 1:
            return []
        rank = f"bm25(chunks_fts, {', '.join(str(w) for w in BM25_WEIGHTS)})"
        prefix = TEXT_PREFIX_PER_HIT * k
        found: list[Any] = []
        complete = False
        with self._errors("searching the full-text index"), _snapshot(self._connect()):
            conn = self._connect()
            if prefix <= MAX_TEXT_PREFIX:
                best = conn.execute(
                    f"SELECT rowid, {rank} FROM chunks_fts WHERE chunks_fts MATCH ? "
                    f"ORDER BY {rank} LIMIT ?",
                    (match, prefix),
                ).fetchall()
                marks = ",".join("?" * len(best))
                rows = conn.execute(
                    f"SELECT path, chunk, heading, content, start_line, end_line, id FROM chunks "
                    f"WHERE id IN ({marks}) AND workspace = ? AND ref = ?",
                    (*(rowid for rowid, _ in best), workspace, ref),
                ).fetchall()
                score = dict(best)
                rows.sort(key=lambda r: (score[r[6]], r[0], r[1]))
                found = [(*r[:6], -score[r[6]]) for r in rows[:k]]
                complete = len(best) < prefix or (
                    len(found) == k and score[rows[k - 1][6]] != best[-1][1]
                )
            if not complete:
                found = conn.execute(
                    f"SELECT c.path, c.chunk, c.heading, c.content, c.start_line, c.end_line, "
                    f"-{rank} FROM chunks_fts JOIN chunks AS c ON c.id = chunks_fts.rowid "
                    f"WHERE chunks_fts MATCH ? AND c.workspace = ? AND c.ref = ? "
                    f"ORDER BY {rank}, c.path, c.chunk LIMIT ?",
                    (match, workspace, ref, k),
                ).fetchall()
        return [StoredHit.from_columns(row[:6], row[6]) for row in found]

    def _half_precision_top(
        self, conn: sqlite3.Connection, matrix: _Matrix, query: Vector, k: int
    ) -> dict[int, float]:
        """The exact top k of a large ref: float16 scores pick the candidates, float32 rows
        score them."""
        import torch  # noqa: PLC0415 - only large refs need it; see HALF_PRECISION_MIN_ROWS

        n = len(matrix.ids)
        query_half = query.astype(np.float16)
        approx = torch.mv(matrix.half, torch.from_numpy(query_half)).float().numpy()
        # Every float16 score is within `margin` of the exact one, so a chunk of the exact top k
        # scores at least (k-th best float16 score - 2 * margin) in float16.
        query_error = float(np.linalg.norm(query.astype(np.float64) - query_half))
        margin = matrix.half_error + query_error * (1 + matrix.half_error) + ACCUMULATION_SLACK
        if k < n:
            kth = float(np.partition(approx, n - k)[n - k])
            candidates = matrix.ids[approx >= kth - 2 * margin]
        else:
            candidates = matrix.ids
        exact: dict[int, float] = {}
        step = 500  # ids per statement, well below SQLite's limit on parameters
        for i in range(0, len(candidates), step):
            part = [int(c) for c in candidates[i : i + step]]
            for row_id, blob in conn.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({','.join('?' * len(part))})",
                part,
            ):
                exact[row_id] = float(np.frombuffer(blob, dtype="<f4") @ query)
        best = sorted(exact.items(), key=lambda item: -item[1])[:k]
        return dict(best)

    def _matrix(self, conn: sqlite3.Connection, workspace: str, ref: str) -> _Matrix:
        """The ref's ids and vectors, from the cache while the ref is unchanged; call inside a
        read snapshot."""
        key = (workspace, ref)
        (token,) = conn.execute(
            "SELECT max(id) FROM chunks WHERE workspace = ? AND ref = ?", key
        ).fetchone()
        if token is None:  # nothing indexed: not worth a place in the cache
            return _Matrix(-1, np.zeros(0, dtype=np.int64), np.zeros((0, self.dim), np.float32))
        with self._matrices_lock:
            cached = self._matrices.get(key)
            if cached is not None and cached.token == token:
                self._matrices.move_to_end(key)
                return cached
        rows = conn.execute(
            "SELECT id, embedding FROM chunks WHERE workspace = ? AND ref = ? ORDER BY id", key
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[1] for r in rows)
        vectors = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), self.dim)
        if len(rows) >= self.half_precision_rows:
            matrix = _half_matrix(int(token), ids, vectors)
        else:
            matrix = _Matrix(int(token), ids, vectors)
        with self._matrices_lock:
            self._matrices[key] = matrix
            self._matrices.move_to_end(key)
            while len(self._matrices) > MATRIX_CACHE_REFS:
                self._matrices.popitem(last=False)
        return matrix

    def _forget(self, workspace: str, ref: str) -> None:
        with self._matrices_lock:
            self._matrices.pop((workspace, ref), None)


class _ProcessLocks:
    """One threading lock per lock file, shared by every store object of this process."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def get(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def reset(self) -> None:
        # In a forked child only its forking thread runs: locks held by the parent's other
        # threads would never be released there. The flock still excludes the parent.
        self._guard = threading.Lock()
        self._locks = {}


_PROCESS_LOCKS = _ProcessLocks()
os.register_at_fork(after_in_child=_PROCESS_LOCKS.reset)


def _lock_wait(deadline: float) -> float:
    """What threading.Lock.acquire takes as the time left: -1 for as long as it takes."""
    left = deadline - time.monotonic()
    return -1 if left > threading.TIMEOUT_MAX else max(left, 0.0)


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode (once per file; later connections find it so), waiting out
    other processes that hold it during the switch."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            busy = getattr(e, "sqlite_errorname", "") == "SQLITE_BUSY"
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(WAL_RETRY_SECONDS)


def _advice(error: sqlite3.Error, path: Path) -> str | None:
    """What to do about an error SQLite reports by its code; None when the code says nothing
    more than the message."""
    name = getattr(error, "sqlite_errorname", "")
    if name == "SQLITE_FULL":
        return f"The disk holding {path} is full: free some space on it, then try again"
    if name.startswith("SQLITE_READONLY"):
        return (
            f"The store is read-only for this user: make {path} and its folder writable by the "
            "user docshelf runs as, or give another store with --store or DOCSHELF_STORE"
        )
    if name.startswith("SQLITE_IOERR"):
        return (
            f"The disk holding {path} failed a read or write: check that it has free space and "
            "no errors (the kernel log), then try again"
        )
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return (
            f"{path} is damaged or not a docshelf store: point --store at a new file and index "
            "again"
        )
    return None


def _open_lock_file(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, LOCK_FILE_MODE)
    except OSError as e:
        raise StoreError(
            f"cannot open the indexing lock file {path}: {e.strerror}. Check that this user may "
            "write the store's folder"
        ) from e


def _flock_until(fd: int, deadline: float, busy: Callable[[], StoreError]) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise busy() from None
            time.sleep(min(LOCK_POLL_SECONDS, left))
        except OSError as e:
            raise StoreError(
                f"cannot lock the indexing lock file: {e.strerror}. Keep the store on a local "
                "file system, which supports flock"
            ) from e


def _half_matrix(token: int, ids: np.ndarray[Any, np.dtype[np.int64]], vectors: Vector) -> _Matrix:
    import torch  # noqa: PLC0415 - see HALF_PRECISION_MIN_ROWS

    half = vectors.astype(np.float16)
    error = float(np.linalg.norm(vectors.astype(np.float64) - half, axis=1).max())
    return _Matrix(token, ids, None, torch.from_numpy(half), error)


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """A read transaction: every query inside sees the same committed state."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def fts_query(query: str) -> str | None:
    """An FTS5 query matching chunks with any word of `query`, or None when it has none but
    stop words (as PostgreSQL's english configuration, so both stores answer alike).

    Each word is quoted, so FTS5 operators and punctuation in the query are only text.
    """
    words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
    meaningful = [w for w in words if w not in STOP_WORDS]
    if not meaningful:
        return None
    return " OR ".join(f'"{w}"' for w in meaningful[:MAX_QUERY_TERMS])


def _statements(sql: str) -> list[str]:
    """The statements of a migration file; a trigger body's inner semicolons stay inside."""
    statements, current = [], ""
    for line in sql.splitlines(keepends=True):
        if not current and (not line.strip() or line.lstrip().startswith("--")):
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        raise RuntimeError(f"incomplete statement in a migration: {current[:80]!r}")
    return statements


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
