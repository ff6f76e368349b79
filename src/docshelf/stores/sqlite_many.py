"""The SQLite store's reads over many refs at once (a search over many workspaces): a bounded
number of statements however many refs, each ref named in one JSON array parameter read by
json_each (SQLite allows 32766 parameters a statement; a JSON array has no such bound).

- Vectors: every ref's largest row id in one statement (each a step down chunks_by_ref), each
  ref's matrix from the cache while that id is unchanged (sqlite_vectors), an exact top k of
  each, and the rows of the k best of all of them in one more statement.
- Words: the totals, counts and lists of the asked terms of every ref in one statement each,
  scored as one corpus (stores/bm25.py), as PostgreSQL does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from docshelf.rows import StoredFile, StoredHit, Vector
from docshelf.stores import bm25
from docshelf.stores.bm25 import TermList
from docshelf.stores.common import blob_vector, files_by_ref
from docshelf.stores.contract import RefScope
from docshelf.stores.sqlite_vectors import MatrixCache, top_k
from docshelf.stores.terms import query_terms

# The (workspace, ref) pairs of a JSON array of [workspace, ref] arrays, as a table.
_PAIRS = (
    "SELECT json_extract(value, '$[0]') AS workspace, json_extract(value, '$[1]') AS ref "
    "FROM json_each(?)"
)
_TRIPLES = (
    "SELECT json_extract(value, '$[0]') AS workspace, json_extract(value, '$[1]') AS ref, "
    "json_extract(value, '$[2]') AS path FROM json_each(?)"
)
_TOKENS_SQL = (
    f"SELECT q.workspace, q.ref, (SELECT max(id) FROM chunks AS c "
    f"WHERE c.workspace = q.workspace AND c.ref = q.ref) FROM ({_PAIRS}) AS q"
)
_HITS_OF_MANY_SQL = (
    f"SELECT {bm25.HIT_COLUMNS_OF_MANY} FROM chunks WHERE id IN (SELECT value FROM json_each(?))"
)
_PLACES_OF_MANY_SQL = (
    f"SELECT {bm25.PLACE_COLUMNS_OF_MANY} FROM chunks WHERE id IN (SELECT value FROM json_each(?))"
)


def pairs(refs: Iterable[tuple[str, str]]) -> str:
    return json.dumps([list(pair) for pair in sorted(set(refs))], ensure_ascii=False)


def currents(conn: sqlite3.Connection, workspaces: Collection[str]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT workspace, ref FROM current_ref WHERE workspace IN "
        "(SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(workspaces)), ensure_ascii=False),),
    ).fetchall()
    return {str(w): str(r) for w, r in rows}


def indexed_refs(
    conn: sqlite3.Connection, refs: Collection[tuple[str, str]]
) -> set[tuple[str, str]]:
    rows = conn.execute(
        f"SELECT q.workspace, q.ref FROM ({_PAIRS}) AS q WHERE EXISTS "
        "(SELECT 1 FROM chunks AS c WHERE c.workspace = q.workspace AND c.ref = q.ref)",
        (pairs(refs),),
    ).fetchall()
    return {(str(w), str(r)) for w, r in rows}


def search_refs(
    conn: sqlite3.Connection,
    matrices: MatrixCache,
    dim: int,
    scopes: Sequence[RefScope],
    query: Vector,
    k: int,
) -> list[StoredHit]:
    """The k nearest chunks of the union of `scopes`, exact; call inside a read snapshot."""
    tokens = {
        (str(w), str(r)): None if t is None else int(t)
        for w, r, t in conn.execute(_TOKENS_SQL, (pairs((w, r) for w, r, _ in scopes),))
    }
    found: list[tuple[float, int]] = []
    for workspace, ref, paths in scopes:
        matrix = matrices.load(conn, workspace, ref, dim, tokens.get((workspace, ref)))
        among = None if paths is None else matrix.rows_of(paths)
        if len(matrix.ids) == 0 or (among is not None and len(among) == 0):
            continue
        found += [(score, i) for i, score in top_k(matrix, query, k, among).items()]
    if not found:
        return []
    found.sort(reverse=True)
    # Ties at the k-th score are all read, so that they are broken by workspace, path, chunk.
    cut = found[min(k, len(found)) - 1][0]
    score_of = {i: score for score, i in found if score >= cut}
    rows = conn.execute(_HITS_OF_MANY_SQL, (json.dumps(list(score_of)),)).fetchall()
    hits = [bm25.hit_of_many(row, score_of[row[0]]) for row in rows]
    hits.sort(key=lambda h: (-h.score, h.workspace, h.path, h.chunk))
    return hits[:k]


def search_text_refs(
    conn: sqlite3.Connection, scopes: Sequence[RefScope], query: str, k: int
) -> list[StoredHit]:
    """The k chunks of the union of `scopes` that best match `query` by BM25, scored with the
    union's statistics; call inside a read snapshot."""
    asked = query_terms(query)
    if not asked or k < 1 or not scopes:
        return []
    refs = pairs((w, r) for w, r, _ in scopes)
    totals = conn.execute(
        f"SELECT sum(s.chunks), sum(s.length) FROM ({_PAIRS}) AS q JOIN ref_stats AS s "
        "ON s.workspace = q.workspace AND s.ref = q.ref",
        (refs,),
    ).fetchone()
    if totals is None or not totals[0]:
        return []  # none of the refs has chunks
    chunks, length = int(totals[0]), int(totals[1])
    terms = json.dumps(asked, ensure_ascii=False)
    held = {
        str(term): int(n)
        for term, n in conn.execute(
            f"SELECT t.term, sum(t.chunks) FROM ({_PAIRS}) AS q JOIN term_lists AS t "
            "ON t.workspace = q.workspace AND t.ref = q.ref "
            "WHERE t.term IN (SELECT value FROM json_each(?)) GROUP BY t.term",
            (refs, terms),
        )
    }
    among = None
    if any(paths is not None for _, _, paths in scopes):
        whole = pairs((w, r) for w, r, paths in scopes if paths is None)
        some = json.dumps(
            [[w, r, p] for w, r, paths in scopes if paths is not None for p in sorted(set(paths))],
            ensure_ascii=False,
        )
        among = np.array(
            conn.execute(
                f"SELECT id FROM chunks WHERE (workspace, ref) IN ({_PAIRS}) "
                f"OR (workspace, ref, path) IN ({_TRIPLES}) ORDER BY id",
                (whole, some),
            ).fetchall(),
            dtype=np.int64,
        ).reshape(-1)

    def read(wanted: list[str]) -> Iterator[tuple[str, TermList]]:
        rows = conn.execute(
            f"SELECT t.term, t.ids, t.tfs, t.lengths FROM ({_PAIRS}) AS q JOIN term_lists AS t "
            "ON t.workspace = q.workspace AND t.ref = q.ref "
            "WHERE t.term IN (SELECT value FROM json_each(?))",
            (refs, json.dumps(wanted, ensure_ascii=False)),
        )
        lists: dict[str, list[tuple[bytes, bytes, bytes]]] = {}
        for term, ids, tfs, lengths in rows:
            lists.setdefault(str(term), []).append((ids, tfs, lengths))
        return ((term, bm25.joined(blobs)) for term, blobs in lists.items())

    ids, scores = bm25.ranked(asked, held, chunks, length, k, read, among)

    def rows_of(wanted: list[int], whole: bool) -> list[tuple[Any, ...]]:
        sql = _HITS_OF_MANY_SQL if whole else _PLACES_OF_MANY_SQL
        return conn.execute(sql, (json.dumps(wanted),)).fetchall()

    return bm25.hits(ids, scores, k, rows_of)


def file_titles_refs(
    conn: sqlite3.Connection, files: Collection[tuple[str, str, str]]
) -> dict[tuple[str, str], Vector]:
    rows = conn.execute(
        f"SELECT f.workspace, f.path, f.title_embedding FROM ({_TRIPLES}) AS q "
        "JOIN ref_files AS f ON f.workspace = q.workspace AND f.ref = q.ref AND f.path = q.path "
        "WHERE f.title_embedding IS NOT NULL",
        (json.dumps([list(f) for f in sorted(set(files))], ensure_ascii=False),),
    ).fetchall()
    return {(str(w), str(p)): blob_vector(v) for w, p, v in rows}


def files_refs(
    conn: sqlite3.Connection, refs: Collection[tuple[str, str]], prefix: str
) -> dict[tuple[str, str], list[StoredFile]]:
    rows = conn.execute(
        f"SELECT f.workspace, f.ref, f.path, f.lines, f.size FROM ({_PAIRS}) AS q "
        "JOIN ref_files AS f ON f.workspace = q.workspace AND f.ref = q.ref "
        "WHERE substr(f.path, 1, length(?)) = ? ORDER BY f.workspace, f.ref, f.path",
        (pairs(refs), prefix, prefix),
    ).fetchall()
    return files_by_ref(rows)
