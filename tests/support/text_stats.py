"""A check that a store's keyword statistics agree with its chunks, for the store tests and the
kill rounds: every chunk's terms are the tokenizer's terms of its text, and on PostgreSQL every
ref's inverted lists and totals are exactly what its chunk rows make (none for a ref without
rows); on SQLite the full-text index passes FTS5's own integrity check against chunk_terms."""

from __future__ import annotations

import sqlite3

import psycopg

from docshelf.stores import is_postgres_url
from docshelf.stores.postgres_text import term_columns
from docshelf.stores.terms import TERMS_VERSION, ChunkTerms


def check_text_statistics(location: str) -> None:
    if is_postgres_url(location):
        _check_postgres(location)
    else:
        _check_sqlite(location)


def _check_sqlite(location: str) -> None:
    conn = sqlite3.connect(location)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'terms'").fetchone() == (
            TERMS_VERSION,
        )
        chunks = conn.execute("SELECT id, path, heading, content FROM chunks ORDER BY id")
        made = [(i, *ChunkTerms.of(p, h, c).texts()) for i, p, h, c in chunks]
        stored = conn.execute("SELECT id, path, heading, content FROM chunk_terms ORDER BY id")
        assert stored.fetchall() == made
        # With rank 1, FTS5 also checks the index against its content table, row by row.
        conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


def _check_postgres(location: str) -> None:
    with psycopg.connect(location) as conn:
        version = conn.execute("SELECT value FROM docs_meta WHERE key = 'terms'").fetchone()
        assert version == (TERMS_VERSION,)
        lists: dict[tuple[str, str, str], list[tuple[int, float, int]]] = {}
        totals: dict[tuple[str, str], tuple[int, int]] = {}
        rows = conn.execute(
            "SELECT id, workspace, ref, path, heading, content, terms, tfs, length "
            "FROM docs_chunks ORDER BY id"
        )
        for chunk_id, workspace, ref, path, heading, content, terms, tfs, length in rows:
            made = term_columns(path, heading, content)
            assert (terms, tfs, length) == made, (path, heading)
            count, total = totals.get((workspace, ref), (0, 0))
            totals[(workspace, ref)] = (count + 1, total + length)
            for term, tf in zip(terms, tfs, strict=True):
                lists.setdefault((workspace, ref, term), []).append((chunk_id, tf, length))
        stats = conn.execute("SELECT workspace, ref, chunks, length FROM docs_ref_stats")
        assert {(w, r): (n, int(t)) for w, r, n, t in stats} == totals
        stored = conn.execute(
            "SELECT workspace, ref, term, chunks, ids, tfs, lengths FROM docs_term_lists"
        ).fetchall()
        assert all(n == len(ids) for _, _, _, n, ids, _, _ in stored)
        assert {
            (w, r, t): list(zip(ids, tfs, lengths, strict=True))
            for w, r, t, _, ids, tfs, lengths in stored
        } == lists
