"""The SQLite store's schema: its versioned migrations (migrations/sqlite/), applied inside the
IMMEDIATE transaction that opens the store, the model and width it records once, and the
inverted lists of each ref's search terms (stores/terms.py, stores/bm25.py), made again in that
transaction whenever they come from another version of the tokenizer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from docshelf.stores.bm25 import ListsBuilder
from docshelf.stores.common import check_schema, no_store
from docshelf.stores.terms import TERMS_VERSION, term_columns

# A chunk as its ref's inverted lists take it (bm25.ListsBuilder.add).
ChunkEntry = tuple[int, list[str], list[float], int]


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


def chunk_terms(chunk_id: int, path: str, heading: str, content: str) -> ChunkEntry:
    """A chunk's entry in its ref's lists: id, distinct terms, weighted frequencies, length."""
    return chunk_id, *term_columns(path, heading, content)


def write_lists(
    conn: sqlite3.Connection, workspace: str, ref: str, entries: Iterable[ChunkEntry]
) -> None:
    """Make `entries` (chunk_terms of each chunk) the whole of `ref`'s inverted lists and
    totals, in memory that does not grow with the ref (bm25.ListsBuilder). Call in the
    transaction that writes the ref's chunks."""
    conn.execute("DELETE FROM term_lists WHERE workspace = ? AND ref = ?", (workspace, ref))
    conn.execute("DELETE FROM ref_stats WHERE workspace = ? AND ref = ?", (workspace, ref))
    made = ListsBuilder()
    try:
        for entry in entries:
            made.add(*entry)
        if made.chunks == 0:
            return
        conn.execute(
            "INSERT INTO ref_stats (workspace, ref, chunks, length) VALUES (?, ?, ?, ?)",
            (workspace, ref, made.chunks, made.length),
        )
        conn.executemany(
            "INSERT INTO term_lists (workspace, ref, term, chunks, ids, tfs, lengths) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((workspace, ref, term, len(found), *found.blobs()) for term, found in made.lists()),
        )
    finally:
        made.close()


def make_terms(conn: sqlite3.Connection) -> None:
    """Make every ref's inverted lists and totals again unless the store records this
    tokenizer's version (a store from before migration 0007 has none; a later tokenizer makes
    other terms). Call in the transaction that opens the store: a search never sees half-made
    lists."""
    table = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'term_lists'"
    if conn.execute(table).fetchone() is None:
        return  # a schema before 0007, as only a test of the migrations leaves it
    row = conn.execute("SELECT value FROM meta WHERE key = 'terms'").fetchone()
    if row is not None and row[0] == TERMS_VERSION:
        return
    conn.execute("DELETE FROM term_lists")
    conn.execute("DELETE FROM ref_stats")
    refs = conn.execute("SELECT DISTINCT workspace, ref FROM chunks").fetchall()
    for workspace, ref in refs:
        chunks = conn.execute(
            "SELECT id, path, heading, content FROM chunks WHERE workspace = ? AND ref = ?",
            (workspace, ref),
        )
        write_lists(conn, workspace, ref, (chunk_terms(*row) for row in chunks))
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
