"""The PostgreSQL store's merged term lists: per term, one row holding the inverted lists of the
current refs of every workspace (migration 0012), so that a search over many workspaces reads a
row per asked term rather than a row per term and ref (postgres_text.search_text_refs).

- `merge` copies the lists of the current refs into docs_merged_lists, in one transaction, when
  they have moved on enough since the last merge (MERGE_STALE_SHARE of their chunks written
  since, or MERGE_WASTE_SHARE of the merged entries no longer current), and there are at least
  MERGE_MIN_REFS of them. `docshelf index` (one workspace or a manifest) and `serve`'s sync call
  it after they index; a search never waits for it.
- Each part of a merged list names the write of the ref it was copied from (docs_ref_stats.key,
  new at each write), so a part is read only for a ref still as it was merged: a ref written
  again, pinned at another commit or not merged at all is read from docs_term_lists, beside the
  merged rows (`Union.split`). A prune leaves the parts of the refs it deleted, which no search
  names, until the next merge.
- A union reads the merged rows when it covers at least half of the merged refs
  (MERGED_READ_SHARE); a search of one workspace among many reads its own lists, as before.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.rows import TupleRow

from docshelf.stores.bm25 import IDS_DTYPE, LENGTHS_DTYPE, TermList

Connection = psycopg.Connection[TupleRow]

# Fewer current refs than this are not merged: their own lists are a few rows a term (at 100
# workspaces a search over all took 20 ms without merging, bench/org.py).
MERGE_MIN_REFS = 32

# The lists are merged again when the current refs' chunks written since the last merge are
# this share of all of theirs; until then those refs are read from their own lists, a row each.
MERGE_STALE_SHARE = 0.1

# ... or when this share of the merged entries belongs to refs no longer current (a search reads
# and drops them).
MERGE_WASTE_SHARE = 0.5

# A union reads the merged lists when it holds at least this share of the merged refs: each
# merged row is read whole, so a smaller union (one workspace among many) reads its own lists.
MERGED_READ_SHARE = 0.5

# Key of the advisory lock under which the lists are merged ("merge" in ASCII): two servers
# syncing one store merge once.
MERGE_LOCK_KEY = 0x6D65726765

# How a merged row keeps its parts' keys and their numbers of entries (int8send, int4send).
KEYS_DTYPE = IDS_DTYPE
COUNTS_DTYPE = LENGTHS_DTYPE

# The current refs of every workspace: each one's key and chunks, and whether it is merged.
_CURRENT_SQL = (
    "SELECT s.key, s.chunks, m.key IS NOT NULL FROM docs_current AS c "
    "JOIN docs_ref_stats AS s ON s.workspace = c.workspace AND s.ref = c.ref "
    "LEFT JOIN docs_merged_refs AS m ON m.key = s.key"
)
# Every part of a merged list, in the order of the keys (each aggregate orders alike).
_PARTS = "ORDER BY s.key"
_MERGE_SQL = (
    "INSERT INTO docs_merged_lists (term, keys, counts, ids, tfs, lengths) "
    f"SELECT t.term, string_agg(int8send(s.key), ''::bytea {_PARTS}), "
    f"string_agg(int4send(t.chunks), ''::bytea {_PARTS}), "
    f"string_agg(t.ids, ''::bytea {_PARTS}), string_agg(t.tfs, ''::bytea {_PARTS}), "
    f"string_agg(t.lengths, ''::bytea {_PARTS}) "
    "FROM docs_term_lists AS t "
    "JOIN docs_ref_stats AS s ON s.workspace = t.workspace AND s.ref = t.ref "
    "JOIN docs_merged_refs AS m ON m.key = s.key GROUP BY t.term"
)

# The refs of a union: each one's key, chunks and length, whether it is merged, and how many
# refs are.
_UNION_SQL = (
    "SELECT r.workspace, r.ref, s.key, s.chunks, s.length, m.key IS NOT NULL, "
    "(SELECT count(*) FROM docs_merged_refs) "
    "FROM unnest(%(ws)s::text[], %(refs)s::text[]) AS r(workspace, ref) "
    "JOIN docs_ref_stats AS s ON s.workspace = r.workspace AND s.ref = r.ref "
    "LEFT JOIN docs_merged_refs AS m ON m.key = s.key"
)
_COUNTS_SQL = "SELECT term, keys, counts FROM docs_merged_lists WHERE term = ANY(%s::text[])"
_LISTS_SQL = (
    "SELECT term, keys, counts, ids, tfs, lengths FROM docs_merged_lists "
    "WHERE term = ANY(%s::text[])"
)


@dataclass(frozen=True, slots=True)
class Merged:
    """What a merge did: the refs and terms merged, and how long it took."""

    refs: int
    terms: int
    seconds: float


def merge(conn: Connection, *, force: bool = False, min_refs: int | None = None) -> Merged | None:
    """Merge the lists of the current refs when they have moved on enough since the last merge
    (see the module's docstring), or with `force` whenever there are `min_refs` of them
    (default MERGE_MIN_REFS); None when the merged lists stay as they were, or another process
    is merging. One transaction, in one snapshot: searches read the merged lists before it until
    it commits. `conn` is in no transaction yet."""
    started = time.perf_counter()
    fewest = MERGE_MIN_REFS if min_refs is None else min_refs
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (MERGE_LOCK_KEY,))
        if not _first(locked.fetchone()):
            return None
        current = conn.execute(_CURRENT_SQL).fetchall()
        if len(current) < fewest:
            return None
        if not force and not _moved_on(conn, current):
            return None
        conn.execute("DELETE FROM docs_merged_lists")
        conn.execute("DELETE FROM docs_merged_refs")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO docs_merged_refs (key, chunks) VALUES (%s, %s)",
                [(key, chunks) for key, chunks, _ in current],
            )
            cur.execute(_MERGE_SQL)
            terms = cur.rowcount
    return Merged(len(current), terms, time.perf_counter() - started)


def _moved_on(conn: Connection, current: Sequence[tuple[Any, ...]]) -> bool:
    """Whether the current refs have moved on enough since the last merge to merge again."""
    every = sum(int(chunks) for _, chunks, _ in current)
    fresh = sum(int(chunks) for _, chunks, merged in current if not merged)
    row = conn.execute("SELECT coalesce(sum(chunks), 0) FROM docs_merged_refs").fetchone()
    merged = int(_first(row))
    live = every - fresh
    return fresh > MERGE_STALE_SHARE * every or merged - live > MERGE_WASTE_SHARE * merged


def _first(row: tuple[Any, ...] | None) -> Any:
    assert row is not None
    return row[0]


@dataclass(frozen=True, slots=True)
class Union:
    """The refs of a search over many: the totals of BM25 (their chunks and length), the keys
    of those read from the merged lists (sorted), and the others, read from their own lists
    (as the `ws` and `refs` arrays of postgres_text's statements)."""

    chunks: int
    length: int
    merged: npt.NDArray[np.int64]
    own: dict[str, list[str]]

    @classmethod
    def split(cls, conn: Connection, refs: dict[str, list[str]]) -> Union:
        """The union of `refs` (`ws` and `refs` arrays); a ref without chunks is left out. The
        merged lists are read when the union holds MERGED_READ_SHARE of the refs merged."""
        rows = conn.execute(_UNION_SQL, refs).fetchall()
        covered = [int(key) for _, _, key, _, _, merged, _ in rows if merged]
        merged_refs = int(rows[0][6]) if rows else 0
        together = bool(covered) and len(covered) >= MERGED_READ_SHARE * merged_refs
        own: dict[str, list[str]] = {"ws": [], "refs": []}
        for workspace, ref, _, _, _, merged, _ in rows:
            if not (together and merged):
                own["ws"].append(workspace)
                own["refs"].append(ref)
        return cls(
            sum(int(r[3]) for r in rows),
            sum(int(r[4]) for r in rows),
            np.array(sorted(covered) if together else [], dtype=np.int64),
            own,
        )

    def counts(self, conn: Connection, terms: list[str]) -> dict[str, int]:
        """How many of the merged refs' chunks hold each of `terms` (those some hold)."""
        if not len(self.merged):
            return {}
        rows = conn.cursor(binary=True).execute(_COUNTS_SQL, (terms,)).fetchall()
        held = {}
        for term, keys, counts in rows:
            wanted = self._wanted(keys)
            n = int(np.frombuffer(counts, dtype=COUNTS_DTYPE)[wanted].sum())
            if n:
                held[term] = n
        return held

    def lists(self, conn: Connection, terms: list[str]) -> dict[str, TermList]:
        """The merged refs' lists of `terms`, each as one."""
        if not len(self.merged):
            return {}
        rows = conn.cursor(binary=True).execute(_LISTS_SQL, (terms,)).fetchall()
        found = {}
        for term, keys, counts, ids, tfs, lengths in rows:
            whole = TermList.of_blobs(ids, tfs, lengths)
            wanted = self._wanted(keys)
            if not wanted.all():
                entries = np.repeat(wanted, np.frombuffer(counts, dtype=COUNTS_DTYPE))
                whole = TermList(whole.ids[entries], whole.tfs[entries], whole.lengths[entries])
            if len(whole):
                found[term] = whole
        return found

    def _wanted(self, keys: bytes) -> npt.NDArray[np.bool_]:
        """Which parts of a merged row (by their `keys`) belong to the union."""
        parts = np.frombuffer(keys, dtype=KEYS_DTYPE).astype(np.int64)
        return np.isin(parts, self.merged, assume_unique=True)
