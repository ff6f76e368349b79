"""The PostgreSQL store's reads over many refs at once (a search over many workspaces): each is
one statement, or two, however many refs it covers.

The vector path (`walk_ef`), for one ref as for a union of them:
- A union of at most EXACT_MAX_CHUNKS chunks (one workspace among a thousand) is ranked exactly,
  through the (workspace, ref, path) index: milliseconds.
- A larger one walks the HNSW index of the distinct vectors (docs_vectors: a passage that many
  workspaces or refs hold is one node, migration 0011) for the nearest texts, and joins them to
  the union's rows by content hash (WALK_SQL). pgvector 0.6 has no iterative index scan: a walk
  yields hnsw.ef_search texts of the whole store, of which the union holds its share. So the
  walk's list is sized to the share, WALK_MARGIN times k over the share (never below the
  configured ef_search, nor WALK_DEPTH times k), and a union too small a share for pgvector's
  largest list (1,000) is ranked exactly. When the walk still comes back short, the union is
  ranked exactly, as a search of one ref does.
- A walk's rows are the exact ranking's whenever the walk finds the nearest texts: each row is
  scored by its text's vector, and copies of one text are ordered by workspace, path and chunk,
  as the exact ranking orders them.
The sizes come from docs_ref_stats (chunks per ref), one statement before the search.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from docshelf.rows import StoredFile, StoredHit, Vector
from docshelf.stores.common import blob_vector, files_by_ref
from docshelf.stores.contract import RefScope

Connection = psycopg.Connection[TupleRow]

# A union of refs of at most this many chunks is ranked exactly: about 10 ms on two cores, where
# exact over 42,000 took 70 ms (bench/org.py, 100 workspaces).
EXACT_MAX_CHUNKS = 5_000

# A walk's candidate list is this many times k over the union's share of the table, so that the
# filter leaves k with room to spare; past pgvector's largest list the union is ranked exactly.
WALK_MARGIN = 2.0
MAX_EF_SEARCH = 1000

# A walk's list is at least this many times k (up to MAX_EF_SEARCH): the nearest texts for k
# rows with room for the graph's misses. At 1,000 workspaces (bench/org.py), a list of 200 found
# 0.958 of the exact 60 candidates and one of 420 all of them; the walk took 46 ms against 28.
WALK_DEPTH = 7

# The scopes of a statement: (workspace, ref) pairs as two arrays, and (workspace, ref, path)
# triples for the scopes that rank some paths only. A scope is in one of the two, never both.
# IN_SCOPES filters rows found otherwise (the walk's, by content hash); SCOPED is the scopes'
# rows themselves, each scope read through the (workspace, ref, path) index (an OR of the two
# IN lists would make the planner scan the whole table).
_WHOLE = "SELECT * FROM unnest(%(ws)s::text[], %(refs)s::text[])"
_SOME = "SELECT * FROM unnest(%(pws)s::text[], %(prefs)s::text[], %(paths)s::text[])"
IN_SCOPES = f"((workspace, ref) IN ({_WHOLE}) OR (workspace, ref, path) IN ({_SOME}))"
SCOPED = (
    "(SELECT c.* FROM unnest(%(ws)s::text[], %(refs)s::text[]) AS s(workspace, ref) "
    "JOIN docs_chunks AS c ON c.workspace = s.workspace AND c.ref = s.ref UNION ALL "
    "SELECT c.* FROM unnest(%(pws)s::text[], %(prefs)s::text[], %(paths)s::text[]) "
    "AS s(workspace, ref, path) JOIN docs_chunks AS c "
    "ON c.workspace = s.workspace AND c.ref = s.ref AND c.path = s.path) AS scoped"
)

_COLUMNS = "workspace, path, chunk, heading, content, start_line, end_line"
# The nearest texts of the store by the HNSW index (ORDER BY the distance, LIMIT: the form
# pgvector needs to use it, with the list set by `walking`), then, text by text, the union's
# rows holding it, looked up through docs_chunks_content_hash (OFFSET 0 keeps the lookup a
# nested loop: a join the planner chose freely could scan the whole table). Nearest first, and
# copies of one text in the exact ranking's order; only the k kept are read whole (a text held
# by many workspaces brings many rows to sort). The query's vector is sent in binary
# (`%(vector)b`, pgvector's binary format).
WALK_SQL = (
    "WITH near AS MATERIALIZED (SELECT content_hash, embedding <=> %(vector)b AS distance "
    "FROM docs_vectors ORDER BY embedding <=> %(vector)b LIMIT %(ef)s), "
    "kept AS MATERIALIZED (SELECT held.id, near.distance FROM near CROSS JOIN LATERAL "
    "(SELECT id, workspace, path, chunk FROM docs_chunks "
    f"WHERE content_hash = near.content_hash AND {IN_SCOPES} OFFSET 0) AS held "
    'ORDER BY near.distance, held.workspace COLLATE "C", held.path COLLATE "C", held.chunk '
    "LIMIT %(k)s) "
    f"SELECT {_COLUMNS}, 1 - kept.distance AS score FROM kept JOIN docs_chunks USING (id) "
    'ORDER BY kept.distance, workspace COLLATE "C", path COLLATE "C", chunk'
)
EXACT_SQL = (
    f"SELECT {_COLUMNS}, 1 - (embedding <=> %(vector)b) AS score FROM {SCOPED} "
    'ORDER BY score DESC, workspace COLLATE "C", path COLLATE "C", chunk LIMIT %(k)s'
)
_SIZES_SQL = (
    "SELECT coalesce(sum(chunks) FILTER (WHERE (workspace, ref) IN "
    "(SELECT * FROM unnest(%(ws)s::text[], %(refs)s::text[]))), 0), coalesce(sum(chunks), 0) "
    "FROM docs_ref_stats"
)
_COUNT_UP_TO_K_SQL = f"SELECT count(*) FROM (SELECT 1 FROM {SCOPED} LIMIT %(k)s) AS held"


def scope_params(scopes: Sequence[RefScope]) -> dict[str, Any]:
    """The parameters of IN_SCOPES for `scopes`."""
    params: dict[str, Any] = {"ws": [], "refs": [], "pws": [], "prefs": [], "paths": []}
    for workspace, ref, paths in scopes:
        if paths is None:
            params["ws"].append(workspace)
            params["refs"].append(ref)
            continue
        for path in sorted(set(paths)):
            params["pws"].append(workspace)
            params["prefs"].append(ref)
            params["paths"].append(path)
    return params


def currents(conn: Connection, workspaces: Collection[str]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT workspace, ref FROM docs_current WHERE workspace = ANY(%s::text[])",
        (sorted(set(workspaces)),),
    ).fetchall()
    return {str(w): str(r) for w, r in rows}


def indexed_refs(conn: Connection, refs: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
    pairs = sorted(set(refs))
    # A ref has totals (docs_ref_stats) exactly when it has chunks: both are written and
    # deleted in one transaction. The totals are a row a ref, where the chunks' index is many.
    rows = conn.execute(
        "SELECT s.workspace, s.ref FROM unnest(%s::text[], %s::text[]) AS q(workspace, ref) "
        "JOIN docs_ref_stats AS s ON s.workspace = q.workspace AND s.ref = q.ref",
        ([w for w, _ in pairs], [r for _, r in pairs]),
    ).fetchall()
    return {(str(w), str(r)) for w, r in rows}


def search_refs(
    conn: Connection, scopes: Sequence[RefScope], query: Vector, k: int, ef_search: int
) -> list[StoredHit]:
    """The k nearest chunks of the union of `scopes` (see the module's docstring)."""
    params = {**scope_params(scopes), "vector": query, "k": k}
    rows: list[TupleRow] = []
    ef = walk_ef(conn, [(w, r) for w, r, _ in scopes], k, ef_search)
    if ef is not None:
        with walking(conn, ef, ef_search):
            rows = conn.execute(WALK_SQL, {**params, "ef": ef}).fetchall()
        if len(rows) < k:
            held = int((conn.execute(_COUNT_UP_TO_K_SQL, params).fetchone() or (0,))[0])
            if held > len(rows):
                rows = []
    if not rows:
        rows = conn.execute(EXACT_SQL, params).fetchall()
    hits = [
        dataclasses.replace(StoredHit.from_columns(row[1:7], row[7]), workspace=str(row[0]))
        for row in rows
    ]
    # Scores as the caller compares them (two distances may round to one score).
    hits.sort(key=lambda h: (-h.score, h.workspace, h.path, h.chunk))
    return hits


def walk_ef(
    conn: Connection, refs: Sequence[tuple[str, str]], k: int, ef_search: int
) -> int | None:
    """The candidate list to walk the shared HNSW index with for the union of `refs` (at least
    `ef_search`, the configured one), or None when the union is ranked exactly: small, or too
    small a share of the table for a list pgvector allows."""
    whole = {"ws": [w for w, _ in refs], "refs": [r for _, r in refs]}
    union, table = (int(n) for n in conn.execute(_SIZES_SQL, whole).fetchone() or (0, 0))
    if union <= EXACT_MAX_CHUNKS or not table:
        return None
    needed = math.ceil(WALK_MARGIN * k * table / union)
    if needed > MAX_EF_SEARCH:
        return None
    return min(MAX_EF_SEARCH, max(ef_search, needed, WALK_DEPTH * k))


@contextlib.contextmanager
def walking(conn: Connection, ef: int, ef_search: int) -> Iterator[None]:
    """hnsw.ef_search at `ef` for the statements inside, then back at the pool's `ef_search`."""
    if ef == ef_search:
        yield
        return
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
    try:
        yield
    finally:
        # On a connection that broke meanwhile the pool drops it; the search's error stands.
        with contextlib.suppress(psycopg.Error):
            conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef_search),))


def file_titles_refs(
    conn: Connection, files: Collection[tuple[str, str, str]]
) -> dict[tuple[str, str], Vector]:
    wanted = sorted(set(files))
    rows = conn.execute(
        "SELECT f.workspace, f.path, f.title_embedding FROM docs_ref_files AS f "
        "JOIN unnest(%s::text[], %s::text[], %s::text[]) AS q(workspace, ref, path) "
        "ON f.workspace = q.workspace AND f.ref = q.ref AND f.path = q.path "
        "WHERE f.title_embedding IS NOT NULL",
        ([w for w, _, _ in wanted], [r for _, r, _ in wanted], [p for _, _, p in wanted]),
    ).fetchall()
    return {(str(w), str(p)): blob_vector(bytes(v)) for w, p, v in rows}


def files_refs(
    conn: Connection, refs: Collection[tuple[str, str]], prefix: str
) -> dict[tuple[str, str], list[StoredFile]]:
    wanted = sorted(set(refs))
    rows = conn.execute(
        "SELECT f.workspace, f.ref, f.path, f.lines, f.size FROM docs_ref_files AS f "
        "JOIN unnest(%s::text[], %s::text[]) AS q(workspace, ref) "
        "ON f.workspace = q.workspace AND f.ref = q.ref WHERE starts_with(f.path, %s) "
        'ORDER BY f.path COLLATE "C"',
        ([w for w, _ in wanted], [r for _, r in wanted], prefix),
    ).fetchall()
    return files_by_ref(rows)
