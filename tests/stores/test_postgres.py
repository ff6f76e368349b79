"""What only the PostgreSQL store does: its plans, pool, schema, migrations and fallbacks.

The behaviour both stores share is in test_contract.py; these tests look inside the database.
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg.rows import TupleRow

from docshelf.config import DEFAULT_EF_SEARCH
from docshelf.errors import ConfigError, StoreError
from docshelf.rows import ChunkRow, FileRow, Vector
from docshelf.stores import postgres as postgres_module
from docshelf.stores import postgres_many, postgres_merged
from docshelf.stores.contract import RefScope
from docshelf.stores.migrations import migrations
from docshelf.stores.postgres import (
    INDEXING_LOCK_SEED,
    PINS_LOCK_SEED,
    TEXTS_LOCK_KEY,
    PostgresStore,
)
from docshelf.stores.postgres_errors import without_password
from docshelf.stores.postgres_many import EXACT_SQL, WALK_SQL
from docshelf.stores.terms import TERMS_VERSION
from tests.stores.test_contract import write_raw_chunks
from tests.support.text_stats import check_text_statistics

MODEL = "test-model"
DIM = 64
HNSW_INDEX = "docs_vectors_embedding_hnsw"


def unit(seed: int, dim: int = DIM) -> Vector:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def near(target: Vector, seed: int, spread: float) -> Vector:
    """A unit vector about `spread` away from `target`."""
    v = target + spread * unit(seed, len(target))
    unit_v: Vector = (v / np.linalg.norm(v)).astype(np.float32)
    return unit_v


def chunk_rows(vectors: list[Vector], *, text: str = "chunk", path: str = "a.md") -> list[ChunkRow]:
    return [
        ChunkRow(path, i, f"Part {i}", f"{text} {i}", i + 1, i + 1, f"{text}-{i}", v)
        for i, v in enumerate(vectors)
    ]


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM) as opened:
        yield opened


@pytest.fixture
def sql(postgres_url: str) -> Iterator[psycopg.Connection[TupleRow]]:
    """A connection of the test's own, beside the store's pool, to look at the database."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        yield conn


def explain(conn: psycopg.Connection[TupleRow], query: str, params: Mapping[str, Any]) -> str:
    register_vector(conn)
    return "\n".join(str(row[0]) for row in conn.execute("EXPLAIN " + query, params))


def searched(
    ref: str, vector: Vector, k: int, ef: int, paths: list[str] | None = None
) -> dict[str, Any]:
    """The parameters of WALK_SQL and EXACT_SQL for a search of workspace ws's `ref`."""
    scope = postgres_many.scope_params([("ws", ref, paths)])
    return {**scope, "vector": vector, "k": k, "ef": ef}


def walked(conn: psycopg.Connection[TupleRow], params: Mapping[str, Any]) -> list[TupleRow]:
    """WALK_SQL's rows alone (no fallback), with the walk's list at params["ef"]."""
    register_vector(conn)
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(params["ef"]),))
    return conn.execute(WALK_SQL, params).fetchall()


def test_the_vector_search_query_uses_the_hnsw_index(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    # A workspace with four refs of 500 chunks each: the current ref and three pinned ones.
    for r in range(4):
        vectors = [unit(r * 1000 + i) for i in range(500)]
        store.replace_doc_chunks("ws", f"ref{r}", chunk_rows(vectors, text=f"r{r}"))
    params = searched("ref1", unit(99_999), 10, 200)
    # The planner's own choice, with no setting of ours nudging it: the walk of the distinct
    # vectors' index, whose texts are joined to the ref's rows by content hash.
    plan = explain(sql, WALK_SQL, params)
    assert f"Index Scan using {HNSW_INDEX}" in plan, plan
    assert "docs_chunks_content_hash" in plan, plan
    # The fallback cannot use the HNSW index (it would not be exact otherwise).
    assert HNSW_INDEX not in explain(sql, EXACT_SQL, params)


def test_a_text_many_refs_hold_is_one_vector_and_a_walk_ranks_its_copies_as_exact_search(
    store: PostgresStore, sql: psycopg.Connection[TupleRow], walks: None
) -> None:
    # 30 workspaces hold the same 20 texts (a vendored copy of shared docs), each with a text of
    # its own: the index holds 50 vectors, not 630.
    shared = [unit(i) for i in range(20)]
    for w in range(30):
        rows = chunk_rows(shared, text="shared")
        rows.append(ChunkRow("own.md", 0, "Own", f"own {w}", 1, 1, f"own-{w}", unit(500 + w)))
        store.replace_doc_chunks(f"team{w:02}", "r", rows)
    assert sql.execute("SELECT count(*) FROM docs_vectors").fetchone() == (50,)
    assert sql.execute("SELECT count(*) FROM docs_chunks").fetchone() == (630,)
    scopes: list[RefScope] = [(f"team{w:02}", "r", None) for w in range(30)]
    for seed in range(5):
        query = near(shared[seed], 900 + seed, 0.5)
        params = {**postgres_many.scope_params(scopes), "vector": query, "k": 60, "ef": 200}
        register_vector(sql)
        # The exact ranking: every workspace's copy of the nearest texts, the copies of one text
        # in workspace order. The walk alone (no fallback) finds the same 60 rows in that order.
        exact = [tuple(row[:3]) for row in sql.execute(EXACT_SQL, params).fetchall()]
        assert [tuple(row[:3]) for row in walked(sql, params)] == exact
        assert len(exact) == 60
        got = store.search_refs(scopes, query, 60)
        assert [(h.workspace, h.path, h.chunk) for h in got] == exact


def test_a_prune_deletes_the_vectors_no_row_holds_and_keeps_the_shared_ones(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    store.replace_doc_chunks("a", "old", chunk_rows([unit(1), unit(2)], text="x"))
    store.replace_doc_chunks("a", "new", chunk_rows([unit(1)], text="x"))
    store.replace_doc_chunks("b", "r", chunk_rows([unit(2)], text="y"))  # y-0: unit(2) again
    hashes = {h for (h,) in sql.execute("SELECT content_hash FROM docs_vectors")}
    assert hashes == {"x-0", "x-1", "y-0"}
    assert store.prune("a", ["new"]) == 1
    hashes = {h for (h,) in sql.execute("SELECT content_hash FROM docs_vectors")}
    assert hashes == {"x-0", "y-0"}  # x-1 was held by a's old ref alone
    assert store.embeddings_for(["x-0", "x-1", "y-0"], MODEL).keys() == {"x-0", "y-0"}


def test_a_write_makes_the_statistics_again_only_when_it_adds_a_tenth_of_the_rows(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    def estimated() -> float:
        row = sql.execute("SELECT reltuples FROM pg_class WHERE relname = 'docs_chunks'")
        return float(_first(row.fetchone()))

    store.replace_doc_chunks("a", "r", chunk_rows([unit(i) for i in range(200)], text="a"))
    assert estimated() == 200  # a new table: analysed at its first write
    store.replace_doc_chunks("b", "r", chunk_rows([unit(i) for i in range(5)], text="b"))
    assert estimated() == 200  # 5 of 205: not sampled again for so few
    store.replace_doc_chunks("c", "r", chunk_rows([unit(i) for i in range(100)], text="c"))
    assert estimated() == 305


def test_migration_11_keeps_each_stored_vector_once(
    store: PostgresStore, postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    # A store of schema 10 has no docs_vectors: migration 0011 fills it from the rows, one vector
    # per content hash, and indexes it in place of the rows' own index.
    store.replace_doc_chunks("a", "r", chunk_rows([unit(i) for i in range(4)]))
    store.replace_doc_chunks("b", "r", chunk_rows([unit(i) for i in range(6)]))
    sql.execute("DROP TABLE docs_vectors")
    sql.execute("DROP INDEX docs_term_lists_term")
    migration = dict((n, text) for _, n, text in migrations("postgresql"))
    sql.execute(migration["0011_distinct_vectors.sql"].replace("{{dim}}", str(DIM)))
    assert sql.execute("SELECT count(*) FROM docs_vectors").fetchone() == (6,)
    stored = store.embeddings_for([f"chunk-{i}" for i in range(6)], MODEL)
    assert all(np.allclose(stored[f"chunk-{i}"], unit(i), atol=1e-6) for i in range(6))
    indexes = {i for (i,) in sql.execute("SELECT indexname FROM pg_indexes")}
    assert {HNSW_INDEX, "docs_term_lists_term"} <= indexes
    assert "docs_chunks_embedding_hnsw" not in indexes
    hits = store.search("b", "r", unit(5), 1)
    assert [(h.chunk, round(h.score, 4)) for h in hits] == [(5, 1.0)]


def test_pooled_connections_search_with_the_configured_ef_search(postgres_url: str) -> None:
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM, ef_search=57) as store:
        assert store.ef_search == 57
        # Several connections at once, so that more than the first one is looked at.
        held = [store._pool.getconn() for _ in range(3)]
        try:
            for conn in held:
                assert _first(conn.execute("SHOW hnsw.ef_search").fetchone()) == "57"
        finally:
            for conn in held:
                store._pool.putconn(conn)
    with PostgresStore.open(postgres_url, model_id=None, dim=None) as default:
        assert default.ef_search == DEFAULT_EF_SEARCH
        with default._pool.connection() as conn:
            shown = _first(conn.execute("SHOW hnsw.ef_search").fetchone())
        assert shown == str(DEFAULT_EF_SEARCH)


def test_an_ef_search_outside_pgvectors_range_is_refused(postgres_url: str) -> None:
    with pytest.raises(ConfigError, match="1 to 1000"):
        PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM, ef_search=0)


def test_the_width_is_the_embedding_columns_typmod(
    postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    PostgresStore.open(postgres_url, model_id="minilm", dim=384).close()
    column = sql.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'docs_chunks'::regclass AND attname = 'embedding'"
    ).fetchone()
    assert column == ("vector(384)",)
    with PostgresStore.open(postgres_url, model_id=None, dim=None) as again:
        assert (again.model_id, again.dim) == ("minilm", 384)
    with pytest.raises(StoreError) as wider:
        PostgresStore.open(postgres_url, model_id="mpnet", dim=768)
    for part in ["minilm", "384", "mpnet", "768", "new store"]:
        assert part in str(wider.value)


def test_a_width_pgvectors_hnsw_index_cannot_take_is_refused(postgres_url: str) -> None:
    with pytest.raises(ConfigError, match="2000"):
        PostgresStore.open(postgres_url, model_id="large", dim=3072)


def test_migrations_are_recorded_and_applied_once(
    postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM).close()
    recorded = sql.execute(
        "SELECT version, name, applied_at FROM docs_schema_migrations ORDER BY version"
    ).fetchall()
    assert [(v, n) for v, n, _ in recorded] == [(v, n) for v, n, _ in migrations("postgresql")]
    PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM).close()
    PostgresStore.open(postgres_url, model_id=None, dim=None).close()
    again = sql.execute(
        "SELECT version, name, applied_at FROM docs_schema_migrations ORDER BY version"
    ).fetchall()
    assert again == recorded


def test_processes_creating_a_new_store_at_once_all_succeed(
    postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    starters = 4
    barrier = threading.Barrier(starters)
    opened: list[tuple[str, int]] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            barrier.wait()
            with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM) as store:
                opened.append((store.model_id, store.dim))
        except BaseException as e:  # reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=create) for _ in range(starters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert opened == [(MODEL, DIM)] * starters
    assert sql.execute("SELECT count(*) FROM docs_schema_migrations").fetchone() == (
        len(migrations("postgresql")),
    )
    meta = sql.execute("SELECT key, value FROM docs_meta ORDER BY key").fetchall()
    assert meta == [("model_id", MODEL), ("terms", TERMS_VERSION)]


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search walks the HNSW index first, however small its ref: these tests' refs are
    hundreds of rows, and a ref of at most EXACT_MAX_CHUNKS is otherwise ranked exactly."""
    monkeypatch.setattr(postgres_many, "EXACT_MAX_CHUNKS", 0)


def test_a_ref_that_is_a_small_share_of_the_table_is_ranked_exactly_without_a_walk(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = unit(1)
    store.replace_doc_chunks("ws", "big", chunk_rows([near(query, i, 0.3) for i in range(300)]))
    store.replace_doc_chunks("ws", "small", chunk_rows([unit(2000 + i) for i in range(30)]))
    monkeypatch.setattr(postgres_many, "EXACT_MAX_CHUNKS", 100)  # big is large, small is not
    ran: list[str] = []
    real = psycopg.Cursor.execute

    def seen(cursor: Any, query_sql: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(str(query_sql))
        return real(cursor, query_sql, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", seen)
    hits = store.search("ws", "small", query, 5)
    assert WALK_SQL not in ran and EXACT_SQL in ran
    ran.clear()
    assert len(store.search("ws", "big", query, 5)) == 5
    assert WALK_SQL in ran  # most of the table, past the bound: the walk
    monkeypatch.setattr(psycopg.Cursor, "execute", real)
    exact = sorted((float(unit(2000 + i) @ query), i) for i in range(30))[::-1][:5]
    assert [h.chunk for h in hits] == [i for _, i in exact]


def test_a_small_ref_far_from_the_query_returns_all_of_its_chunks(store: PostgresStore) -> None:
    query = unit(1)
    store.replace_doc_chunks("ws", "a", chunk_rows([near(query, i, 0.3) for i in range(500)]))
    far = [near(-query, 1000 + i, 0.3) for i in range(5)]
    store.replace_doc_chunks("ws", "b", chunk_rows(far, text="far"))
    hits = store.search("ws", "b", query, 5)
    assert sorted(h.chunk for h in hits) == [0, 1, 2, 3, 4]
    expected = sorted((float(v @ query) for v in far), reverse=True)
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-5)


def test_a_ref_crowded_out_of_the_hnsw_candidates_is_searched_exactly(
    store: PostgresStore, sql: psycopg.Connection[TupleRow], walks: None
) -> None:
    # Two refs of one size, so that the planner walks the HNSW index for either (a small ref is
    # read through the (workspace, ref) index instead, which is exact anyway): a's chunks lie
    # around the query, b's on the other side of the sphere.
    query = unit(1)
    store.replace_doc_chunks("ws", "a", chunk_rows([near(query, i, 0.3) for i in range(500)]))
    far = [near(-query, 1000 + i, 0.3) for i in range(500)]
    store.replace_doc_chunks("ws", "b", chunk_rows(far, text="far"))
    params = searched("b", query, 5, store.ef_search)
    assert f"Index Scan using {HNSW_INDEX}" in explain(sql, WALK_SQL, params)
    # Every text the walk finds is one of a's: the index query alone comes back short.
    assert len(walked(sql, params)) < 5
    hits = store.search("ws", "b", query, 5)
    exact = np.argsort(-(np.stack(far) @ query))[:5]
    assert [h.chunk for h in hits] == [int(i) for i in exact]
    assert all(h.content.startswith("far") for h in hits)


def test_two_writers_of_one_ref_leave_the_rows_of_one_of_them(store: PostgresStore) -> None:
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for _ in range(10):
                store.replace_doc_chunks("ws", "r", chunk_rows([unit(i) for i in range(n)]))
        except BaseException as e:  # reported to the main thread
            errors.append(e)

    writers = [threading.Thread(target=write, args=(n,)) for n in (30, 70)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert errors == []
    assert store.ref_counts("ws")["r"] in (30, 70)


def test_k_above_ef_search_still_returns_k_chunks(
    postgres_url: str, sql: psycopg.Connection[TupleRow], walks: None
) -> None:
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM, ef_search=10) as store:
        store.replace_doc_chunks("ws", "r", chunk_rows([unit(i) for i in range(600)]))
        params = searched("r", unit(7), 40, 10)
        assert f"Index Scan using {HNSW_INDEX}" in explain(sql, WALK_SQL, params)
        # The walk yields at most ef_search texts: the index query alone comes back short.
        assert len(walked(sql, params)) <= 10
        hits = store.search("ws", "r", unit(7), 40)
    assert len(hits) == 40
    assert hits[0].chunk == 7
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_equal_scores_are_ordered_by_path_then_chunk(store: PostgresStore) -> None:
    same = unit(5)
    rows = [
        ChunkRow(path, chunk, "H", "identical text", 1, 1, f"{path}{chunk}", same)
        for path, chunk in [("b.md", 1), ("a.md", 2), ("b.md", 0), ("a.md", 1)]
    ]
    store.replace_doc_chunks("ws", "r", rows)
    hits = store.search("ws", "r", same, 4)
    assert [(h.path, h.chunk) for h in hits] == [("a.md", 1), ("a.md", 2), ("b.md", 0), ("b.md", 1)]
    text_hits = store.search_text("ws", "r", "identical", 4)
    assert [(h.path, h.chunk) for h in text_hits] == [(h.path, h.chunk) for h in hits]


def test_a_store_without_embeddings_keeps_rows_without_vectors(
    postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    with PostgresStore.open(postgres_url, model_id="none", dim=0) as store:
        assert store.dim == 0
        plain = [
            ChunkRow("a.md", 0, "Deploys", "Roll back with the deploy tool.", 1, 3, "h0", None),
            ChunkRow("b.md", 0, "Owners", "The web team owns checkout.", 1, 2, "h1", None),
        ]
        store.replace_doc_chunks("ws", "r", plain)
        hits = store.search_text("ws", "r", "how do I roll back a deploy", 5)
        assert [h.path for h in hits] == ["a.md"]
        with pytest.raises(StoreError, match="none embedder"):
            store.replace_doc_chunks("ws", "r", chunk_rows([unit(1)]))
    assert sql.execute("SELECT count(*) FROM docs_chunks WHERE embedding IS NULL").fetchone() == (
        2,
    )
    column = sql.execute(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'docs_chunks'::regclass AND attname = 'embedding'"
    ).fetchone()
    assert column == ("vector",)
    indexes = [str(name) for (name,) in sql.execute("SELECT indexname FROM pg_indexes")]
    assert HNSW_INDEX not in indexes
    with PostgresStore.open(postgres_url, model_id=None, dim=None) as again:
        assert (again.model_id, again.dim) == ("none", 0)


def test_text_search_weighs_the_heading_above_the_content(store: PostgresStore) -> None:
    rows = [
        ChunkRow("body.md", 0, "Intro", "Something about rollbacks here.", 1, 1, "b", unit(1)),
        ChunkRow("head.md", 0, "Rollbacks", "Something else entirely.", 1, 1, "h", unit(2)),
    ]
    store.replace_doc_chunks("ws", "r", rows)
    hits = store.search_text("ws", "r", "rollback", 5)
    assert [h.path for h in hits] == ["head.md", "body.md"]
    assert hits[0].score > hits[1].score > 0


def test_nul_characters_are_dropped_from_queries_and_refused_in_names(
    store: PostgresStore,
) -> None:
    store.replace_doc_chunks("ws", "r", chunk_rows([unit(1)], text="payment"))
    assert [h.path for h in store.search_text("ws", "r", "pay\x00 payment\x00", 5)] == ["a.md"]
    with pytest.raises(StoreError, match="NUL"):
        store.has_chunks("ws\x00", "r")
    bad = ChunkRow("b.md", 0, "H", "nul \x00 inside", 1, 1, "n", unit(2))
    with pytest.raises(StoreError, match="NUL"):
        store.replace_doc_chunks("ws", "r", [bad])
    assert store.ref_counts("ws") == {"r": 1}


def test_a_path_that_is_not_unicode_is_refused_with_a_store_error(store: PostgresStore) -> None:
    bad = ChunkRow("caf\udce9.md", 0, "H", "text", 1, 1, "s", unit(1))
    with pytest.raises(StoreError, match="surrogates"):
        store.replace_doc_chunks("ws", "r", [bad])


def test_a_very_long_query_is_cut_and_still_searched(store: PostgresStore) -> None:
    store.replace_doc_chunks("ws", "r", chunk_rows([unit(1)], text="payment"))
    hits = store.search_text("ws", "r", "payment " + "filler " * 50_000, 5)
    assert [h.path for h in hits] == ["a.md"]


def test_searches_go_on_after_the_servers_connections_are_dropped(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    store.replace_doc_chunks("ws", "r", chunk_rows([unit(i) for i in range(5)]))
    assert len(store.search("ws", "r", unit(1), 3)) == 3
    # What a restart of PostgreSQL does to a pool: every connection it holds is cut.
    cut = sql.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = 'docshelf' AND datname = current_database()"
    ).fetchone()
    assert cut is not None and cut[0] >= 1
    assert len(store.search("ws", "r", unit(1), 3)) == 3
    assert store.search_text("ws", "r", "chunk", 5)


@pytest.mark.parametrize("password", ["s3cret-pw", "pa%ZZss"])
def test_a_connection_failure_names_the_server_but_not_the_password(password: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    # libpq quotes a password it cannot decode ("pa%ZZss") in its own message; docshelf must not.
    url = f"postgresql://docs:{password}@127.0.0.1:{port}/docs?sslmode=disable"
    with pytest.raises(StoreError) as failed:
        PostgresStore.open(url, model_id=MODEL, dim=DIM)
    message = str(failed.value)
    assert password not in message
    assert password.split("%", maxsplit=1)[0] + "%" not in message
    assert f"postgresql://docs@127.0.0.1:{port}/docs" in message


def test_a_url_that_cannot_be_read_is_a_config_error_without_the_password() -> None:
    with pytest.raises(ConfigError) as refused:
        PostgresStore.open("postgresql://docs:s3cret@[::1/docs", model_id=MODEL, dim=DIM)
    assert "s3cret" not in str(refused.value)
    assert "postgresql://user:password@host" in str(refused.value)


def test_the_location_never_holds_the_password(postgres_url: str) -> None:
    assert (
        without_password("postgresql://u:p%40ss@db.example:5433/docs?password=x&sslmode=require")
        == "postgresql://u@db.example:5433/docs?sslmode=require"
    )
    assert without_password("postgres://db/docs") == "postgres://db/docs"
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM) as store:
        assert store.location == without_password(postgres_url)


def test_opening_an_empty_database_without_a_model_creates_nothing(
    postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    with pytest.raises(StoreError, match=r"nothing is indexed there yet. Check --store"):
        PostgresStore.open(postgres_url, model_id=None, dim=None)
    tables = sql.execute(
        "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'docs\\_%%'"
    ).fetchone()
    assert tables == (0,)


def test_a_store_of_schema_1_is_upgraded_on_open_and_keeps_its_rows(
    postgres_url: str, sql: psycopg.Connection[TupleRow], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The code before pins: it knew the first migration only.
    monkeypatch.setattr(postgres_module, "migrations", lambda store: migrations(store)[:1])
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM) as old:
        old.set_current("ws", "r2")
    # Its rows, as it wrote them (this docshelf's writes need the tables of file texts).
    write_raw_chunks(postgres_url, "r1", chunk_rows([unit(i) for i in range(3)]))
    write_raw_chunks(postgres_url, "r2", chunk_rows([unit(i) for i in range(2)]))
    assert sql.execute("SELECT version FROM docs_schema_migrations").fetchall() == [(1,)]
    assert sql.execute("SELECT to_regclass('docs_pins')").fetchone() == (None,)
    monkeypatch.undo()
    with PostgresStore.open(postgres_url, model_id=None, dim=None) as new:
        assert (new.model_id, new.dim) == (MODEL, DIM)
        assert new.ref_counts("ws") == {"r1": 3, "r2": 2}
        assert new.current("ws") == "r2"
        assert len(new.search("ws", "r1", unit(1), 3)) == 3
        new.add_pin("ws", "r1", "serve", 30)
        assert new.prune("ws", ["r2"]) == 0
        # The text vector was recomputed with the path: its words find the old rows.
        assert len(new.search_text("ws", "r1", "a.md", 5)) == 3
    versions = sql.execute("SELECT version FROM docs_schema_migrations ORDER BY 1").fetchall()
    assert versions == [(v,) for v in range(1, 13)]


def test_pins_expire_by_the_servers_clock_and_prune_deletes_expired_rows_of_its_workspace(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    live = store.add_pin("a", "r1", "host:7", 30)
    store.add_pin("a", "r2", "host:7", 0.1)
    store.add_pin("b", "r1", "host:7", 0.1)
    holder, left = _first_two(
        sql.execute(
            "SELECT holder, extract(epoch FROM expires_at - now()) FROM docs_pins WHERE id = %s",
            (live,),
        ).fetchone()
    )
    assert holder == "host:7"
    assert 25 < float(left) <= 30
    time.sleep(0.3)
    store.prune("a", [])
    rows = sql.execute("SELECT workspace, ref FROM docs_pins ORDER BY 1, 2").fetchall()
    assert rows == [("a", "r1"), ("b", "r1")]


@pytest.mark.parametrize("operation", ["add_pin", "prune"])
def test_add_pin_and_prune_wait_for_the_workspaces_pins_lock(
    store: PostgresStore, postgres_url: str, operation: str
) -> None:
    store.replace_doc_chunks("ws", "r1", chunk_rows([unit(1)]))
    done = threading.Event()

    def run() -> None:
        if operation == "add_pin":
            store.add_pin("ws", "r1", "serve", 30)
        else:
            store.prune("ws", ["r1"])
        done.set()

    with psycopg.connect(postgres_url) as holder:
        holder.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))", ("ws", PINS_LOCK_SEED)
        )
        thread = threading.Thread(target=run)
        thread.start()
        # Another workspace's pins have a lock of their own.
        store.add_pin("elsewhere", "r1", "serve", 30)
        assert not done.wait(0.3)
        holder.commit()
    thread.join(10)
    assert done.is_set()


def test_the_workspace_lock_is_held_by_an_idle_session_and_let_go_after(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    advisory = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
    with store.workspace_lock("ws", 1):
        assert sql.execute(advisory).fetchone() == (1,)
        key = sql.execute("SELECT hashtextextended('ws', %s)", (INDEXING_LOCK_SEED,)).fetchone()
        states = sql.execute(
            "SELECT a.state, (l.classid::bigint << 32) | l.objid::bigint FROM pg_locks AS l "
            "JOIN pg_stat_activity AS a USING (pid) WHERE l.locktype = 'advisory'"
        ).fetchall()
        # Never "idle in transaction" for the length of an indexing run.
        assert states == [("idle", _first(key))]
    assert sql.execute(advisory).fetchone() == (0,)
    assert store.pinned_refs("ws") == set()


def test_the_server_drops_the_workspace_lock_when_its_session_dies(
    store: PostgresStore, postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    with (
        PostgresStore.open(postgres_url, model_id=None, dim=None) as other,
        store.workspace_lock("ws", 1),
    ):
        with (
            pytest.raises(StoreError, match="another docshelf process"),
            other.workspace_lock("ws", 0),
        ):
            pass
        killed = sql.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory'"
        ).fetchone()
        assert killed == (1,)
        with other.workspace_lock("ws", 5):
            pass
    # Leaving the lock of the dead session raised nothing, and the store goes on working.
    with store.workspace_lock("ws", 5):
        assert store.pinned_refs("ws") == set()


def test_a_subset_crowded_out_of_the_hnsw_candidates_is_searched_exactly(
    store: PostgresStore, sql: psycopg.Connection[TupleRow], walks: None
) -> None:
    # One ref, two paths of one size: a.md's chunks around the query, b.md's on the other side
    # of the sphere. The planner walks the HNSW index for the subset b.md, and every candidate
    # of the walk is one of a.md's.
    query = unit(1)
    near_rows = chunk_rows([near(query, i, 0.3) for i in range(500)])
    far = [near(-query, 1000 + i, 0.3) for i in range(500)]
    store.replace_doc_chunks("ws", "r", [*near_rows, *chunk_rows(far, text="far", path="b.md")])
    params = searched("r", query, 5, store.ef_search, paths=["b.md"])
    assert f"Index Scan using {HNSW_INDEX}" in explain(sql, WALK_SQL, params)
    assert len(walked(sql, params)) < 5
    hits = store.search("ws", "r", query, 5, paths=["b.md"])
    exact = np.argsort(-(np.stack(far) @ query))[:5]
    assert [(h.path, h.chunk) for h in hits] == [("b.md", int(i)) for i in exact]


def test_the_exact_search_of_a_subset_reads_only_its_rows_through_the_path_index(
    store: PostgresStore, sql: psycopg.Connection[TupleRow]
) -> None:
    store.replace_doc_chunks(
        "ws",
        "r",
        [
            row
            for p in range(50)
            for row in chunk_rows([unit(i) for i in range(40)], path=f"{p}.md")
        ],
    )
    sql.execute("ANALYZE docs_chunks")
    params = searched("r", unit(1), 5, 200, paths=["7.md"])
    plan = explain(sql, EXACT_SQL, params)
    assert "docs_chunks_workspace_ref_path" in plan
    indexes = sql.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'docs_chunks' ORDER BY 1"
    ).fetchall()
    # The path index serves the lookups of a whole ref too: the (workspace, ref) one is gone.
    assert ("docs_chunks_workspace_ref",) not in indexes


def file_row(path: str, text: str) -> FileRow:
    return FileRow(path, text, hashlib.sha256(text.encode()).hexdigest(), text.count("\n"))


def test_a_prune_leaves_the_texts_a_write_under_way_may_count_on(
    store: PostgresStore,
    postgres_url: str,
    sql: psycopg.Connection[TupleRow],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The text of "shared.md" is stored for an old ref of workspace "a". A write of workspace
    # "b" finds it stored, so it does not send it, and references it; before that write commits,
    # a prune of "a" deletes the old ref, after which no committed row references the text.
    monkeypatch.setattr(postgres_module, "FILE_BATCH", 1)
    shared = file_row("shared.md", "shared text\n")
    store.replace_doc_chunks("a", "old", chunk_rows([unit(1)]), [shared, file_row("x.md", "x")])
    referenced = threading.Event()
    pruned = threading.Event()

    def files() -> Iterator[FileRow]:
        yield shared
        referenced.set()  # the batch of shared.md is written once the next file is asked for
        assert pruned.wait(30)
        yield file_row("y.md", "y")

    writer = threading.Thread(
        target=store.replace_doc_chunks, args=("b", "new", chunk_rows([unit(2)]), files())
    )
    writer.start()
    try:
        assert referenced.wait(30)
        with PostgresStore.open(postgres_url, model_id=None, dim=None) as pruner:
            assert pruner.prune("a", []) == 1
    finally:
        pruned.set()
        writer.join(30)
    assert store.file_text("b", "new", "shared.md") == "shared text\n"
    # The sweep was left for later: the orphan text of x.md is still stored, until a prune that
    # no write overlaps.
    texts = "SELECT count(*) FROM docs_file_texts"
    assert sql.execute(texts).fetchone() == (3,)
    assert store.prune("a", []) == 0
    assert sql.execute(texts).fetchone() == (2,)
    assert store.file_text("b", "new", "y.md") == "y"


def test_writers_of_texts_hold_the_texts_lock_shared_and_a_prune_never_waits_for_it(
    store: PostgresStore, postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    store.replace_doc_chunks("ws", "old", chunk_rows([unit(1)]), [file_row("a.md", "a")])
    with psycopg.connect(postgres_url) as writer:
        writer.execute("SELECT pg_advisory_xact_lock_shared(%s)", (TEXTS_LOCK_KEY,))
        # Another writer shares the lock; a prune does not wait, and leaves the sweep.
        store.replace_doc_chunks("ws", "other", chunk_rows([unit(2)]), [file_row("b.md", "b")])
        started = time.monotonic()
        assert store.prune("ws", ["other"]) == 1
        assert time.monotonic() - started < 5
        assert sql.execute("SELECT count(*) FROM docs_file_texts").fetchone() == (2,)
        writer.commit()
    assert store.prune("ws", ["other"]) == 0
    assert sql.execute("SELECT text FROM docs_file_texts").fetchall() == [("b",)]


def _first(row: TupleRow | None) -> Any:
    assert row is not None
    return row[0]


def _first_two(row: TupleRow | None) -> tuple[Any, Any]:
    assert row is not None
    return row[0], row[1]


def test_migration_7_makes_the_lists_again_from_the_chunk_rows(
    store: PostgresStore, postgres_url: str, sql: psycopg.Connection[TupleRow]
) -> None:
    # A store of schema 6 holds its rows' terms and its lists as arrays: migration 0007 drops
    # the lists and makes them again, as bytes, from those rows, for every ref.
    store.replace_doc_chunks("ws", "r1", chunk_rows([unit(i) for i in range(5)], text="alpha"))
    store.replace_doc_chunks("ws", "r2", chunk_rows([unit(i) for i in range(3)], path="b.md"))
    before = [(h.path, h.chunk, h.score) for h in store.search_text("ws", "r1", "alpha a.md", 5)]
    migration = dict((n, text) for _, n, text in migrations("postgresql"))["0007_term_bytes.sql"]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(migration)
    check_text_statistics(postgres_url)
    assert sql.execute("SELECT count(DISTINCT ref) FROM docs_term_lists").fetchone() == (2,)
    after = [(h.path, h.chunk, h.score) for h in store.search_text("ws", "r1", "alpha a.md", 5)]
    assert after == before and len(before) == 5


# -- merged term lists (postgres_merged.py) ---------------------------------------------------


def worded_rows(n: int, text: str, path: str = "a.md") -> list[ChunkRow]:
    return chunk_rows([unit(i) for i in range(n)], text=text, path=path)


def write_current(store: PostgresStore, workspace: str, rows: list[ChunkRow]) -> None:
    """Write `rows` as ref r1 of `workspace` and make it current."""
    store.replace_doc_chunks(workspace, "r1", rows)
    store.set_current(workspace, "r1")


def merged_keys(sql: psycopg.Connection[TupleRow]) -> set[int]:
    return {int(k) for (k,) in sql.execute("SELECT key FROM docs_merged_refs")}


def current_keys(sql: psycopg.Connection[TupleRow]) -> set[int]:
    rows = sql.execute(
        "SELECT s.key FROM docs_current c JOIN docs_ref_stats s USING (workspace, ref)"
    )
    return {int(k) for (k,) in rows}


def test_the_lists_are_merged_from_enough_current_refs_and_again_when_they_moved_on(
    store: PostgresStore, sql: psycopg.Connection[TupleRow], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 3)
    for n in range(2):
        write_current(store, f"w{n}", worded_rows(10, f"alpha w{n}"))
    assert store.merge_term_lists(force=True) == 0  # two current refs: fewer than 3
    assert merged_keys(sql) == set()
    store.replace_doc_chunks("w2", "r1", worded_rows(10, "alpha w2"))
    store.replace_doc_chunks("w2", "old", worded_rows(10, "alpha old"))  # not current
    store.set_current("w2", "r1")
    assert store.merge_term_lists() == 3  # none merged yet: due
    assert merged_keys(sql) == current_keys(sql)
    lists = sql.execute("SELECT term, keys, counts FROM docs_merged_lists WHERE term = 'alpha'")
    term, keys, counts = lists.fetchone() or (None, b"", b"")
    assert term == "alpha"
    assert np.frombuffer(keys, dtype=">i8").tolist() == sorted(current_keys(sql))
    assert np.frombuffer(counts, dtype=">i4").tolist() == [10, 10, 10]
    # 10 chunks of 40 (a quarter) written since: due again. 1 of 31 would not be.
    write_current(store, "w3", worded_rows(1, "alpha w3"))
    assert store.merge_term_lists() == 0
    store.replace_doc_chunks("w0", "r2", worded_rows(10, "alpha w0 again"))
    store.set_current("w0", "r2")
    assert store.merge_term_lists() == 4
    assert merged_keys(sql) == current_keys(sql)
    # Half the merged entries no longer current (and a fresh share under a tenth): due again.
    for n in (0, 1, 2):
        store.set_current(f"w{n}", "gone")
    store.replace_doc_chunks("w4", "r1", worded_rows(30, "alpha w4"))
    store.replace_doc_chunks("w5", "r1", worded_rows(30, "alpha w5"))
    store.replace_doc_chunks("w6", "r1", worded_rows(30, "alpha w6"))
    for n in (4, 5, 6):
        store.set_current(f"w{n}", "r1")
    assert store.merge_term_lists() == 4


def test_a_merge_another_process_is_making_is_not_made_twice(
    store: PostgresStore, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 1)
    write_current(store, "w", worded_rows(3, "alpha"))
    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s)", (postgres_merged.MERGE_LOCK_KEY,))
        assert store.merge_term_lists(force=True) == 0
    assert store.merge_term_lists(force=True) == 1


def test_a_union_reads_the_merged_lists_when_it_holds_half_the_merged_refs(
    store: PostgresStore, sql: psycopg.Connection[TupleRow], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 1)
    for n in range(6):
        write_current(store, f"w{n}", worded_rows(4, f"alpha beta w{n}"))
    store.replace_doc_chunks("w0", "pinned", worded_rows(4, "alpha pinned"))
    assert store.merge_term_lists(force=True) == 6

    def split(workspaces: list[str], ref: str = "r1") -> postgres_merged.Union:
        return postgres_merged.Union.split(sql, {"ws": workspaces, "refs": [ref] * len(workspaces)})

    every = split([f"w{n}" for n in range(6)])
    assert len(every.merged) == 6 and every.own == {"ws": [], "refs": []}
    assert (every.chunks, every.counts(sql, ["alpha", "w1", "none"])) == (
        24,
        {"alpha": 24, "w1": 4},
    )
    half = split(["w1", "w3", "w5"])
    assert len(half.merged) == 3 and half.counts(sql, ["alpha", "w1"]) == {"alpha": 12, "w1": 4}
    assert set(half.lists(sql, ["alpha"])["alpha"].ids) == {
        int(i)
        for (i,) in sql.execute(
            "SELECT id FROM docs_chunks WHERE workspace IN ('w1', 'w3', 'w5') AND ref = 'r1'"
        )
    }
    one = split(["w2"])  # one workspace among many: its own lists, a row a term
    assert len(one.merged) == 0 and one.own == {"ws": ["w2"], "refs": ["r1"]}
    mixed = postgres_merged.Union.split(
        sql, {"ws": ["w0", "w1", "w2", "w3"], "refs": ["pinned", "r1", "r1", "r1"]}
    )
    assert len(mixed.merged) == 3 and mixed.own == {"ws": ["w0"], "refs": ["pinned"]}
    assert mixed.chunks == 16


def test_migration_12_keys_each_ref_and_new_terms_unmerge_them(
    store: PostgresStore,
    postgres_url: str,
    sql: psycopg.Connection[TupleRow],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A store of schema 11 has no keys: migration 0012 gives each ref's totals one.
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 1)
    store.replace_doc_chunks("a", "r", worded_rows(4, "alpha"))
    store.replace_doc_chunks("b", "r", worded_rows(6, "alpha beta"))
    for workspace in ("a", "b"):
        store.set_current(workspace, "r")
    sql.execute("DROP TABLE docs_merged_lists, docs_merged_refs")
    sql.execute("ALTER TABLE docs_ref_stats DROP COLUMN key")
    migration = dict((n, text) for _, n, text in migrations("postgresql"))
    sql.execute(migration["0012_merged_lists.sql"])
    assert len(current_keys(sql)) == 2
    assert store.merge_term_lists(force=True) == 2
    before = store.search_text_refs([("a", "r", None), ("b", "r", None)], "alpha beta", 10)
    # Lists made again by a new tokenizer: each ref's totals get a new key, and nothing is merged.
    sql.execute("UPDATE docs_meta SET value = 'older' WHERE key = 'terms'")
    with PostgresStore.open(postgres_url, model_id=MODEL, dim=DIM) as reopened:
        assert merged_keys(sql) == set() and len(current_keys(sql)) == 2
        after = reopened.search_text_refs([("a", "r", None), ("b", "r", None)], "alpha beta", 10)
    assert [(h.workspace, h.path, h.chunk, h.score) for h in after] == [
        (h.workspace, h.path, h.chunk, h.score) for h in before
    ]
    check_text_statistics(postgres_url)


def test_a_merge_stopped_half_way_leaves_the_merged_lists_as_they_were(
    store: PostgresStore,
    sql: psycopg.Connection[TupleRow],
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 1)
    for n in range(3):
        write_current(store, f"w{n}", worded_rows(4, f"alpha beta w{n}"))
    assert store.merge_term_lists(force=True) == 3
    merged_before = sql.execute("SELECT * FROM docs_merged_lists ORDER BY term").fetchall()
    keys_before = merged_keys(sql)
    store.replace_doc_chunks("w3", "r1", worded_rows(4, "alpha w3"))
    store.set_current("w3", "r1")  # a quarter new: due
    failed: list[BaseException] = []

    def merging() -> None:
        try:
            store.merge_term_lists()
        except StoreError as e:
            failed.append(e)

    # The merge has deleted the merged lists and written the keys it merges when it waits to
    # read the refs' own lists; its server process is ended there, as a crash or a kill would.
    with psycopg.connect(postgres_url) as blocker:
        blocker.execute("LOCK TABLE docs_term_lists IN ACCESS EXCLUSIVE MODE")
        worker = threading.Thread(target=merging)
        worker.start()
        deadline = time.monotonic() + 10
        waiting = None
        while waiting is None and time.monotonic() < deadline:
            waiting = sql.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE 'INSERT INTO docs_merged_lists%%'"
            ).fetchone()
            time.sleep(0.02)
        assert waiting is not None
        sql.execute("SELECT pg_terminate_backend(%s)", (waiting[0],))
        worker.join(10)
    assert len(failed) == 1 and "merging the term lists" in str(failed[0])
    assert merged_keys(sql) == keys_before
    assert sql.execute("SELECT * FROM docs_merged_lists ORDER BY term").fetchall() == merged_before
    every: list[RefScope] = [(f"w{n}", "r1", None) for n in range(4)]
    served = store.search_text_refs(every, "alpha beta w3", 10)
    monkeypatch.setattr(postgres_merged, "MERGED_READ_SHARE", float("inf"))
    own = store.search_text_refs(every, "alpha beta w3", 10)
    assert [(h.workspace, h.chunk, h.score) for h in served] == [
        (h.workspace, h.chunk, h.score) for h in own
    ]
    assert store.merge_term_lists() == 4  # the next merge, on a new connection
