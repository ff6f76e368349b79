"""The PostgreSQL store's connections: a pool that checks each one before lending it to a write, so
writes and searches go on after PostgreSQL restarts; each connection has pgvector's types and
hnsw.ef_search set once.

A read (`_read`) skips the check and the transaction: in autocommit mode it costs one round trip a
statement, where a checked transaction costs three more. Under READ COMMITTED each statement saw
its own snapshot anyway, so a read sees what it saw before. When the server has cut the connection
it was lent (a restart), the read is asked once more, on a checked connection.

While the server is down, a call fails within about POOL_PROBE_SECONDS with "unavailable", not
after the pool's whole timeout; once a direct connection succeeds again, the pool (which backs off
between reconnection attempts, for minutes after a long outage) is replaced by a fresh one, so the
first call after the server is back is served.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from docshelf.config import POSTGRES_POOL_MAX, POSTGRES_POOL_MIN
from docshelf.errors import ConfigError, StoreError
from docshelf.stores.postgres_errors import store_error, unavailable

Connection = psycopg.Connection[TupleRow]

T = TypeVar("T")

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

# The range pgvector accepts for hnsw.ef_search.
EF_SEARCH_RANGE = (1, 1000)


class PooledConnections:
    """The pooled connections to one PostgreSQL database, and the state of its server as last
    seen; PostgresStore is one. Thread-safe."""

    def __init__(self, url: str, *, location: str, ef_search: int, secrets: Sequence[str]) -> None:
        """Builds the pool without opening it."""
        self._url = url
        self.location = location
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
            timeout=POOL_TIMEOUT_SECONDS,
            name=f"docshelf {self.location}",
            open=False,
        )

    def close(self) -> None:
        with self._health:
            self._closed = True
            pool = self._pool
        pool.close()

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        # psycopg encodes str itself: an unpaired surrogate fails before the server sees it.
        except (psycopg.Error, UnicodeEncodeError) as e:
            raise store_error(action, self.location, e, self._secrets) from e

    def _check_connection(self, conn: Connection) -> None:
        """The check before a connection is lent to a write; a broken one makes the store
        suspect that the server went away."""
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

    def _read(self, action: str, read: Callable[[Connection], T]) -> T:
        """What `read` returns, run on a pooled connection in autocommit mode, lent unchecked;
        asked once more on a checked connection when the server had cut the first one. `read`
        must only read: it may run twice.

        Raises:
            StoreError: the server cannot be reached, or `read` failed (named by `action`).
        """
        with self._errors(action):
            try:
                return self._read_on(read, checked=False)
            except _CutError:
                return self._read_on(read, checked=True)

    def _read_on(self, read: Callable[[Connection], T], *, checked: bool) -> T:
        pool, conn = self._lend(checked=checked)
        try:
            conn.autocommit = True
            return read(conn)
        except psycopg.OperationalError as e:
            self._suspect = True
            if conn.broken and not checked:
                raise _CutError from e
            raise
        finally:
            # A broken connection refuses the setting; the pool drops it when given it back.
            with suppress(psycopg.Error):
                conn.autocommit = False
            pool.putconn(conn)

    def _lend(self, *, checked: bool = True) -> tuple[ConnectionPool[Connection], Connection]:
        """A connection of the current pool (checked with a round trip unless `checked` is
        False), and that pool (the one to give it back to)."""
        deadline = time.monotonic() + POOL_TIMEOUT_SECONDS
        while True:
            pool = self._usable_pool()
            left = deadline - time.monotonic()
            try:
                conn = pool.getconn(timeout=max(min(POOL_PROBE_SECONDS, left), 0.001))
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
                continue
            if not checked:
                return pool, conn
            try:
                self._check_connection(conn)
            except psycopg.Error:
                # Broken: the pool drops it and makes another; the next _usable_pool checks the
                # server first.
                pool.putconn(conn)
                if time.monotonic() >= deadline:
                    raise
                continue
            return pool, conn

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
                error = unavailable(self.location, e, self._secrets)
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


class _CutError(Exception):
    """The server had cut the connection a read was lent."""


def check_ef_search(ef_search: int) -> int:
    low, high = EF_SEARCH_RANGE
    if isinstance(ef_search, bool) or not isinstance(ef_search, int):
        raise ConfigError(f"ef_search must be a whole number from {low} to {high}: {ef_search!r}")
    if not low <= ef_search <= high:
        raise ConfigError(
            f"ef_search {ef_search} is outside pgvector's range: set it from {low} to {high}"
        )
    return ef_search


def _failed_to_connect(pool: ConnectionPool[Connection]) -> bool:
    """Whether the pool ever failed to make a connection: it may be backing off now."""
    return bool(pool.get_stats().get("connections_errors", 0))


def _configure(conn: Connection, *, ef_search: int) -> None:
    """Prepare a new pooled connection: pgvector's types, and the HNSW candidate list."""
    register_vector(conn)
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef_search),))
    # The pool takes back only idle connections; the setting outlives this transaction.
    conn.commit()
