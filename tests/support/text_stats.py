"""A check that a store's keyword statistics agree with its chunks, for the store tests and the
kill rounds: every chunk's terms are the tokenizer's terms of its text, and on PostgreSQL every
ref's inverted lists and totals are exactly what its chunk rows make (none for a ref without
rows), on SQLite as on PostgreSQL."""

from __future__ import annotations

import sqlite3

import psycopg

from docshelf.stores import is_postgres_url
from docshelf.stores.bm25 import TermList
from docshelf.stores.terms import TERMS_VERSION, ChunkTerms, term_columns


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
        refs = conn.execute("SELECT DISTINCT workspace, ref FROM chunks").fetchall()
        want_lists: dict[tuple[str, str, str], tuple[int, list[int], list[float], list[int]]] = {}
        want_totals: dict[tuple[str, str], tuple[int, int]] = {}
        for workspace, ref in refs:
            chunks = conn.execute(
                "SELECT id, path, heading, content FROM chunks WHERE workspace = ? AND ref = ? "
                "ORDER BY id",
                (workspace, ref),
            ).fetchall()
            total = 0
            for chunk_id, path, heading, content in chunks:
                made = ChunkTerms.of(path, heading, content)
                total += made.length
                for term, tf in zip(*made.weighted(), strict=True):
                    n, ids, tfs, lengths = want_lists.setdefault(
                        (workspace, ref, term), (0, [], [], [])
                    )
                    ids.append(chunk_id)
                    tfs.append(tf)
                    lengths.append(made.length)
                    want_lists[(workspace, ref, term)] = (n + 1, ids, tfs, lengths)
            want_totals[(workspace, ref)] = (len(chunks), total)
        totals = conn.execute("SELECT workspace, ref, chunks, length FROM ref_stats")
        assert {(w, r): (n, t) for w, r, n, t in totals} == want_totals
        stored = {}
        for w, r, t, n, ids, tfs, lengths in conn.execute(
            "SELECT workspace, ref, term, chunks, ids, tfs, lengths FROM term_lists"
        ):
            found = TermList.of_blobs(ids, tfs, lengths)
            stored[(w, r, t)] = (n, found.ids.tolist(), found.tfs.tolist(), found.lengths.tolist())
        assert stored == want_lists
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
        decoded = {(w, r, t): (n, TermList.of_blobs(*blobs)) for w, r, t, n, *blobs in stored}
        assert all(n == len(found) for n, found in decoded.values())
        assert {
            key: list(
                zip(found.ids.tolist(), found.tfs.tolist(), found.lengths.tolist(), strict=True)
            )
            for key, (_, found) in decoded.items()
        } == lists
