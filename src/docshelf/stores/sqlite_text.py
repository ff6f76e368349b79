"""The SQLite store's keyword ranking: BM25 over docshelf's terms (stores/terms.py), from
inverted lists kept per ref, scored by the code that scores PostgreSQL's (stores/bm25.py).

- As the chunks of a ref are inserted, each gives its id, distinct terms, column-weighted
  frequencies and length (`chunk_terms`), and `write_term_lists` builds the ref's inverted lists
  (term_lists: per term, how many chunks hold it, and their ids, frequencies and lengths as
  blobs) and its totals (ref_stats) from them, in memory that does not grow with the ref
  (bm25.ListsBuilder), in the same transaction. A prune deletes both with the chunks.
- A search (`search_text`) reads the counts of the query's terms, then the lists of those worth
  ranking by (terms.asked_terms, the rule PostgreSQL follows too: the rarer terms first, every
  term when those find fewer than k) through their index, and scores them with numpy
  (bm25.ranked): the cost is the length of those lists, never the ref's size. Only the chunks
  scoring at least the k-th best are read, their paths first, to break ties by path and chunk.
  A subset of paths is found through the (workspace, ref, path) index, by a json_each() of them.
- `make_terms` makes every ref's lists again when the store records another version of the
  tokenizer (or none: before migration 0007), in the transaction that opens the store.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from typing import Any

import numpy as np

from docshelf.rows import StoredHit
from docshelf.stores import bm25
from docshelf.stores.bm25 import ListsBuilder, TermList
from docshelf.stores.terms import TERMS_VERSION, query_terms, term_columns

# A chunk as its ref's inverted lists take it (bm25.ListsBuilder.add).
ChunkEntry = tuple[int, list[str], list[float], int]

# Chunk ids read per statement (SQLite allows 32766 parameters in one).
MAX_IDS_PER_READ = 8000

_STATS_SQL = "SELECT chunks, length FROM ref_stats WHERE workspace = ? AND ref = ?"
_HITS_SQL = f"SELECT {bm25.HIT_COLUMNS} FROM chunks"
_PLACES_SQL = f"SELECT {bm25.PLACE_COLUMNS} FROM chunks"
_AMONG_SQL = (
    "SELECT id FROM chunks WHERE workspace = ? AND ref = ? "
    "AND path IN (SELECT value FROM json_each(?)) ORDER BY id"
)


def chunk_terms(chunk_id: int, path: str, heading: str, content: str) -> ChunkEntry:
    """A chunk's entry in its ref's lists: id, distinct terms, weighted frequencies, length."""
    return chunk_id, *term_columns(path, heading, content)


def write_term_lists(
    conn: sqlite3.Connection, workspace: str, ref: str, entries: Iterable[ChunkEntry]
) -> None:
    """Make `entries` (chunk_terms of each chunk) the whole of `ref`'s inverted lists and
    totals, in place of any it had; call in the transaction that writes the ref's chunks."""
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


def search_text(
    conn: sqlite3.Connection,
    workspace: str,
    ref: str,
    query: str,
    k: int,
    paths: Collection[str] | None,
) -> list[StoredHit]:
    """The k chunks of `ref` (of `paths`, when given) that best match `query` by BM25, best
    first, scored over the whole ref either way; call inside one read transaction, so that every
    statement sees the same ref."""
    asked = query_terms(query)
    if not asked or k < 1:
        return []
    stats = conn.execute(_STATS_SQL, (workspace, ref)).fetchone()
    if stats is None:
        return []  # the ref has no chunks
    of_ref = (workspace, ref)
    held = dict(
        conn.execute(
            "SELECT term, chunks FROM term_lists WHERE workspace = ? AND ref = ? "
            f"AND term IN ({','.join('?' * len(asked))})",
            (*of_ref, *asked),
        ).fetchall()
    )
    among = None
    if paths is not None:
        subset = json.dumps(sorted(set(paths)), ensure_ascii=False)
        among = np.array(
            conn.execute(_AMONG_SQL, (*of_ref, subset)).fetchall(), dtype=np.int64
        ).reshape(-1)

    def read(terms: list[str]) -> Iterator[tuple[str, TermList]]:
        rows = conn.execute(
            "SELECT term, ids, tfs, lengths FROM term_lists WHERE workspace = ? AND ref = ? "
            f"AND term IN ({','.join('?' * len(terms))})",
            (*of_ref, *terms),
        )
        return ((term, TermList.of_blobs(*blobs)) for term, *blobs in rows)

    ids, scores = bm25.ranked(asked, held, int(stats[0]), int(stats[1]), k, read, among)

    def rows_of(wanted: list[int], whole: bool) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), MAX_IDS_PER_READ):
            part = wanted[start : start + MAX_IDS_PER_READ]
            marks = ",".join("?" * len(part))
            if whole:
                found += conn.execute(f"{_HITS_SQL} WHERE id IN ({marks})", part).fetchall()
            else:
                found += conn.execute(f"{_PLACES_SQL} WHERE id IN ({marks})", part).fetchall()
        return found

    return bm25.hits(ids, scores, k, rows_of)


def make_terms(conn: sqlite3.Connection) -> None:
    """Make every ref's inverted lists and totals again unless the store records this
    tokenizer's version. Call in the transaction that opens the store: a search never sees
    half-made lists."""
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
        write_term_lists(conn, workspace, ref, (chunk_terms(*row) for row in chunks))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms', ?)", (TERMS_VERSION,))
