"""The SQLite store's schema: its versioned migrations (migrations/sqlite/), applied inside the
IMMEDIATE transaction that opens the store, and the model and width it records once. The
inverted lists of the search terms are sqlite_text.py's."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

from docshelf.stores.common import check_schema, no_store


def migrate(
    conn: sqlite3.Connection,
    location: str,
    known: Sequence[tuple[int, str, str]],
    model_id: str | None,
    dim: int | None,
    *,
    create: bool,
) -> tuple[str, int]:
    """Apply the migrations of `known` that the store lacks, recording `model_id` and `dim` in a
    new store; returns the stored model and width. Call inside a write transaction.

    Raises:
        StoreError: the schema is newer than `known`, or the file holds no store and may not
            have one made (`create` false, or no model given).
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
    check_schema(location, applied, [v for v, _, _ in known])
    pending = [m for m in known if m[0] not in applied]
    if pending and not applied and (not create or model_id is None):
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
