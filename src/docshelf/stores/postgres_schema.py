"""The PostgreSQL store's schema: versioned SQL under migrations/postgresql/, each file applied in
its own transaction under an advisory lock, so processes opening a new database at once do not
race. The model is recorded in docs_meta and the width is the typmod of docs_chunks.embedding;
both are read on every open, never taken from configuration.

The one value formatted into SQL is the width, an int validated here, in the DDL of a migration.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import psycopg
from psycopg.rows import TupleRow

from docshelf.errors import ConfigError, StoreError
from docshelf.stores.common import check_schema, no_store

Connection = psycopg.Connection[TupleRow]

# pgvector's HNSW index takes vectors of at most 2000 dimensions.
MAX_HNSW_DIM = 2000

# Key of the advisory lock held while migrating: "docshelf" in ASCII, so it will not clash with
# another application's advisory locks in the same database.
MIGRATION_LOCK_KEY = 0x646F637368656C66

WIDTH_PLACEHOLDER = "{{dim}}"

_MIGRATIONS_TABLE_SQL = (
    "CREATE TABLE IF NOT EXISTS docs_schema_migrations ("
    "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz DEFAULT now())"
)

_MODEL_AND_WIDTH_SQL = (
    "SELECT (SELECT value FROM docs_meta WHERE key = 'model_id'), "
    "(SELECT atttypmod FROM pg_attribute WHERE attrelid = 'docs_chunks'::regclass "
    "AND attname = 'embedding' AND NOT attisdropped)"
)


def check_width(dim: int) -> None:
    """Raises ConfigError unless pgvector's HNSW index can take vectors of width `dim`."""
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim <= MAX_HNSW_DIM:
        raise ConfigError(
            f"an embedding width of {dim!r} cannot be stored in PostgreSQL: pgvector's HNSW "
            f"index takes 1 to {MAX_HNSW_DIM} dimensions (0 for the none embedder). Choose a "
            "model of at most that width, or a SQLite store"
        )


def prepare(
    conn: Connection,
    location: str,
    known: Sequence[tuple[int, str, str]],
    model_id: str | None,
    dim: int | None,
    *,
    create: bool,
) -> tuple[str, int]:
    """Apply the migrations of `known` that the store lacks; returns the stored model and width.

    `conn` is in autocommit mode, so that each migration is a transaction of its own.

    Raises:
        StoreError: the database holds no store and may not have one made (`create` false, or
            no model given), holds a newer schema than `known`, or holds a damaged store.
    """
    applied = _applied(conn)
    if not applied and (not create or model_id is None):
        raise no_store(f"in the database at {location}")
    check_schema(location, applied, [v for v, _, _ in known])
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
    row = conn.execute(_MODEL_AND_WIDTH_SQL).fetchone()
    assert row is not None  # a SELECT without FROM returns one row
    stored_model, typmod = row
    if stored_model is None or typmod is None:
        raise StoreError(
            f"the store at {location} is damaged: it has no recorded model or no embedding "
            "column. Point --store at a new database, or drop docshelf's tables, and index again"
        )
    # An untyped vector column (the none embedder) has typmod -1.
    return str(stored_model), max(int(typmod), 0)


def _applied(conn: Connection) -> set[int]:
    row = conn.execute("SELECT to_regclass('docs_schema_migrations') IS NOT NULL").fetchone()
    if row is None or not row[0]:
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
    check_width(width)
    rendered = sql.replace(WIDTH_PLACEHOLDER, str(width))
    if re.search(r"\{\{\w*\}\}", rendered):
        raise RuntimeError(f"a PostgreSQL migration has an unknown placeholder: {rendered[:80]!r}")
    return rendered
