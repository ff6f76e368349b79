"""The inverted lists and the BM25 scoring both stores share (stores/bm25.py)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from docshelf.stores import bm25
from docshelf.stores.bm25 import ListsBuilder, RefLists, TermList
from docshelf.stores.terms import BM25_B, BM25_K1, bm25_idf

WORDS = ["alpha", "beta", "gamma", "delta", "code-1"]

# A chunk: its id and its terms' weighted frequencies (a term absent is not held).
chunk_strategy = st.tuples(
    st.one_of(st.integers(min_value=1, max_value=60), st.integers(min_value=1, max_value=2**40)),
    st.dictionaries(st.sampled_from(WORDS), st.sampled_from([1.0, 2.0, 3.0, 4.0, 7.0])),
    st.integers(min_value=1, max_value=400),
)


def entries(
    chunks: list[tuple[int, dict[str, float], int]],
) -> list[tuple[int, list[str], list[float], int]]:
    unique = {i: (i, sorted(f), [f[t] for t in sorted(f)], n) for i, f, n in chunks}
    return list(unique.values())


@given(st.lists(chunk_strategy, max_size=40))
def test_the_lists_hold_each_terms_chunks_in_the_order_of_their_ids(
    chunks: list[tuple[int, dict[str, float], int]],
) -> None:
    given_entries = entries(chunks)
    made = RefLists.of(reversed(given_entries))
    assert made.chunks == len(given_entries)
    assert made.length == sum(n for *_, n in given_entries)
    want: dict[str, list[tuple[int, float, int]]] = {}
    for i, terms, tfs, n in sorted(given_entries):
        for term, tf in zip(terms, tfs, strict=True):
            want.setdefault(term, []).append((i, tf, n))
    got = {
        term: list(zip(f.ids.tolist(), f.tfs.tolist(), f.lengths.tolist(), strict=True))
        for term, f in made.lists.items()
    }
    assert got == want
    for found in made.lists.values():
        again = TermList.of_blobs(*found.blobs())
        assert again.ids.tolist() == found.ids.tolist()
        assert again.tfs.tolist() == found.tfs.tolist()
        assert again.lengths.tolist() == found.lengths.tolist()


@given(
    st.lists(chunk_strategy, max_size=40),
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=1, max_value=5),
)
def test_lists_made_through_part_files_equal_those_made_in_memory(
    chunks: list[tuple[int, dict[str, float], int]], spill: int, parts: int
) -> None:
    # A ref too large to hold its entries at once spills them every `spill` entries into
    # `parts` files: its lists, its count and its length are the same as in memory.
    given_entries = entries(chunks)
    whole = RefLists.of(given_entries)
    made = ListsBuilder(spill_entries=spill, parts=parts)
    try:
        for entry in given_entries:
            made.add(*entry)
        lists = list(made.lists())
    finally:
        made.close()
    assert (made.chunks, made.length) == (whole.chunks, whole.length)
    assert sorted(term for term, _ in lists) == sorted(whole.lists)
    for term, found in lists:
        want = whole.lists[term]
        assert found.ids.tolist() == want.ids.tolist()
        assert found.tfs.tolist() == want.tfs.tolist()
        assert found.lengths.tolist() == want.lengths.tolist()
        assert found.ids.dtype == np.int64 and found.tfs.dtype == np.float32


def test_a_list_is_kept_as_postgresqls_send_functions_write_it() -> None:
    # int8send, float4send and int4send: big-endian, so PostgreSQL builds the bytes in SQL.
    found = TermList(np.array([1, 258]), np.array([3.0], dtype=np.float32), np.array([7]))
    ids, tfs, lengths = found.blobs()
    assert ids == bytes([0] * 7 + [1] + [0] * 6 + [1, 2])
    assert tfs == bytes([0x40, 0x40, 0, 0])
    assert lengths == bytes([0, 0, 0, 7])


@given(
    st.lists(chunk_strategy, min_size=1, max_size=40),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
    st.integers(min_value=1, max_value=12),
    st.booleans(),
)
def test_the_best_are_bm25_as_defined_ties_included(
    chunks: list[tuple[int, dict[str, float], int]], asked: list[str], k: int, subset: bool
) -> None:
    # Ids as far apart as 2**40 (sorted into slots) or close (summed in place) score alike.
    given_entries = entries(chunks)
    made = RefLists.of(given_entries)
    among = sorted(i for i, *_ in given_entries)[::2] if subset else None
    avgdl = made.length / made.chunks
    want: dict[int, float] = {}
    for i, terms, tfs, n in given_entries:
        if among is not None and i not in among:
            continue
        freq = dict(zip(terms, tfs, strict=True))
        held = [t for t in asked if t in freq and t in made.lists]
        if held:
            score = 0.0
            for t in held:
                idf = math.log(
                    (made.chunks - len(made.lists[t]) + 0.5) / (len(made.lists[t]) + 0.5)
                )
                idf = idf if idf > 0 else 1e-6
                f = freq[t]
                score += idf * (
                    f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * n / avgdl))
                )
            want[i] = score
    scored = [
        (bm25_idf(made.chunks, len(made.lists[t])), made.lists[t]) for t in asked if t in made.lists
    ]
    among_ids = None if among is None else np.array(among, dtype=np.int64)
    ids, scores = bm25.best(scored, made.chunks, made.length, k, among_ids)
    got = dict(zip(ids.tolist(), scores.tolist(), strict=True))
    ranked = sorted(want.values(), reverse=True)
    cut = ranked[k - 1] if len(ranked) >= k else -math.inf
    # The same operations in the same order: the same bits, so ties are the same ties.
    assert set(got) == {i for i, s in want.items() if s >= cut}
    for i, score in got.items():
        assert math.isclose(score, want[i], rel_tol=0.0)


def test_top_breaks_ties_by_path_then_chunk() -> None:
    ids = np.array([5, 6, 7, 8], dtype=np.int64)
    scores = np.array([1.0, 2.0, 1.0, 1.0])
    places = [(5, "b.md", 0), (6, "z.md", 0), (7, "a.md", 2), (8, "a.md", 1)]
    assert bm25.top(ids, scores, places, 3) == [(6, 2.0), (8, 1.0), (7, 1.0)]
