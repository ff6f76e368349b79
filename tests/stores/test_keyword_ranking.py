"""Keyword ranking on both stores: BM25 over the same terms (stores/terms.py), an exact code ranked
first, the same scores on SQLite and PostgreSQL, and statistics that follow every write, prune and
failed write."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from docshelf.chunking import chunk_file
from docshelf.embedders.local import LocalEmbedder
from docshelf.rows import ChunkRow
from docshelf.stores import SQLiteStore, open_store
from docshelf.stores.postgres import PostgresStore
from docshelf.stores.terms import BM25_WEIGHTS
from tests.stores.test_contract import DIM, MODEL, FailingRows, rows, unit
from tests.support.bm25_reference import bm25
from tests.support.service import build_service
from tests.support.text_stats import check_text_statistics

Store = SQLiteStore | PostgresStore


def row(path: str, chunk: int, heading: str, content: str) -> ChunkRow:
    return ChunkRow(
        path, chunk, heading, content, chunk + 1, chunk + 1, f"{path}#{chunk}", unit(chunk)
    )


# Passages that hold the code's words without the code, or a code one digit away, and many
# mentions of each word: only the code itself, one term, tells the right passage apart.
CODES = [
    row(
        "docs/errors/ledger.md",
        0,
        "Ledger errors",
        "LEDGER-409 means the ledger rejected a duplicate entry; retry with a new idempotency key.",
    ),
    row(
        "docs/errors/ledger.md",
        1,
        "Ledger errors",
        "LEDGER-410 means the ledger is closed for "
        "the day. The ledger reopens at midnight; 409 other entries wait.",
    ),
    row(
        "docs/ledger.md",
        0,
        "Ledger",
        "The ledger records every entry. Ledger entries number "
        "409 per page, and the ledger ledger ledger keeps them for 409 days.",
    ),
    row(
        "docs/sync.md",
        0,
        "Syncing",
        "Set --sync-interval to the seconds between two syncs; "
        "the interval is 60 by default and a sync never overlaps another.",
    ),
    row(
        "docs/sync.md",
        1,
        "Sync interval",
        "Every sync reads the interval from the config "
        "file; interval, interval, interval: the sync is the thing.",
    ),
    row("docs/s3.md", 0, "Permissions", "The role needs s3:PutObject on the bucket to upload."),
    row("docs/s3.md", 1, "Objects", "Put the object in S3 with PutObject: put object, s3 object."),
    *(
        row(f"docs/filler-{i}.md", 0, "Filler", f"Nothing about that here, page {i}.")
        for i in range(12)
    ),
]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("LEDGER-409", ("docs/errors/ledger.md", 0)),
        ("what does error LEDGER-409 mean?", ("docs/errors/ledger.md", 0)),
        ("ledger-409", ("docs/errors/ledger.md", 0)),
        ("LEDGER-410", ("docs/errors/ledger.md", 1)),
        ("how do I set --sync-interval", ("docs/sync.md", 0)),
        ("s3:PutObject permission", ("docs/s3.md", 0)),
    ],
)
def test_an_exact_code_ranks_first(store: Store, query: str, first: tuple[str, int]) -> None:
    store.replace_doc_chunks("ws", "r1", CODES)
    hits = store.search_text("ws", "r1", query, 5)
    assert (hits[0].path, hits[0].chunk) == first, [(h.path, h.chunk) for h in hits]
    assert hits[0].score > hits[1].score


def test_a_word_of_a_code_still_finds_it(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", CODES)
    assert ("docs/errors/ledger.md", 0) in {
        (h.path, h.chunk) for h in store.search_text("ws", "r1", "idempotency duplicate", 5)
    }
    assert "docs/s3.md" in {h.path for h in store.search_text("ws", "r1", "putobject", 5)}


def test_scores_are_bm25_as_defined(store: Store) -> None:
    store.replace_doc_chunks("ws", "r1", CODES)
    assert BM25_WEIGHTS == (3.0, 2.0, 1.0)
    for query in ["LEDGER-409", "ledger entries", "sync interval seconds", "S3 object put", "page"]:
        want = bm25(CODES, query, len(CODES))
        hits = store.search_text("ws", "r1", query, len(CODES))
        got = {(h.path, h.chunk): h.score for h in hits}
        assert got.keys() == want.keys(), query
        for key, score in want.items():
            assert got[key] == pytest.approx(score, rel=1e-9), (query, key)


def test_common_words_are_ranked_when_the_rarer_ones_find_too_few(store: Store) -> None:
    # "page" is in 12 of 19 chunks (idf <= 0); "idempotency" in one. Asked for 5, the one chunk
    # with the rare word comes first, then chunks with only the common word fill the answer.
    store.replace_doc_chunks("ws", "r1", CODES)
    hits = store.search_text("ws", "r1", "idempotency page", 5)
    assert len(hits) == 5
    assert (hits[0].path, hits[0].chunk) == ("docs/errors/ledger.md", 0)
    assert all(h.path.startswith("docs/filler-") or h.path == "docs/ledger.md" for h in hits[1:])
    # Alone, a word most chunks hold still finds them.
    assert len(store.search_text("ws", "r1", "page", 20)) == 13


def test_a_refs_scores_are_its_own_whatever_else_the_store_holds(store: Store) -> None:
    # BM25's statistics are the ref's: another ref, or another workspace, full of the same words
    # changes none of its scores (both stores; SQLite's FTS5 once counted the whole store).
    store.replace_doc_chunks("ws", "r1", CODES)
    queries = ["LEDGER-409", "ledger entries", "sync interval seconds", "page"]
    alone = {
        q: [(h.path, h.chunk, h.score) for h in store.search_text("ws", "r1", q, 8)]
        for q in queries
    }
    crowd = [
        row(f"docs/crowd-{i}.md", 0, "Ledger", "ledger ledger page sync entries 409")
        for i in range(40)
    ]
    store.replace_doc_chunks("ws", "r2", crowd)
    store.replace_doc_chunks("other", "r1", crowd + CODES)
    for query in queries:
        got = [(h.path, h.chunk, h.score) for h in store.search_text("ws", "r1", query, 8)]
        assert got == alone[query], query
        want = bm25(CODES, query, 8)
        assert all(want[(p, c)] == pytest.approx(s, rel=1e-9) for p, c, s in got), query


@pytest.fixture
def both(tmp_path: Path, postgres_url: str) -> Iterator[tuple[SQLiteStore, PostgresStore]]:
    sqlite = SQLiteStore.open(tmp_path / "s.sqlite3", model_id=MODEL, dim=DIM)
    postgres = PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def test_both_stores_rank_a_real_corpus_alike(
    both: tuple[SQLiteStore, PostgresStore], shared_data: Path
) -> None:
    # The anthropic set's 45 pages and its 100 questions, and a sample of the AWS questions:
    # the same hits in the same order with the same scores, over the whole ref and over paths.
    sqlite, postgres = both
    pages = shared_data / "eval" / "anthropic-docs-qa" / "pages"
    corpus = []
    for path in sorted(pages.glob("*.md")):
        for chunk in chunk_file(path.name, path.read_text(encoding="utf-8"), "markdown"):
            corpus.append(
                ChunkRow(
                    *(path.name, chunk.index, chunk.heading, chunk.content),
                    *(chunk.start_line, chunk.end_line, f"{path.name}#{chunk.index}"),
                    unit(len(corpus)),
                )
            )
    for store in both:
        store.replace_doc_chunks("ws", "r1", corpus)
    questions = [
        json.loads(line)["text"]
        for folder in ("anthropic-docs-qa", "aws-docs-qa")
        for line in (shared_data / "eval" / folder / "queries.jsonl").read_text().splitlines()
        if line.strip()
    ]
    some_paths = sorted({r.path for r in corpus})[::4]
    for question in questions:
        for k, paths in ((20, None), (5, None), (5, some_paths)):
            a = sqlite.search_text("ws", "r1", question, k, paths)
            b = postgres.search_text("ws", "r1", question, k, paths)
            assert [(h.path, h.chunk) for h in a] == [(h.path, h.chunk) for h in b], question
            assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-9)


def test_statistics_follow_every_write_prune_and_failed_write(location: str) -> None:
    rng = random.Random(3)
    words = ["alpha", "beta", "LEDGER-409", "gamma", "s3:PutObject", "delta", "retry"]

    def some(n: int, seed: int) -> list[ChunkRow]:
        return [
            ChunkRow(
                f"docs/{seed}/{i % 4}.md",
                i,
                "Part",
                " ".join(rng.choices(words, k=rng.randint(1, 20))),
                i,
                i,
                f"{seed}-{i}",
                unit(seed * 100 + i),
            )
            for i in range(n)
        ]

    with open_store(location, model_id=MODEL, dim=DIM) as store:
        check_text_statistics(location)
        store.replace_doc_chunks("ws", "r1", some(30, 1))
        store.replace_doc_chunks("ws", "r2", some(20, 2))
        store.replace_doc_chunks("other", "r1", some(10, 3))
        check_text_statistics(location)
        before = store.search_text("ws", "r1", "LEDGER-409 retry", 10)
        with pytest.raises(RuntimeError, match="injected"):
            store.replace_doc_chunks("ws", "r1", FailingRows(some(30, 4), fail_at=17))
        check_text_statistics(location)
        assert store.search_text("ws", "r1", "LEDGER-409 retry", 10) == before
        store.replace_doc_chunks("ws", "r1", some(25, 5))  # a ref written again
        store.replace_doc_chunks("ws", "empty", [])
        check_text_statistics(location)
        assert store.prune("ws", ["r2"]) == 1  # a ref written empty holds nothing to prune
        check_text_statistics(location)
        assert store.search_text("ws", "r1", "alpha", 5) == []
        assert store.search_text("ws", "r2", "alpha", 5)
        assert store.prune("ws", []) == 1
        assert store.prune("other", []) == 1
        check_text_statistics(location)
        store.replace_doc_chunks("ws", "r3", rows(3))
        check_text_statistics(location)


@pytest.fixture(scope="module")
def model() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.mark.parametrize(
    "query", ["LEDGER-409", "What does the error LEDGER-409 mean?", "ledger-409 duplicate"]
)
def test_hybrid_search_with_the_real_model_puts_the_exact_code_first(
    location: str, model: LocalEmbedder, query: str
) -> None:
    # The model's vectors place the three ledger passages close together; the code, one rare
    # term, puts its own passage first on both stores.
    with open_store(location, model_id=model.model_id, dim=model.dim) as store:
        rows_ = [
            ChunkRow(
                r.path, r.chunk, r.heading, r.content, r.start_line, r.end_line, r.content_hash, v
            )
            for r, v in zip(
                CODES,
                model.embed([f"{r.path}\n{r.heading}\n\n{r.content}" for r in CODES]),
                strict=True,
            )
        ]
        store.replace_doc_chunks("ws", "r1", rows_)
        store.set_current("ws", "r1")
        answer = build_service(store, model, "ws").search(query, 5)
    assert (answer.hits[0].path, answer.hits[0].start_line) == ("docs/errors/ledger.md", 1)
