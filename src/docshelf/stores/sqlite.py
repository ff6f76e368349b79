"""The embedded store: one SQLite file, exact vector search and BM25 with numpy.

- WAL mode, so searches go on while an index is written; every write is one IMMEDIATE
  transaction, so a ref has all of its rows or none, and a failure leaves the old rows.
- Vectors are float32 blobs. A search multiplies the query by the ref's matrix, loaded once and
  kept in memory, and never stale (sqlite_vectors.py).
- Full text: BM25 over each ref's inverted lists of the terms of path, heading and content
  (stores/terms.py, stores/bm25.py: the terms, lists and scoring PostgreSQL has too), kept as
  blobs per ref and term (term_lists) and written in the transaction of the ref's chunks
  (sqlite_text.py); a query leaves out the terms half the chunks hold.
- Each indexed file's text is kept per ref, each distinct text once (file_texts, by its hash;
  ref_files lists each ref's files), written in the transaction of the ref's chunks.
- A search limited to a set of paths ranks only their chunks, scored as in a search of the whole
  ref: the vector search masks the cached matrix, the text search keeps only the subset's ids
  of each list.
- Each thread has its own connection: sqlite3 connections must not be shared across threads.
- Pins are rows whose lease is unix seconds from time.time(); a prune reads them inside its own
  IMMEDIATE transaction, which every other writer (add_pin among them) waits for.
- The indexing lock of a workspace is an flock on a file in this user's runtime folder, never
  beside the database (sqlite_lock.py).
- The checks of arguments, rows and query vectors are both stores' (common.py).
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

import numpy as np

from docshelf.errors import StoreError
from docshelf.rows import ChunkRow, FileRow, StoredFile, StoredHit, Vector
from docshelf.stores import bm25, sqlite_lock, sqlite_many, sqlite_text
from docshelf.stores.common import (
    blob_vector,
    check_lease,
    check_model,
    check_open_arguments,
    new_pin_id,
    no_store,
    query_vector,
    row_embedding,
    searched_scopes,
    title_blob,
)
from docshelf.stores.contract import RefScope, Store
from docshelf.stores.migrations import migrations
from docshelf.stores.sqlite_schema import migrate, now
from docshelf.stores.sqlite_text import ChunkEntry, chunk_terms, write_term_lists
from docshelf.stores.sqlite_vectors import MatrixCache, top_k

# Seconds a connection waits for another process's write to finish before it gives up: an index
# write of a large ref takes a few seconds; a minute means something is stuck.
BUSY_TIMEOUT_SECONDS = 60.0

# Switching a file to WAL needs it to itself for a moment, and SQLite answers "database is locked"
# at once, without waiting, when another process has it open then (two processes opening a new
# store together: `docshelf serve` and `docshelf index`, say). The switch is tried again this often
# until BUSY_TIMEOUT_SECONDS have passed.
WAL_RETRY_SECONDS = 0.01

# Files written per executemany of a replace: the texts of a batch are held in memory at once.
FILE_BATCH = 500
# Keys a lookup asks for in one IN list: SQLite allows 32766 parameters a statement.
IN_LIST_STEP = 500

_SELECT_HIT = f"SELECT {bm25.HIT_COLUMNS} FROM chunks"


class SQLiteStore(Store):
    """Chunks of every workspace in one SQLite file. Thread-safe."""

    def __init__(
        self,
        path: Path,
        model_id: str,
        dim: int,
    ) -> None:
        self.path = path
        self.location = str(path)
        self.model_id = model_id
        self.dim = dim
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._matrices = MatrixCache()
        self._closed = False

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        model_id: str | None,
        dim: int | None,
        create: bool = True,
    ) -> SQLiteStore:
        """Open the store at `path`, creating it for `model_id`/`dim` when it does not exist and
        `create` is true; otherwise nothing is made there, not even its folder.

        Raises:
            StoreError: the file cannot be opened or created, is not a docshelf store, or was
                created for another model or width; or it holds no store and none may be
                made (no model given, or `create` false).
        """
        check_open_arguments(model_id, dim)
        create = create and model_id is not None
        if not create and _holds_nothing(path):
            raise no_store(f"at {path}")
        if not path.exists():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(
                    f"cannot create the folder of the store {path}: {e.strerror}. "
                    "Choose another place with --store or DOCSHELF_STORE"
                ) from e
        store = cls(path, model_id or "", dim or 0)
        try:
            store._migrate(model_id, dim, create=create)
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
        except OSError as e:  # the temporary files of a large ref's lists (bm25.ListsBuilder)
            raise StoreError(
                f"{action} in {self.path} failed: {e}, in a temporary file in "
                f"{tempfile.gettempdir()}; free some space there, or point TMPDIR at a folder "
                "with room"
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

    def _migrate(self, model_id: str | None, dim: int | None, *, create: bool) -> None:
        with self._transaction("upgrading the schema") as conn:
            stored = migrate(
                conn, self.location, migrations("sqlite"), model_id, dim, create=create
            )
            sqlite_text.make_terms(conn)
        check_model(
            self.location,
            stored,
            (model_id, dim),
            new_store="--store PATH",
            start_over="delete this file",
        )
        self.model_id, self.dim = stored

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._matrices.clear()
        self._local = threading.local()

    # -- writes ----------------------------------------------------------------------------

    def replace_doc_chunks(
        self,
        workspace: str,
        ref: str,
        rows: Iterable[ChunkRow],
        files: Iterable[FileRow] = (),
    ) -> None:
        with self._transaction(f"writing ref {ref} of workspace {workspace}") as conn:
            conn.execute("DELETE FROM chunks WHERE workspace = ? AND ref = ?", (workspace, ref))

            def written() -> Iterator[ChunkEntry]:
                # Each row is inserted as the lists take its terms: the rows are never all held
                # in memory, only the lists' compact arrays.
                for row in rows:
                    cursor = conn.execute(
                        "INSERT INTO chunks (workspace, ref, path, chunk, heading, content, "
                        "start_line, end_line, content_hash, embedding) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (workspace, ref, *row.columns(), self._blob(row)),
                    )
                    assert cursor.lastrowid is not None
                    yield chunk_terms(cursor.lastrowid, row.path, row.heading, row.content)

            write_term_lists(conn, workspace, ref, written())
            conn.execute("DELETE FROM ref_files WHERE workspace = ? AND ref = ?", (workspace, ref))
            remaining = iter(files)
            while batch := list(islice(remaining, FILE_BATCH)):
                conn.executemany(
                    "INSERT OR IGNORE INTO file_texts (text_hash, text) VALUES (?, ?)",
                    [(f.text_hash, f.text) for f in batch],
                )
                conn.executemany(
                    "INSERT INTO ref_files (workspace, ref, path, text_hash, lines, size, "
                    "title_hash, title_embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            workspace,
                            ref,
                            f.path,
                            f.text_hash,
                            f.lines,
                            len(f.text.encode()),
                            f.title_hash,
                            title_blob(
                                f, location=self.location, model_id=self.model_id, dim=self.dim
                            ),
                        )
                        for f in batch
                    ],
                )
        self._forget(workspace, ref)

    def _blob(self, row: ChunkRow) -> bytes | None:
        vector = row_embedding(row, location=self.location, model_id=self.model_id, dim=self.dim)
        return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int:
        keep = sorted(set(keep_refs))
        marks = ",".join("?" * len(keep))
        with self._transaction(f"pruning workspace {workspace}") as conn:
            now = time.time()
            conn.execute(
                "DELETE FROM pins WHERE workspace = ? AND expires_at <= ?", (workspace, now)
            )
            # A ref with files but no chunks (each of its files was empty) is a ref too.
            gone = [
                r
                for (r,) in conn.execute(
                    "SELECT ref FROM (SELECT ref FROM chunks WHERE workspace = ? "
                    "UNION SELECT ref FROM ref_files WHERE workspace = ?) WHERE ref NOT IN "
                    "(SELECT ref FROM pins WHERE workspace = ? AND expires_at > ?)"
                    + (f" AND ref NOT IN ({marks})" if keep else ""),
                    (workspace, workspace, workspace, now, *keep),
                )
            ]
            by_ref = [(workspace, r) for r in gone]
            conn.executemany("DELETE FROM chunks WHERE workspace = ? AND ref = ?", by_ref)
            conn.executemany("DELETE FROM ref_files WHERE workspace = ? AND ref = ?", by_ref)
            conn.executemany("DELETE FROM term_lists WHERE workspace = ? AND ref = ?", by_ref)
            conn.executemany("DELETE FROM ref_stats WHERE workspace = ? AND ref = ?", by_ref)
            conn.execute(
                "DELETE FROM selections WHERE workspace = ? AND ref NOT IN "
                "(SELECT ref FROM chunks WHERE workspace = ?)",
                (workspace, workspace),
            )
            # Every text no ref holds: this prune's, and those a replace of a ref left behind.
            # One writer at a time (IMMEDIATE), so no write can be adding a reference meanwhile.
            conn.execute(
                "DELETE FROM file_texts WHERE NOT EXISTS "
                "(SELECT 1 FROM ref_files WHERE ref_files.text_hash = file_texts.text_hash)"
            )
        for ref in gone:
            self._forget(workspace, ref)
        return len(gone)

    def set_current(self, workspace: str, ref: str) -> None:
        with self._transaction(f"making {ref} current in workspace {workspace}") as conn:
            conn.execute(
                "INSERT INTO current_ref VALUES (?, ?, ?) ON CONFLICT (workspace) "
                "DO UPDATE SET ref = excluded.ref, updated_at = excluded.updated_at",
                (workspace, ref, now()),
            )

    def merge_term_lists(self, *, force: bool = False) -> int:
        """Never merges: a search reads its refs' lists from a file in process (27.6 ms over
        100 workspaces, bench/org.py)."""
        return 0

    def set_selection(self, workspace: str, ref: str, selection: str, skipped: str = "[]") -> None:
        with self._transaction(f"recording the docs selection of {ref} in {workspace}") as conn:
            conn.execute(
                "INSERT INTO selections (workspace, ref, selection, indexed_at, skipped) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace, ref) DO UPDATE SET "
                "selection = excluded.selection, indexed_at = excluded.indexed_at, "
                "skipped = excluded.skipped",
                (workspace, ref, selection, now(), skipped),
            )

    def ref_report(self, workspace: str, ref: str) -> tuple[str | None, str | None]:
        with self._errors("reading what a ref's indexing recorded"):
            row = (
                self._connect()
                .execute(
                    "SELECT indexed_at, skipped FROM selections WHERE workspace = ? AND ref = ?",
                    (workspace, ref),
                )
                .fetchone()
            )
        return (None, None) if row is None else (row[0], row[1])

    def selection(self, workspace: str, ref: str) -> str | None:
        with self._errors("reading a docs selection"):
            row = (
                self._connect()
                .execute(
                    "SELECT selection FROM selections WHERE workspace = ? AND ref = ?",
                    (workspace, ref),
                )
                .fetchone()
            )
        return None if row is None else str(row[0])

    # -- pins and the indexing lock --------------------------------------------------------

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str:
        lease = check_lease(lease_seconds)
        pin_id = new_pin_id()
        with self._transaction(f"pinning ref {ref} of workspace {workspace}") as conn:
            conn.execute(
                "INSERT INTO pins (id, workspace, ref, holder, expires_at) VALUES (?, ?, ?, ?, ?)",
                (pin_id, workspace, ref, holder, time.time() + lease),
            )
        return pin_id

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]:
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
        with self._transaction("removing a pin") as conn:
            conn.execute("DELETE FROM pins WHERE id = ?", (pin_id,))

    def pins(self, workspace: str) -> list[tuple[str, str, float]]:
        with self._errors(f"reading the pins of workspace {workspace}"):
            rows = (
                self._connect()
                .execute(
                    "SELECT ref, holder, expires_at FROM pins WHERE workspace = ? "
                    "AND expires_at > ? ORDER BY expires_at, ref",
                    (workspace, time.time()),
                )
                .fetchall()
            )
        return [(str(ref), str(holder), float(expires)) for ref, holder, expires in rows]

    def pinned_refs(self, workspace: str) -> set[str]:
        with self._errors(f"reading the pins of workspace {workspace}"):
            rows = self._connect().execute(
                "SELECT DISTINCT ref FROM pins WHERE workspace = ? AND expires_at > ?",
                (workspace, time.time()),
            )
            return {str(ref) for (ref,) in rows}

    @contextmanager
    def workspace_lock(self, workspace: str, timeout_seconds: float) -> Iterator[None]:
        """An flock on a file in this user's runtime folder, never beside the database
        (sqlite_lock.py)."""
        with sqlite_lock.workspace_lock(self.path, self.location, workspace, timeout_seconds):
            yield

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

    def has_files(self, workspace: str, ref: str) -> bool:
        with self._errors(f"looking up the files of ref {ref}"):
            (found,) = (
                self._connect()
                .execute(
                    "SELECT EXISTS (SELECT 1 FROM ref_files WHERE workspace = ? AND ref = ?)",
                    (workspace, ref),
                )
                .fetchone()
            )
        return bool(found)

    def files(self, workspace: str, ref: str) -> list[StoredFile]:
        with self._errors(f"listing the files of ref {ref}"):
            rows = self._connect().execute(
                "SELECT path, lines, size FROM ref_files WHERE workspace = ? AND ref = ? "
                "ORDER BY path",
                (workspace, ref),
            )
            return [StoredFile(str(path), int(lines), int(size)) for path, lines, size in rows]

    def file_text(self, workspace: str, ref: str, path: str) -> str | None:
        with self._errors(f"reading {path} of ref {ref}"):
            row = (
                self._connect()
                .execute(
                    "SELECT t.text FROM ref_files AS f JOIN file_texts AS t "
                    "ON t.text_hash = f.text_hash "
                    "WHERE f.workspace = ? AND f.ref = ? AND f.path = ?",
                    (workspace, ref, path),
                )
                .fetchone()
            )
        return None if row is None else str(row[0])

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

    def embeddings_for(self, content_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        if model_id != self.model_id or not self.dim:
            return {}
        return self._vectors_of(
            "looking up stored embeddings",
            lambda n: (
                f"SELECT content_hash, embedding FROM chunks WHERE content_hash IN "
                f"({_marks(n)}) AND embedding IS NOT NULL"
            ),
            list(dict.fromkeys(content_hashes)),
        )

    def title_embeddings_for(self, title_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        if model_id != self.model_id or not self.dim:
            return {}
        return self._vectors_of(
            "looking up stored title embeddings",
            lambda n: (
                f"SELECT title_hash, title_embedding FROM ref_files WHERE title_hash IN "
                f"({_marks(n)}) AND title_embedding IS NOT NULL"
            ),
            list(dict.fromkeys(title_hashes)),
        )

    def file_titles(self, workspace: str, ref: str, paths: Collection[str]) -> dict[str, Vector]:
        if not self.dim:
            return {}
        return self._vectors_of(
            f"reading the file titles of ref {ref}",
            lambda n: (
                "SELECT path, title_embedding FROM ref_files WHERE workspace = ? AND ref = ? "
                f"AND path IN ({_marks(n)}) AND title_embedding IS NOT NULL"
            ),
            sorted(set(paths)),
            (workspace, ref),
        )

    def _vectors_of(
        self,
        what: str,
        statement: Callable[[int], str],
        keys: Sequence[str],
        scope: tuple[str, ...] = (),
    ) -> dict[str, Vector]:
        """Each row's key and vector of `statement(n)`, the statement with placeholders for n of
        `keys` (after those of `scope`), asked in parts: SQLite allows 32766 parameters a
        statement."""
        found: dict[str, Vector] = {}
        with self._errors(what):
            conn = self._connect()
            for i in range(0, len(keys), IN_LIST_STEP):
                part = keys[i : i + IN_LIST_STEP]
                rows = conn.execute(statement(len(part)), (*scope, *part))
                for key, blob in rows:
                    found[str(key)] = blob_vector(blob)
        return found

    def search(
        self,
        workspace: str,
        ref: str,
        vector: Vector,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]:
        query = query_vector(vector, location=self.location, model_id=self.model_id, dim=self.dim)
        if k < 1 or (paths is not None and not paths):
            return []
        conn = self._connect()
        with self._errors(f"searching ref {ref}"), _snapshot(conn):
            # The matrix and the rows of the hits come from one snapshot: a write of the same
            # ref between the two reads would otherwise leave ids whose rows are gone.
            matrix = self._matrices.load(conn, workspace, ref, self.dim)
            among = None if paths is None else matrix.rows_of(paths)
            if len(matrix.ids) == 0 or (among is not None and len(among) == 0):
                return []
            score_of = top_k(matrix, query, k, among)
            ids = list(score_of)
            rows = conn.execute(
                f"{_SELECT_HIT} WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        hits = [StoredHit.from_columns(row[1:], score_of[row[0]]) for row in rows]
        hits.sort(key=lambda h: (-h.score, h.path, h.chunk))
        return hits

    def search_text(
        self,
        workspace: str,
        ref: str,
        query: str,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]:
        if k < 1 or (paths is not None and not paths):
            return []
        conn = self._connect()
        with self._errors("searching the full-text index"), _snapshot(conn):
            return sqlite_text.search_text(conn, workspace, ref, query, k, paths)

    def currents(self, workspaces: Collection[str]) -> dict[str, str]:
        if not workspaces:
            return {}
        with self._errors("reading the current refs"):
            return sqlite_many.currents(self._connect(), workspaces)

    def indexed_refs(self, refs: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        if not refs:
            return set()
        with self._errors("looking up refs"):
            return sqlite_many.indexed_refs(self._connect(), refs)

    def search_refs(self, scopes: Sequence[RefScope], vector: Vector, k: int) -> list[StoredHit]:
        query = query_vector(vector, location=self.location, model_id=self.model_id, dim=self.dim)
        kept = searched_scopes(scopes)
        if k < 1 or not kept:
            return []
        conn = self._connect()
        with self._errors(f"searching {len(kept)} refs by vector"), _snapshot(conn):
            return sqlite_many.search_refs(conn, self._matrices, self.dim, kept, query, k)

    def search_text_refs(self, scopes: Sequence[RefScope], query: str, k: int) -> list[StoredHit]:
        kept = searched_scopes(scopes)
        if k < 1 or not kept:
            return []
        conn = self._connect()
        with self._errors(f"searching {len(kept)} refs by text"), _snapshot(conn):
            return sqlite_many.search_text_refs(conn, kept, query, k)

    def file_titles_refs(
        self, files: Collection[tuple[str, str, str]]
    ) -> dict[tuple[str, str], Vector]:
        if not files or not self.dim:
            return {}
        with self._errors("reading file titles"):
            return sqlite_many.file_titles_refs(self._connect(), files)

    def files_refs(
        self, refs: Collection[tuple[str, str]], prefix: str = ""
    ) -> dict[tuple[str, str], list[StoredFile]]:
        if not refs:
            return {}
        with self._errors("listing the files of many refs"):
            return sqlite_many.files_refs(self._connect(), refs, prefix)

    def _forget(self, workspace: str, ref: str) -> None:
        self._matrices.forget(workspace, ref)


def _marks(count: int) -> str:
    """The placeholders of an IN list of `count` values."""
    return ",".join("?" * count)


def _holds_nothing(path: Path) -> bool:
    """Whether `path` is no file or an empty one: no store, and nothing a read should open, since
    opening a file in WAL mode writes its header."""
    try:
        return path.stat().st_size == 0
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False  # what SQLite says of it is the better message


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


@contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """A read transaction: every query inside sees the same committed state."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
