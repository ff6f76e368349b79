"""Answering a query on both real stores: refusals with their bounds, the ref answered from,
hybrid ranking, distinct passages and the rendered answer."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from docshelf.app import Service
from docshelf.errors import ConfigError, EmbeddingError, NotIndexedError
from docshelf.indexer import Indexer
from docshelf.present import render_answer
from docshelf.rows import StoredHit, Vector
from docshelf.search import (
    MAX_TOP_K,
    TITLE_WEIGHT,
    Answer,
    Fusion,
    Hit,
    Searcher,
    check_top_k,
    distinct,
    fuse,
)
from docshelf.stores import SQLiteStore
from docshelf.stores.postgres import PostgresStore
from tests.support.indexing import FakeEmbedder, MemorySource
from tests.support.service import build_service

Store = SQLiteStore | PostgresStore

DOCS = {
    "docs/services/checkout.md": "# Checkout\n\n## Owners\n\nThe payments team owns checkout.\n",
    "docs/runbooks/timeout.md": "# Timeout\n\nRaise PAYMENT_TIMEOUT_MS to 30000 and restart.\n",
    "docs/glossary.md": "# Glossary\n\nSKU: stock keeping unit.\n",
}


@pytest.fixture
def indexed(store: Store) -> tuple[Indexer, MemorySource]:
    source = MemorySource()
    source.add("a" * 40, DOCS)
    indexer = Indexer(store, FakeEmbedder(), source)
    indexer.index("a" * 40)
    return indexer, source


@pytest.fixture
def searcher(store: Store, indexed: tuple[Indexer, MemorySource]) -> Service:
    return build_service(store, FakeEmbedder(), "ws", index_hint="docshelf index ~/src/shop")


@pytest.mark.parametrize("query", ["", "   ", None, 42, ["who"]])
def test_a_missing_or_blank_query_is_refused(searcher: Service, query: object) -> None:
    with pytest.raises(ConfigError, match="query must be a non-empty string"):
        searcher.search(query)


@pytest.mark.parametrize("top_k", [0, 21, -1, 2.5, "5", True, False, None, 10**30, float("nan")])
def test_a_top_k_that_is_not_a_whole_number_from_1_to_20_is_refused_not_clamped(
    searcher: Service, top_k: object
) -> None:
    with pytest.raises(ConfigError, match="top_k must be a whole number from 1 to 20"):
        searcher.search("checkout", top_k)


def test_a_whole_float_top_k_counts_as_that_number() -> None:
    assert check_top_k(3.0) == 3
    assert check_top_k(MAX_TOP_K) == MAX_TOP_K


def test_an_empty_workspace_says_it_is_not_indexed_and_how_to_index_it(store: Store) -> None:
    empty = build_service(store, FakeEmbedder(), "ws", index_hint="docshelf index ~/src/shop")
    with pytest.raises(
        NotIndexedError, match=r"not indexed yet; index it with docshelf index ~/src/shop"
    ):
        empty.search("checkout")


def test_the_answer_comes_from_the_current_ref(searcher: Service) -> None:
    answer = searcher.search("who owns checkout", 2)
    assert (answer.ref, answer.note, answer.mode) == ("a" * 40, None, "hybrid")
    assert answer.hits[0].path == "docs/services/checkout.md"
    assert len(answer.hits) == 2


def test_a_pinned_ref_is_answered_from_even_after_current_moves(
    store: Store, indexed: tuple[Indexer, MemorySource], searcher: Service
) -> None:
    indexer, source = indexed
    release = indexer.pin("a" * 40)
    source.add("b" * 40, {"docs/new.md": "# New\n\nEverything changed: checkout moved.\n"})
    indexer.index("b" * 40)
    pinned = searcher.search("checkout", 5, ref="a" * 40)
    assert pinned.ref == "a" * 40 and pinned.note is None
    assert "docs/new.md" not in {h.path for h in pinned.hits}
    current = searcher.search("checkout", 5)
    assert current.ref == "b" * 40
    assert {h.path for h in current.hits} == {"docs/new.md"}
    release()


def test_a_pinned_ref_without_docs_falls_back_to_current_with_a_note_naming_both(
    searcher: Service,
) -> None:
    answer = searcher.search("checkout", 3, ref="c" * 40)
    assert answer.ref == "a" * 40
    assert answer.note is not None
    assert "c" * 12 in answer.note and "a" * 12 in answer.note
    assert render_answer(answer).startswith(answer.note + "\n\n")


def test_text_mode_finds_exact_identifiers(searcher: Service) -> None:
    answer = searcher.search("PAYMENT_TIMEOUT_MS", 1, mode="text")
    assert [h.path for h in answer.hits] == ["docs/runbooks/timeout.md"]


def test_without_an_embedder_search_is_text_only(
    store: Store, indexed: tuple[Indexer, MemorySource]
) -> None:
    text_only = build_service(store, None, "ws")
    assert text_only.search("glossary SKU", 1).mode == "text"
    with pytest.raises(ConfigError, match="needs an embedder"):
        text_only.search("glossary", 1, mode="hybrid")


def test_an_unknown_mode_is_refused(searcher: Service) -> None:
    with pytest.raises(ConfigError, match="choose hybrid, vector or text"):
        searcher.search("checkout", 1, mode="fuzzy")


def hit(path: str, chunk: int, start: int, end: int, score: float = 0.0) -> StoredHit:
    return StoredHit(path, chunk, "H", f"{path} {chunk}", start, end, score)


def test_fusion_ranks_by_weighted_reciprocal_rank() -> None:
    a, b, c = hit("a.md", 0, 1, 5), hit("b.md", 0, 1, 5), hit("c.md", 0, 1, 5)
    fused = fuse([a, b], [c, b], Fusion(vector_weight=1.0, text_weight=1.0, rrf_k=60))
    assert [h.path for h, _ in fused] == ["b.md", "a.md", "c.md"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 62)
    text_heavy = fuse([a, b], [c, b], Fusion(vector_weight=0.1, text_weight=1.0, rrf_k=60))
    assert [h.path for h, _ in text_heavy][:2] == ["b.md", "c.md"]


def test_overlapping_pieces_of_one_section_count_once() -> None:
    ranked = [
        (hit("a.md", 1, 30, 60), 0.9),
        (hit("a.md", 0, 1, 32), 0.8),  # overlaps the better piece: dropped
        (hit("a.md", 2, 61, 90), 0.7),  # the next piece, no overlap: kept
        (hit("b.md", 0, 30, 60), 0.6),  # same lines, another file: kept
    ]
    assert [(h.path, h.start_line) for h in distinct(ranked, 5)] == [
        ("a.md", 30),
        ("a.md", 61),
        ("b.md", 30),
    ]
    assert len(distinct(ranked, 2)) == 2


def test_the_rendered_answer_has_a_header_and_each_excerpt_with_path_lines_and_heading() -> None:
    answer = Answer(
        "ws",
        "f" * 40,
        "who owns checkout?",
        "hybrid",
        None,
        [Hit("docs/a.md", "Checkout > Owners", 3, 5, 0.5, "## Owners\n\nPayments.\n")],
    )
    assert render_answer(answer) == (
        "1 excerpt for 'who owns checkout?' from the documentation at commit ffffffffffff\n"
        "\n"
        "[1] docs/a.md:3-5 (Checkout > Owners)\n"
        "## Owners\n\nPayments.\n"
    )
    empty = Answer("ws", "f" * 40, "zzz", "text", None, [])
    assert "nothing matched; try other words" in render_answer(empty)


class FailingEmbedder(FakeEmbedder):
    """Fails to embed the query, after a hybrid search's text side has started."""

    def embed(self, texts: list[str]) -> Vector:
        raise EmbeddingError("the model failed")


def test_a_hybrid_search_runs_its_text_side_on_another_thread_and_waits_for_it_on_failure(
    store: Store, indexed: tuple[Indexer, MemorySource], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    text_search = store.search_text

    def watched(*args: Any, **kwargs: Any) -> list[StoredHit]:
        hits = text_search(*args, **kwargs)
        threads.append(threading.current_thread().name)
        return hits

    monkeypatch.setattr(store, "search_text", watched)
    answer = build_service(store, FakeEmbedder(), "ws").search("PAYMENT_TIMEOUT_MS", 1)
    assert [h.path for h in answer.hits] == ["docs/runbooks/timeout.md"]
    assert threads[0].startswith("docshelf-text")
    # The embedding fails while the text search runs: the call raises the embedder's error,
    # and only after the text search ended (none outlives the call).
    with pytest.raises(EmbeddingError, match="the model failed"):
        build_service(store, FailingEmbedder(), "ws").search("PAYMENT_TIMEOUT_MS", 1)
    assert len(threads) == 2


def test_hybrid_ranking_lifts_each_file_by_its_stored_title(store: Store) -> None:
    # The same query ranked with and without the title prior: each excerpt's score moves by
    # TITLE_WEIGHT times the z-score of its file's stored title cosine among the candidates'.
    embedder = FakeEmbedder(titles=True)
    source = MemorySource("titled")
    ref = "b" * 40
    source.add(ref, DOCS)
    made = Indexer(store, embedder, source)
    try:
        made.index(ref)
    finally:
        made.close()
    query = "Checkout (docs services checkout)"  # the title input of checkout.md
    plain = Searcher(store, embedder, fusion=Fusion(title_weight=0.0))
    titled = Searcher(store, embedder)
    before = {h.path: h.score for h in plain.rank(query, "titled", ref, 3, "hybrid")}
    after = {h.path: h.score for h in titled.rank(query, "titled", ref, 3, "hybrid")}
    titles = store.file_titles("titled", ref, list(DOCS))
    assert sorted(titles) == sorted(DOCS)
    vector = embedder.embed([query])[0]
    cosines = {p: float(v @ vector) for p, v in titles.items()}
    assert cosines["docs/services/checkout.md"] == pytest.approx(1.0, abs=1e-5)
    mean = sum(cosines.values()) / 3
    spread = (sum((c - mean) ** 2 for c in cosines.values()) / 3) ** 0.5
    for path in DOCS:
        lift = TITLE_WEIGHT * (cosines[path] - mean) / spread
        assert after[path] - before[path] == pytest.approx(lift, abs=1e-5)
    assert max(after, key=after.__getitem__) == "docs/services/checkout.md"
    # Ranked by words alone, no title counts.
    words = {h.path: h.score for h in titled.rank(query, "titled", ref, 3, "text")}
    assert words == {h.path: h.score for h in plain.rank(query, "titled", ref, 3, "text")}
