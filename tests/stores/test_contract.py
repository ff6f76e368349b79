"""One contract for both stores: every test runs on a real SQLite file and a real PostgreSQL."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from docshelf.errors import ConfigError, StoreError
from docshelf.rows import ChunkRow, FileRow, StoredFile, StoredHit, Vector
from docshelf.stores import SQLiteStore, is_postgres_url, open_store
from docshelf.stores import postgres as postgres_module
from docshelf.stores import sqlite as sqlite_module
from docshelf.stores.migrations import migrations
from docshelf.stores.postgres import PostgresStore
from docshelf.stores.postgres_errors import without_password

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

REPO = Path(__file__).resolve().parents[2]

# Long enough that no pin of a test expires while the test runs.
LONG_LEASE = 30.0

# A separate process that takes the indexing lock of workspace "ws", says so, and holds it until
# its stdin closes (or it is killed).
LOCK_HOLDER = """
import sys
from docshelf.stores import open_store
with open_store(sys.argv[1], model_id=None, dim=None) as store:
    with store.workspace_lock("ws", 30):
        print("locked", flush=True)
        sys.stdin.read()
"""


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


def test_text_search_finds_words_of_the_files_path(store: Store) -> None:
    tagged = ChunkRow(
        "amazon-ec2-user-guide/doc_source/Using_Tags.md",
        0,
        "Overview",
        "Labels help.",
        1,
        2,
        "t",
        unit(1),
    )
    other = ChunkRow(
        "guide/billing.md", 0, "Billing", "Invoices arrive monthly.", 1, 2, "b", unit(2)
    )
    store.replace_doc_chunks("ws", "r1", [tagged, other])
    hits = store.search_text("ws", "r1", "does EC2 support tags?", 5)
    assert [h.path for h in hits] == ["amazon-ec2-user-guide/doc_source/Using_Tags.md"]


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
    # The hostile row is found by its own words, by words every chunk holds, and by both: the
    # rows of "ws", which hold "chunk" too, stay out of the hostile workspace's answers.
    for query in [hostile, "chunk text", f"{hostile} chunk"]:
        assert [h.path for h in s.search_text(hostile, hostile, query, 5)] == [hostile], query
    # Beside a word the rows hold, the hostile query is only words: it finds both rows of r1.
    hits = s.search_text("ws", "r1", f"{hostile} chunk", 5)
    assert [(h.path, h.chunk) for h in hits] == [("docs/a.md", 0), ("docs/a.md", 1)]
    assert s.embeddings_for([hostile], MODEL).keys() == {hostile}
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


def test_a_refs_docs_selection_is_kept_per_ref_and_goes_with_the_ref(location: str) -> None:
    with open_store(location, model_id=MODEL, dim=DIM) as s:
        for ref in ["r1", "r2"]:
            s.replace_doc_chunks("ws", ref, rows(2))
        s.replace_doc_chunks("other", "r1", rows(2))
        assert s.selection("ws", "r1") is None
        s.set_selection("ws", "r1", '{"docs":null}')
        s.set_selection("ws", "r2", '{"docs":["a"]}')
        s.set_selection("ws", "r2", '{"docs":["b"]}')  # a re-index replaces it
        s.set_selection("other", "r1", '{"docs":["o"]}')
    with open_store(location, model_id=None, dim=None) as again:
        assert again.selection("ws", "r1") == '{"docs":null}'
        assert again.selection("ws", "r2") == '{"docs":["b"]}'
        assert again.prune("ws", ["r2"]) == 1
        # A pruned ref's selection goes with its rows; other workspaces keep theirs.
        assert again.selection("ws", "r1") is None
        assert again.selection("ws", "r2") == '{"docs":["b"]}'
        assert again.selection("other", "r1") == '{"docs":["o"]}'


def test_a_refs_indexing_time_and_skipped_files_are_kept_and_go_with_the_ref(
    location: str,
) -> None:
    skipped = '[{"path": "docs/link.md", "reason": "symbolic link, not followed"}]'
    with open_store(location, model_id=MODEL, dim=DIM) as s:
        for ref in ["r1", "r2"]:
            s.replace_doc_chunks("ws", ref, rows(2))
        assert s.ref_report("ws", "r1") == (None, None)
        before = time.time()
        s.set_selection("ws", "r1", '{"docs":null}', skipped)
        s.set_selection("ws", "r2", '{"docs":null}')
    with open_store(location, model_id=None, dim=None) as again:
        indexed_at, kept = again.ref_report("ws", "r1")
        assert kept == skipped
        assert indexed_at is not None and indexed_at.endswith("+00:00")
        # Both stores write whole seconds, the SQLite one from this clock, PostgreSQL's its own.
        assert abs(datetime.fromisoformat(indexed_at).timestamp() - before) < 5
        assert again.ref_report("ws", "r2")[1] == "[]"
        assert again.ref_report("other", "r1") == (None, None)
        assert again.prune("ws", ["r2"]) == 1
        assert again.ref_report("ws", "r1") == (None, None)


def test_the_live_pins_are_listed_with_holder_and_lease_soonest_first(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2))
    s.replace_doc_chunks("ws", "r2", rows(2))
    before = time.time()
    s.add_pin("ws", "r1", "host:1", LONG_LEASE)
    s.add_pin("ws", "r2", "host:2", LONG_LEASE / 2)
    s.add_pin("ws", "r2", "gone:3", 0.2)
    s.add_pin("other", "r1", "host:4", LONG_LEASE)
    time.sleep(0.4)
    listed = s.pins("ws")
    assert [(ref, holder) for ref, holder, _ in listed] == [("r2", "host:2"), ("r1", "host:1")]
    expiry = {holder: expires for _, holder, expires in listed}
    assert before + LONG_LEASE / 2 - 1 < expiry["host:2"] < time.time() + LONG_LEASE / 2 + 1
    assert before + LONG_LEASE - 1 < expiry["host:1"] < time.time() + LONG_LEASE + 1
    assert s.pins("nobody") == []


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
    found = s.embeddings_for(["0-1", "0-3", "unknown"], MODEL)
    assert found.keys() == {"0-1", "0-3"}
    assert found["0-1"].dtype == np.float32
    np.testing.assert_array_equal(found["0-1"], written[1].embedding)
    assert s.embeddings_for(["0-1"], "another-model") == {}
    # Whichever workspace embedded it: the key is the model and the embedding input alone.
    s.replace_doc_chunks("fork", "r9", rows(2, seed=9))
    found = s.embeddings_for(["0-2", "9-1"], MODEL)
    assert found.keys() == {"0-2", "9-1"}
    np.testing.assert_array_equal(found["9-1"], rows(2, seed=9)[1].embedding)
    # Gone with the last ref that held it.
    assert s.prune("ws", []) == 1
    assert s.embeddings_for(["0-2", "9-1"], MODEL).keys() == {"9-1"}


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
    # The write stops half-way, inside its transaction (both stores take the rows as they write
    # them), until searches of another ref have been answered: a store whose searches waited for
    # the write would keep it waiting in vain.
    paused = threading.Event()
    searched = threading.Event()
    waited_in_vain: list[int] = []
    by_vector: list[str] = []
    by_text: list[str] = []
    half_written: list[bool] = []

    def writing() -> Iterator[ChunkRow]:
        for i, row in enumerate(rows(300, seed=1, text="new")):
            if i == 150:
                paused.set()
                if not searched.wait(5):
                    waited_in_vain.append(i)
            yield row

    def search_in_the_middle_of_the_write() -> None:
        try:
            assert paused.wait(30)
            by_vector.extend(h.content for h in s.search("ws", "served", unit(4), 5))
            by_text.extend(h.content for h in s.search_text("ws", "served", "served", 5))
            half_written.append(s.has_chunks("ws", "new"))
        finally:
            searched.set()

    searcher, errors = in_thread(search_in_the_middle_of_the_write)
    try:
        s.replace_doc_chunks("ws", "new", writing())
    finally:
        paused.set()
        searcher.join(30)
    assert errors == []
    assert waited_in_vain == [], "a search waited for the write of another ref"
    assert len(by_vector) == 5
    assert all(content.startswith("served number ") for content in by_vector)
    assert len(by_text) == 5
    assert all(content.startswith("served number ") for content in by_text)
    assert half_written == [False]  # nor was the ref being written seen before it was whole
    assert s.ref_counts("ws") == {"new": 300, "served": 20}


def test_a_store_without_embeddings_searches_by_text_only(location: str) -> None:
    with open_store(location, model_id="none", dim=0) as s:
        plain = [ChunkRow("a.md", i, "A", f"plain text {i}", 1, 2, f"h{i}", None) for i in range(3)]
        s.replace_doc_chunks("ws", "r1", plain)
        assert len(s.search_text("ws", "r1", "plain", 5)) == 3
        assert s.embeddings_for(["h0"], "none") == {}
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


# -- the checks both stores share, in the same words (stores/common.py) ------------------------


def shown(location: str) -> str:
    """How a store's messages name the store at `location`."""
    return without_password(location) if is_postgres_url(location) else str(Path(location))


def refusal(error: pytest.ExceptionInfo[StoreError], location: str) -> str:
    """The error's message, with the store's name written as <store>."""
    return str(error.value).replace(shown(location), "<store>")


def plain_rows(n: int) -> list[ChunkRow]:
    return [ChunkRow("a.md", i, "A", f"plain text {i}", 1, 2, f"h{i}", None) for i in range(n)]


@pytest.mark.parametrize(
    "embedding",
    [
        pytest.param(unit(1), id="a-vector"),
        pytest.param(np.zeros(0, dtype=np.float32), id="a-vector-of-width-0"),
    ],
)
def test_a_store_without_embeddings_refuses_a_row_with_a_vector(
    location: str, embedding: Vector
) -> None:
    with open_store(location, model_id="none", dim=0) as s:
        s.replace_doc_chunks("ws", "r1", plain_rows(2))
        bad = [*plain_rows(2), ChunkRow("x.md", 0, "X", "x", 1, 1, "x", embedding)]
        with pytest.raises(StoreError) as refused:
            s.replace_doc_chunks("ws", "r1", bad)
        assert refusal(refused, location) == (
            "chunk 0 of x.md has an embedding, but the store at <store> holds none: it was made "
            "with the none embedder (model 'none', width 0), for full-text search only. Index "
            "into it with --embedder none, or give a new store (--store) for this model"
        )
        assert s.ref_counts("ws") == {"r1": 2}
        with pytest.raises(StoreError) as searched:
            s.search("ws", "r1", unit(1), 3)
        assert refusal(searched, location) == (
            "the store at <store> holds no embeddings (it was made with the none embedder); "
            "search it by text"
        )


def test_a_store_with_a_model_refuses_a_row_without_a_vector(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(2, text="old"))
    bad = rows(3, seed=1, text="new")
    bad[1] = ChunkRow("x.md", 1, "X", "x", 1, 1, "x", None)
    with pytest.raises(StoreError) as refused:
        store.replace_doc_chunks("ws", "r1", bad)
    assert refusal(refused, store.location) == (
        "chunk 1 of x.md has no embedding, but the store at <store> holds 16-dimensional "
        "test-model vectors; embed it with test-model first"
    )
    assert store.ref_counts("ws") == {"r1": 2}


@pytest.mark.parametrize(
    ("embedding", "described"),
    [
        pytest.param(unit(1, dim=DIM * 2), "float32 and shape (32,)", id="wider"),
        pytest.param(unit(1, dim=DIM // 2), "float32 and shape (8,)", id="narrower"),
        pytest.param(unit(1).astype(np.float64), "float64 and shape (16,)", id="float64"),
        pytest.param(np.stack([unit(1)]), "float32 and shape (1, 16)", id="a-matrix"),
    ],
)
def test_a_row_of_another_width_or_type_is_refused_in_the_same_words(
    store: Store, embedding: Vector, described: str
) -> None:
    store.replace_doc_chunks("ws", "r1", rows(2, text="old"))
    bad = rows(3, seed=1, text="new")
    bad[2] = ChunkRow("x.md", 2, "X", "x", 1, 1, "x", embedding)
    with pytest.raises(StoreError) as refused:
        store.replace_doc_chunks("ws", "r1", bad)
    assert refusal(refused, store.location) == (
        f"chunk 2 of x.md has an embedding of {described}, but the store at <store> holds "
        "16-dimensional float32 test-model vectors; embed it with test-model"
    )
    assert store.ref_counts("ws") == {"r1": 2}


def record_migration(location: str, version: int) -> None:
    """Record in the store's table of migrations one that this docshelf does not have."""
    name = f"{version:04d}_future.sql"
    if is_postgres_url(location):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO docs_schema_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
        return
    with sqlite3.connect(location) as raw:
        raw.execute("INSERT INTO schema_migrations VALUES (?, ?, 'now')", (version, name))
    raw.close()


@pytest.mark.parametrize("model", [(MODEL, DIM), (None, None)], ids=["with-a-model", "without"])
def test_a_store_of_a_newer_schema_is_refused_in_the_same_words(
    location: str, model: tuple[str | None, int | None]
) -> None:
    open_store(location, model_id=MODEL, dim=DIM).close()
    record_migration(location, 99)
    folder = "postgresql" if is_postgres_url(location) else "sqlite"
    known = max(v for v, _, _ in migrations(folder))
    with pytest.raises(StoreError) as refused:
        open_store(location, model_id=model[0], dim=model[1])
    assert refusal(refused, location) == (
        f"the store at <store> has schema version 99, newer than this docshelf knows ({known}): "
        "upgrade docshelf to use it"
    )


@pytest.mark.parametrize(
    ("created", "configured"),
    [
        pytest.param((MODEL, DIM), ("big-model", 768), id="another-model-and-width"),
        pytest.param((MODEL, DIM), ("other-model", DIM), id="another-model"),
        pytest.param(("none", 0), (MODEL, DIM), id="a-model-for-a-store-without-embeddings"),
        pytest.param((MODEL, DIM), ("none", 0), id="no-embeddings-for-a-store-with-a-model"),
    ],
)
def test_reopening_for_another_model_or_width_is_refused_in_the_same_words(
    location: str, created: tuple[str, int], configured: tuple[str, int]
) -> None:
    open_store(location, model_id=created[0], dim=created[1]).close()
    with pytest.raises(StoreError) as refused:
        open_store(location, model_id=configured[0], dim=configured[1])
    message = refusal(refused, location)
    assert message.startswith(
        f"the store at <store> holds embeddings of {created[0]} ({created[1]} dimensions), but "
        f"the configured embedder is {configured[0]} ({configured[1]} dimensions). Use a new "
        "store (--store "
    )
    assert message.endswith(f" and index again with it; or configure {created[0]} again")
    with open_store(location, model_id=None, dim=None) as again:  # the store is unchanged
        assert (again.model_id, again.dim) == created


def test_opening_a_place_without_a_store_and_without_a_model_is_refused_in_the_same_words(
    location: str,
) -> None:
    if not is_postgres_url(location):
        Path(location).touch()  # an existing file, as an existing empty database
    with pytest.raises(StoreError) as refused:
        open_store(location, model_id=None, dim=None)
    message = str(refused.value)
    assert message.startswith("no docshelf store ")
    assert f"at {shown(location)}: " in message
    assert message.endswith(
        ": nothing is indexed there yet. Check --store and DOCSHELF_STORE, or index into this "
        "store first with docshelf index"
    )


def what_is_there(location: str) -> list[str]:
    """What a store at `location` has made: the files of its folder (SQLite), or the tables and
    schemas of its database (PostgreSQL)."""
    if not is_postgres_url(location):
        return sorted(p.name for p in Path(location).parent.iterdir())
    with psycopg.connect(location, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT schemaname || '.' || tablename FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        ).fetchall()
        schemas = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
            "AND nspname NOT IN ('information_schema', 'public') ORDER BY 1"
        ).fetchall()
    return [str(t) for (t,) in tables] + [f"schema {s}" for (s,) in schemas]


@pytest.mark.parametrize(
    ("model_id", "dim"), [(MODEL, DIM), ("none", 0), (None, None)], ids=["model", "none", "as-is"]
)
def test_opening_without_create_a_place_without_a_store_is_refused_and_makes_nothing(
    location: str, model_id: str | None, dim: int | None
) -> None:
    if not is_postgres_url(location):
        location = str(Path(location).parent / "typo" / "docs.sqlite3")
    before = what_is_there(location) if is_postgres_url(location) else None
    with pytest.raises(StoreError) as refused:
        open_store(location, model_id=model_id, dim=dim, create=False)
    # In the words of a read-only open, which names the place and the command that makes one.
    with pytest.raises(StoreError) as read_only:
        open_store(location, model_id=None, dim=None)
    assert str(refused.value) == str(read_only.value)
    assert str(refused.value).startswith("no docshelf store ")
    assert f"at {shown(location)}: " in str(refused.value)
    assert str(refused.value).endswith("with docshelf index")
    if is_postgres_url(location):
        assert what_is_there(location) == before == []
    else:
        assert not Path(location).parent.exists()  # not even its folder


def test_opening_without_create_an_empty_file_or_database_is_refused_and_makes_nothing(
    location: str,
) -> None:
    if not is_postgres_url(location):
        Path(location).touch()  # an existing file, as an existing empty database
    before = what_is_there(location)
    with pytest.raises(StoreError, match=r"^no docshelf store .*with docshelf index$"):
        open_store(location, model_id=MODEL, dim=DIM, create=False)
    assert what_is_there(location) == before
    if not is_postgres_url(location):
        assert Path(location).stat().st_size == 0


def test_opening_without_create_opens_an_existing_store_and_checks_its_model(
    location: str,
) -> None:
    with open_store(location, model_id=MODEL, dim=DIM) as made:
        made.replace_doc_chunks("ws", "r1", rows(2))
    with open_store(location, model_id=MODEL, dim=DIM, create=False) as again:
        assert again.ref_counts("ws") == {"r1": 2}
        assert (again.model_id, again.dim) == (MODEL, DIM)
    with pytest.raises(StoreError, match="holds embeddings of test-model"):
        open_store(location, model_id="other-model", dim=DIM, create=False)


@pytest.mark.parametrize(("model_id", "dim"), [(MODEL, None), (None, DIM)])
def test_a_model_without_a_width_or_a_width_without_a_model_is_refused(
    location: str, model_id: str | None, dim: int | None
) -> None:
    with pytest.raises(ValueError, match="give both model_id and dim, or neither"):
        open_store(location, model_id=model_id, dim=dim)


# -- pins ---------------------------------------------------------------------------------------


def in_thread(target: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    """Start `target` in a thread; its exception, if any, lands in the returned list."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            target()
        except BaseException as e:  # reported to the main thread
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def lock_once(store: Store, workspace: str, timeout_seconds: float) -> None:
    """Take the workspace's indexing lock and let it go at once."""
    with store.workspace_lock(workspace, timeout_seconds):
        pass


def test_a_pinned_ref_is_kept_by_prune_until_its_pin_is_removed(store: Store) -> None:
    s = store
    for ref in ["r1", "r2", "r3"]:
        s.replace_doc_chunks("ws", ref, rows(2))
    assert s.pinned_refs("ws") == set()
    pin = s.add_pin("ws", "r1", "host:1", LONG_LEASE)
    assert isinstance(pin, str) and len(pin) == 32
    assert s.pinned_refs("ws") == {"r1"}
    assert s.prune("ws", ["r3"]) == 1
    assert s.ref_counts("ws") == {"r1": 2, "r3": 2}
    s.remove_pin(pin)
    assert s.pinned_refs("ws") == set()
    assert s.prune("ws", ["r3"]) == 1
    assert s.ref_counts("ws") == {"r3": 2}


def test_two_pins_of_one_ref_need_two_removals(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2))
    first = s.add_pin("ws", "r1", "serve", LONG_LEASE)
    second = s.add_pin("ws", "r1", "serve", LONG_LEASE)
    assert first != second
    s.remove_pin(first)
    assert s.pinned_refs("ws") == {"r1"}
    assert s.prune("ws", []) == 0
    s.remove_pin(second)
    assert s.pinned_refs("ws") == set()
    assert s.prune("ws", []) == 1


def test_removing_a_pin_again_or_an_unknown_pin_does_nothing(store: Store) -> None:
    s = store
    pin = s.add_pin("ws", "r1", "serve", LONG_LEASE)
    other = s.add_pin("ws", "r2", "serve", LONG_LEASE)
    s.remove_pin(pin)
    s.remove_pin(pin)
    s.remove_pin("0" * 32)
    assert s.pinned_refs("ws") == {"r2"}
    assert s.renew_pins([pin, other], LONG_LEASE) == {other}


def test_an_expired_pin_no_longer_protects_its_ref_and_is_not_revived(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2))
    s.replace_doc_chunks("ws", "r2", rows(2))
    short = s.add_pin("ws", "r1", "crashed", 0.2)
    gone_before_prune = s.add_pin("ws", "r2", "crashed", 0.2)
    assert s.pinned_refs("ws") == {"r1", "r2"}
    time.sleep(0.4)
    assert s.pinned_refs("ws") == set()
    # Expired but not yet deleted: a renewal must not bring it back.
    assert s.renew_pins([gone_before_prune], LONG_LEASE) == set()
    assert s.pinned_refs("ws") == set()
    assert s.prune("ws", []) == 2
    # Expired and deleted by the prune.
    assert s.renew_pins([short], LONG_LEASE) == set()
    assert s.pinned_refs("ws") == set()


def test_renewing_a_pin_extends_its_lease(store: Store) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2))
    pin = s.add_pin("ws", "r1", "serve", 0.5)
    removed = s.add_pin("ws", "r1", "serve", LONG_LEASE)
    s.remove_pin(removed)
    assert s.renew_pins([pin, pin, removed, "unknown"], LONG_LEASE) == {pin}
    assert s.renew_pins([], LONG_LEASE) == set()
    time.sleep(0.7)
    assert s.pinned_refs("ws") == {"r1"}
    assert s.prune("ws", []) == 0
    assert s.has_chunks("ws", "r1")


def test_pins_are_seen_by_another_store_opened_on_the_same_database(location: str) -> None:
    with (
        open_store(location, model_id=MODEL, dim=DIM) as server,
        open_store(location, model_id=MODEL, dim=DIM) as indexer,
    ):
        for ref in ["served", "old"]:
            indexer.replace_doc_chunks("ws", ref, rows(2))
        pin = server.add_pin("ws", "served", "serve:1", LONG_LEASE)
        assert indexer.pinned_refs("ws") == {"served"}
        assert indexer.prune("ws", ["main"]) == 1
        assert server.ref_counts("ws") == {"served": 2}
        assert indexer.renew_pins([pin], LONG_LEASE) == {pin}
        indexer.remove_pin(pin)
        assert server.pinned_refs("ws") == set()
        assert server.renew_pins([pin], LONG_LEASE) == set()


def test_pins_of_one_workspace_do_not_protect_another_workspaces_refs(store: Store) -> None:
    s = store
    s.replace_doc_chunks("a", "r1", rows(2))
    s.replace_doc_chunks("b", "r1", rows(2))
    s.add_pin("a", "r1", "serve", LONG_LEASE)
    assert s.pinned_refs("b") == set()
    assert s.prune("b", []) == 1
    assert s.prune("a", []) == 0
    assert s.ref_counts("a") == {"r1": 2}
    assert s.ref_counts("b") == {}


@pytest.mark.parametrize("lease", [0, -1.0, math.nan, math.inf, 400 * 24 * 3600.0, True])
def test_a_lease_that_is_not_a_positive_number_of_seconds_is_refused(
    store: Store, lease: float
) -> None:
    with pytest.raises(ConfigError, match="lease"):
        store.add_pin("ws", "r1", "serve", lease)
    pin = store.add_pin("ws", "r1", "serve", LONG_LEASE)
    with pytest.raises(ConfigError, match="lease"):
        store.renew_pins([pin], lease)
    assert store.pinned_refs("ws") == {"r1"}


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_names_in_pins_and_locks_are_only_data(store: Store, hostile: str) -> None:
    s = store
    s.replace_doc_chunks(hostile, hostile, rows(2))
    s.replace_doc_chunks(hostile, "other", rows(2))
    pin = s.add_pin(hostile, hostile, hostile, LONG_LEASE)
    assert s.pinned_refs(hostile) == {hostile}
    assert s.pinned_refs("ws") == set()
    assert s.renew_pins([pin], LONG_LEASE) == {pin}
    assert s.prune(hostile, []) == 1
    assert s.ref_counts(hostile) == {hostile: 2}
    with s.workspace_lock(hostile, 1), s.workspace_lock("ws", 1):
        pass
    s.remove_pin(pin)
    assert s.prune(hostile, []) == 1


@contextmanager
def at_each_statement(store: Store, hook: Callable[[], None]) -> Iterator[None]:
    """Call `hook` at every step of what this thread asks of `store` inside the block.

    SQLite: before each statement of this thread's connection (its trace callback, which sees
    BEGIN and COMMIT too). PostgreSQL: before this thread's first statement and after each one
    (psycopg sends COMMIT another way; every statement goes through Cursor.execute).
    """
    if isinstance(store, SQLiteStore):
        conn = store._connect()  # the calling thread's own connection
        last = [""]

        def traced(sql: str) -> None:
            # The statements of triggers and of the full-text index's own tables come as
            # "-- ...", and a statement comes again as it runs its triggers: neither is a step.
            if not sql.startswith("--") and sql != last[0]:
                last[0] = sql
                hook()

        conn.set_trace_callback(traced)
        try:
            yield
        finally:
            conn.set_trace_callback(None)
        return
    me = threading.get_ident()
    execute = psycopg.Cursor.execute
    first = [True]

    def hooked(cursor: psycopg.Cursor[Any], *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != me:
            return execute(cursor, *args, **kwargs)
        if first:
            first.clear()
            hook()
        try:
            return execute(cursor, *args, **kwargs)
        finally:
            hook()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", hooked)
        yield


# How long each pin of the race below is given before the prune goes on: add_pin takes
# milliseconds unless the prune makes it wait.
PIN_WAIT = 0.5


def test_a_pin_added_while_another_process_prunes_keeps_its_ref(location: str) -> None:
    """add_pin, by another store object, at every step of a prune: before the prune reads the
    pins (the prune sees the pin), or waiting until the prune is over (the ref may go). Never
    may add_pin return while the ref is still there and the prune then delete it."""
    with (
        open_store(location, model_id=MODEL, dim=DIM) as server,
        open_store(location, model_id=MODEL, dim=DIM) as indexer,
    ):
        refs = [f"r{i}" for i in range(6)]
        for ref in ["main", *refs]:
            indexer.replace_doc_chunks("ws", ref, rows(1))
        unpinned = iter(refs)
        pinning: list[tuple[threading.Thread, list[BaseException]]] = []
        # The refs whose add_pin returned while they still had their chunks.
        kept: list[str] = []

        def pin(ref: str) -> None:
            server.add_pin("ws", ref, "serve", LONG_LEASE)
            if server.has_chunks("ws", ref):
                kept.append(ref)

        def pin_the_next_ref() -> None:
            ref = next(unpinned, None)
            if ref is None:
                return
            thread, errors = in_thread(lambda: pin(ref))
            pinning.append((thread, errors))
            thread.join(PIN_WAIT)  # a pin the prune makes wait goes on after the prune

        with at_each_statement(indexer, pin_the_next_ref):
            indexer.prune("ws", ["main"])
        for thread, _ in pinning:
            thread.join(30)
        assert [e for _, errors in pinning for e in errors] == []
        assert len(pinning) >= 3  # pins were added at several steps of the prune
        assert "r0" in kept  # pinned before the prune's first statement
        lost = [ref for ref in kept if not server.has_chunks("ws", ref)]
        assert lost == [], f"the prune deleted refs pinned while they still had chunks: {lost}"


# -- the indexing lock --------------------------------------------------------------------------


def test_the_workspace_lock_excludes_a_second_holder_until_the_first_releases_it(
    store: Store, location: str
) -> None:
    with open_store(location, model_id=None, dim=None) as other:
        released = threading.Event()
        took_it_after_release: list[bool] = []

        def wait_for_it() -> None:
            with other.workspace_lock("ws", 30):
                took_it_after_release.append(released.is_set())

        with store.workspace_lock("ws", 1):
            started = time.monotonic()
            brief, brief_errors = in_thread(lambda: lock_once(other, "ws", 0.2))
            brief.join()
            assert time.monotonic() - started >= 0.2
            assert len(brief_errors) == 1
            assert isinstance(brief_errors[0], StoreError)
            message = str(brief_errors[0])
            assert "another docshelf process is indexing workspace 'ws'" in message
            assert "(waited 0.2 s)" in message
            assert message.endswith("then index again")
            waiter, waiter_errors = in_thread(wait_for_it)
            time.sleep(0.3)
            assert took_it_after_release == []
            released.set()
        waiter.join(10)
        assert waiter_errors == []
        assert took_it_after_release == [True]


def test_two_threads_of_one_store_take_the_workspace_lock_in_turn(store: Store) -> None:
    inside = 0
    most_inside = 0
    count_lock = threading.Lock()

    def index_once() -> None:
        nonlocal inside, most_inside
        for _ in range(5):
            with store.workspace_lock("ws", 30):
                with count_lock:
                    inside += 1
                    most_inside = max(most_inside, inside)
                time.sleep(0.01)
                with count_lock:
                    inside -= 1

    threads = [in_thread(index_once) for _ in range(4)]
    for thread, _ in threads:
        thread.join()
    assert [e for _, errors in threads for e in errors] == []
    assert most_inside == 1


def test_workspace_locks_of_two_workspaces_do_not_block_each_other(
    store: Store, location: str
) -> None:
    with open_store(location, model_id=None, dim=None) as other, store.workspace_lock("a", 1):
        with other.workspace_lock("b", 0):
            thread, errors = in_thread(lambda: lock_once(other, "c", 0))
            thread.join()
            assert errors == []
        with pytest.raises(StoreError, match="indexing workspace 'a'"):
            lock_once(other, "a", 0)


def test_the_workspace_lock_is_released_after_an_exception_inside_it(
    store: Store, location: str
) -> None:
    with pytest.raises(RuntimeError, match="indexing failed"), store.workspace_lock("ws", 1):
        raise RuntimeError("indexing failed")
    with open_store(location, model_id=None, dim=None) as other:
        lock_once(other, "ws", 0)
    lock_once(store, "ws", 0)


@pytest.mark.parametrize("timeout", [-1.0, math.nan])
def test_a_wait_for_the_lock_that_is_not_a_number_of_seconds_is_refused(
    store: Store, timeout: float
) -> None:
    with pytest.raises(ConfigError, match="0 or more seconds"):
        lock_once(store, "ws", timeout)


def test_the_workspace_lock_of_a_killed_process_is_released(store: Store, location: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, location],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(StoreError, match="another docshelf process"):
            lock_once(store, "ws", 0.2)
        lock_once(store, "other", 0)
    finally:
        holder.kill()
        holder.wait()
    lock_once(store, "ws", 10)


# -- file texts ---------------------------------------------------------------------------------


def file_row(path: str, text: str) -> FileRow:
    return FileRow(path, text, hashlib.sha256(text.encode()).hexdigest(), len(text.splitlines()))


def files_of(n: int, *, changed: int | None = None, prefix: str = "docs") -> list[FileRow]:
    """n files; file `changed` (if any) with another text than the same file has by default."""
    return [
        file_row(f"{prefix}/{i:03d}.md", f"# File {i}\n\nText of file {i}.\n" + "x" * i)
        if i != changed
        else file_row(f"{prefix}/{i:03d}.md", f"# File {i}, changed\n")
        for i in range(n)
    ]


def stored_texts(location: str) -> int:
    """How many texts the store holds, by a query of its own table."""
    if is_postgres_url(location):
        with psycopg.connect(location) as conn:
            row = conn.execute("SELECT count(*) FROM docs_file_texts").fetchone()
        assert row is not None
        return int(row[0])
    with sqlite3.connect(location) as raw:
        (count,) = raw.execute("SELECT count(*) FROM file_texts").fetchone()
    raw.close()
    return int(count)


def snapshot(store: Store, workspace: str, ref: str) -> tuple[Any, ...]:
    """Everything a ref holds: its chunks (by text search and count), its files and texts."""
    listed = store.files(workspace, ref)
    return (
        store.ref_counts(workspace).get(ref, 0),
        sorted(
            (h.path, h.chunk, h.content) for h in store.search_text(workspace, ref, "number", 500)
        ),
        listed,
        [store.file_text(workspace, ref, f.path) for f in listed],
        store.has_files(workspace, ref),
    )


EXACT_TEXTS = {
    "docs/crlf.md": "first line\r\nsecond line\r\n\r\nlast, without an end of line",
    "docs/bom.md": "\ufeff# Title after a byte order mark\n",
    "docs/unicode.md": "# Ünïcödé ✓ 漢字\n\nAn emoji 😀 and a combining e\u0301.\n",
    "docs/empty.md": "",
    "docs/mixed.md": "a\rb\nc\r\n\u2028d  \t trailing  \n\n\n",
}


def test_files_are_written_with_the_chunks_and_read_back_exactly(location: str) -> None:
    written = [file_row(path, text) for path, text in EXACT_TEXTS.items()]
    with open_store(location, model_id=MODEL, dim=DIM) as s:
        assert not s.has_files("ws", "r1")
        assert s.files("ws", "r1") == []
        s.replace_doc_chunks("ws", "r1", rows(3), written)
        s.replace_doc_chunks("ws", "no-files", rows(2))  # as callers did before files were kept
    with open_store(location, model_id=None, dim=None) as again:
        assert again.has_files("ws", "r1")
        assert again.files("ws", "r1") == sorted(
            (StoredFile(f.path, f.lines, len(f.text.encode("utf-8"))) for f in written),
            key=lambda f: f.path,
        )
        assert [f.path for f in again.files("ws", "r1")] == [
            "docs/bom.md",
            "docs/crlf.md",
            "docs/empty.md",
            "docs/mixed.md",
            "docs/unicode.md",
        ]
        assert next(f for f in again.files("ws", "r1") if f.path == "docs/unicode.md").size == len(
            EXACT_TEXTS["docs/unicode.md"].encode()
        )
        for path, text in EXACT_TEXTS.items():
            assert again.file_text("ws", "r1", path) == text, path
        assert again.file_text("ws", "r1", "docs/missing.md") is None
        assert again.file_text("ws", "r2", "docs/crlf.md") is None
        assert again.file_text("other", "r1", "docs/crlf.md") is None
        assert not again.has_files("ws", "r2")
        assert not again.has_files("other", "r1")
        # A ref written without files has its chunks and no files.
        assert again.ref_counts("ws") == {"no-files": 2, "r1": 3}
        assert not again.has_files("ws", "no-files")
        assert again.files("ws", "no-files") == []
        # Writing the ref again without files leaves it without files.
        again.replace_doc_chunks("ws", "r1", rows(3))
        assert not again.has_files("ws", "r1")
        assert again.file_text("ws", "r1", "docs/crlf.md") is None


def test_a_files_list_sorts_by_code_point_and_holds_lines_and_sizes(store: Store) -> None:
    names = ["b.md", "B.md", "a/z.md", "a-b.md", "a.md", "é.md", "Z.md", "_x.md"]
    written = [file_row(name, f"{name}\n" * (i + 1)) for i, name in enumerate(names)]
    store.replace_doc_chunks("ws", "r1", rows(1), reversed(written))
    listed = store.files("ws", "r1")
    assert [f.path for f in listed] == sorted(names)
    for f in written:
        assert StoredFile(f.path, f.lines, len(f.text.encode())) in listed
    assert {f.path: f.lines for f in listed}["a.md"] == names.index("a.md") + 1


def test_each_text_is_stored_once_across_refs_and_workspaces(store: Store, location: str) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2), files_of(100))
    assert stored_texts(location) == 100
    # The next commit changes one file: one text more.
    s.replace_doc_chunks("ws", "r2", rows(2), files_of(100, changed=7))
    assert stored_texts(location) == 101
    # Another workspace with the same files, and one ref holding a text twice.
    s.replace_doc_chunks("other", "r1", rows(2), files_of(100))
    twice = [*files_of(3), file_row("copy.md", files_of(3)[1].text)]
    s.replace_doc_chunks("other", "r2", rows(2), twice)
    assert stored_texts(location) == 101
    assert s.file_text("ws", "r1", "docs/007.md") == files_of(100)[7].text
    assert s.file_text("ws", "r2", "docs/007.md") == "# File 7, changed\n"
    assert s.file_text("other", "r2", "copy.md") == files_of(3)[1].text
    assert len(s.files("ws", "r2")) == 100


class FailingFiles:
    """Files that raise part-way through, as a crash in the middle of a write would."""

    def __init__(self, good: list[FileRow], fail_at: int) -> None:
        self.good, self.fail_at = good, fail_at

    def __iter__(self) -> Iterator[FileRow]:
        for i, row in enumerate(self.good):
            if i == self.fail_at:
                raise RuntimeError("injected failure in the middle of the files")
            yield row


@pytest.mark.parametrize("existing", [False, True])
def test_a_write_whose_files_fail_midway_leaves_the_previous_chunks_and_files(
    store: Store, location: str, existing: bool
) -> None:
    s = store
    s.replace_doc_chunks("ws", "served", rows(4, text="served"), files_of(5, prefix="served"))
    if existing:
        s.replace_doc_chunks("ws", "r1", rows(10, text="old"), files_of(20))
    before = snapshot(s, "ws", "r1")
    texts_before = stored_texts(location)
    new_files = files_of(1200, changed=3, prefix="new")  # past a batch of the writes
    with pytest.raises(RuntimeError, match="injected"):
        s.replace_doc_chunks(
            "ws", "r1", rows(30, seed=2, text="new"), FailingFiles(new_files, 1100)
        )
    assert snapshot(s, "ws", "r1") == before
    assert s.has_files("ws", "r1") is existing
    assert stored_texts(location) == texts_before
    assert s.file_text("ws", "r1", "new/000.md") is None
    # The store still takes writes afterwards.
    s.replace_doc_chunks("ws", "r1", rows(3, text="again"), files_of(2))
    assert [f.path for f in s.files("ws", "r1")] == ["docs/000.md", "docs/001.md"]


def test_a_refused_chunk_or_a_path_given_twice_leaves_the_previous_chunks_and_files(
    store: Store,
) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(4, text="old"), files_of(10))
    before = snapshot(s, "ws", "r1")
    bad = rows(6, seed=3, text="new")
    bad[4] = ChunkRow("x.md", 4, "X", "wide", 1, 1, "w", unit(1, dim=DIM * 2))
    with pytest.raises(StoreError, match="32"):
        s.replace_doc_chunks("ws", "r1", bad, files_of(10, changed=2, prefix="new"))
    assert snapshot(s, "ws", "r1") == before
    twice = [*files_of(3, prefix="new"), file_row("new/001.md", "again")]
    with pytest.raises(StoreError):
        s.replace_doc_chunks("ws", "r1", rows(2, seed=4, text="new"), twice)
    assert snapshot(s, "ws", "r1") == before


def test_prune_removes_the_files_of_gone_refs_and_the_texts_no_ref_holds(
    store: Store, location: str
) -> None:
    s = store
    shared, only_r1, only_r2 = (
        file_row("s.md", "shared"),
        file_row("a.md", "r1's"),
        file_row("b.md", "r2's"),
    )
    s.replace_doc_chunks("ws", "r1", rows(2), [shared, only_r1])
    s.replace_doc_chunks("ws", "r2", rows(2), [shared, only_r2])
    s.replace_doc_chunks("other", "r1", rows(2), [only_r1])
    # A ref whose files are all empty has files and no chunks: a prune deletes it too.
    s.replace_doc_chunks("ws", "blank", [], [file_row("blank.md", "")])
    assert stored_texts(location) == 4
    assert s.prune("ws", ["r2"]) == 2
    assert not s.has_files("ws", "r1")
    assert not s.has_files("ws", "blank")
    assert s.files("ws", "r1") == []
    assert s.file_text("ws", "r1", "a.md") is None
    # r1's text is still another workspace's; the blank text was only the pruned ref's.
    assert stored_texts(location) == 3
    assert s.file_text("other", "r1", "a.md") == "r1's"
    assert s.file_text("ws", "r2", "s.md") == "shared"
    # A text that a replace of a ref left behind goes at the next prune.
    s.replace_doc_chunks("ws", "r2", rows(2), [shared, file_row("b.md", "r2's, changed")])
    assert stored_texts(location) == 4
    assert s.prune("ws", ["r2"]) == 0
    assert stored_texts(location) == 3
    assert s.file_text("ws", "r2", "b.md") == "r2's, changed"
    assert s.prune("other", []) == 1
    assert stored_texts(location) == 2
    assert s.prune("ws", []) == 1
    assert stored_texts(location) == 0
    assert s.workspaces() == []


def test_a_pinned_ref_keeps_its_files_through_a_prune(store: Store, location: str) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", rows(2), files_of(3))
    pin = s.add_pin("ws", "r1", "serve", LONG_LEASE)
    assert s.prune("ws", []) == 0
    assert len(s.files("ws", "r1")) == 3
    assert stored_texts(location) == 3
    s.remove_pin(pin)
    assert s.prune("ws", []) == 1
    assert stored_texts(location) == 0


def write_raw_chunks(location: str, ref: str, written: list[ChunkRow]) -> None:
    """Write chunks of workspace "ws" straight into the store's table, as an older docshelf did."""
    values = [
        (
            "ws",
            ref,
            *row.columns(),
            None if row.embedding is None else row.embedding.astype("<f4").tobytes(),
        )
        for row in written
    ]
    columns = "workspace, ref, path, chunk, heading, content, start_line, end_line, content_hash"
    if is_postgres_url(location):
        with psycopg.connect(location) as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO docs_chunks ({columns}, embedding) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::text::vector)",
                [
                    (*v[:-1], str(np.frombuffer(v[-1], dtype="<f4").tolist()))
                    for v in values
                    if v[-1] is not None
                ],
            )
        return
    with sqlite3.connect(location) as raw:
        raw.executemany(
            f"INSERT INTO chunks ({columns}, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
    raw.close()


def test_a_store_of_schema_4_is_upgraded_and_its_refs_have_chunks_but_no_files(
    location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store made by the code before file texts, which knew the first four migrations.
    for module in (sqlite_module, postgres_module):
        monkeypatch.setattr(module, "migrations", lambda store: migrations(store)[:4])
    open_store(location, model_id=MODEL, dim=DIM).close()
    monkeypatch.undo()
    write_raw_chunks(location, "r1", rows(3))
    with open_store(location, model_id=None, dim=None) as new:
        assert new.ref_counts("ws") == {"r1": 3}
        assert new.has_chunks("ws", "r1")
        assert not new.has_files("ws", "r1")
        assert new.files("ws", "r1") == []
        assert new.file_text("ws", "r1", "docs/a.md") is None
        assert len(new.search("ws", "r1", unit(1), 5)) == 3
        assert len(new.search("ws", "r1", unit(1), 5, paths=["docs/a.md"])) == 3
        # The rows written before migration 0006 got their search terms when the store opened
        # and the inverted lists of migration 0007.
        assert len(new.search_text("ws", "r1", "chunk", 5, paths=["docs/a.md"])) == 3
        assert new.search_text("ws", "r1", "number 2", 5)[0].chunk == 2
        assert new.ref_report("ws", "r1") == (None, None)  # indexed before they were kept
        new.replace_doc_chunks("ws", "r2", rows(3), files_of(2))
        assert new.has_files("ws", "r2")
        assert new.prune("ws", ["r2"]) == 1
    assert stored_texts(location) == 2
    folder = "postgresql" if is_postgres_url(location) else "sqlite"
    assert [v for v, _, _ in migrations(folder)][-1] == (12 if folder == "postgresql" else 10)


# -- file titles ------------------------------------------------------------------------------


def titled(path: str, seed: int) -> FileRow:
    """A file whose title has the vector unit(seed), by a hash of the seed."""
    return dataclasses.replace(
        file_row(path, f"# {path}\n"), title_hash=f"t{seed}", title=unit(seed)
    )


def test_file_titles_are_kept_per_ref_reused_by_hash_and_pruned_with_their_ref(
    store: Store,
) -> None:
    store.replace_doc_chunks(
        "ws", "r1", rows(2), [titled("docs/000.md", 1), titled("docs/001.md", 2)]
    )
    store.replace_doc_chunks(
        "ws", "r2", rows(2), [titled("docs/000.md", 3), file_row("docs/001.md", "x")]
    )
    found = store.file_titles("ws", "r1", ["docs/000.md", "docs/001.md", "docs/none.md"])
    assert sorted(found) == ["docs/000.md", "docs/001.md"]
    assert np.allclose(found["docs/000.md"], unit(1)) and np.allclose(found["docs/001.md"], unit(2))
    # Each ref's own: r2 changed one title and has none for the other file.
    assert list(store.file_titles("ws", "r2", ["docs/000.md", "docs/001.md"])) == ["docs/000.md"]
    assert np.allclose(store.file_titles("ws", "r2", ["docs/000.md"])["docs/000.md"], unit(3))
    assert store.file_titles("ws", "r1", []) == {}
    assert store.file_titles("other", "r1", ["docs/000.md"]) == {}
    # Reused by hash from any ref of any workspace; only for the store's model.
    reused = store.title_embeddings_for(["t1", "t3", "t9"], MODEL)
    assert sorted(reused) == ["t1", "t3"] and np.allclose(reused["t3"], unit(3))
    assert store.title_embeddings_for(["t1"], "another-model") == {}
    store.set_current("ws", "r2")
    store.prune("ws", ["r2"])
    assert store.file_titles("ws", "r1", ["docs/000.md"]) == {}
    assert sorted(store.title_embeddings_for(["t1", "t3"], MODEL)) == ["t3"]


def test_a_title_vector_of_another_width_is_refused_and_nothing_is_written(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", rows(2), [titled("docs/000.md", 1)])
    wrong = dataclasses.replace(
        file_row("docs/000.md", "# A\n"), title_hash="t5", title=unit(5, DIM + 1)
    )
    with pytest.raises(StoreError, match=r"title of docs/000\.md has an embedding of shape"):
        store.replace_doc_chunks("ws", "r1", rows(3), [wrong])
    assert store.ref_counts("ws") == {"r1": 2}
    assert list(store.file_titles("ws", "r1", ["docs/000.md"])) == ["docs/000.md"]


# -- searches over a set of paths ---------------------------------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "timeout", "payment", "owner", "deploy", "retry"]


def corpus(paths: list[str], per_path: int, *, seed: int = 0) -> list[ChunkRow]:
    """Chunks of random words and random vectors, `per_path` of each path: no two score alike."""
    rng = random.Random(seed)
    return [
        ChunkRow(
            path,
            i,
            " ".join(rng.choices(WORDS, k=2)),
            " ".join(rng.choices(WORDS, k=rng.randint(3, 40))) + f" number {n}",
            i * 3 + 1,
            i * 3 + 2,
            f"{seed}-{n}",
            unit(seed * 100_000 + n),
        )
        for n, (path, i) in enumerate((p, i) for p in paths for i in range(per_path))
    ]


def key(hits: list[StoredHit]) -> list[tuple[str, int]]:
    return [(h.path, h.chunk) for h in hits]


PATHS = [f"docs/{name}.md" for name in ["a", "b", "c", "d", "e", "f"]]


@pytest.mark.parametrize("kind", ["vector", "text"])
def test_a_search_over_a_set_of_paths_returns_the_k_best_of_that_subset_as_scored_unfiltered(
    store: Store, kind: str
) -> None:
    s = store
    s.replace_doc_chunks("ws", "r1", corpus(PATHS, 15))
    # Another ref and another workspace with the same paths: none of their chunks come back.
    s.replace_doc_chunks("ws", "r2", corpus(PATHS, 15, seed=1))
    s.replace_doc_chunks("other", "r1", corpus(PATHS, 15, seed=2))

    def run(k: int, paths: list[str] | set[str] | None = None) -> list[StoredHit]:
        if kind == "vector":
            return s.search("ws", "r1", unit(123), k, paths=paths)
        return s.search_text("ws", "r1", "timeout payment retry", k, paths=paths)

    everything = run(1000)
    assert len(everything) == (90 if kind == "vector" else len(everything)) > 60
    score = {(h.path, h.chunk): h.score for h in everything}
    for subset in [{"docs/b.md", "docs/e.md"}, {"docs/f.md"}, set(PATHS[:5])]:
        for k in (1, 5, 12):
            want = [h for h in everything if h.path in subset][:k]
            got = run(k, subset)
            assert key(got) == key(want), (subset, k)
            assert [h.score for h in got] == pytest.approx([score[c] for c in key(got)], abs=1e-6)
            assert got == want
    # Fewer chunks in the subset than k: all of them, best first.
    few = run(50, ["docs/c.md"])
    assert key(few) == [c for c in key(everything) if c[0] == "docs/c.md"]
    assert len(few) == (15 if kind == "vector" else len(few)) > 5
    # Duplicates and paths the ref does not hold change nothing; an empty set finds nothing.
    many = [f"docs/other/{i}.md" for i in range(5000)]
    assert run(5, [*many, "docs/d.md", "docs/d.md"]) == run(5, {"docs/d.md"})
    assert run(5, many) == []
    assert run(5, []) == []
    assert run(5, set()) == []
    assert run(5, PATHS) == run(5)


def test_a_subset_far_from_the_query_still_returns_k_hits(store: Store) -> None:
    # The subset's chunks lie on the other side of the sphere: none of them are among the
    # candidates an HNSW walk from the query sees first, so on PostgreSQL the index answer
    # comes back short, and the subset is searched exactly.
    query = unit(1)
    rng = np.random.default_rng(0)

    def around(target: Vector, n: int) -> list[Vector]:
        vs = target + 0.3 * rng.standard_normal((n, DIM)).astype(np.float32) / math.sqrt(DIM)
        return [(v / np.linalg.norm(v)).astype(np.float32) for v in vs]

    near = around(query, 400)
    far = around(-query, 400)
    written = [
        ChunkRow(path, i, "H", f"{path} {i}", 1, 1, f"{path}-{i}", v)
        for path, vs in (("near.md", near), ("far.md", far))
        for i, v in enumerate(vs)
    ]
    store.replace_doc_chunks("ws", "r1", written)
    hits = store.search("ws", "r1", query, 5, paths={"far.md"})
    exact = np.argsort(-(np.stack(far) @ query))[:5]
    assert [(h.path, h.chunk) for h in hits] == [("far.md", int(i)) for i in exact]
    assert [h.score for h in hits] == pytest.approx(
        [float(far[int(i)] @ query) for i in exact], abs=1e-5
    )
    assert len(store.search("ws", "r1", query, 60, paths=["far.md"])) == 60


def test_equal_scores_in_a_set_of_paths_are_ordered_by_path_then_chunk(store: Store) -> None:
    same = [
        ChunkRow(f"docs/{99 - i:02d}.md", c, "Same", "the same words", 1, 2, f"h{i}", unit(5))
        for i in range(60)
        for c in (1, 0)
    ]
    store.replace_doc_chunks("ws", "ties", same)
    subset = {f"docs/{n:02d}.md" for n in range(40, 100, 3)}  # 40, 43, ..., 97
    want = [("docs/40.md", 0), ("docs/40.md", 1), ("docs/43.md", 0), ("docs/43.md", 1)]
    want.append(("docs/46.md", 0))
    assert key(store.search_text("ws", "ties", "same words", 5, paths=subset)) == want
    # Equal vectors: which of them an HNSW walk (PostgreSQL) meets first is the index's choice, as
    # in a search of the whole ref; those that come back are of the subset, in that order.
    by_vector = key(store.search("ws", "ties", unit(5), 5, paths=subset))
    assert len(by_vector) == 5
    assert by_vector == sorted(by_vector)
    assert {path for path, _ in by_vector} <= subset
    if isinstance(store, SQLiteStore):
        assert by_vector == want
