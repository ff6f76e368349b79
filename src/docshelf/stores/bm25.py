"""BM25 over a ref's inverted lists, scored with numpy: the keyword ranking of both stores.

- A ref's lists (`RefLists.of`) hold, per term, the ids of the ref's chunks that hold it, in
  ascending order, with the term's column-weighted frequency in each and each one's length in
  terms (stores/terms.py makes the terms). The ref's chunk count and total length are BM25's N
  and mean length: the statistics are the ref's own, so a ref ranks alike whatever else the
  store holds.
- A search (`best`) reads the lists of the query's few terms and sums each chunk's score over
  them alone, in the query's order of terms: its cost is the length of those lists, never the
  ref's size, and it scores nothing it does not return a candidate for.
- The formula is FTS5's bm25() (fts5_aux.c): idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b *
  length / avgdl)), idf = ln((N - n + 0.5) / (n + 0.5)), at or below 0 counting as 1e-6.
"""

from __future__ import annotations

import dataclasses
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from docshelf.rows import StoredHit
from docshelf.stores.terms import BM25_B, BM25_K1, asked_terms, bm25_idf

# How both stores keep a list as bytes: each id, frequency and length big-endian, as PostgreSQL's
# int8send, float4send and int4send write them (its lists are made in SQL). Weighted frequencies
# are small sums of the column weights: float32 holds them exactly.
IDS_DTYPE = np.dtype(">i8")
TFS_DTYPE = np.dtype(">f4")
LENGTHS_DTYPE = np.dtype(">i4")

# A search reads the rows of all its candidates at once when they are at most this many times k
# (they are k unless chunks tie at the k-th score); more, and it reads their paths first.
ROWS_AT_ONCE_PER_HIT = 2

# The columns of a hit's row, as StoredHit.from_columns takes them after the id, and those that
# break ties.
HIT_COLUMNS = "id, path, chunk, heading, content, start_line, end_line"
PLACE_COLUMNS = "id, path, chunk"
# The same, with each chunk's workspace: a search of several refs.
HIT_COLUMNS_OF_MANY = f"{HIT_COLUMNS}, workspace"
PLACE_COLUMNS_OF_MANY = f"{PLACE_COLUMNS}, workspace"

# Scores are summed into one slot per id between the smallest and the largest id of the lists
# when that span is at most this many times the number of entries (a ref's ids are mostly
# consecutive); otherwise the ids are sorted into slots first.
DENSE_SPAN_PER_ENTRY = 8

# A ref's lists are made in memory up to this many entries (a chunk's distinct term each: about
# 100 a chunk, 24 bytes each), then in PARTS parts through temporary files, so that writing a
# ref of 200,000 chunks holds a part of its entries, not all of them. Writing 20,000 chunks
# peaked at 265 MiB with the entries all in memory, and at 123 MiB in parts, in the same 9.4 s
# (an instant stand-in embedder; BENCHMARKS.md).
SPILL_ENTRIES = 250_000
PARTS = 64
ENTRY_DTYPE = np.dtype([("term", "<i8"), ("id", "<i8"), ("tf", "<f4"), ("length", "<i4")])


@dataclass(frozen=True, slots=True)
class TermList:
    """The chunks of a ref holding one term: their ids (ascending), the term's weighted
    frequency in each, and each one's length."""

    ids: npt.NDArray[np.int64]
    tfs: npt.NDArray[np.float32]
    lengths: npt.NDArray[np.int32]

    def __len__(self) -> int:
        return len(self.ids)

    def blobs(self) -> tuple[bytes, bytes, bytes]:
        return (
            self.ids.astype(IDS_DTYPE).tobytes(),
            self.tfs.astype(TFS_DTYPE).tobytes(),
            self.lengths.astype(LENGTHS_DTYPE).tobytes(),
        )

    @classmethod
    def of_blobs(cls, ids: bytes, tfs: bytes, lengths: bytes) -> TermList:
        return cls(
            np.frombuffer(ids, dtype=IDS_DTYPE).astype(np.int64),
            np.frombuffer(tfs, dtype=TFS_DTYPE).astype(np.float32),
            np.frombuffer(lengths, dtype=LENGTHS_DTYPE).astype(np.int32),
        )


def joined(blobs: Sequence[tuple[bytes, bytes, bytes]]) -> TermList:
    """The lists of one term in several refs (each as its three blobs) as one: chunk ids are
    unique across refs, so a search over several refs scores their union as one corpus. The ids
    ascend within each ref's part only, which scoring does not need; the blobs are joined before
    they are decoded, one array each however many refs."""
    ids, tfs, lengths = zip(*blobs, strict=True) if blobs else ((), (), ())
    return TermList.of_blobs(b"".join(ids), b"".join(tfs), b"".join(lengths))


def concatenated(parts: Sequence[TermList]) -> TermList:
    """Lists of one term in disjoint sets of refs as one (see `joined`)."""
    if len(parts) == 1:
        return parts[0]
    return TermList(
        np.concatenate([p.ids for p in parts]),
        np.concatenate([p.tfs for p in parts]),
        np.concatenate([p.lengths for p in parts]),
    )


@dataclass(frozen=True, slots=True)
class RefLists:
    """A ref's inverted lists and totals."""

    chunks: int
    length: int
    lists: dict[str, TermList]

    @classmethod
    def of(cls, chunks: Iterable[tuple[int, Sequence[str], Sequence[float], int]]) -> RefLists:
        """The lists of chunks given as (id, distinct terms, their weighted frequencies,
        length), in any order."""
        made = ListsBuilder()
        try:
            for entry in chunks:
                made.add(*entry)
            return cls(made.chunks, made.length, dict(made.lists()))
        finally:
            made.close()


class ListsBuilder:
    """A ref's inverted lists made in memory that does not grow with the ref: the entries (a
    chunk id, term, frequency and length each) are kept in compact arrays, and past
    SPILL_ENTRIES of them they go to PARTS temporary files, by term. The lists are then made a
    part at a time (`lists`), each term's ids ascending. Only the vocabulary stays whole."""

    def __init__(self, spill_entries: int | None = None, parts: int | None = None) -> None:
        self.chunks = self.length = 0
        self._spill_entries = spill_entries or SPILL_ENTRIES
        self._parts = parts or PARTS
        self._vocabulary: dict[str, int] = {}
        self._columns = _Columns()
        self._files: list[Any] | None = None

    def add(
        self, chunk_id: int, terms: Sequence[str], weights: Sequence[float], length: int
    ) -> None:
        self.chunks += 1
        self.length += length
        vocabulary = self._vocabulary
        n = len(terms)
        self._columns.term_of.extend([vocabulary.setdefault(t, len(vocabulary)) for t in terms])
        self._columns.ids.extend([chunk_id] * n)
        self._columns.tfs.extend(weights)
        self._columns.lengths.extend([length] * n)
        if len(self._columns.ids) >= self._spill_entries:
            self._spill()

    def _spill(self) -> None:
        """The entries so far into the part files (a term's part: its number modulo PARTS)."""
        if self._files is None:
            self._files = [
                tempfile.TemporaryFile(prefix="docshelf-lists-")  # noqa: SIM115 - closed by close()
                for _ in range(self._parts)
            ]
        records = self._columns.records()
        self._columns = _Columns()
        part_of = records["term"] % self._parts
        for part, file in enumerate(self._files):
            file.write(records[part_of == part].tobytes())

    def lists(self) -> Iterator[tuple[str, TermList]]:
        """Every term's list, a part at a time (in memory alone, when nothing was spilled)."""
        if not self._vocabulary:
            return
        names = list(self._vocabulary)
        if self._files is None:
            yield from _grouped(self._columns.records(), names)
            return
        self._spill()
        for file in self._files:
            file.seek(0)
            records = np.frombuffer(file.read(), dtype=ENTRY_DTYPE)
            yield from _grouped(records, names)
            del records

    def close(self) -> None:
        for file in self._files or ():
            file.close()
        self._files = None


def _grouped(records: npt.NDArray[Any], names: Sequence[str]) -> Iterator[tuple[str, TermList]]:
    """The lists of the terms of `records`, each term's ids ascending."""
    if not len(records):
        return
    order = np.lexsort((records["id"], records["term"]))
    by_term = records["term"][order]
    all_ids = records["id"][order].astype(np.int64)
    all_tfs = records["tf"][order].astype(np.float32)
    all_lengths = records["length"][order].astype(np.int32)
    starts = np.flatnonzero(np.r_[True, by_term[1:] != by_term[:-1]])
    ends = np.r_[starts[1:], len(by_term)]
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        yield names[by_term[s]], TermList(all_ids[s:e], all_tfs[s:e], all_lengths[s:e])


@dataclass(slots=True)
class _Columns:
    term_of: array[int] = field(default_factory=lambda: array("q"))
    ids: array[int] = field(default_factory=lambda: array("q"))
    tfs: array[float] = field(default_factory=lambda: array("f"))
    lengths: array[int] = field(default_factory=lambda: array("i"))

    def records(self) -> npt.NDArray[Any]:
        records = np.empty(len(self.ids), dtype=ENTRY_DTYPE)
        records["term"] = np.frombuffer(self.term_of, dtype=np.int64)
        records["id"] = np.frombuffer(self.ids, dtype=np.int64)
        records["tf"] = np.frombuffer(self.tfs, dtype=np.float32)
        records["length"] = np.frombuffer(self.lengths, dtype=np.int32)
        return records


def best(
    lists: Sequence[tuple[float, TermList]],
    chunks: int,
    length: int,
    k: int,
    among: npt.NDArray[np.int64] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The ids and BM25 scores of the chunks that score at least as well as the k-th best (ties
    included, so that the caller can break them by path and chunk), for the terms of `lists`
    (each with its idf, in the query's order) in a ref of `chunks` chunks of total `length`;
    with `among` (sorted ids), only those chunks. Unordered."""
    avgdl = length / chunks if length else 1.0
    parts_ids: list[npt.NDArray[np.int64]] = []
    parts_scores: list[npt.NDArray[np.float64]] = []
    for idf, found in lists:
        ids, tfs, lengths = found.ids, found.tfs.astype(np.float64), found.lengths
        if among is not None:
            keep = np.isin(ids, among, assume_unique=True)
            ids, tfs, lengths = ids[keep], tfs[keep], lengths[keep]
        norm = BM25_K1 * ((1.0 - BM25_B) + BM25_B * lengths.astype(np.float64) / avgdl)
        parts_ids.append(ids)
        parts_scores.append(idf * ((tfs * (BM25_K1 + 1.0)) / (tfs + norm)))
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    if not parts_ids or k < 1:
        return empty
    all_ids = np.concatenate(parts_ids)
    if len(all_ids) == 0:
        return empty
    # bincount adds each slot's weights in the order given: each chunk's score is summed in the
    # query's order of terms, as FTS5 sums its phrases.
    all_scores = np.concatenate(parts_scores)
    low, high = int(all_ids.min()), int(all_ids.max())
    if high - low < DENSE_SPAN_PER_ENTRY * len(all_ids):
        slots = all_ids - low
        sums = np.bincount(slots, weights=all_scores)
        held = np.bincount(slots) > 0
        ids_out = np.flatnonzero(held).astype(np.int64) + low
        scores = sums[held]
    else:
        ids_out, inverse = np.unique(all_ids, return_inverse=True)
        scores = np.bincount(inverse, weights=all_scores)
    if len(scores) > k:
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= cut
        ids_out, scores = ids_out[keep], scores[keep]
    return ids_out.astype(np.int64), scores.astype(np.float64)


def ranked(
    asked: Sequence[str],
    held: Mapping[str, int],
    chunks: int,
    length: int,
    k: int,
    read: Callable[[list[str]], Iterable[tuple[str, TermList]]],
    among: npt.NDArray[np.int64] | None = None,
    known: Mapping[str, TermList] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """`best` for the query's terms `asked` in a ref of `chunks` chunks of total `length`, of
    which `held` says how many hold each term: the sets of terms of terms.asked_terms in turn,
    until one finds k chunks. `read` gives the lists of the terms it is given (each list is read
    once), when `known` lacks them."""
    lists: dict[str, TermList] = dict(known or {})
    found = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    for kept in asked_terms(((t, held.get(t, 0)) for t in asked), chunks):
        wanted = [t for t in kept if t not in lists]
        if wanted:
            lists.update(read(wanted))
        # A list read after the counts may be gone (a prune of the ref between the two reads):
        # such a term scores nothing rather than failing the search.
        scored = [(bm25_idf(chunks, held[t]), lists[t]) for t in kept if t in lists]
        found = best(scored, chunks, length, k, among)
        if len(found[0]) >= k:
            break
    return found


def hits(
    ids: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float64],
    k: int,
    rows_of: Callable[[list[int], bool], Sequence[tuple[Any, ...]]],
) -> list[StoredHit]:
    """The k best of the chunks `ids` by `scores`, best first, ties broken by path and chunk;
    `rows_of(ids, whole)` reads the store's rows: with `whole`, HIT_COLUMNS, else PLACE_COLUMNS.
    When the candidates are few (no long tie at the k-th score) their rows are read at once;
    otherwise their paths first, then the rows of the k best."""
    if len(ids) == 0:
        return []
    score_of = dict(zip(ids.tolist(), scores.tolist(), strict=True))
    wanted = list(score_of)
    if len(wanted) > ROWS_AT_ONCE_PER_HIT * k:
        wanted = [i for i, _ in top(ids, scores, rows_of(wanted, False), k)]
    found = [hit_of_many(r, score_of[r[0]]) for r in rows_of(wanted, True)]
    found.sort(key=lambda h: (-h.score, h.workspace, h.path, h.chunk))
    return found[:k]


def hit_of_many(row: Sequence[Any], score: float) -> StoredHit:
    """A hit of HIT_COLUMNS, or of HIT_COLUMNS and the workspace (a search of several refs)."""
    hit = StoredHit.from_columns(row[1:7], score)
    return hit if len(row) == 7 else dataclasses.replace(hit, workspace=str(row[7]))


def top(
    ids: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float64],
    places: Iterable[Sequence[Any]],
    k: int,
) -> list[tuple[int, float]]:
    """The k best of `ids` by `scores`, ties broken by workspace, path and chunk (`places`:
    each id's path and chunk number, then its workspace in a search of several refs), best
    first."""
    score_of = dict(zip(ids.tolist(), scores.tolist(), strict=True))
    order = sorted(
        (-score_of[p[0]], str(p[3]) if len(p) > 3 else "", p[1], p[2], p[0]) for p in places
    )
    return [(i, -negative) for negative, _, _, _, i in order[:k]]
