"""What only the SQLite store does: WAL, its migrations table, its in-memory vector matrices, and
its pins and lock files (in the runtime folder, never beside the store)."""

from __future__ import annotations

import multiprocessing
import os
import random
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docshelf.errors import StoreError
from docshelf.indexer import Indexer
from docshelf.rows import ChunkRow
from docshelf.stores import sqlite as sqlite_module
from docshelf.stores import sqlite_lock, sqlite_vectors
from docshelf.stores.migrations import migrations
from docshelf.stores.sqlite import SQLiteStore
from docshelf.stores.sqlite_vectors import MATRIX_CACHE_REFS
from tests.stores.test_contract import DIM, MODEL, rows, unit, write_raw_chunks
from tests.support.bm25_reference import bm25
from tests.support.indexing import FakeEmbedder, MemorySource, section_doc


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite3"


@pytest.fixture
def store(path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore.open(path, model_id=MODEL, dim=DIM) as opened:
        yield opened


def test_the_file_is_in_wal_mode_so_reads_go_on_during_a_write(
    store: SQLiteStore, path: Path
) -> None:
    store.replace_doc_chunks("ws", "r1", rows(3))
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_search_is_answered_while_another_connection_holds_a_write_open(
    store: SQLiteStore, path: Path
) -> None:
    store.replace_doc_chunks("ws", "r1", rows(3))
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")  # in WAL mode, EXCLUSIVE still lets readers read
        writer.execute("DELETE FROM chunks")
        assert len(store.search("ws", "r1", unit(1), 3)) == 3
        assert store.search_text("ws", "r1", "chunk", 3)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_migrations_are_recorded_in_a_version_table(store: SQLiteStore, path: Path) -> None:
    with sqlite3.connect(path) as raw:
        versions = raw.execute("SELECT version, name FROM schema_migrations").fetchall()
    assert versions == [
        (1, "0001_initial.sql"),
        (2, "0002_pins.sql"),
        (3, "0003_fts_path.sql"),
        (4, "0004_selections.sql"),
        (5, "0005_file_texts.sql"),
        (6, "0006_terms.sql"),
        (7, "0007_term_lists.sql"),
        (8, "0008_vectors_by_hash.sql"),
        (9, "0009_ref_reports.sql"),
        (10, "0010_file_titles.sql"),
    ]


def test_a_store_of_a_newer_schema_is_refused(store: SQLiteStore, path: Path) -> None:
    store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO schema_migrations VALUES (99, '0099_future.sql', 'now')")
    with pytest.raises(StoreError, match="upgrade docshelf"):
        SQLiteStore.open(path, model_id=MODEL, dim=DIM)


def test_a_refs_matrix_is_loaded_once_and_reloaded_after_a_write(store: SQLiteStore) -> None:
    store.replace_doc_chunks("ws", "r1", rows(5))
    store.search("ws", "r1", unit(1), 2)
    first = store._matrices[("ws", "r1")]
    store.search("ws", "r1", unit(2), 2)
    assert store._matrices[("ws", "r1")] is first
    store.replace_doc_chunks("ws", "r1", rows(4, seed=1))
    store.search("ws", "r1", unit(1), 2)
    assert store._matrices[("ws", "r1")] is not first
    assert len(store._matrices[("ws", "r1")].ids) == 4


def test_the_matrix_cache_keeps_the_refs_searched_last_within_its_bytes(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    refs = [f"r{i}" for i in range(MATRIX_CACHE_REFS + 2)]
    for ref in refs:
        store.replace_doc_chunks("ws", ref, rows(3))
        store.search("ws", ref, unit(1), 1)
    assert list(store._matrices) == [("ws", r) for r in refs]  # a few KB: all of them stay
    one = store._matrices[("ws", "r0")].vectors.nbytes
    monkeypatch.setattr(sqlite_vectors, "MATRIX_CACHE_BYTES", one * (MATRIX_CACHE_REFS + 1))
    store.search("ws", "r0", unit(1), 1)  # from the cache: searched last now
    store.replace_doc_chunks("ws", "new", rows(3))
    store.search("ws", "new", unit(1), 1)  # a load: the least recently searched go
    assert list(store._matrices) == [("ws", r) for r in [*refs[3:], "r0", "new"]]
    monkeypatch.setattr(sqlite_vectors, "MATRIX_CACHE_BYTES", 0)  # the last few stay anyway
    store.replace_doc_chunks("ws", "newer", rows(3))
    store.search("ws", "newer", unit(1), 1)
    kept = [*refs[3:], "r0", "new", "newer"][-MATRIX_CACHE_REFS:]
    assert list(store._matrices) == [("ws", r) for r in kept]


def test_searches_of_refs_with_nothing_indexed_never_evict_a_matrix(store: SQLiteStore) -> None:
    store.replace_doc_chunks("ws", "served", rows(3))
    store.search("ws", "served", unit(1), 1)
    for i in range(MATRIX_CACHE_REFS * 2):
        assert store.search("ws", f"missing{i}", unit(1), 1) == []
    assert list(store._matrices) == [("ws", "served")]


@pytest.mark.parametrize("spread", [0.5, 0.02, 0.0005])
def test_a_search_returns_the_exact_top_k_among_near_duplicates(path: Path, spread: float) -> None:
    # Clusters of near-duplicates (the smallest spread puts many scores within 1e-4 of each
    # other): the top k is the exact one, as float64 ranks it.
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((20, DIM))
    vectors = centres[rng.integers(0, 20, 600)] + spread * rng.standard_normal((600, DIM))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    written = [
        ChunkRow("a.md", i, "H", f"chunk {i}", 1, 1, f"h{i}", vectors[i]) for i in range(600)
    ]
    with SQLiteStore.open(path, model_id=MODEL, dim=DIM) as store:
        store.replace_doc_chunks("ws", "big", written)
        for seed in range(25):
            query = centres[seed % 20] + 0.3 * rng.standard_normal(DIM)
            query = (query / np.linalg.norm(query)).astype(np.float32)
            exact = vectors.astype(np.float64) @ query.astype(np.float64)
            hits = store.search("ws", "big", query, 10)
            expected = np.sort(exact)[::-1][:10]
            assert [h.score for h in hits] == pytest.approx(list(expected), abs=1e-6)
            assert all(h.score == pytest.approx(exact[h.chunk], abs=1e-6) for h in hits)


def test_a_search_over_a_set_of_paths_returns_that_subsets_exact_top_k(
    path: Path,
) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((600, DIM))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    written = [
        ChunkRow(f"{i % 6}.md", i, "H", f"chunk {i}", 1, 1, f"h{i}", vectors[i]) for i in range(600)
    ]
    with SQLiteStore.open(path, model_id=MODEL, dim=DIM) as store:
        store.replace_doc_chunks("ws", "big", written)
        for seed in range(10):
            query = unit(seed)
            exact = vectors.astype(np.float64) @ query.astype(np.float64)
            everything = store.search("ws", "big", query, 600)
            for subset, k in [({"2.md"}, 10), ({"0.md", "5.md"}, 30), ({"4.md"}, 200)]:
                hits = store.search("ws", "big", query, k, paths=subset)
                want = [h for h in everything if h.path in subset][:k]
                assert hits == want
                assert len(hits) == min(k, 100 * len(subset))
                assert all(h.score == pytest.approx(exact[h.chunk], abs=1e-6) for h in hits)


def test_a_small_ref_is_searched_in_float32_without_torch(store: SQLiteStore) -> None:
    store.replace_doc_chunks("ws", "r1", rows(5))
    store.search("ws", "r1", unit(1), 2)
    assert store._matrices[("ws", "r1")].vectors is not None


def test_a_store_of_schema_1_is_upgraded_on_open_and_keeps_its_rows(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The code before pins: it knew the first migration only.
    monkeypatch.setattr(sqlite_module, "migrations", lambda store: migrations(store)[:1])
    with SQLiteStore.open(path, model_id=MODEL, dim=DIM) as old:
        old.set_current("ws", "r2")
    # Its rows, as it wrote them (this docshelf's writes need the tables of file texts).
    write_raw_chunks(str(path), "r1", rows(3))
    write_raw_chunks(str(path), "r2", rows(2))
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
        assert raw.execute("SELECT name FROM sqlite_master WHERE name = 'pins'").fetchall() == []
    monkeypatch.undo()
    with SQLiteStore.open(path, model_id=None, dim=None) as new:
        assert (new.model_id, new.dim) == (MODEL, DIM)
        assert new.ref_counts("ws") == {"r1": 3, "r2": 2}
        assert new.current("ws") == "r2"
        new.add_pin("ws", "r1", "serve", 30)
        assert new.prune("ws", ["r2"]) == 0
        # The full-text index was rebuilt with the path: its words find the old rows.
        assert len(new.search_text("ws", "r1", "docs", 5)) == 3
        assert len(new.search_text("ws", "r1", "number", 5)) == 3
    with sqlite3.connect(path) as raw:
        versions = raw.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()
    assert versions == [(1,), (2,), (3,), (4,), (5,), (6,), (7,), (8,), (9,), (10,)]


def test_pins_expire_by_the_unix_clock_and_prune_deletes_expired_rows_of_its_workspace(
    store: SQLiteStore, path: Path
) -> None:
    before = time.time()
    live = store.add_pin("a", "r1", "host:7", 30)
    store.add_pin("a", "r2", "host:7", 0.1)
    store.add_pin("b", "r1", "host:7", 0.1)
    with sqlite3.connect(path) as raw:
        holder, expires_at = raw.execute(
            "SELECT holder, expires_at FROM pins WHERE id = ?", (live,)
        ).fetchone()
    assert holder == "host:7"
    assert before + 30 <= expires_at <= time.time() + 30
    time.sleep(0.3)
    store.prune("a", [])
    with sqlite3.connect(path) as raw:
        left = raw.execute("SELECT workspace, ref FROM pins ORDER BY 1, 2").fetchall()
    assert left == [("a", "r1"), ("b", "r1")]


@pytest.fixture
def runtime(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime folder of this test's own, as a login session's XDG_RUNTIME_DIR."""
    folder = tmp_path_factory.mktemp("run")
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


def beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir())


def test_each_workspace_has_a_private_lock_file_in_the_runtime_folder_none_beside_the_store(
    store: SQLiteStore, path: Path, runtime: Path
) -> None:
    with store.workspace_lock("a", 1), store.workspace_lock("../../etc/passwd", 1):
        assert beside(path) == [path.name, f"{path.name}-shm", f"{path.name}-wal"]
    folder = runtime / "docshelf"
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o700
    lock_files = sorted(folder.iterdir())
    assert len(lock_files) == 2
    for lock_file in lock_files:
        assert lock_file.name.endswith(".lock")
        assert stat.S_IMODE(os.stat(lock_file).st_mode) == 0o600


def test_an_index_leaves_nothing_beside_the_store_but_its_file(tmp_path: Path) -> None:
    path = tmp_path / "store" / "docs.sqlite3"
    source = MemorySource()
    source.add("c1", {"docs/a.md": section_doc("Alpha", 3)})
    with SQLiteStore.open(path, model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(MODEL, DIM), source)
        try:
            assert indexer.index("c1").chunks == 3
        finally:
            indexer.close()
        # SQLite's own files, while the store is open.
        assert beside(path) == [path.name, f"{path.name}-shm", f"{path.name}-wal"]
    assert beside(path) == [path.name]
    with SQLiteStore.open(path, model_id=None, dim=None) as store:
        assert store.ref_counts(source.name) == {"c1": 3}
    assert beside(path) == [path.name]


def test_two_paths_to_one_store_take_the_same_workspace_lock(
    store: SQLiteStore, path: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.sqlite3"
    link.symlink_to(path)
    with SQLiteStore.open(link, model_id=None, dim=None) as other:
        held = store.workspace_lock("ws", 1)
        with held, pytest.raises(StoreError, match="is indexing"), other.workspace_lock("ws", 0.1):
            pass
        with other.workspace_lock("ws", 0):
            pass


def test_without_a_runtime_folder_the_locks_are_in_a_private_folder_in_the_temporary_folder(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(sqlite_lock, "RUN_USER", str(tmp_path / "no-run-user"))
    # A runtime folder that others may enter is no runtime folder.
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    with store.workspace_lock("ws", 1):
        pass
    folder = temporary / f"docshelf-{os.geteuid()}"
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o700
    assert len(list(folder.iterdir())) == 1
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("planted", ["link", "open-to-others"])
def test_a_lock_folder_planted_in_the_temporary_folder_is_refused(
    store: SQLiteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(sqlite_lock, "RUN_USER", str(tmp_path / "no-run-user"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    folder = temporary / f"docshelf-{os.geteuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if planted == "link":
        folder.symlink_to(elsewhere)
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with pytest.raises(StoreError) as refused, store.workspace_lock("ws", 1):
        pass
    assert str(refused.value).startswith(f"cannot use {folder} for the indexing lock: ")
    assert "Remove it, or set XDG_RUNTIME_DIR" in str(refused.value)
    assert list(elsewhere.iterdir()) == []


def _exact_text_search(chunks: list[ChunkRow], query: str, k: int) -> list[Any]:
    """search_text's answer computed the plain way: BM25 from its definition over the ref's
    chunks, best first, ties by path and chunk."""
    scores = bm25(chunks, query, k)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(path, chunk, score) for (path, chunk), score in ranked[:k]]


def test_text_search_gives_the_exact_top_k_when_other_refs_crowd_the_index(
    tmp_path: Path,
) -> None:
    words = ["alpha", "beta", "gamma", "delta", "timeout", "payment", "owner", "deploy"]
    rng = random.Random(7)
    store = SQLiteStore.open(tmp_path / "s.sqlite3", model_id="m", dim=0)
    of_ref: dict[str, list[ChunkRow]] = {}
    for ref, n in (("mine", 30), ("crowd-1", 300), ("crowd-2", 300)):
        rows = [
            ChunkRow(
                f"docs/{ref}/{i % 7}.md",
                i,
                " ".join(rng.choices(words, k=2)),
                " ".join(rng.choices(words, k=rng.randint(3, 30))),
                i,
                i + 1,
                f"{ref}-{i}",
                None,
            )
            for i in range(n)
        ]
        store.replace_doc_chunks("ws", ref, rows)
        of_ref[ref] = rows
    for _ in range(60):
        query = " ".join(rng.sample(words, rng.randint(1, 3)))
        for k in (1, 5, 20):
            for ref in ("mine", "crowd-1"):
                got = [(h.path, h.chunk, h.score) for h in store.search_text("ws", ref, query, k)]
                want = _exact_text_search(of_ref[ref], query, k)
                assert [(p, c) for p, c, _ in got] == [(p, c) for p, c, _ in want], query
                assert [s for *_, s in got] == pytest.approx([s for *_, s in want])
    store.close()


def test_text_search_breaks_ties_by_path_and_chunk_even_past_its_first_pass(
    tmp_path: Path,
) -> None:
    store = SQLiteStore.open(tmp_path / "s.sqlite3", model_id="m", dim=0)
    same = [
        ChunkRow(f"docs/{99 - i:02d}.md", 0, "Same", "the same words", 1, 2, f"h{i}", None)
        for i in range(60)
    ]
    store.replace_doc_chunks("ws", "ties", same)
    got = [h.path for h in store.search_text("ws", "ties", "same words", 5)]
    assert got == ["docs/40.md", "docs/41.md", "docs/42.md", "docs/43.md", "docs/44.md"]
    store.close()


def _open_at(path: str, start: float, writer: bool) -> str:
    """In a child process: open the store at `start` (as `docshelf index` does when `writer`,
    else as a reader that waits for the store to exist); "ok" or the error."""
    while time.time() < start:
        pass
    deadline = time.monotonic() + 10
    while True:
        try:
            if writer:
                SQLiteStore.open(Path(path), model_id=MODEL, dim=DIM).close()
            else:
                SQLiteStore.open(Path(path), model_id=None, dim=None).close()
            return "ok"
        except StoreError as e:
            # A reader may come before the store exists or has its tables: that is its answer.
            if writer or time.monotonic() > deadline or "docshelf store" not in str(e):
                return str(e)
            time.sleep(0.001)


def test_processes_opening_a_new_store_together_all_get_it(tmp_path: Path) -> None:
    # Switching a new file to WAL fails at once with "database is locked" while another process
    # has it open; `docshelf index` and `docshelf serve` started together must both get the store.
    context = multiprocessing.get_context("fork")
    with context.Pool(6) as pool:
        for trial in range(20):
            path = str(tmp_path / f"new-{trial}.sqlite3")
            start = time.time() + 0.2
            answers = pool.starmap(_open_at, [(path, start, n % 2 == 1) for n in range(6)])
            assert answers == ["ok"] * 6, (trial, answers)


# A process that only answers: a ref of 25,000 rows searched by vector and by text, and which
# heavy modules it imported (torch is 200 MiB resident; a large ref once loaded it).
ANSWER_ONLY = """
import sys
from pathlib import Path
from tests.stores.test_contract import DIM, MODEL, rows, unit
from docshelf.stores.sqlite import SQLiteStore

with SQLiteStore.open(Path(sys.argv[1]), model_id=MODEL, dim=DIM) as store:
    store.replace_doc_chunks("ws", "big", rows(25_000))
    hits = store.search("ws", "big", unit(3), 5)
    words = store.search_text("ws", "big", "number 7", 5)
    print(len(hits), len(words), sorted(m for m in ("torch", "transformers") if m in sys.modules))
"""


def test_searching_a_large_ref_never_imports_torch(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ANSWER_ONLY, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5 5 []"
