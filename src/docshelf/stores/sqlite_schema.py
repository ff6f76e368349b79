"""The SQLite store's schema: its versioned migrations (migrations/sqlite/), applied inside the
IMMEDIATE transaction that opens the store, the model and width it records once, and the
chunks' search terms (stores/terms.py), made again in that transaction whenever they come from
another version of the tokenizer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from docshelf.stores.common import check_schema, no_store
from docshelf.stores.terms import TERMS_VERSION, ChunkTerms

# Chunks whose terms are made again per batch, when a store's terms are out of date: their texts
# are held in memory at once.
TERMS_BATCH = 500


def migrate(
    conn: sqlite3.Connection,
    location: str,
    known: Sequence[tuple[int, str, str]],
    model_id: str | None,
    dim: int | None,
) -> tuple[str, int]:
    """Apply the migrations of `known` that the store lacks, recording `model_id` and `dim` in a
    new store; returns the stored model and width. Call inside a write transaction.

    Raises:
        StoreError: the schema is newer than `known`, or the file holds no store and no model
            is given.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
    check_schema(location, applied, [v for v, _, _ in known])
    pending = [m for m in known if m[0] not in applied]
    if pending and not applied and model_id is None:
        raise no_store(f"at {location}")
    for version, name, sql in pending:
        # executescript would commit the open transaction; run statement by statement.
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, now()))
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if not meta:
        assert model_id is not None and dim is not None
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("model_id", model_id), ("dim", str(dim))],
        )
        meta = {"model_id": model_id, "dim": str(dim)}
    return meta["model_id"], int(meta["dim"])


def insert_terms(conn: sqlite3.Connection, chunks: Iterable[tuple[int, str, str, str]]) -> None:
    """Write the search terms of `chunks` (row id, path, heading, content); the full-text index
    follows by trigger."""
    conn.executemany(
        "INSERT INTO chunk_terms (id, path, heading, content) VALUES (?, ?, ?, ?)",
        (
            (rowid, *ChunkTerms.of(path, heading, content).texts())
            for rowid, path, heading, content in chunks
        ),
    )


def make_terms(conn: sqlite3.Connection) -> None:
    """Make every chunk's search terms again unless the store records this tokenizer's version
    (a store from before migration 0006 has none; a later tokenizer makes other terms). Call in
    the transaction that opens the store: a search never sees a half-made index."""
    table = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'chunk_terms'"
    if conn.execute(table).fetchone() is None:
        return  # a schema before 0006, as only a test of the migrations leaves it
    row = conn.execute("SELECT value FROM meta WHERE key = 'terms'").fetchone()
    if row is not None and row[0] == TERMS_VERSION:
        return
    conn.execute("DELETE FROM chunk_terms")  # each row leaves the index by trigger
    chunks = conn.execute("SELECT id, path, heading, content FROM chunks ORDER BY id")
    while batch := chunks.fetchmany(TERMS_BATCH):
        insert_terms(conn, batch)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms', ?)", (TERMS_VERSION,))


def now() -> str:
    """The time as the store's text columns hold it: UTC, ISO 8601, in seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


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
