"""One contract for both stores: every test runs on a real SQLite file and a real PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from docshelf.errors import StoreError
from docshelf.rows import ChunkRow, Vector
from docshelf.stores import SQLiteStore, open_store
from docshelf.stores.postgres import PostgresStore

MODEL = "test-model"
DIM = 16
HOSTILE = [
    "'; DROP TABLE docs_chunks; --",
    'quote " and \\ backslash',
    "% _ LIKE wildcards",
    "NEAR(a b) AND OR NOT * ^ -x",
    "ünïcödé ✓ 漢字",
]

Store = SQLiteStore | PostgresStore


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "docshelf.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    opened = open_store(location, model_id=MODEL, dim=DIM)
    yield opened
    opened.close()


def unit(seed: int, dim: int = DIM) -> Vector:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def rows(n: int, *, seed: int = 0, path: str = "docs/a.md", text: str = "chunk") -> list[ChunkRow]:
    return [
        ChunkRow(
            path=path,
            chunk=i,
            heading=f"Guide > Part {i}",
            content=f"{text} number {i}",
            start_line=i * 10 + 1,
            end_line=i * 10 + 9,
            content_hash=f"{seed}-{i}",
            embedding=unit(seed * 1000 + i),
        )
        for i in range(n)
    ]


class FailingRows:
    """Rows that raise part-way through, as a crash in the middle of a write would."""

    def __init__(self, good: list[ChunkRow], fail_at: int) -> None:
        self.good, self.fail_at = good, fail_at

    def __iter__(self) -> Iterator[ChunkRow]:
        for i, row in enumerate(self.good):
            if i == self.fail_at:
                raise RuntimeError("injected failure in the middle of the write")
            yield row


def test_a_new_store_is_empty(store: Store) -> None:
    assert not store.has_chunks("ws", "r1")
    assert store.current("ws") is None
    assert store.workspaces() == []
    assert store.ref_counts("ws") == {}


def test_written_ref_has_chunks_only_in_its_workspace(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(5))
    assert s.has_chunks("ws", "r1")
    assert not s.has_chunks("ws", "r2")
    assert not s.has_chunks("other", "r1")
    assert s.ref_counts("ws") == {"r1": 5}
    assert s.workspaces() == ["ws"]


def test_writing_a_ref_again_replaces_all_of_its_rows(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(5, text="old"))
    s.replace_doc_chunks("ws", "r1", rows(3, seed=1, text="new"))
    assert s.ref_counts("ws") == {"r1": 3}
    hits = s.search_text("ws", "r1", "old new", 10)
    assert {h.content.split()[0] for h in hits} == {"new"}
    # The vector search sees the new rows, not a cached matrix of the old ones.
    found = s.search("ws", "r1", unit(1000), 1)
    assert found[0].content == "new number 0"


def test_vector_search_ranks_one_ref_by_cosine_similarity(store: Store) -> None:
    s = store
    written = rows(40)
    s.replace_doc_chunks("ws", "r1", written)
    s.replace_doc_chunks("ws", "r2", rows(40, seed=7, text="elsewhere"))
    query = unit(5)
    matrix = np.stack([r.embedding for r in written if r.embedding is not None])
    exact = np.argsort(-(matrix @ query))[:5]
    hits = s.search("ws", "r1", query, 5)
    assert [h.chunk for h in hits] == [int(i) for i in exact]
    assert all(h.content.startswith("chunk") for h in hits)
    for h in hits:
        assert h.score == pytest.approx(float(matrix[h.chunk] @ query), abs=1e-5)
    first = written[exact[0]]
    assert (hits[0].path, hits[0].heading, hits[0].start_line, hits[0].end_line) == (
        first.path,
        first.heading,
        first.start_line,
        first.end_line,
    )


def test_vector_search_returns_every_row_when_k_exceeds_the_ref(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(3))
    assert len(s.search("ws", "r1", unit(1), 10)) == 3
    assert s.search("ws", "missing", unit(1), 10) == []


def test_a_query_vector_of_another_width_is_refused(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(3))
    with pytest.raises(StoreError, match="16"):
        store.search("ws", "r1", unit(1, dim=8), 3)


def test_text_search_finds_stemmed_words_in_one_ref(store: Store) -> None:
    s = store
    payment = ChunkRow(
        "docs/runbook.md",
        0,
        "Runbook > Payments",
        "The payment service times out after 30 seconds; retry twice.",
        3,
        9,
        "p",
        unit(1),
    )
    owner = ChunkRow(
        "docs/owners.md", 0, "Owners", "Checkout is owned by the web team.", 1, 4, "o", unit(2)
    )
    s.replace_doc_chunks("ws", "r1", [payment, owner])
    s.replace_doc_chunks("ws", "r2", [payment])
    hits = s.search_text("ws", "r1", "what is the payments timeout?", 5)
    assert [h.path for h in hits] == ["docs/runbook.md"]
    assert hits[0].score > 0
    assert (hits[0].heading, hits[0].start_line, hits[0].end_line) == ("Runbook > Payments", 3, 9)
    ranked = s.search_text("ws", "r1", "who owns checkout", 5)
    assert ranked[0].path == "docs/owners.md"
    assert s.search_text("ws", "r3", "payment", 5) == []


def test_a_query_without_words_finds_nothing(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(3))
    for query in ["", "   ", "?!*", '"']:
        assert store.search_text("ws", "r1", query, 5) == []


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_names_and_queries_are_only_data(store: Store, hostile: str) -> None:
    s = store
    row = ChunkRow(hostile, 0, hostile, f"{hostile} chunk text", 1, 1, hostile, unit(3))
    s.replace_doc_chunks(hostile, hostile, [row])
    s.replace_doc_chunks("ws", "r1", rows(2))
    assert s.has_chunks(hostile, hostile)
    s.set_current(hostile, hostile)
    assert s.current(hostile) == hostile
    assert s.search(hostile, hostile, unit(3), 1)[0].path == hostile
    text_hits = s.search_text(hostile, hostile, hostile, 5)
    assert all(h.path == hostile for h in text_hits)
    s.search_text("ws", "r1", hostile, 5)
    assert s.embeddings_for(hostile, [hostile], MODEL).keys() == {hostile}
    assert s.prune(hostile, []) == 1
    assert s.ref_counts("ws") == {"r1": 2}


def test_prune_keeps_only_the_named_refs_of_one_workspace(store: Store) -> None:
    s = store
    for ref in ["r1", "r2", "r3"]:
        s.replace_doc_chunks("ws", ref, rows(2))
    s.replace_doc_chunks("other", "r1", rows(2))
    assert s.prune("ws", ["r2", "r3", "never-indexed"]) == 1
    assert s.ref_counts("ws") == {"r2": 2, "r3": 2}
    assert s.ref_counts("other") == {"r1": 2}
    assert s.search("ws", "r1", unit(1), 3) == []
    assert s.prune("ws", []) == 2
    assert not s.has_chunks("ws", "r2")


def test_the_current_ref_survives_a_restart(location: str) -> None:
    with open_store(location, model_id=MODEL, dim=DIM) as s:
        s.set_current("ws", "r1")
        s.set_current("ws", "r2")
        s.set_current("other", "r9")
    with open_store(location, model_id=None, dim=None) as again:
        assert again.current("ws") == "r2"
        assert again.current("other") == "r9"
        assert again.workspaces() == ["other", "ws"]


def test_stored_embeddings_are_found_by_content_hash_and_model(store: Store) -> None:
    s = store
    written = rows(4)
    s.replace_doc_chunks("ws", "r1", written)
    found = s.embeddings_for("ws", ["0-1", "0-3", "unknown"], MODEL)
    assert found.keys() == {"0-1", "0-3"}
    assert found["0-1"].dtype == np.float32
    np.testing.assert_array_equal(found["0-1"], written[1].embedding)
    assert s.embeddings_for("ws", ["0-1"], "another-model") == {}
    assert s.embeddings_for("other", ["0-1"], MODEL) == {}


def test_the_model_and_width_are_read_from_the_store(location: str) -> None:
    open_store(location, model_id=MODEL, dim=DIM).close()
    with open_store(location, model_id=None, dim=None) as s:
        assert (s.model_id, s.dim) == (MODEL, DIM)
    with pytest.raises(StoreError) as wider:
        open_store(location, model_id="big-model", dim=768)
    message = str(wider.value)
    for part in [MODEL, "16", "big-model", "768", "new store"]:
        assert part in message


def test_another_model_of_the_same_width_is_refused(location: str) -> None:
    open_store(location, model_id=MODEL, dim=DIM).close()
    with pytest.raises(StoreError, match="other-model"):
        open_store(location, model_id="other-model", dim=DIM)


def test_opening_a_store_that_does_not_exist_without_a_model_says_where_to_look(
    location: str,
) -> None:
    with pytest.raises(StoreError, match=r"nothing is indexed there yet\. Check --store"):
        open_store(location, model_id=None, dim=None)


@pytest.mark.parametrize("existing", [False, True])
def test_a_failure_in_the_middle_of_a_write_leaves_the_old_rows(
    store: Store, existing: bool
) -> None:
    s = store
    s.replace_doc_chunks("ws", "served", rows(10, text="served"))
    if existing:
        s.replace_doc_chunks("ws", "r1", rows(10, text="old"))
    with pytest.raises(RuntimeError, match="injected"):
        s.replace_doc_chunks("ws", "r1", FailingRows(rows(100, seed=2, text="new"), 50))
    expected = {"served": 10, "r1": 10} if existing else {"served": 10}
    assert s.ref_counts("ws") == expected
    assert s.has_chunks("ws", "r1") is existing
    assert not s.search_text("ws", "r1", "new", 5)
    # The store still takes writes afterwards.
    s.replace_doc_chunks("ws", "r1", rows(3, text="again"))
    assert s.ref_counts("ws") == {"served": 10, "r1": 3}


def test_a_row_of_the_wrong_width_writes_nothing(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(4, text="old"))
    bad = rows(6, seed=3, text="new")
    bad[4] = ChunkRow("x.md", 4, "X", "wide", 1, 1, "w", unit(1, dim=DIM * 2))
    with pytest.raises(StoreError, match="32"):
        s.replace_doc_chunks("ws", "r1", bad)
    assert s.ref_counts("ws") == {"r1": 4}


def test_a_write_by_another_connection_is_seen_by_the_next_search(location: str) -> None:
    with (
        open_store(location, model_id=MODEL, dim=DIM) as reader,
        open_store(location, model_id=MODEL, dim=DIM) as writer,
    ):
        writer.replace_doc_chunks("ws", "r1", rows(5, text="first"))
        assert reader.search("ws", "r1", unit(0), 1)[0].content == "first number 0"
        writer.replace_doc_chunks("ws", "r1", rows(5, text="second"))
        assert reader.search("ws", "r1", unit(0), 1)[0].content == "second number 0"
        writer.prune("ws", [])
        assert reader.search("ws", "r1", unit(0), 1) == []


def test_searches_go_on_while_another_ref_is_written(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "served", rows(20, text="served"))
    errors: list[BaseException] = []
    done = threading.Event()

    def search_until_done() -> None:
        try:
            while not done.is_set():
                assert len(s.search("ws", "served", unit(4), 5)) == 5
                assert s.search_text("ws", "served", "served", 5)
        except BaseException as e:  # reported to the main thread
            errors.append(e)

    searcher = threading.Thread(target=search_until_done)
    searcher.start()
    try:
        for i in range(5):
            s.replace_doc_chunks("ws", f"new{i}", rows(300, seed=i, text="new"))
    finally:
        done.set()
        searcher.join()
    assert errors == []


def test_a_store_without_embeddings_searches_by_text_only(location: str) -> None:
    with open_store(location, model_id="none", dim=0) as s:
        plain = [ChunkRow("a.md", i, "A", f"plain text {i}", 1, 2, f"h{i}", None) for i in range(3)]
        s.replace_doc_chunks("ws", "r1", plain)
        assert len(s.search_text("ws", "r1", "plain", 5)) == 3
        assert s.embeddings_for("ws", ["h0"], "none") == {}
        with pytest.raises(StoreError):
            s.search("ws", "r1", unit(1), 3)


def test_a_query_of_stop_words_only_finds_nothing(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(3, text="how do I"))
    assert store.search_text("ws", "r1", "how do I", 5) == []


def test_an_embedding_that_is_not_float32_is_refused(store: Store) -> None:
    bad = rows(2)
    bad[1] = ChunkRow("x.md", 1, "X", "x", 1, 1, "x", unit(1).astype(np.float64))
    with pytest.raises(StoreError, match="float32"):
        store.replace_doc_chunks("ws", "r1", bad)
    assert not store.has_chunks("ws", "r1")


def test_a_name_that_is_not_valid_unicode_is_a_store_error(store: Store) -> None:
    broken = ChunkRow("caf\udce9.md", 0, "X", "text", 1, 1, "h", unit(1))
    with pytest.raises(StoreError):
        store.replace_doc_chunks("ws", "r1", [broken])
    assert not store.has_chunks("ws", "r1")
    store.replace_doc_chunks("ws", "r1", rows(1))
    assert store.has_chunks("ws", "r1")


def test_a_query_vector_of_any_length_scores_by_its_direction(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(20))
    query = unit(5)
    unit_hits = store.search("ws", "r1", query, 5)
    scaled_hits = store.search("ws", "r1", query * 3.0, 5)
    assert [h.chunk for h in scaled_hits] == [h.chunk for h in unit_hits]
    assert [h.score for h in scaled_hits] == pytest.approx([h.score for h in unit_hits], abs=1e-5)
    assert all(-1.0 - 1e-5 <= h.score <= 1.0 + 1e-5 for h in scaled_hits)
    with pytest.raises(StoreError, match="zero or not finite"):
        store.search("ws", "r1", np.zeros(DIM, dtype=np.float32), 5)


@pytest.mark.parametrize(
    "embedding",
    [
        pytest.param(unit(1) * np.float32(2.0), id="length-2"),
        pytest.param(np.full(DIM, np.nan, dtype=np.float32), id="nan"),
        pytest.param(np.zeros(DIM, dtype=np.float32), id="zero"),
    ],
)
def test_an_embedding_that_is_not_a_finite_unit_vector_is_refused(
    store: Store, embedding: Vector
) -> None:
    store.replace_doc_chunks("ws", "r1", rows(2, text="old"))
    bad = rows(3, seed=4, text="new")
    bad[2] = ChunkRow("x.md", 2, "X", "x", 1, 1, "x", embedding)
    with pytest.raises(StoreError, match="finite unit vector"):
        store.replace_doc_chunks("ws", "r1", bad)
    assert store.ref_counts("ws") == {"r1": 2}
