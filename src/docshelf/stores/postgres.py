"""The shared store: PostgreSQL with pgvector, for a team or a server that outlives one machine.

- Vectors: each distinct vector once (docs_vectors, by content hash) under an HNSW index with
  cosine distance; a walk finds the nearest texts there and joins them to the searched refs'
  rows (postgres_many.py). pgvector 0.6 has no iterative scan, so a ref (or a set of paths)
  that holds few of the walk's texts can come back short; such a search, and that of a ref too
  small a share of the store, is answered exactly over the ref or the subset alone, read
  through the (workspace, ref, path) index.
- Full text: BM25 over docshelf's terms, as on SQLite, from inverted lists and totals kept per
  ref and written in the transaction of the ref's chunks (postgres_text.py).
- Each indexed file's text is kept per ref, each distinct text once (docs_file_texts, by its
  hash; docs_ref_files lists each ref's files), written in the transaction of the ref's chunks.
  Writers and the prune's sweep of texts (and vectors) no ref holds take turns under an
  advisory lock (TEXTS_LOCK_KEY), since a writer may count on a stored text (or vector) that
  the sweep sees unreferenced.
- The schema is versioned SQL under migrations/postgresql/, applied under an advisory lock; the
  model and width are read from the database on every open (postgres_schema.py).
- A ref is replaced in one transaction (DELETE, then COPY); writers of one ref take turns under
  an advisory lock, so a ref never holds the rows of two writes.
- Pins are rows whose lease ends at the server's now() plus the lease, so clients with skewed
  clocks agree. add_pin and prune take turns under a transaction-level advisory lock of the
  workspace's pins, so a prune never misses a pin added before it began.
- The indexing lock of a workspace is a session-level advisory lock, held by a pooled connection
  for the whole run: when that session ends, however it ends, the server drops the lock.
- Every statement is parameterised. The one value formatted into SQL is the width, an int
  validated in postgres_schema.py, in the DDL of a migration.
- Connections come from a pool that fails fast while the server is down and recovers at once
  when it is back (postgres_pool.py). Reads run in autocommit mode, without the pool's check:
  one round trip a statement, asked again once if a restart cut the connection.
- Every psycopg error becomes a StoreError naming the operation and the server (never its
  password) and saying what to check (postgres_errors.py).
- The checks of arguments, rows and query vectors are both stores' (common.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector as PgVector
from psycopg.rows import TupleRow

from docshelf.config import DEFAULT_EF_SEARCH
from docshelf.errors import ConfigError, StoreError
from docshelf.rows import ChunkRow, FileRow, StoredFile, StoredHit, Vector
from docshelf.stores import postgres_many, postgres_merged, postgres_text
from docshelf.stores.common import (
    blob_vector,
    check_lease,
    check_model,
    check_open_arguments,
    check_timeout,
    iso_utc,
    lock_busy,
    new_pin_id,
    poll_until,
    query_vector,
    row_embedding,
    searched_scopes,
    title_blob,
)
from docshelf.stores.contract import RefScope, Store
from docshelf.stores.migrations import migrations
from docshelf.stores.postgres_errors import message, passwords, store_error, without_password
from docshelf.stores.postgres_pool import (
    APPLICATION_NAME,
    CONNECT_TIMEOUT_SECONDS,
    POOL_TIMEOUT_SECONDS,
    Connection,
    PooledConnections,
    check_ef_search,
)
from docshelf.stores.postgres_schema import check_width, prepare
from docshelf.stores.postgres_text import analyze_if_grown, write_term_lists
from docshelf.stores.terms import term_columns

# What other modules take from here; the pool's timeout and without_password live beside the
# pool and the error messages.
__all__ = ["POOL_TIMEOUT_SECONDS", "PostgresStore", "without_password"]

# Seeds of the per-workspace advisory locks, whose keys are hashtextextended(workspace, seed):
# one 64-bit key, where the write lock of a (workspace, ref) takes two 32-bit keys, and PostgreSQL
# keeps the two kinds apart; the seeds ("pins", "index" in ASCII) keep these two apart.
PINS_LOCK_SEED = 0x70696E73
INDEXING_LOCK_SEED = 0x696E646578

PINS_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))"

# Key of the advisory lock of the stored file texts ("texts" in ASCII), one for the whole
# database since texts are shared across workspaces. A writer, which may skip sending a text
# that is already stored and then reference it, holds it shared for its transaction; a prune's
# sweep of the texts that no ref references takes it exclusively, or skips the sweep when a
# writer holds it: the orphans go at a later prune. So the sweep never deletes a text that an
# uncommitted write counts on, and neither side waits for the other. (A foreign key instead would
# make the two conflict: a write's reference to a text being swept, or a sweep's delete of a text
# a write has just referenced, fails one of them.) The distinct vectors (docs_vectors) are
# written and swept under the same lock.
TEXTS_LOCK_KEY = 0x7465787473

# Files written per round trip of a replace: the texts of a batch are held in memory at once.
FILE_BATCH = 500

MIGRATIONS = "postgresql"

COPY_SQL = (
    "COPY docs_chunks (workspace, ref, path, chunk, heading, content, start_line, end_line, "
    "content_hash, embedding, terms, tfs, length) FROM STDIN WITH (FORMAT BINARY)"
)
COPY_TYPES = [
    *("text", "text", "text", "int4", "text", "text", "int4", "int4", "text", "vector"),
    *("text[]", "float4[]", "int4"),
]


class PostgresStore(PooledConnections, Store):
    """Chunks of every workspace in one PostgreSQL database. Thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        location: str,
        model_id: str,
        dim: int,
        ef_search: int,
        secrets: Sequence[str],
    ) -> None:
        """Builds the pool without opening it; `open` is the way to get a store."""
        self.model_id = model_id
        self.dim = dim
        super().__init__(url, location=location, ef_search=ef_search, secrets=secrets)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        model_id: str | None,
        dim: int | None,
        ef_search: int | None = None,
        create: bool = True,
    ) -> PostgresStore:
        """Open the store in the database at `url`, creating it for `model_id`/`dim` if needed
        and `create` is true; otherwise no table is made in a database that holds no store.

        Raises:
            StoreError: the server cannot be reached, the database holds no store and none may
                be made (no model given, or `create` false), or it holds one made for another
                model or width.
            ConfigError: `dim` or `ef_search` is outside what pgvector supports.
        """
        check_open_arguments(model_id, dim)
        create = create and model_id is not None
        if dim is not None:
            check_width(dim)
        ef = DEFAULT_EF_SEARCH if ef_search is None else check_ef_search(ef_search)
        try:
            location = without_password(url)
            secrets = passwords(url)
        except ValueError as e:  # urlsplit: an unclosed [ of an IPv6 host and the like
            raise ConfigError(
                f"the PostgreSQL URL in --store or DOCSHELF_STORE cannot be read ({e}); write "
                "it as postgresql://user:password@host:5432/database"
            ) from e
        try:
            conn = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                application_name=APPLICATION_NAME,
            )
        except psycopg.Error as e:
            raise StoreError(
                f"cannot connect to PostgreSQL at {location}: {message(e, secrets)} Check "
                "that the server is running and that the URL's host, port, database, user and "
                "password are right"
            ) from e
        try:
            with conn:
                stored_model, stored_dim = prepare(
                    conn, location, migrations(MIGRATIONS), model_id, dim, create=create
                )
                postgres_text.make_terms(conn)
        except psycopg.Error as e:
            raise store_error("preparing the store", location, e, secrets) from e
        check_model(
            location,
            (stored_model, stored_dim),
            (model_id, dim),
            new_store="--store with the URL of another database",
            start_over="drop the tables docs_chunks, docs_current, docs_file_texts, "
            "docs_merged_lists, docs_merged_refs, docs_meta, docs_pins, docs_ref_files, "
            "docs_ref_stats, docs_selections, docs_term_lists, docs_vectors and "
            "docs_schema_migrations",
        )
        store = cls(
            url,
            location=location,
            model_id=stored_model,
            dim=stored_dim,
            ef_search=ef,
            secrets=secrets,
        )
        try:
            store._pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
        except psycopg.Error as e:
            store.close()
            raise store_error("opening connections", location, e, secrets) from e
        return store

    # -- writes ----------------------------------------------------------------------------

    def replace_doc_chunks(
        self,
        workspace: str,
        ref: str,
        rows: Iterable[ChunkRow],
        files: Iterable[FileRow] = (),
    ) -> None:
        """A text is sent to the server only when it is not stored yet."""
        with (
            self._errors(f"writing ref {ref!r} of workspace {workspace!r}"),
            self._connection() as conn,
            conn.transaction(),
            conn.cursor() as cur,
        ):
            # No sweep of unreferenced texts runs until this transaction ends (TEXTS_LOCK_KEY).
            cur.execute("SELECT pg_advisory_xact_lock_shared(%s)", (TEXTS_LOCK_KEY,))
            # Two writers of one ref take turns: otherwise the second's DELETE, whose snapshot
            # predates the first's commit, would leave the first's rows beside its own.
            cur.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (workspace, ref)
            )
            cur.execute(
                "DELETE FROM docs_chunks WHERE workspace = %s AND ref = %s", (workspace, ref)
            )
            # Rows are checked as they stream: an error, ours or the caller's iterator's, aborts
            # the COPY and the transaction, so nothing of the new rows is written.
            written = 0
            with cur.copy(COPY_SQL) as copy:
                copy.set_types(COPY_TYPES)
                for row in rows:
                    written += 1
                    copy.write_row(
                        (
                            *(workspace, ref, *row.columns(), self._embedding(row)),
                            *term_columns(row.path, row.heading, row.content),
                        )
                    )
            write_term_lists(cur, workspace, ref)
            _add_vectors(cur, workspace, ref)
            cur.execute(
                "DELETE FROM docs_ref_files WHERE workspace = %s AND ref = %s", (workspace, ref)
            )
            remaining = iter(files)
            while batch := list(islice(remaining, FILE_BATCH)):
                titles = [
                    title_blob(f, location=self.location, model_id=self.model_id, dim=self.dim)
                    for f in batch
                ]
                _write_files(cur, workspace, ref, batch, titles)
            # Fresh statistics, so the planner reads the ref through its indexes at once: a table
            # it has never analysed looks empty, and it would scan the whole table instead until
            # autovacuum gets round to it.
            analyze_if_grown(cur, "docs_chunks", written)

    def _embedding(self, row: ChunkRow) -> Vector | None:
        return row_embedding(row, location=self.location, model_id=self.model_id, dim=self.dim)

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int:
        """The texts no ref holds stay while a write is under way (TEXTS_LOCK_KEY), for a later
        prune; the pins are read after add_pin's turn (PINS_LOCK_SEED)."""
        keep = sorted(set(keep_refs))
        with (
            self._errors(f"pruning workspace {workspace!r}"),
            self._connection() as conn,
            conn.transaction(),
        ):
            conn.execute(PINS_LOCK_SQL, (workspace, PINS_LOCK_SEED))
            # A renewal in flight holds its pin's row: this waits for it, then sees the new lease.
            conn.execute(
                "DELETE FROM docs_pins WHERE workspace = %s AND expires_at <= now()", (workspace,)
            )
            # A ref with files but no chunks (each of its files was empty) is a ref too.
            row = conn.execute(
                "WITH gone_chunks AS (DELETE FROM docs_chunks "
                f"WHERE {_GONE} RETURNING ref), "
                f"gone_files AS (DELETE FROM docs_ref_files WHERE {_GONE} RETURNING ref), "
                f"gone_lists AS (DELETE FROM docs_term_lists WHERE {_GONE}), "
                f"gone_stats AS (DELETE FROM docs_ref_stats WHERE {_GONE}) "
                "SELECT count(*) FROM "
                "(SELECT ref FROM gone_chunks UNION SELECT ref FROM gone_files) AS gone",
                {"workspace": workspace, "keep": keep},
            ).fetchone()
            conn.execute(
                "DELETE FROM docs_selections s WHERE workspace = %s AND NOT EXISTS "
                "(SELECT 1 FROM docs_chunks c WHERE c.workspace = s.workspace AND c.ref = s.ref)",
                (workspace,),
            )
            gone = int(_first(row))
            # Every text no ref holds: this prune's, those a replace of a ref left behind, and
            # those an earlier prune had to leave. The same for the vectors no row holds, when
            # this prune deleted a ref (a first index of a workspace prunes nothing, and does
            # not pay for the sweep).
            swept = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (TEXTS_LOCK_KEY,))
            if _first(swept.fetchone()):
                conn.execute(
                    "DELETE FROM docs_file_texts t WHERE NOT EXISTS "
                    "(SELECT 1 FROM docs_ref_files f WHERE f.text_hash = t.text_hash)"
                )
                if gone:
                    conn.execute(
                        "DELETE FROM docs_vectors v WHERE NOT EXISTS "
                        "(SELECT 1 FROM docs_chunks c WHERE c.content_hash = v.content_hash)"
                    )
        return gone

    def set_current(self, workspace: str, ref: str) -> None:
        with (
            self._errors(f"making {ref!r} current in workspace {workspace!r}"),
            self._connection() as conn,
        ):
            conn.execute(
                "INSERT INTO docs_current (workspace, ref, updated_at) VALUES (%s, %s, now()) "
                "ON CONFLICT (workspace) "
                "DO UPDATE SET ref = excluded.ref, updated_at = excluded.updated_at",
                (workspace, ref),
            )

    def merge_term_lists(self, *, force: bool = False) -> int:
        """At least MERGE_MIN_REFS current refs, in one transaction (postgres_merged.merge)."""
        with self._errors("merging the term lists"), self._connection() as conn:
            merged = postgres_merged.merge(conn, force=force)
        return 0 if merged is None else merged.refs

    def set_selection(self, workspace: str, ref: str, selection: str, skipped: str = "[]") -> None:
        """The time recorded is the server's now."""
        with (
            self._errors(f"recording the docs selection of {ref!r} in {workspace!r}"),
            self._connection() as conn,
        ):
            conn.execute(
                "INSERT INTO docs_selections (workspace, ref, selection, indexed_at, skipped) "
                "VALUES (%s, %s, %s, now(), %s) ON CONFLICT (workspace, ref) DO UPDATE SET "
                "selection = excluded.selection, indexed_at = excluded.indexed_at, "
                "skipped = excluded.skipped",
                (workspace, ref, selection, skipped),
            )

    def ref_report(self, workspace: str, ref: str) -> tuple[str | None, str | None]:
        row = self._read(
            f"reading what indexing {ref!r} in {workspace!r} recorded",
            lambda conn: conn.execute(
                "SELECT indexed_at, skipped FROM docs_selections WHERE workspace = %s AND ref = %s",
                (workspace, ref),
            ).fetchone(),
        )
        if row is None:
            return None, None
        indexed_at, skipped = row
        when = None if indexed_at is None else iso_utc(indexed_at)
        return when, None if skipped is None else str(skipped)

    def selection(self, workspace: str, ref: str) -> str | None:
        row = self._read(
            f"reading the docs selection of {ref!r} in {workspace!r}",
            lambda conn: conn.execute(
                "SELECT selection FROM docs_selections WHERE workspace = %s AND ref = %s",
                (workspace, ref),
            ).fetchone(),
        )
        return None if row is None else str(row[0])

    # -- pins and the indexing lock --------------------------------------------------------

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str:
        lease = check_lease(lease_seconds)
        pin_id = new_pin_id()
        with (
            self._errors(f"pinning ref {ref!r} of workspace {workspace!r}"),
            self._connection() as conn,
            conn.transaction(),
        ):
            conn.execute(PINS_LOCK_SQL, (workspace, PINS_LOCK_SEED))
            conn.execute(
                "INSERT INTO docs_pins (id, workspace, ref, holder, expires_at) "
                "VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s))",
                (pin_id, workspace, ref, holder, lease),
            )
        return pin_id

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]:
        lease = check_lease(lease_seconds)
        wanted = list(dict.fromkeys(pin_ids))
        if not wanted:
            return set()
        with self._errors("renewing pins"), self._connection() as conn:
            rows = conn.execute(
                "UPDATE docs_pins SET expires_at = now() + make_interval(secs => %s) "
                "WHERE id = ANY(%s::text[]) AND expires_at > now() RETURNING id",
                (lease, wanted),
            ).fetchall()
        return {str(pin_id) for (pin_id,) in rows}

    def remove_pin(self, pin_id: str) -> None:
        with self._errors("removing a pin"), self._connection() as conn:
            conn.execute("DELETE FROM docs_pins WHERE id = %s", (pin_id,))

    def pins(self, workspace: str) -> list[tuple[str, str, float]]:
        rows = self._read(
            f"reading the pins of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT ref, holder, extract(epoch FROM expires_at) FROM docs_pins "
                "WHERE workspace = %s AND expires_at > now() ORDER BY expires_at, ref",
                (workspace,),
            ).fetchall(),
        )
        return [(str(ref), str(holder), float(expires)) for ref, holder, expires in rows]

    def pinned_refs(self, workspace: str) -> set[str]:
        rows = self._read(
            f"reading the pins of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT DISTINCT ref FROM docs_pins WHERE workspace = %s AND expires_at > now()",
                (workspace,),
            ).fetchall(),
        )
        return {str(ref) for (ref,) in rows}

    @contextmanager
    def workspace_lock(self, workspace: str, timeout_seconds: float) -> Iterator[None]:
        """A session-level advisory lock, held by one pooled connection lent for the whole
        block; if that session ends, the server drops the lock."""
        waited = check_timeout(timeout_seconds)
        deadline = time.monotonic() + waited
        action = f"taking the indexing lock of workspace {workspace!r}"
        with self._errors(action):
            pool, conn = self._lend()
        # Whether the session is known to hold no lock of ours, so the pool may lend it again.
        clean = False
        try:
            with self._errors(action):
                locked = _try_lock_until(conn, workspace, deadline)
            if not locked:
                clean = True
                raise lock_busy(workspace, self.location, waited)
            try:
                yield
            finally:
                clean = _unlock(conn, workspace)
        finally:
            if not clean:
                # Ending the session is the one sure way to drop a lock it might hold.
                conn.close()
            pool.putconn(conn)

    # -- reads -----------------------------------------------------------------------------

    def current(self, workspace: str) -> str | None:
        row = self._read(
            f"reading the current ref of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT ref FROM docs_current WHERE workspace = %s", (workspace,)
            ).fetchone(),
        )
        return None if row is None else str(row[0])

    def has_chunks(self, workspace: str, ref: str) -> bool:
        row = self._read(
            f"looking up ref {ref!r} of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT EXISTS (SELECT 1 FROM docs_chunks WHERE workspace = %s AND ref = %s)",
                (workspace, ref),
            ).fetchone(),
        )
        return bool(_first(row))

    def has_files(self, workspace: str, ref: str) -> bool:
        row = self._read(
            f"looking up the files of ref {ref!r} of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT EXISTS (SELECT 1 FROM docs_ref_files WHERE workspace = %s AND ref = %s)",
                (workspace, ref),
            ).fetchone(),
        )
        return bool(_first(row))

    def files(self, workspace: str, ref: str) -> list[StoredFile]:
        rows = self._read(
            f"listing the files of ref {ref!r} of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT path, lines, size FROM docs_ref_files WHERE workspace = %s AND ref = %s "
                'ORDER BY path COLLATE "C"',
                (workspace, ref),
            ).fetchall(),
        )
        return [StoredFile(str(path), int(lines), int(size)) for path, lines, size in rows]

    def file_text(self, workspace: str, ref: str, path: str) -> str | None:
        row = self._read(
            f"reading {path!r} of ref {ref!r} of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT t.text FROM docs_ref_files f JOIN docs_file_texts t "
                "ON t.text_hash = f.text_hash "
                "WHERE f.workspace = %s AND f.ref = %s AND f.path = %s",
                (workspace, ref, path),
            ).fetchone(),
        )
        return None if row is None else str(row[0])

    def ref_counts(self, workspace: str) -> dict[str, int]:
        rows = self._read(
            f"counting the chunks of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT ref, count(*) FROM docs_chunks WHERE workspace = %s GROUP BY ref",
                (workspace,),
            ).fetchall(),
        )
        return {str(ref): int(n) for ref, n in sorted(rows)}

    def workspaces(self) -> list[str]:
        rows = self._read(
            "listing workspaces",
            lambda conn: conn.execute(
                "SELECT DISTINCT workspace FROM docs_chunks "
                "UNION SELECT workspace FROM docs_current"
            ).fetchall(),
        )
        # Sorted here, by code point: the database's collation may order differently.
        return sorted(str(w) for (w,) in rows)

    def embeddings_for(self, content_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        wanted = list(dict.fromkeys(content_hashes))
        if model_id != self.model_id or not self.dim or not wanted:
            return {}
        rows = self._read(
            "looking up stored embeddings",
            lambda conn: conn.execute(
                "SELECT content_hash, embedding FROM docs_vectors "
                "WHERE content_hash = ANY(%s::text[])",
                (wanted,),
            ).fetchall(),
        )
        return {str(h): _as_array(v) for h, v in rows}

    def title_embeddings_for(self, title_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        wanted = list(dict.fromkeys(title_hashes))
        if model_id != self.model_id or not self.dim or not wanted:
            return {}
        rows = self._read(
            "looking up stored title embeddings",
            lambda conn: conn.execute(
                "SELECT DISTINCT ON (title_hash) title_hash, title_embedding FROM docs_ref_files "
                "WHERE title_hash = ANY(%s::text[]) AND title_embedding IS NOT NULL",
                (wanted,),
            ).fetchall(),
        )
        return {str(h): blob_vector(bytes(v)) for h, v in rows}

    def file_titles(self, workspace: str, ref: str, paths: Collection[str]) -> dict[str, Vector]:
        wanted = sorted(set(paths))
        if not wanted or not self.dim:
            return {}
        rows = self._read(
            f"reading the file titles of ref {ref!r} of workspace {workspace!r}",
            lambda conn: conn.execute(
                "SELECT path, title_embedding FROM docs_ref_files WHERE workspace = %s "
                "AND ref = %s AND path = ANY(%s::text[]) AND title_embedding IS NOT NULL",
                (workspace, ref, wanted),
            ).fetchall(),
        )
        return {str(path): blob_vector(bytes(v)) for path, v in rows}

    def search(
        self,
        workspace: str,
        ref: str,
        vector: Vector,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]:
        """An exact search of a small ref, or of one too small a share of the table; else a
        walk of the distinct vectors' HNSW index with a list sized to its share, answered
        exactly over the ref (or the subset) when the walk comes back short: a search of the
        union of one ref (postgres_many.search_refs)."""
        query = query_vector(vector, location=self.location, model_id=self.model_id, dim=self.dim)
        if k < 1 or (paths is not None and not paths):
            return []
        scope: list[RefScope] = [(workspace, ref, paths)]
        hits = self._read(
            f"searching ref {ref!r} of workspace {workspace!r} by vector",
            lambda conn: postgres_many.search_refs(conn, scope, query, k, self.ef_search),
        )
        return [dataclasses.replace(h, workspace="") for h in hits]

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
        return self._read(
            f"searching ref {ref!r} of workspace {workspace!r} by text",
            lambda conn: postgres_text.search_text(conn, workspace, ref, query, k, paths),
        )

    def currents(self, workspaces: Collection[str]) -> dict[str, str]:
        if not workspaces:
            return {}
        return self._read(
            "reading the current refs", lambda conn: postgres_many.currents(conn, workspaces)
        )

    def indexed_refs(self, refs: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        if not refs:
            return set()
        return self._read("looking up refs", lambda conn: postgres_many.indexed_refs(conn, refs))

    def search_refs(self, scopes: Sequence[RefScope], vector: Vector, k: int) -> list[StoredHit]:
        query = query_vector(vector, location=self.location, model_id=self.model_id, dim=self.dim)
        kept = searched_scopes(scopes)
        if k < 1 or not kept:
            return []
        return self._read(
            f"searching {len(kept)} refs by vector",
            lambda conn: postgres_many.search_refs(conn, kept, query, k, self.ef_search),
        )

    def search_text_refs(self, scopes: Sequence[RefScope], query: str, k: int) -> list[StoredHit]:
        kept = searched_scopes(scopes)
        if k < 1 or not kept:
            return []
        return self._read(
            f"searching {len(kept)} refs by text",
            lambda conn: postgres_text.search_text_refs(conn, kept, query, k),
        )

    def file_titles_refs(
        self, files: Collection[tuple[str, str, str]]
    ) -> dict[tuple[str, str], Vector]:
        if not files or not self.dim:
            return {}
        return self._read(
            "reading file titles", lambda conn: postgres_many.file_titles_refs(conn, files)
        )

    def files_refs(
        self, refs: Collection[tuple[str, str]], prefix: str = ""
    ) -> dict[tuple[str, str], list[StoredFile]]:
        if not refs:
            return {}
        return self._read(
            "listing the files of many refs",
            lambda conn: postgres_many.files_refs(conn, refs, prefix),
        )


# The refs of a workspace that a prune deletes: all but the kept and the pinned ones.
_GONE = (
    "workspace = %(workspace)s AND ref <> ALL(%(keep)s::text[]) AND ref NOT IN "
    "(SELECT ref FROM docs_pins WHERE workspace = %(workspace)s AND expires_at > now())"
)


# The vectors a ref's rows bring that the store does not hold yet, one per content hash (a
# concurrent writer of another workspace may add the same: one row stays).
_ADD_VECTORS_SQL = (
    "INSERT INTO docs_vectors (content_hash, embedding) "
    "SELECT DISTINCT ON (content_hash) content_hash, embedding FROM docs_chunks AS c "
    "WHERE workspace = %s AND ref = %s AND embedding IS NOT NULL AND NOT EXISTS "
    "(SELECT 1 FROM docs_vectors AS v WHERE v.content_hash = c.content_hash) "
    "ORDER BY content_hash ON CONFLICT (content_hash) DO NOTHING"
)


def _add_vectors(cur: psycopg.Cursor[TupleRow], workspace: str, ref: str) -> None:
    """Add the vectors of the ref's rows to docs_vectors; call inside a replace, holding
    TEXTS_LOCK_KEY shared, so that no prune deletes one of them meanwhile. Its statistics are
    made again when it grew by a tenth, so that the planner walks its HNSW index from the first
    search of a new store."""
    cur.execute(_ADD_VECTORS_SQL, (workspace, ref))
    analyze_if_grown(cur, "docs_vectors", cur.rowcount)


def _write_files(
    cur: psycopg.Cursor[TupleRow],
    workspace: str,
    ref: str,
    batch: list[FileRow],
    titles: list[bytes | None],
) -> None:
    """Write one batch of a ref's files, and the texts of theirs that are not stored yet; call
    inside a replace, holding TEXTS_LOCK_KEY shared, so that no stored text goes meanwhile."""
    texts = {f.text_hash: f.text for f in batch}
    cur.execute(
        "SELECT text_hash FROM docs_file_texts WHERE text_hash = ANY(%s::text[])", (list(texts),)
    )
    for (stored,) in cur.fetchall():
        texts.pop(stored, None)
    if texts:
        # Another workspace's writer may store the same text meanwhile: one row stays.
        cur.execute(
            "INSERT INTO docs_file_texts (text_hash, text) "
            "SELECT * FROM unnest(%s::text[], %s::text[]) ON CONFLICT (text_hash) DO NOTHING",
            (list(texts), list(texts.values())),
        )
    cur.execute(
        "INSERT INTO docs_ref_files (workspace, ref, path, text_hash, lines, size, title_hash, "
        "title_embedding) SELECT %s::text, %s::text, * FROM unnest(%s::text[], %s::text[], "
        "%s::int4[], %s::int8[], %s::text[], %s::bytea[])",
        (
            workspace,
            ref,
            [f.path for f in batch],
            [f.text_hash for f in batch],
            [f.lines for f in batch],
            [len(f.text.encode()) for f in batch],
            [f.title_hash for f in batch],
            titles,
        ),
    )


def _try_lock_until(conn: Connection, workspace: str, deadline: float) -> bool:
    """Try the workspace's indexing lock until `deadline`; whether it was taken."""

    def try_once() -> bool:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, %s))",
            (workspace, INDEXING_LOCK_SEED),
        ).fetchone()
        # The lock belongs to the session: no transaction stays open while it is held.
        conn.commit()
        return bool(_first(row))

    return poll_until(try_once, deadline)


def _unlock(conn: Connection, workspace: str) -> bool:
    """Release the workspace's indexing lock; False when the session may still hold it."""
    try:
        conn.execute(
            "SELECT pg_advisory_unlock(hashtextextended(%s, %s))",
            (workspace, INDEXING_LOCK_SEED),
        )
        conn.commit()
    except psycopg.Error:
        # A broken connection: its session, and the lock with it, is gone or must be ended.
        return False
    return True


def _as_array(value: PgVector) -> Vector:
    return value.to_numpy().astype(np.float32)


def _first(row: TupleRow | None) -> Any:
    assert row is not None  # an aggregate or EXISTS always returns one row
    return row[0]
