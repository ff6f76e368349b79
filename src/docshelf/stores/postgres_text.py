"""The PostgreSQL store's keyword ranking: BM25 over docshelf's terms (stores/terms.py), from
inverted lists kept per ref, scored by the code that scores SQLite's (stores/bm25.py).

- A chunk row carries its distinct terms, their column-weighted frequencies and its length
  (`term_columns`, written by the COPY of the chunks).
- In the same transaction, `write_term_lists` builds the ref's inverted lists (docs_term_lists:
  per term, how many chunks hold it, and their ids, frequencies and lengths as big-endian bytes,
  made in SQL by int8send, float4send and int4send) and its totals (docs_ref_stats). A prune
  deletes both with the chunks; a killed write leaves none of them.
- A search (`search_text`) reads the counts of the query's terms, keeps those worth ranking by
  (terms.asked_terms, the rule SQLite follows too: the rarer terms first, every term when those
  find fewer than k), reads their lists through the primary key and scores them with numpy
  (bm25.ranked): the cost is the length of those lists, never the ref's size. Only the chunks
  scoring at least the k-th best are read, their paths first, to break ties by path and chunk.
- `make_terms` fills the terms of rows written before migration 0006 (or by another version of
  the tokenizer) when a store is opened, in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import TupleRow

from docshelf.rows import StoredHit
from docshelf.stores import bm25, postgres_many
from docshelf.stores.bm25 import TermList
from docshelf.stores.contract import RefScope
from docshelf.stores.postgres_merged import Union
from docshelf.stores.terms import TERMS_VERSION, query_terms, term_columns

Connection = psycopg.Connection[TupleRow]
Cursor = psycopg.Cursor[TupleRow]

# Rows whose terms are made again per round trip when a store's terms are out of date.
TERMS_BATCH = 1000

# Key of the advisory lock under which a store's terms are made again ("terms" in ASCII).
TERMS_LOCK_KEY = 0x7465726D73

# The ref's inverted lists and totals, from its chunk rows (workspace, ref as named parameters).
_WRITE_LISTS_SQL = (
    "INSERT INTO docs_term_lists (workspace, ref, term, chunks, ids, tfs, lengths) "
    "SELECT %(workspace)s, %(ref)s, t.term, count(*), "
    "string_agg(int8send(c.id), ''::bytea ORDER BY c.id), "
    "string_agg(float4send(t.tf), ''::bytea ORDER BY c.id), "
    "string_agg(int4send(c.length), ''::bytea ORDER BY c.id) "
    "FROM docs_chunks AS c CROSS JOIN LATERAL unnest(c.terms, c.tfs) AS t(term, tf) "
    "WHERE c.workspace = %(workspace)s AND c.ref = %(ref)s GROUP BY t.term"
)
_WRITE_STATS_SQL = (
    "INSERT INTO docs_ref_stats (workspace, ref, chunks, length) "
    "SELECT %(workspace)s, %(ref)s, count(*), coalesce(sum(length), 0) FROM docs_chunks "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s HAVING count(*) > 0"
)

# The ref's totals, how many of its chunks hold each asked term, and the lists of the terms
# fewer than half of them hold (the first that bm25.ranked scores; a common term's long list is
# read only when those find too few): one round trip for most searches. Each term is looked up
# alone through the primary key (LATERAL), whatever the planner's statistics say of the table.
_COUNTS_SQL = (
    "SELECT s.chunks, s.length, l.term, l.chunks, "
    "CASE WHEN 2 * l.chunks < s.chunks THEN l.ids END, "
    "CASE WHEN 2 * l.chunks < s.chunks THEN l.tfs END, "
    "CASE WHEN 2 * l.chunks < s.chunks THEN l.lengths END "
    "FROM docs_ref_stats AS s CROSS JOIN unnest(%(terms)s::text[]) AS q(term) "
    "JOIN LATERAL (SELECT term, chunks, ids, tfs, lengths FROM docs_term_lists "
    "WHERE workspace = s.workspace AND ref = s.ref AND term = q.term) AS l ON true "
    "WHERE s.workspace = %(workspace)s AND s.ref = %(ref)s"
)

_READ_LISTS_SQL = (
    "SELECT term, ids, tfs, lengths FROM docs_term_lists "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s AND term = ANY(%(terms)s::text[])"
)
_HITS_SQL = f"SELECT {bm25.HIT_COLUMNS} FROM docs_chunks WHERE id = ANY(%s)"
_PLACES_SQL = f"SELECT {bm25.PLACE_COLUMNS} FROM docs_chunks WHERE id = ANY(%s)"
_HITS_OF_MANY_SQL = f"SELECT {bm25.HIT_COLUMNS_OF_MANY} FROM docs_chunks WHERE id = ANY(%s)"
_PLACES_OF_MANY_SQL = f"SELECT {bm25.PLACE_COLUMNS_OF_MANY} FROM docs_chunks WHERE id = ANY(%s)"
_AMONG_SQL = (
    "SELECT id FROM docs_chunks WHERE workspace = %(workspace)s AND ref = %(ref)s "
    "AND path = ANY(%(paths)s::text[]) ORDER BY id"
)


def write_term_lists(cur: Cursor, workspace: str, ref: str) -> None:
    """Make the inverted lists and totals of `ref` from its chunk rows, in place of any it had;
    call in the transaction that writes the rows."""
    params = {"workspace": workspace, "ref": ref}
    cur.execute(
        "DELETE FROM docs_term_lists WHERE workspace = %(workspace)s AND ref = %(ref)s", params
    )
    cur.execute(
        "DELETE FROM docs_ref_stats WHERE workspace = %(workspace)s AND ref = %(ref)s", params
    )
    cur.execute(_WRITE_LISTS_SQL, params)
    lists = cur.rowcount
    cur.execute(_WRITE_STATS_SQL, params)
    # Fresh statistics for the planner, as for the chunks (postgres.py): a table it has never
    # analysed looks empty.
    analyze_if_grown(cur, "docs_term_lists", lists)
    analyze_if_grown(cur, "docs_ref_stats", cur.rowcount)


# The statements that make the statistics of a table a write adds to (analyze_if_grown).
_ANALYZE = {
    table: f"ANALYZE {table}"
    for table in ("docs_chunks", "docs_term_lists", "docs_ref_stats", "docs_vectors")
}


def analyze_if_grown(cur: Cursor, table: str, added: int) -> None:
    """ANALYZE `table` when a write added a tenth of its rows or more (or it was never
    analysed): a new store's statistics follow its first writes at once, and a store of a
    million rows is not sampled again for each workspace's thousand (0.5 s a write at 1,000
    workspaces); autovacuum keeps those up to date."""
    statement = _ANALYZE[table]
    if added <= 0:
        return
    row = cur.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (table,))
    known = float((row.fetchone() or (-1,))[0])
    if known < 0 or 10 * added >= known:
        cur.execute(statement)


def search_text(
    conn: Connection,
    workspace: str,
    ref: str,
    query: str,
    k: int,
    paths: Collection[str] | None,
) -> list[StoredHit]:
    """The k chunks of `ref` (of `paths`, when given) that best match `query` by BM25, best
    first, scored over the whole ref either way: the lists of the query's terms are read through
    the primary key and scored with numpy (stores/bm25.py), as on SQLite."""
    asked = query_terms(query)
    if not asked or k < 1:
        return []
    params: dict[str, Any] = {"workspace": workspace, "ref": ref, "terms": asked}
    found = conn.execute(_COUNTS_SQL, params).fetchall()
    if not found:
        return []  # no chunk of the ref holds any asked term, or the ref has no chunks
    chunks, length = int(found[0][0]), int(found[0][1])
    held = {term: int(n) for _, _, term, n, *_ in found}
    known = {
        term: TermList.of_blobs(ids, tfs, lengths)
        for _, _, term, _, ids, tfs, lengths in found
        if ids is not None
    }
    among = None
    if paths is not None:
        subset = {**params, "paths": sorted(set(paths))}
        among = np.array(conn.execute(_AMONG_SQL, subset).fetchall(), dtype=np.int64).reshape(-1)

    def read(terms: list[str]) -> list[tuple[str, TermList]]:
        rows = conn.execute(_READ_LISTS_SQL, {**params, "terms": terms}).fetchall()
        return [(term, TermList.of_blobs(*blobs)) for term, *blobs in rows]

    ids, scores = bm25.ranked(asked, held, chunks, length, k, read, among, known)

    def rows_of(wanted: list[int], whole: bool) -> list[tuple[Any, ...]]:
        sql = _HITS_SQL if whole else _PLACES_SQL
        return conn.execute(sql, (wanted,)).fetchall()

    return bm25.hits(ids, scores, k, rows_of)


# For each asked term, how many chunks of some refs hold it, summed over the refs: counts only (a
# list is rare or common in the union, not in one ref, so the lists worth reading are chosen
# after the counts are summed). Each term is looked up alone, by equality (the aggregate keeps
# the LATERAL from being flattened), through docs_term_lists_term: the (workspace, ref) primary
# key with `term = ANY(...)` read every term of every ref, 2 s at 1,000 refs of 8,000 terms
# (migration 0011).
_COUNTS_OF_MANY_SQL = (
    "WITH r AS MATERIALIZED (SELECT * FROM unnest(%(ws)s::text[], %(refs)s::text[]) "
    "AS r(workspace, ref)) "
    "SELECT q.term, l.chunks FROM unnest(%(terms)s::text[]) AS q(term) "
    "CROSS JOIN LATERAL (SELECT count(*) AS n, sum(t.chunks) AS chunks "
    "FROM docs_term_lists AS t JOIN r ON t.workspace = r.workspace AND t.ref = r.ref "
    "WHERE t.term = q.term) AS l WHERE l.n > 0"
)
# The lists of some terms in each of several refs: each term looked up alone (OFFSET 0 keeps
# it a lookup), by the term index for a large union and the primary key for a small one.
_READ_LISTS_OF_MANY_SQL = (
    "SELECT q.term, l.ids, l.tfs, l.lengths FROM unnest(%(terms)s::text[]) AS q(term) "
    "CROSS JOIN LATERAL (SELECT t.ids, t.tfs, t.lengths FROM docs_term_lists AS t "
    "JOIN unnest(%(ws)s::text[], %(refs)s::text[]) AS r(workspace, ref) "
    "ON t.workspace = r.workspace AND t.ref = r.ref WHERE t.term = q.term OFFSET 0) AS l"
)


def search_text_refs(
    conn: Connection, scopes: Sequence[RefScope], query: str, k: int
) -> list[StoredHit]:
    """The k chunks of the union of `scopes` that best match `query` by BM25, scored with the
    union's statistics (Store.search_text_refs): the union's refs and totals, its count of
    each term, then the lists of the terms worth ranking by (rare in the union first), each
    read from the merged lists for the refs merged there (postgres_merged.py) and from the
    refs' own lists for the others. The lists are read as binary, not as hexadecimal text."""
    asked = query_terms(query)
    if not asked or k < 1 or not scopes:
        return []
    union = Union.split(conn, {"ws": [w for w, _, _ in scopes], "refs": [r for _, r, _ in scopes]})
    if not union.chunks:
        return []  # none of the refs has chunks
    held = union.counts(conn, asked)
    if union.own["ws"]:
        found = conn.execute(_COUNTS_OF_MANY_SQL, {**union.own, "terms": asked}).fetchall()
        for term, n in found:
            held[term] = held.get(term, 0) + int(n)
    among = None
    if any(paths is not None for _, _, paths in scopes):
        among = np.array(
            conn.execute(
                f"SELECT id FROM {postgres_many.SCOPED} ORDER BY id",
                postgres_many.scope_params(scopes),
            ).fetchall(),
            dtype=np.int64,
        ).reshape(-1)

    def read(terms: list[str]) -> list[tuple[str, TermList]]:
        lists: dict[str, list[TermList]] = {
            t: [found] for t, found in union.lists(conn, terms).items()
        }
        if union.own["ws"]:
            params = {**union.own, "terms": terms}
            rows = conn.cursor(binary=True).execute(_READ_LISTS_OF_MANY_SQL, params).fetchall()
            blobs: dict[str, list[tuple[bytes, bytes, bytes]]] = {}
            for term, ids, tfs, lengths in rows:
                blobs.setdefault(term, []).append((ids, tfs, lengths))
            for term, parts in blobs.items():
                lists.setdefault(term, []).append(bm25.joined(parts))
        return [(term, bm25.concatenated(parts)) for term, parts in lists.items()]

    ids, scores = bm25.ranked(asked, held, union.chunks, union.length, k, read, among)

    def rows_of(wanted: list[int], whole: bool) -> list[tuple[Any, ...]]:
        sql = _HITS_OF_MANY_SQL if whole else _PLACES_OF_MANY_SQL
        return conn.execute(sql, (wanted,)).fetchall()

    return bm25.hits(ids, scores, k, rows_of)


def make_terms(conn: Connection) -> None:
    """Make every chunk's terms, and every ref's lists, again unless the store records this
    tokenizer's version; one transaction, so a search never sees half of them. `conn` is in
    autocommit mode (as postgres_schema.prepare leaves it)."""
    if not _has_terms(conn) or _terms_version(conn) == TERMS_VERSION:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (TERMS_LOCK_KEY,))
        if _terms_version(conn) == TERMS_VERSION:
            return  # another process made them while this one waited
        with conn.cursor() as cur:
            ids = [i for (i,) in cur.execute("SELECT id FROM docs_chunks ORDER BY id")]
            for start in range(0, len(ids), TERMS_BATCH):
                batch = ids[start : start + TERMS_BATCH]
                rows = cur.execute(
                    "SELECT id, path, heading, content FROM docs_chunks WHERE id = ANY(%s)",
                    (batch,),
                ).fetchall()
                made = [(i, *term_columns(p, h, c)) for i, p, h, c in rows]
                cur.executemany(
                    "UPDATE docs_chunks SET terms = %s, tfs = %s, length = %s WHERE id = %s",
                    [(t, f, n, i) for i, t, f, n in made],
                )
            refs = cur.execute("SELECT DISTINCT workspace, ref FROM docs_chunks").fetchall()
            cur.execute("DELETE FROM docs_term_lists")
            cur.execute("DELETE FROM docs_ref_stats")
            # Each ref's lists are written again under a new key: none is merged any more.
            cur.execute("DELETE FROM docs_merged_lists")
            cur.execute("DELETE FROM docs_merged_refs")
            for workspace, ref in refs:
                params = {"workspace": workspace, "ref": ref}
                cur.execute(_WRITE_LISTS_SQL, params)
                cur.execute(_WRITE_STATS_SQL, params)
            cur.execute(
                "INSERT INTO docs_meta (key, value) VALUES ('terms', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (TERMS_VERSION,),
            )


def _terms_version(conn: Connection) -> str | None:
    row = conn.execute("SELECT value FROM docs_meta WHERE key = 'terms'").fetchone()
    return None if row is None else str(row[0])


def _has_terms(conn: Connection) -> bool:
    """Whether the schema has the terms (migration 0006): only a test of the migrations leaves
    a store without them."""
    row = conn.execute("SELECT to_regclass('docs_term_lists') IS NOT NULL").fetchone()
    return bool(row and row[0])
