"""The shared store: PostgreSQL with pgvector, for a team or a server that outlives one machine.

- Vectors: an HNSW index with cosine distance. pgvector 0.6 filters the index's candidates after
  the walk, so a ref that holds few of the table's rows can come back short; such a search is
  then answered exactly over that ref alone (see `search`).
- Full text: a generated tsvector (english configuration, heading weighted above content) with a
  GIN index; a query matches chunks with any of its words, ranked by ts_rank.
- The schema is versioned SQL under migrations/postgresql/, each file applied in its own
  transaction under an advisory lock, so processes opening a new database at once do not race.
- The model is recorded in docs_meta and the width is the typmod of docs_chunks.embedding; both
  are read on every open, never taken from configuration.
- A ref is replaced in one transaction (DELETE, then COPY); writers of one ref take turns under
  an advisory lock, so a ref never holds the rows of two writes.
- Pins are rows whose lease ends at the server's now() plus the lease, so clients with skewed
  clocks agree. add_pin and prune take turns under a transaction-level advisory lock of the
  workspace's pins, so a prune never misses a pin added before it began.
- The indexing lock of a workspace is a session-level advisory lock, held by a pooled connection
  for the whole run: when that session ends, however it ends, the server drops the lock.
- Every statement is parameterised. The one value formatted into SQL is the width, an int
  validated here, in the DDL of a migration.
- Connections come from a pool that checks each one before lending it, so searches go on after
  PostgreSQL restarts; each connection has pgvector's types and hnsw.ef_search set once.
- While the server is down, a call fails within about POOL_PROBE_SECONDS with "unavailable",
  not after the pool's whole timeout; once a direct connection succeeds again, the pool (which
  backs off between reconnection attempts, for minutes after a long outage) is replaced by a
  fresh one, so the first call after the server is back is served.
- Every psycopg error becomes a StoreError naming the operation and the server (never its
  password) and saying what to check.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import numpy as np
import psycopg
from pgvector import Vector as PgVector
from pgvector.psycopg import register_vector
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from docshelf.config import DEFAULT_EF_SEARCH, POSTGRES_POOL_MAX, POSTGRES_POOL_MIN
from docshelf.errors import ConfigError, StoreError
from docshelf.rows import ChunkRow, StoredHit, Vector, check_unit, unit_query
from docshelf.stores.migrations import migrations
from docshelf.stores.pins import (
    LOCK_POLL_SECONDS,
    check_lease,
    check_timeout,
    lock_busy,
    new_pin_id,
)

Connection = psycopg.Connection[TupleRow]

# Seconds to wait for a connection: a reachable server answers in milliseconds; a host that drops
# packets would otherwise hold `docshelf` for the operating system's TCP timeout of minutes.
CONNECT_TIMEOUT_SECONDS = 10

# Seconds a search waits for a free pooled connection (or for the pool to reconnect after a
# restart of the server) before it fails with a message, rather than hanging a client.
POOL_TIMEOUT_SECONDS = 15.0

# Seconds a call waits for a pooled connection before it checks, with a connection of its own,
# whether the server is there at all: a pool lends a connection in milliseconds when the server
# is up, so a longer wait means it is busy (the wait goes on) or the server is gone (the call
# fails at once, rather than after POOL_TIMEOUT_SECONDS).
POOL_PROBE_SECONDS = 1.0

# Shown in pg_stat_activity, so an administrator can tell docshelf's sessions apart.
APPLICATION_NAME = "docshelf"

# pgvector's HNSW index takes vectors of at most 2000 dimensions.
MAX_HNSW_DIM = 2000

# The range pgvector accepts for hnsw.ef_search.
EF_SEARCH_RANGE = (1, 1000)

# Key of the advisory lock held while migrating: "docshelf" in ASCII, so it will not clash with
# another application's advisory locks in the same database.
MIGRATION_LOCK_KEY = 0x646F637368656C66

# Seeds of the per-workspace advisory locks, whose keys are hashtextextended(workspace, seed):
# one 64-bit key, where the write lock of a (workspace, ref) takes two 32-bit keys, and PostgreSQL
# keeps the two kinds apart; the seeds ("pins", "index" in ASCII) keep these two apart.
PINS_LOCK_SEED = 0x70696E73
INDEXING_LOCK_SEED = 0x696E646578

PINS_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))"

# The part of a full-text query that is searched: a question is a few hundred characters; a
# pasted document must not become an OR of thousands of words, each ranked over the ref.
MAX_QUERY_CHARS = 10_000

MIGRATIONS = "postgresql"
WIDTH_PLACEHOLDER = "{{dim}}"

# The HNSW search. Written exactly as pgvector needs it to use the index (ORDER BY the distance
# operator, LIMIT): any other sort key, such as a tie-break, makes the planner sort the whole ref
# instead, so ties are broken in Python after the query.
SEARCH_SQL = (
    "SELECT path, chunk, heading, content, start_line, end_line, "
    "1 - (embedding <=> %(vector)s) AS score "
    "FROM docs_chunks WHERE workspace = %(workspace)s AND ref = %(ref)s "
    "ORDER BY embedding <=> %(vector)s LIMIT %(k)s"
)

# The exact search over one ref, through the (workspace, ref) index: the index cannot serve an
# ORDER BY on the score, so every row of the ref is compared with the query.
EXACT_SEARCH_SQL = (
    "SELECT path, chunk, heading, content, start_line, end_line, "
    "1 - (embedding <=> %(vector)s) AS score "
    "FROM docs_chunks WHERE workspace = %(workspace)s AND ref = %(ref)s "
    'ORDER BY score DESC, path COLLATE "C", chunk LIMIT %(k)s'
)

# How many rows the ref holds, counting no further than k.
COUNT_UP_TO_K_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM docs_chunks "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s LIMIT %(k)s) AS held"
)

# Punctuation becomes spaces first, as the words of a path do in the stored vector (0003_fts_path:
# PostgreSQL's parser would read "Using_Tags.md" as one file token). plainto_tsquery normalises
# the words (stems them, drops stop words, ignores operators) and joins them with &; its text
# form, with & turned into |, is cast straight back to a tsquery. The cast does not normalise
# again: to_tsquery would stem the stems ('databas' of "databases" would become 'databa' and match
# nothing).
TEXT_SEARCH_SQL = (
    "SELECT path, chunk, heading, content, start_line, end_line, ts_rank(tsv, query) AS score "
    "FROM docs_chunks, "
    "(SELECT replace(plainto_tsquery('english', "
    "regexp_replace(%(query)s, '[^[:alnum:]]+', ' ', 'g'))::text, ' & ', ' | ')::tsquery"
    " AS query) AS q "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s AND tsv @@ query "
    'ORDER BY score DESC, path COLLATE "C", chunk LIMIT %(k)s'
)

COPY_SQL = (
    "COPY docs_chunks (workspace, ref, path, chunk, heading, content, start_line, end_line, "
    "content_hash, embedding) FROM STDIN WITH (FORMAT BINARY)"
)
COPY_TYPES = ["text", "text", "text", "int4", "text", "text", "int4", "int4", "text", "vector"]

_MIGRATIONS_TABLE_SQL = (
    "CREATE TABLE IF NOT EXISTS docs_schema_migrations ("
    "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz DEFAULT now())"
)

_MODEL_AND_WIDTH_SQL = (
    "SELECT (SELECT value FROM docs_meta WHERE key = 'model_id'), "
    "(SELECT atttypmod FROM pg_attribute WHERE attrelid = 'docs_chunks'::regclass "
    "AND attname = 'embedding' AND NOT attisdropped)"
)


class PostgresStore:
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
        self._url = url
        self.location = location
        self.model_id = model_id
        self.dim = dim
        self.ef_search = ef_search
        self._secrets = secrets
        self._pool = self._new_pool()
        # Guards the pool's replacement and the state of the server as last seen.
        self._health = threading.Lock()
        # Set when a connection broke: the next call checks the server before using the pool.
        self._suspect = False
        # When the server was last found unreachable, and the error that said so.
        self._down: tuple[float, StoreError] | None = None
        self._closed = False

    @classmethod
    def open(
        cls,
        url: str,
        *,
        model_id: str | None,
        dim: int | None,
        ef_search: int | None = None,
    ) -> PostgresStore:
        """Open the store in the database at `url`, creating it for `model_id`/`dim` if needed.

        Raises:
            StoreError: the server cannot be reached, the database holds no store and no model
                is given, or it holds one made for another model or width.
            ConfigError: `dim` or `ef_search` is outside what pgvector supports.
        """
        if (model_id is None) != (dim is None):
            raise ValueError("give both model_id and dim, or neither")
        if dim is not None:
            _check_width(dim)
        ef = DEFAULT_EF_SEARCH if ef_search is None else _check_ef_search(ef_search)
        try:
            location = without_password(url)
            secrets = _passwords(url)
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
                f"cannot connect to PostgreSQL at {location}: {_message(e, secrets)} Check "
                "that the server is running and that the URL's host, port, database, user and "
                "password are right"
            ) from e
        try:
            with conn:
                stored_model, stored_dim = _prepare(conn, location, model_id, dim)
        except psycopg.Error as e:
            raise _store_error("preparing the store", location, e, secrets) from e
        if model_id is not None and (stored_model, stored_dim) != (model_id, dim):
            raise StoreError(
                f"the store at {location} holds embeddings of {stored_model} ({stored_dim} "
                f"dimensions), but the configured embedder is {model_id} ({dim} dimensions). "
                "Use a new store (--store with the URL of another database) for the new model, "
                "or drop the tables docs_chunks, docs_current, docs_meta, docs_pins and "
                "docs_schema_migrations and index again with it; or configure "
                f"{stored_model} again"
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
            raise _store_error("opening connections", location, e, secrets) from e
        return store

    def _new_pool(self) -> ConnectionPool[Connection]:
        return ConnectionPool(
            self._url,
            min_size=POSTGRES_POOL_MIN,
            max_size=POSTGRES_POOL_MAX,
            kwargs={
                "connect_timeout": CONNECT_TIMEOUT_SECONDS,
                "application_name": APPLICATION_NAME,
                # No server-side prepared statements: a generic plan, made without the LIMIT's
                # and the vector's values, could stop using the HNSW index; each query is planned
                # with its values, as EXPLAIN shows it.
                "prepare_threshold": None,
            },
            configure=functools.partial(_configure, ef_search=self.ef_search),
            check=self._check_connection,
            timeout=POOL_TIMEOUT_SECONDS,
            name=f"docshelf {self.location}",
            open=False,
        )

    def close(self) -> None:
        with self._health:
            self._closed = True
            pool = self._pool
        pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        # psycopg encodes str itself: an unpaired surrogate fails before the server sees it.
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise _store_error(action, self.location, e, self._secrets) from e

    # -- connections -----------------------------------------------------------------------

    def _check_connection(self, conn: Connection) -> None:
        """The pool's check before it lends a connection; a broken one makes the store suspect
        that the server went away."""
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            self._suspect = True
            raise

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        """A pooled connection for one block, committed at its end (rolled back on an error),
        as the pool's own `connection()`, but failing fast with "unavailable" while the server
        is down and recovering at once when it is back.

        Raises:
            StoreError: the server cannot be reached.
            psycopg.Error: what the block or the pool raised.
        """
        pool, conn = self._lend()
        try:
            with conn:
                yield conn
        except psycopg.OperationalError:
            self._suspect = True
            raise
        finally:
            pool.putconn(conn)

    def _lend(self) -> tuple[ConnectionPool[Connection], Connection]:
        """A connection of the current pool, and that pool (the one to give it back to)."""
        deadline = time.monotonic() + POOL_TIMEOUT_SECONDS
        while True:
            pool = self._usable_pool()
            left = deadline - time.monotonic()
            try:
                return pool, pool.getconn(timeout=max(min(POOL_PROBE_SECONDS, left), 0.001))
            except PoolClosed:
                if self._closed:
                    raise
                continue  # replaced by another thread: ask the new pool
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
                # Busy, or the server is gone: the next _usable_pool checks, fails fast if it
                # is gone, and replaces a pool stuck backing off if it is back.
                self._suspect = True

    def _usable_pool(self) -> ConnectionPool[Connection]:
        """The pool, after checking the server with a direct connection when a connection
        broke: a server that cannot be reached is reported at once; one that is back gets a
        fresh pool, whose first connection is made now rather than after the old pool's
        backoff.

        Raises:
            StoreError: the server cannot be reached.
        """
        if not self._suspect:
            return self._pool
        asked = time.monotonic()
        with self._health:
            if not self._suspect or self._closed:
                return self._pool
            # A check that ended while this call waited for the lock answers it too: a host that
            # drops packets would otherwise hold each waiting call for a connection timeout.
            if self._down is not None and self._down[0] >= asked:
                raise self._down[1]
            try:
                psycopg.connect(
                    self._url,
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    application_name=APPLICATION_NAME,
                ).close()
            except psycopg.Error as e:
                error = _unavailable(self.location, e, self._secrets)
                self._down = (time.monotonic(), error)
                raise error from e
            old = self._pool
            if self._down is not None or _failed_to_connect(old):
                self._pool = self._new_pool()
                self._pool.open(wait=False)
                # Not waited for: its workers may be inside a connection attempt.
                threading.Thread(target=old.close, name="docshelf-pool-close", daemon=True).start()
            self._down = None
            self._suspect = False
            return self._pool

    # -- writes ----------------------------------------------------------------------------

    def replace_doc_chunks(self, workspace: str, ref: str, rows: Iterable[ChunkRow]) -> None:
        """Make `rows` the whole of `ref`, in one transaction.

        Raises:
            StoreError: the write failed or a row's embedding does not fit the store; the ref's
                previous rows are untouched.
        """
        with (
            self._errors(f"writing ref {ref!r} of workspace {workspace!r}"),
            self._connection() as conn,
            conn.transaction(),
            conn.cursor() as cur,
        ):
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
            with cur.copy(COPY_SQL) as copy:
                copy.set_types(COPY_TYPES)
                for row in rows:
                    copy.write_row((workspace, ref, *row.columns(), self._checked_embedding(row)))
            # Fresh statistics, so the planner walks the HNSW index at once: a table it has never
            # analysed looks empty, and it would sort the whole ref instead (hundreds of ms at
            # 100k chunks) until autovacuum gets round to it.
            cur.execute("ANALYZE docs_chunks")

    def _checked_embedding(self, row: ChunkRow) -> Vector | None:
        vector = row.embedding
        if vector is None:
            if self.dim:
                raise StoreError(
                    f"chunk {row.chunk} of {row.path} has no embedding, but the store at "
                    f"{self.location} holds {self.model_id} vectors; embed it first"
                )
            return None
        if not self.dim:
            raise StoreError(
                f"chunk {row.chunk} of {row.path} has an embedding, but the store at "
                f"{self.location} was made with the none embedder and holds none; index with "
                "the none embedder, or use a new store for this model"
            )
        if vector.dtype != np.float32 or vector.shape != (self.dim,):
            raise StoreError(
                f"chunk {row.chunk} of {row.path} has an embedding of {vector.dtype} and shape "
                f"{vector.shape}, but the store at {self.location} holds {self.dim}-dimensional "
                f"float32 {self.model_id} vectors; embed it with {self.model_id}"
            )
        check_unit(vector, row)
        return vector

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int:
        """Delete every ref of `workspace` but `keep_refs` and the pinned refs, and the
        workspace's expired pins; returns how many refs went.

        The workspace's current ref is left as it is, even when its chunks go. The pins are read
        in the same transaction as the delete, after add_pin's turn: a pin added before the
        prune began is never missed.
        """
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
            row = conn.execute(
                "WITH gone AS (DELETE FROM docs_chunks "
                "WHERE workspace = %(workspace)s AND ref <> ALL(%(keep)s::text[]) "
                "AND ref NOT IN (SELECT ref FROM docs_pins "
                "WHERE workspace = %(workspace)s AND expires_at > now()) RETURNING ref) "
                "SELECT count(DISTINCT ref) FROM gone",
                {"workspace": workspace, "keep": keep},
            ).fetchone()
        return int(_first(row))

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

    # -- pins and the indexing lock --------------------------------------------------------

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str:
        """Keep `ref` out of every prune for `lease_seconds`; returns the pin's id.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """
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
        """Make the given pins expire `lease_seconds` from now; returns the ids still live.

        A pin that expired or was removed is not revived: a prune may have deleted its ref.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """
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
        """Release a pin; removing one that is gone already does nothing."""
        with self._errors("removing a pin"), self._connection() as conn:
            conn.execute("DELETE FROM docs_pins WHERE id = %s", (pin_id,))

    def pinned_refs(self, workspace: str) -> set[str]:
        """The refs of `workspace` with at least one unexpired pin."""
        with (
            self._errors(f"reading the pins of workspace {workspace!r}"),
            self._connection() as conn,
        ):
            rows = conn.execute(
                "SELECT DISTINCT ref FROM docs_pins WHERE workspace = %s AND expires_at > now()",
                (workspace,),
            ).fetchall()
        return {str(ref) for (ref,) in rows}

    @contextmanager
    def workspace_lock(self, workspace: str, timeout_seconds: float) -> Iterator[None]:
        """Hold the indexing lock of `workspace` for the block, waiting up to `timeout_seconds`.

        One holder at a time, among all the processes and threads using this database. The lock
        is held by one pooled connection, lent for the whole block; if that session ends, the
        server drops the lock.

        Raises:
            ConfigError: the timeout is negative or not a number.
            StoreError: another holder kept the lock for the whole wait, or the server failed.
        """
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
        with (
            self._errors(f"reading the current ref of workspace {workspace!r}"),
            self._connection() as conn,
        ):
            row = conn.execute(
                "SELECT ref FROM docs_current WHERE workspace = %s", (workspace,)
            ).fetchone()
        return None if row is None else str(row[0])

    def has_chunks(self, workspace: str, ref: str) -> bool:
        with (
            self._errors(f"looking up ref {ref!r} of workspace {workspace!r}"),
            self._connection() as conn,
        ):
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM docs_chunks WHERE workspace = %s AND ref = %s)",
                (workspace, ref),
            ).fetchone()
        return bool(_first(row))

    def ref_counts(self, workspace: str) -> dict[str, int]:
        with (
            self._errors(f"counting the chunks of workspace {workspace!r}"),
            self._connection() as conn,
        ):
            rows = conn.execute(
                "SELECT ref, count(*) FROM docs_chunks WHERE workspace = %s GROUP BY ref",
                (workspace,),
            ).fetchall()
        return {str(ref): int(n) for ref, n in sorted(rows)}

    def workspaces(self) -> list[str]:
        with self._errors("listing workspaces"), self._connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT workspace FROM docs_chunks "
                "UNION SELECT workspace FROM docs_current"
            ).fetchall()
        # Sorted here, by code point: the database's collation may order differently.
        return sorted(str(w) for (w,) in rows)

    def embeddings_for(
        self, workspace: str, content_hashes: Sequence[str], model_id: str
    ) -> dict[str, Vector]:
        """Stored vectors of chunks with these content hashes, made by `model_id`."""
        wanted = list(dict.fromkeys(content_hashes))
        if model_id != self.model_id or not self.dim or not wanted:
            return {}
        with (
            self._errors(f"looking up stored embeddings of workspace {workspace!r}"),
            self._connection() as conn,
        ):
            # The same chunk is usually stored under several refs; one copy of each is enough.
            rows = conn.execute(
                "SELECT DISTINCT ON (content_hash) content_hash, embedding FROM docs_chunks "
                "WHERE workspace = %s AND content_hash = ANY(%s::text[]) "
                "AND embedding IS NOT NULL",
                (workspace, wanted),
            ).fetchall()
        return {str(h): _as_array(v) for h, v in rows}

    def search(self, workspace: str, ref: str, vector: Vector, k: int) -> list[StoredHit]:
        """The k chunks of `ref` nearest to `vector` by cosine similarity, nearest first.

        Raises:
            StoreError: the store cannot be read, holds no vectors, or `vector` has another width.
        """
        if not self.dim:
            raise StoreError(
                f"the store at {self.location} holds no embeddings (it was made with the none "
                "embedder); search it by text"
            )
        query = unit_query(vector, self.dim, self.model_id)
        if k < 1:
            return []
        params = {"workspace": workspace, "ref": ref, "vector": query, "k": k}
        with (
            self._errors(f"searching ref {ref!r} of workspace {workspace!r} by vector"),
            self._connection() as conn,
        ):
            rows = conn.execute(SEARCH_SQL, params).fetchall()
            # pgvector 0.6 has no iterative index scans: the HNSW walk yields at most
            # hnsw.ef_search candidates from the whole table, and only then are other refs'
            # rows filtered out. When other refs crowd the candidates (or k > ef_search), fewer
            # than k rows come back although the ref holds more; then search the ref exactly.
            if len(rows) < k:
                held = int(_first(conn.execute(COUNT_UP_TO_K_SQL, params).fetchone()))
                if held > len(rows):
                    rows = conn.execute(EXACT_SEARCH_SQL, params).fetchall()
        hits = [StoredHit.from_columns(row[:6], row[6]) for row in rows]
        hits.sort(key=lambda h: (-h.score, h.path, h.chunk))
        return hits

    def search_text(self, workspace: str, ref: str, query: str, k: int) -> list[StoredHit]:
        """The k chunks of `ref` that best match any word of `query` (ts_rank), best first.

        Raises:
            StoreError: the store cannot be read.
        """
        # PostgreSQL text cannot hold NUL; in a query it separates words like any space.
        text = query[:MAX_QUERY_CHARS].replace("\x00", " ")
        if not text.strip() or k < 1:
            return []
        with (
            self._errors(f"searching ref {ref!r} of workspace {workspace!r} by text"),
            self._connection() as conn,
        ):
            rows = conn.execute(
                TEXT_SEARCH_SQL, {"workspace": workspace, "ref": ref, "query": text, "k": k}
            ).fetchall()
        return [StoredHit.from_columns(row[:6], row[6]) for row in rows]


def _try_lock_until(conn: Connection, workspace: str, deadline: float) -> bool:
    """Try the workspace's indexing lock until `deadline`; whether it was taken."""
    while True:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, %s))",
            (workspace, INDEXING_LOCK_SEED),
        ).fetchone()
        # The lock belongs to the session: no transaction stays open while it is held.
        conn.commit()
        if _first(row):
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(LOCK_POLL_SECONDS, left))


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


def without_password(url: str) -> str:
    """`url` with any password taken out, to be shown in messages and in `docshelf status`."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = f"{userinfo.partition(':')[0]}@{hosts}" if at else hosts
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/:")))


def _passwords(url: str) -> list[str]:
    """Every spelling of the password in `url`, to be scrubbed from server messages."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    found = [userinfo.partition(":")[2]] if at else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "password"]
    spellings = {s for p in found for s in (p, unquote(p))}
    return sorted((s for s in spellings if s), key=len, reverse=True)


def _message(error: BaseException, secrets: Sequence[str]) -> str:
    """The error's text as sentences on one line, without the password."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = " ".join(line if line.endswith((".", "?", "!", ":")) else f"{line}." for line in lines)
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _store_error(
    action: str, location: str, error: psycopg.Error | UnicodeEncodeError, secrets: Sequence[str]
) -> StoreError:
    detail = _message(error, secrets)
    if isinstance(error, psycopg.errors.DiskFull):
        advice = (
            "The server's disk is full: free space there, then try again; what was stored "
            "before is unchanged"
        )
    elif isinstance(error, psycopg.OperationalError):  # also the pool's timeouts
        advice = (
            "The store is unavailable: is PostgreSQL running there and accepting connections? "
            "Check it and the URL, then try again; docshelf reconnects by itself once the "
            "server is back"
        )
    elif isinstance(error, psycopg.errors.UndefinedFile):
        advice = (
            "The pgvector extension is not installed on that server: install pgvector "
            "(0.6 or later) there, then try again"
        )
    elif isinstance(error, psycopg.errors.InsufficientPrivilege):
        advice = (
            "The user lacks a privilege: have an administrator run CREATE EXTENSION vector in "
            "that database and grant the user CREATE on its schema, then try again"
        )
    elif isinstance(error, psycopg.DataError | UnicodeEncodeError):
        advice = (
            "PostgreSQL text holds neither NUL characters nor unpaired surrogates (left by file "
            "names that are not UTF-8): remove them from the names or documents, then try again"
        )
    else:
        advice = (
            "Check the server's log; if the store is damaged, point --store at a new database "
            "and index again"
        )
    return StoreError(f"{action} at {location} failed: {detail} {advice}")


def _unavailable(location: str, error: psycopg.Error, secrets: Sequence[str]) -> StoreError:
    return StoreError(
        f"the store at {location} is unavailable: PostgreSQL cannot be reached "
        f"({_message(error, secrets)}) Check that the server is running and reachable, then "
        "try again; docshelf reconnects by itself once it is back"
    )


def _failed_to_connect(pool: ConnectionPool[Connection]) -> bool:
    """Whether the pool ever failed to make a connection: it may be backing off now."""
    return bool(pool.get_stats().get("connections_errors", 0))


def _check_width(dim: int) -> None:
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim <= MAX_HNSW_DIM:
        raise ConfigError(
            f"an embedding width of {dim!r} cannot be stored in PostgreSQL: pgvector's HNSW "
            f"index takes 1 to {MAX_HNSW_DIM} dimensions (0 for the none embedder). Choose a "
            "model of at most that width, or a SQLite store"
        )


def _check_ef_search(ef_search: int) -> int:
    low, high = EF_SEARCH_RANGE
    if isinstance(ef_search, bool) or not isinstance(ef_search, int):
        raise ConfigError(f"ef_search must be a whole number from {low} to {high}: {ef_search!r}")
    if not low <= ef_search <= high:
        raise ConfigError(
            f"ef_search {ef_search} is outside pgvector's range: set it from {low} to {high}"
        )
    return ef_search


def _prepare(
    conn: Connection, location: str, model_id: str | None, dim: int | None
) -> tuple[str, int]:
    """Apply the pending migrations; returns the stored model and width.

    `conn` is in autocommit mode, so that each migration is a transaction of its own.
    """
    known = migrations(MIGRATIONS)
    applied = _applied(conn)
    if not applied and model_id is None:
        raise StoreError(
            f"no docshelf store in the database at {location}: nothing is indexed there yet. "
            "Check --store and DOCSHELF_STORE, or index into this database first"
        )
    newest = known[-1][0]
    if max(applied, default=0) > newest:
        raise StoreError(
            f"the store at {location} has schema version {max(applied)}, newer than this "
            f"docshelf knows ({newest}). Upgrade docshelf"
        )
    if not applied.issuperset(v for v, _, _ in known):
        width = _column_width(conn)
        if width is None:
            if dim is None:
                raise StoreError(
                    f"the store at {location} is damaged: its migrations are recorded but its "
                    "table is missing. Point --store at a new database, or drop docshelf's "
                    "tables, and index again"
                )
            width = dim
        for version, name, sql in known:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
                conn.execute(_MIGRATIONS_TABLE_SQL)
                # Another process may have applied it while this one waited for the lock.
                done = conn.execute(
                    "SELECT 1 FROM docs_schema_migrations WHERE version = %s", (version,)
                ).fetchone()
                if done:
                    continue
                conn.execute(_render(sql, width))
                conn.execute(
                    "INSERT INTO docs_schema_migrations (version, name) VALUES (%s, %s)",
                    (version, name),
                )
                if version == 1:
                    # In the transaction that creates the store: it never exists without a model.
                    assert model_id is not None
                    conn.execute(
                        "INSERT INTO docs_meta (key, value) VALUES ('model_id', %s)", (model_id,)
                    )
    stored_model, typmod = _first_two(conn.execute(_MODEL_AND_WIDTH_SQL).fetchone())
    if stored_model is None or typmod is None:
        raise StoreError(
            f"the store at {location} is damaged: it has no recorded model or no embedding "
            "column. Point --store at a new database, or drop docshelf's tables, and index again"
        )
    # An untyped vector column (the none embedder) has typmod -1.
    return str(stored_model), max(int(typmod), 0)


def _applied(conn: Connection) -> set[int]:
    exists = _first(
        conn.execute("SELECT to_regclass('docs_schema_migrations') IS NOT NULL").fetchone()
    )
    if not exists:
        return set()
    return {int(v) for (v,) in conn.execute("SELECT version FROM docs_schema_migrations")}


def _column_width(conn: Connection) -> int | None:
    """The width of an existing store's embedding column, None when there is none yet."""
    row = conn.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('docs_chunks') "
        "AND attname = 'embedding' AND NOT attisdropped"
    ).fetchone()
    return None if row is None else max(int(row[0]), 0)


def _render(sql: str, width: int) -> str:
    _check_width(width)
    rendered = sql.replace(WIDTH_PLACEHOLDER, str(width))
    if re.search(r"\{\{\w*\}\}", rendered):
        raise RuntimeError(f"a PostgreSQL migration has an unknown placeholder: {rendered[:80]!r}")
    return rendered


def _configure(conn: Connection, *, ef_search: int) -> None:
    """Prepare a new pooled connection: pgvector's types, and the HNSW candidate list."""
    register_vector(conn)
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef_search),))
    # The pool takes back only idle connections; the setting outlives this transaction.
    conn.commit()


def _as_array(value: PgVector) -> Vector:
    return value.to_numpy().astype(np.float32)


def _first(row: TupleRow | None) -> Any:
    assert row is not None  # an aggregate or EXISTS always returns one row
    return row[0]


def _first_two(row: TupleRow | None) -> tuple[Any, Any]:
    assert row is not None
    return row[0], row[1]
