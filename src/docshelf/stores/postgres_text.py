"""The PostgreSQL store's keyword ranking: BM25 over docshelf's terms (stores/terms.py), from
statistics kept per ref, scored as SQLite's FTS5 bm25() scores the same terms.

- A chunk row carries its distinct terms, their column-weighted frequencies and its length
  (`term_columns`, written by the COPY of the chunks).
- In the same transaction, `write_term_lists` builds the ref's inverted lists (docs_term_lists:
  per term, how many chunks hold it, and their ids, frequencies and lengths) and its totals
  (docs_ref_stats). A prune deletes both with the chunks; a killed write leaves none of them.
- A search (`search_text`) reads the counts of the query's terms, keeps those worth ranking by
  (terms.asked_terms, the rule SQLite follows too: the rarer terms first, every term when those
  find fewer than k), computes their idf from the ref's N, and sums BM25 over their lists in SQL:
  the cost is the length of those lists, never the ref's size.
- `make_terms` fills the terms of rows written before migration 0006 (or by another version of
  the tokenizer) when a store is opened, in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from docshelf.rows import StoredHit
from docshelf.stores.terms import (
    BM25_B,
    BM25_K1,
    TERMS_VERSION,
    ChunkTerms,
    asked_terms,
    bm25_idf,
    query_terms,
)

Connection = psycopg.Connection[TupleRow]
Cursor = psycopg.Cursor[TupleRow]

# Rows whose terms are made again per round trip when a store's terms are out of date.
TERMS_BATCH = 1000

# Key of the advisory lock under which a store's terms are made again ("terms" in ASCII).
TERMS_LOCK_KEY = 0x7465726D73

# The ref's inverted lists and totals, from its chunk rows (workspace, ref as named parameters).
_WRITE_LISTS_SQL = (
    "INSERT INTO docs_term_lists (workspace, ref, term, chunks, ids, tfs, lengths) "
    "SELECT %(workspace)s, %(ref)s, t.term, count(*), array_agg(c.id ORDER BY c.id), "
    "array_agg(t.tf ORDER BY c.id), array_agg(c.length ORDER BY c.id) "
    "FROM docs_chunks AS c CROSS JOIN LATERAL unnest(c.terms, c.tfs) AS t(term, tf) "
    "WHERE c.workspace = %(workspace)s AND c.ref = %(ref)s GROUP BY t.term"
)
_WRITE_STATS_SQL = (
    "INSERT INTO docs_ref_stats (workspace, ref, chunks, length) "
    "SELECT %(workspace)s, %(ref)s, count(*), coalesce(sum(length), 0) FROM docs_chunks "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s HAVING count(*) > 0"
)

# The ref's totals and how many of its chunks hold each asked term. Each term is looked up alone
# through the primary key (LATERAL), whatever the planner's statistics say of the table.
_COUNTS_SQL = (
    "SELECT s.chunks, s.length, coalesce(array_agg(l.term) FILTER (WHERE l.term IS NOT NULL), "
    "'{}'), coalesce(array_agg(l.chunks) FILTER (WHERE l.term IS NOT NULL), '{}') "
    "FROM docs_ref_stats AS s CROSS JOIN unnest(%(terms)s::text[]) AS q(term) "
    "LEFT JOIN LATERAL (SELECT term, chunks FROM docs_term_lists WHERE workspace = s.workspace "
    "AND ref = s.ref AND term = q.term) AS l ON true "
    "WHERE s.workspace = %(workspace)s AND s.ref = %(ref)s GROUP BY s.chunks, s.length"
)

# BM25 summed over the lists of the asked terms, written in the order of FTS5's bm25() (idf *
# ((tf * (k1 + 1)) / (tf + k1 * (1 - b + b * length / avgdl)))) and summed in the query's order
# of terms, as FTS5 sums its phrases: the two stores' scores agree to the last bits, and a chunk
# scores the same however many others are ranked beside it. Only the candidates scoring at least
# the k-th best (ties included) are joined to their rows, to break ties by path and chunk as
# SQLite does.
_TEXT_SEARCH = (
    "WITH q AS (SELECT * FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) "
    "WITH ORDINALITY AS q(term, idf, ord)), "
    "scored AS (SELECT u.id, sum(q.idf * ((u.tf::float8 * %(k1_plus_one)s) / (u.tf::float8 + "
    "%(k1)s * (%(one_minus_b)s + %(b)s * u.len::float8 / %(avgdl)s))) ORDER BY q.ord) AS score "
    "FROM q CROSS JOIN LATERAL (SELECT ids, tfs, lengths FROM docs_term_lists "
    "WHERE workspace = %(workspace)s AND ref = %(ref)s AND term = q.term) AS l "
    "CROSS JOIN LATERAL unnest(l.ids, l.tfs, l.lengths) AS u(id, tf, len) "
    "{among} GROUP BY u.id), "
    "cut AS (SELECT min(score) AS score FROM "
    "(SELECT score FROM scored ORDER BY score DESC LIMIT %(k)s) AS best) "
    "SELECT c.path, c.chunk, c.heading, c.content, c.start_line, c.end_line, s.score "
    "FROM scored AS s JOIN docs_chunks AS c ON c.id = s.id "
    "WHERE s.score >= (SELECT score FROM cut) "
    'ORDER BY s.score DESC, c.path COLLATE "C", c.chunk LIMIT %(k)s'
)
TEXT_SEARCH_SQL = _TEXT_SEARCH.format(among="")
TEXT_SEARCH_IN_PATHS_SQL = _TEXT_SEARCH.format(
    among="WHERE u.id IN (SELECT id FROM docs_chunks WHERE workspace = %(workspace)s "
    "AND ref = %(ref)s AND path = ANY(%(paths)s::text[]))"
)


def term_columns(path: str, heading: str, content: str) -> tuple[list[str], list[float], int]:
    """A chunk row's terms, weighted frequencies and length, as the COPY writes them."""
    made = ChunkTerms.of(path, heading, content)
    terms, tfs = made.weighted()
    return terms, tfs, made.length


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
    cur.execute(_WRITE_STATS_SQL, params)
    # Fresh statistics for the planner, as for the chunks (postgres.py): a table it has never
    # analysed looks empty.
    cur.execute("ANALYZE docs_term_lists")
    cur.execute("ANALYZE docs_ref_stats")


def search_text(
    conn: Connection,
    workspace: str,
    ref: str,
    query: str,
    k: int,
    paths: Collection[str] | None,
) -> list[StoredHit]:
    """The k chunks of `ref` (of `paths`, when given) that best match `query` by BM25, best
    first, scored over the whole ref either way."""
    asked = query_terms(query)
    if not asked or k < 1:
        return []
    params: dict[str, Any] = {"workspace": workspace, "ref": ref, "terms": asked}
    row = conn.execute(_COUNTS_SQL, params).fetchone()
    if row is None or not row[0]:
        return []
    chunks, length, found, holding = int(row[0]), int(row[1]), row[2], row[3]
    held = dict(zip(found, holding, strict=True))
    hits: list[StoredHit] = []
    for kept in asked_terms(((t, int(held.get(t, 0))) for t in asked), chunks):
        params.update(
            terms=kept,
            idfs=[bm25_idf(chunks, int(held[t])) for t in kept],
            k1_plus_one=BM25_K1 + 1.0,
            k1=BM25_K1,
            one_minus_b=1.0 - BM25_B,
            b=BM25_B,
            avgdl=length / chunks if length else 1.0,
            k=k,
        )
        sql = TEXT_SEARCH_SQL
        if paths is not None:
            params["paths"] = sorted(set(paths))
            sql = TEXT_SEARCH_IN_PATHS_SQL
        hits = [StoredHit.from_columns(r[:6], r[6]) for r in conn.execute(sql, params)]
        if len(hits) == k:
            break
    return hits


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
