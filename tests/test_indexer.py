"""The indexer's bookkeeping on both real stores: all or nothing, once per ref, only what changed,
in order, pins and pruning, and faults that leave the previous ref serving."""

from __future__ import annotations

import itertools
import json
import logging
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docshelf import indexer as indexer_module
from docshelf.config import DOCS_READING
from docshelf.errors import IndexingError, StoreError, WorkspaceError
from docshelf.indexer import Indexer, Progress, content_hash, file_chunks
from docshelf.stores import SQLiteStore, bm25, open_store
from docshelf.stores.postgres import PostgresStore
from docshelf.workspace import DocFile, Selection, Skipped, open_workspace
from tests.conftest import REPO
from tests.support.gitrepo import Repo
from tests.support.indexing import (
    DIM,
    MODEL,
    FakeEmbedder,
    MemorySource,
    fake_vector,
    section_doc,
)

Store = SQLiteStore | PostgresStore


@pytest.fixture
def source() -> MemorySource:
    return MemorySource()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def indexer(store: Store, embedder: FakeEmbedder, source: MemorySource) -> Iterator[Indexer]:
    made = Indexer(store, embedder, source, refresh_timeout=2.0)
    yield made
    made.close()


class CountingStore:
    """A real store with its calls counted and, on demand, a prune that fails."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.args: list[tuple[str, tuple[Any, ...]]] = []
        self.fail_prune = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            self.args.append((name, args))
            if name == "prune" and self.fail_prune:
                raise StoreError("the disk is full; free some space")
            return attr(*args, **kwargs)

        return call


def two_files() -> dict[str, str]:
    return {"docs/a.md": section_doc("Alpha", 3), "docs/b.md": section_doc("Beta", 2)}


def test_index_writes_every_chunk_and_makes_the_ref_current(
    indexer: Indexer, store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", two_files(), [Skipped("docs/big.md", "too big")])
    result = indexer.index("c1")
    assert (result.files, result.chunks, result.embedded, result.reused) == (2, 5, 5, 0)
    assert result.skipped == [Skipped("docs/big.md", "too big")]
    assert not result.already_indexed
    assert store.current("ws") == "c1"
    assert store.ref_counts("ws") == {"c1": 5}
    assert len(embedder.texts) == 5


def test_each_row_carries_its_chunk_and_the_hash_of_its_input_and_model(
    indexer: Indexer, store: Store, source: MemorySource
) -> None:
    source.add("c1", {"docs/a.md": "# Owners\n\nCheckout is owned by the payments team.\n"})
    indexer.index("c1")
    hits = store.search_text("ws", "c1", "payments", 5)
    assert [(h.path, h.heading, h.start_line, h.end_line) for h in hits] == [
        ("docs/a.md", "Owners", 1, 3)
    ]
    (chunk,) = file_chunks(
        DocFile("docs/a.md", "# Owners\n\nCheckout is owned by the payments team.\n", "markdown")
    )
    want = content_hash(MODEL, "docs/a.md\nOwners\n\n" + chunk.content)
    assert want in store.embeddings_for([want], MODEL)


def test_text_files_are_cut_by_paragraphs_with_their_line_ranges() -> None:
    text = "First paragraph.\r\n\r\n" + "\n".join(f"line {i}" for i in range(300))
    chunks = file_chunks(DocFile("notes.txt", text, "text"))
    assert len(chunks) > 1
    assert chunks[0].start_line == 1
    assert all(c.heading == "" for c in chunks)
    assert chunks[-1].end_line == 302
    assert all(a.start_line <= b.start_line for a, b in itertools.pairwise(chunks))


def test_an_indexed_ref_is_not_embedded_again_after_a_restart(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", two_files())
    Indexer(store, embedder, source).index("c1")
    again = FakeEmbedder()
    result = Indexer(store, again, source).index("c1")
    assert result.already_indexed
    assert (result.chunks, result.embedded, result.files) == (5, 0, None)
    assert again.calls == []
    assert source.reads == ["c1"]


def test_a_settled_ref_returns_without_asking_the_store(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    counting = CountingStore(store)
    made = Indexer(counting, embedder, source)  # type: ignore[arg-type]
    source.add("c1", two_files())
    made.index("c1")
    counting.calls.clear()
    result = made.index("c1")
    assert result.already_indexed
    assert "has_chunks" not in counting.calls
    assert "workspace_lock" not in counting.calls


def indexed_two_files(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder
) -> dict[str, str]:
    """two_files() indexed as ref c1, with the embedder's calls forgotten; the files."""
    files = two_files()
    source.add("c1", files)
    indexer.index("c1")
    embedder.calls.clear()
    return files


def test_only_new_or_changed_chunks_are_embedded(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder, store: Store
) -> None:
    files = indexed_two_files(indexer, source, embedder)
    changed = dict(files, **{"docs/b.md": section_doc("Beta", 2, words="gamma delta")})
    changed["docs/c.md"] = "# New\n\nA new page.\n"
    source.add("c2", changed)
    result = indexer.index("c2")
    assert sorted(embedder.texts) == sorted(
        [
            "docs/b.md\nBeta 0\n\n# Beta 0\n\ngamma delta paragraph 0 of Beta.",
            "docs/b.md\nBeta 1\n\n# Beta 1\n\ngamma delta paragraph 1 of Beta.",
            "docs/c.md\nNew\n\n# New\n\nA new page.",
        ]
    )
    assert (result.chunks, result.embedded, result.reused) == (6, 3, 3)
    assert store.ref_counts("ws") == {"c2": 6}


def test_each_file_s_title_is_embedded_once_and_kept_with_the_ref(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder, store: Store
) -> None:
    embedder.titles = True
    source.add("c1", two_files())
    indexer.index("c1")
    # One title a file: its first heading and its path's words, embedded as the chunks are.
    assert sorted(t for call in embedder.title_calls for t in call) == [
        "Alpha 0 (docs a)",
        "Beta 0 (docs b)",
    ]
    titles = store.file_titles("ws", "c1", ["docs/a.md", "docs/b.md"])
    assert np.allclose(titles["docs/b.md"], fake_vector("Beta 0 (docs b)", DIM))
    # A commit that changes one file's title embeds that title alone; the other is reused.
    embedder.title_calls.clear()
    files = dict(two_files(), **{"docs/b.md": section_doc("Gamma", 2)})
    source.add("c2", files)
    indexer.index("c2")
    assert embedder.title_calls == [["Gamma 0 (docs b)"]]
    assert sorted(store.file_titles("ws", "c2", ["docs/a.md", "docs/b.md"])) == [
        "docs/a.md",
        "docs/b.md",
    ]


def test_without_an_embedder_no_title_is_kept(tmp_path: Path, source: MemorySource) -> None:
    store = SQLiteStore.open(tmp_path / "text.sqlite3", model_id=indexer_module.NO_MODEL_ID, dim=0)
    try:
        source.add("c1", two_files())
        made = Indexer(store, None, source, refresh_timeout=2.0)
        try:
            made.index("c1")
        finally:
            made.close()
        assert store.ref_counts("ws") == {"c1": 5}
        assert store.file_titles("ws", "c1", ["docs/a.md", "docs/b.md"]) == {}
    finally:
        store.close()


def test_a_fork_of_the_same_docs_in_another_workspace_embeds_nothing(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder, store: Store
) -> None:
    files = indexed_two_files(indexer, source, embedder)
    fork = MemorySource("fork")
    fork.add("f1", dict(files, **{"docs/c.md": "# New\n\nA page only the fork has.\n"}))
    forked = Indexer(store, embedder, fork, refresh_timeout=2.0)
    try:
        result = forked.index("f1")
    finally:
        forked.close()
    assert embedder.texts == ["docs/c.md\nNew\n\n# New\n\nA page only the fork has."]
    assert (result.chunks, result.embedded, result.reused) == (6, 1, 5)
    assert store.ref_counts("fork") == {"f1": 6} and store.ref_counts("ws") == {"c1": 5}
    # The fork's own rows carry the vectors the first workspace made.
    shared = "docs/a.md\nAlpha 1\n\n# Alpha 1\n\nalpha beta paragraph 1 of Alpha."
    (hit,) = store.search("fork", "f1", embedder.embed([shared])[0], 1)
    assert (hit.path, hit.chunk, hit.score) == ("docs/a.md", 1, pytest.approx(1.0, abs=1e-5))


def test_identical_chunks_in_one_commit_are_embedded_once(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", {"docs/a.md": "# Same\n\nbody\n\n# Same\n\nbody\n"})
    result = indexer.index("c1")
    assert result.chunks == 2
    assert len(embedder.texts) == 1
    assert result.embedded == 2


def test_embedding_goes_in_batches_of_at_most_64(
    indexer: Indexer, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", {"docs/a.md": section_doc("Many", 150)})
    indexer.index("c1")
    assert [len(c) for c in embedder.calls] == [64, 64, 22]


def test_an_embedder_with_a_character_budget_gets_fewer_long_texts_a_batch(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    # 40 short paragraphs and 40 long ones (each counted at the cap of 1,000 characters):
    # a budget of 8,000 characters takes the short ones 64 at most, the long ones 8 at a time.
    files = {f"docs/short-{i}.md": f"Short note {i}." for i in range(40)}
    files["docs/long.md"] = "\n\n".join(f"Long note {i}: " + "word " * 300 for i in range(40))
    source.add("c1", files)
    embedder.batch_chars, embedder.batch_text_chars = 8_000, 1_000  # type: ignore[attr-defined]
    indexer = Indexer(store, embedder, source)
    try:
        indexer.index("c1")
    finally:
        indexer.close()
    sizes = [len(c) for c in embedder.calls]
    lengths = [[len(t) for t in c] for c in embedder.calls]
    assert sum(sizes) == 80 and lengths == sorted(lengths)  # sorted by length, each text once
    assert all(max(min(n, 1_000) for n in c) * len(c) <= 8_000 for c in lengths)
    assert sizes[-5:] == [8, 8, 8, 8, 8]  # the long texts, 1,000 characters each at the cap
    assert sizes[0] > 8


def test_progress_reports_reading_embedding_writing_and_done(
    indexer: Indexer, source: MemorySource
) -> None:
    source.add("c1", {"docs/a.md": section_doc("Many", 70)})
    seen: list[Progress] = []
    indexer.index("c1", seen.append)
    phases = [p.phase for p in seen]
    assert phases[0] == "reading" and phases[-2:] == ["writing", "done"]
    embedding = [p for p in seen if p.phase == "embedding"]
    assert [p.embedded for p in embedding] == [0, 64, 70]
    assert all(p.to_embed == 70 and p.chunks == 70 for p in embedding)


@pytest.mark.parametrize("fault", ["fail", "short"])
def test_an_embedder_fault_writes_nothing_and_the_previous_ref_keeps_serving(
    indexer: Indexer, store: Store, source: MemorySource, embedder: FakeEmbedder, fault: str
) -> None:
    source.add("c1", two_files())
    indexer.index("c1")
    source.add("c2", {"docs/a.md": section_doc("Other", 100)})
    setattr(embedder, fault, True)
    with pytest.raises(IndexingError, match="c2") as caught:
        indexer.index("c2")
    assert "previous ref keeps serving" in str(caught.value)
    if fault == "short":
        assert "63 vectors for 64 chunks" in str(caught.value)
    assert store.current("ws") == "c1"
    assert not store.has_chunks("ws", "c2")
    assert store.ref_counts("ws") == {"c1": 5}


def test_refresh_logs_a_failure_and_returns(
    indexer: Indexer, store: Store, source: MemorySource, embedder: FakeEmbedder, caplog: Any
) -> None:
    source.add("c1", two_files())
    assert indexer.refresh("c1") is not None
    source.add("c2", {"docs/a.md": "# X\n\ny\n"})
    embedder.fail = True
    with caplog.at_level(logging.ERROR, logger="docshelf.indexer"):
        assert indexer.refresh("c2") is None
    assert "c2" in caplog.text and "endpoint is down" in caplog.text
    assert indexer.last_failure is not None and "endpoint is down" in indexer.last_failure
    assert store.current("ws") == "c1"
    assert indexer.refresh("c1") is not None
    assert indexer.last_failure is None  # the status shows the last sync's result only


def test_refresh_gives_up_on_a_hanging_embedder_and_nothing_of_the_ref_appears(
    store: Store, source: MemorySource, embedder: FakeEmbedder, caplog: Any
) -> None:
    made = Indexer(store, embedder, source, refresh_timeout=0.5)
    source.add("c1", two_files())
    made.index("c1")
    source.add("c2", {"docs/a.md": "# Hang\n\nbody\n"})
    embedder.hang = True
    started = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="docshelf.indexer"):
        assert made.refresh("c2") is None
    assert time.monotonic() - started < 3
    assert "took longer than" in caplog.text
    assert made.last_failure is not None and "took longer than 0 s" in made.last_failure
    embedder.release.set()  # the embedder answers after all, too late
    deadline = time.monotonic() + 10
    while made._runs._held and time.monotonic() < deadline:  # the cancelled run winds down
        time.sleep(0.05)
    assert store.current("ws") == "c1"
    assert not store.has_chunks("ws", "c2")
    embedder.hang = False
    assert made.index("c2").chunks == 1  # and the next sync indexes it cleanly
    made.close()


def test_concurrent_index_calls_commit_in_the_order_they_started(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    counting = CountingStore(store)
    made = Indexer(counting, embedder, source)  # type: ignore[arg-type]
    for i in range(4):
        source.add(f"c{i}", {"docs/a.md": section_doc(f"Rev{i}", 2)})
    embedder.hang = True
    threads = []
    for i in range(4):
        t = threading.Thread(target=made.index, args=(f"c{i}",))
        t.start()
        threads.append(t)
        if i == 0:
            assert embedder.entered.wait(5)
        time.sleep(0.1)  # c1, c2, c3 queue up in this order behind c0
    embedder.release.set()
    for t in threads:
        t.join(20)
    assert [args[1] for name, args in counting.args if name == "set_current"] == [
        "c0",
        "c1",
        "c2",
        "c3",
    ]
    assert store.current("ws") == "c3"
    assert store.ref_counts("ws") == {"c3": 2}


def test_promote_prunes_every_ref_but_current_and_pinned(
    indexer: Indexer, store: Store, source: MemorySource
) -> None:
    for ref in ("c1", "c2", "c3"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    indexer.index("c1")
    release = indexer.pin("c1")
    indexer.index("c2")
    assert set(store.ref_counts("ws")) == {"c1", "c2"}
    result = indexer.index("c3")
    assert result.pruned == 1  # c2 went, the pinned c1 stayed
    assert set(store.ref_counts("ws")) == {"c1", "c3"}
    release()
    release()  # idempotent
    assert store.pinned_refs("ws") == set()


def test_the_next_sync_of_the_same_ref_prunes_again_once_a_pin_is_released(
    indexer: Indexer, store: Store, source: MemorySource
) -> None:
    for ref in ("c1", "c2"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    indexer.index("c1")
    release = indexer.pin("c1")
    indexer.index("c2")
    assert store.has_chunks("ws", "c1")
    release()
    result = indexer.index("c2")  # not settled while c1 was pinned: it prunes again
    assert result.already_indexed and result.pruned == 1
    assert set(store.ref_counts("ws")) == {"c2"}


def test_two_pins_of_one_ref_need_two_releases(
    indexer: Indexer, store: Store, source: MemorySource
) -> None:
    for ref in ("c1", "c2"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    indexer.index("c1")
    first, second = indexer.pin("c1"), indexer.pin("c1")
    first()
    first()
    indexer.index("c2")
    assert store.has_chunks("ws", "c1")
    second()
    indexer.index("c2")
    assert not store.has_chunks("ws", "c1")


def test_a_pin_held_by_another_process_is_honoured(
    location: str, store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    for ref in ("c1", "c2"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    mine = Indexer(store, embedder, source)
    mine.index("c1")
    with open_store(location, model_id=MODEL, dim=DIM) as other_store:
        other = Indexer(other_store, FakeEmbedder(), source, holder="elsewhere:1")
        release = other.pin("c1")
        mine.index("c2")
        assert store.has_chunks("ws", "c1")
        release()
        other.close()
    mine.index("c2")
    assert not store.has_chunks("ws", "c1")
    mine.close()


def test_pins_are_renewed_before_their_lease_ends(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    for ref in ("c1", "c2"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    made = Indexer(store, embedder, source, pin_lease=0.6)
    made.index("c1")
    made.pin("c1")
    time.sleep(1.5)  # two and a half leases: only renewal keeps it
    assert store.pinned_refs("ws") == {"c1"}
    made.close()
    assert store.pinned_refs("ws") == set()


def test_a_prune_failure_is_reported_and_the_ref_still_becomes_current(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    counting = CountingStore(store)
    made = Indexer(counting, embedder, source)  # type: ignore[arg-type]
    for ref in ("c1", "c2"):
        source.add(ref, {"docs/a.md": section_doc(ref, 1)})
    made.index("c1")
    counting.fail_prune = True
    result = made.index("c2")
    assert result.prune_error is not None and "disk is full" in result.prune_error
    assert store.current("ws") == "c2"
    counting.fail_prune = False
    assert made.index("c2").pruned == 1  # not settled: the next sync prunes


def test_the_none_embedder_indexes_text_only(location: str, source: MemorySource) -> None:
    with open_store(location, model_id="none", dim=0) as text_store:
        made = Indexer(text_store, None, source)
        source.add("c1", two_files())
        result = made.index("c1")
        assert (result.chunks, result.embedded, result.reused) == (5, 0, 0)
        assert [h.path for h in text_store.search_text("ws", "c1", "Beta", 5)][:1] == ["docs/b.md"]


def test_a_failing_row_stream_leaves_nothing(
    indexer: Indexer, store: Store, source: MemorySource
) -> None:
    source.add("c1", two_files())
    indexer.index("c1")
    source.add("c2", {"docs/a.md": "# Bad\n\n\ud800 unpaired surrogate\n"})
    with pytest.raises(IndexingError, match="c2"):
        indexer.index("c2")
    assert store.current("ws") == "c1"
    assert not store.has_chunks("ws", "c2")


# Rows of the killed ref, and how many rows have gone to the store when each kill lands.
KILLED_CHUNKS = 3000
KILL_AFTER_ROWS = (0, 1, 1500, 2999)


def test_a_run_killed_mid_write_leaves_all_of_the_ref_or_none(
    location: str, store: Store, source: MemorySource, tmp_path: Path
) -> None:
    source.add("c1", two_files())
    Indexer(store, FakeEmbedder(), source).index("c1")
    for after in KILL_AFTER_ROWS:
        marker = tmp_path / f"marker-{after}"
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.kill_index",
                location,
                str(marker),
                str(after),
                str(KILLED_CHUNKS),
            ],
            cwd=REPO,
        )
        deadline = time.monotonic() + 60
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert marker.exists(), f"the indexing subprocess ended early ({process.returncode})"
        process.send_signal(signal.SIGKILL)
        process.wait()
        with open_store(location, model_id=MODEL, dim=DIM) as reopened:
            assert reopened.ref_counts("ws").get("big", 0) in (0, KILLED_CHUNKS)
            assert reopened.current("ws") == "c1"
            assert reopened.ref_counts("ws")["c1"] == 5
    big = MemorySource()
    big.add(
        "big", {f"docs/page{i}.md": section_doc(f"Page{i}", 10) for i in range(KILLED_CHUNKS // 10)}
    )
    result = Indexer(store, FakeEmbedder(), big).index("big")
    assert result.chunks == KILLED_CHUNKS
    assert store.ref_counts("ws") == {"big": KILLED_CHUNKS}


# -- real git repositories ---------------------------------------------------------------------


def hostile_repo(path: Path) -> Repo:
    """A repository whose docs hold good files and every kind of file the rules skip."""
    repo = Repo(path)
    repo.write("docs/owners.md", "# Owners\n\nCheckout is owned by the payments team.\n")
    repo.write("docs/runbooks/timeout.md", "# Timeout\n\nRaise the payment timeout to 30 s.\n")
    repo.write("docs/notes.txt", "Plain notes.\n\nSecond paragraph.\n")
    repo.write("README.md", "# Outside the docs root\n")
    repo.symlink("docs/passwd.md", "/etc/passwd")
    repo.symlink("docs/up.md", "../../../../../../../../etc/passwd")
    repo.write("docs/dump.md", "# Dump\n\n" + "x" * (2 * 1024 * 1024))
    repo.write("docs/latin1.md", "# Café\n\nà la carte\n".encode("latin-1"))
    other = Repo(path.parent / f"{path.name}-sub")
    other.write("docs/sub.md", "# Submodule page\n")
    other.commit("sub")
    repo.add_submodule("docs/vendored", other)
    repo.commit("first")
    return repo


def test_a_real_repository_is_indexed_with_every_rule_on_both_stores(
    store: Store, tmp_path: Path
) -> None:
    repo = hostile_repo(tmp_path / "repo")
    ws = open_workspace(str(repo.path), mirrors_dir=tmp_path / "mirrors")
    embedder = FakeEmbedder()
    result = Indexer(store, embedder, ws).index(ws.sync())
    assert result.ref == repo.head()
    assert {s.path: s.reason for s in result.skipped} == {
        "docs/dump.md": "2097160 bytes, over the 1048576-byte limit",
        "docs/latin1.md": "not UTF-8 text (invalid byte at offset 5)",
        "docs/passwd.md": "symbolic link, not followed",
        "docs/up.md": "symbolic link, not followed",
        "docs/vendored": "submodule, not read",
    }
    assert result.files == 3
    indexed = store.search_text(ws.name, result.ref, "payments OR timeout OR notes OR root", 20)
    assert sorted({h.path for h in indexed}) == [
        "docs/notes.txt",
        "docs/owners.md",
        "docs/runbooks/timeout.md",
    ]
    assert result.chunks == sum(store.ref_counts(ws.name).values())
    assert not any("root:x:0:0" in t or "Submodule page" in t for t in embedder.texts)
    assert store.search_text(ws.name, result.ref, "root", 5) == []
    for escape in ("../", "docs/../..", "/etc"):
        with pytest.raises(WorkspaceError, match="--docs"):
            open_workspace(str(repo.path), docs=[escape], mirrors_dir=tmp_path / "mirrors")


def test_each_commit_of_a_repository_is_indexed_once_and_only_changes_are_embedded(
    store: Store, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("docs/a.md", section_doc("Alpha", 4))
    repo.write("docs/b.md", section_doc("Beta", 4))
    first = repo.commit("first")
    repo.branch("release")
    repo.write("docs/b.md", section_doc("Beta", 4) + "\n\n# Beta new\n\nA new section.\n")
    second = repo.commit("second")
    ws = open_workspace(str(repo.path), mirrors_dir=tmp_path / "mirrors")
    embedder = FakeEmbedder()
    indexer = Indexer(store, embedder, ws)
    assert indexer.index(ws.sync("release")).ref == first
    assert len(embedder.texts) == 8
    embedder.calls.clear()
    result = indexer.index(ws.sync())
    assert result.ref == second
    assert embedder.texts == ["docs/b.md\nBeta new\n\n# Beta new\n\nA new section."]
    assert (result.chunks, result.embedded, result.reused) == (9, 1, 8)
    assert store.current(ws.name) == second
    assert set(store.ref_counts(ws.name)) == {second}
    again = Indexer(store, embedder, ws).index(ws.sync())
    assert again.already_indexed and len(embedder.texts) == 1


def test_a_clone_url_is_indexed_and_the_next_sync_fetches_the_new_commit(
    store: Store, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "upstream")
    repo.write("docs/a.md", "# A\n\nfirst\n")
    repo.commit("first")
    ws = open_workspace(repo.url, mirrors_dir=tmp_path / "mirrors")
    indexer = Indexer(store, FakeEmbedder(), ws)
    assert indexer.index(ws.sync()).ref == repo.head()
    repo.write("docs/a.md", "# A\n\nsecond\n")
    second = repo.commit("second")
    assert indexer.index(ws.sync()).ref == second
    assert store.current(ws.name) == second


# Which docs are read: those named, else those stored with the workspace's current ref


def test_docs_read_ahead_are_taken_by_the_next_run_of_that_ref_and_its_selection(
    store: Store, embedder: FakeEmbedder
) -> None:
    source = MemorySource("ws")
    source.add("c1", {"docs/a.md": section_doc("Alpha", 2)})
    source.add("c2", {"docs/a.md": section_doc("Alpha", 2), "docs/b.md": section_doc("Beta", 1)})
    indexer = Indexer(store, embedder, source)
    assert indexer.read_ahead("c1") is True
    assert source.reads == ["c1"]
    assert indexer.index("c1").chunks == 2
    assert source.reads == ["c1"]  # taken, not read again
    assert indexer.read_ahead("c1") is False  # indexed already with these docs: nothing read
    assert indexer.read_ahead("c2") is True
    other = Indexer(store, embedder, source)
    assert other.index("c2").chunks == 3
    assert source.reads == ["c1", "c2", "c2"]  # the other indexer read c2 itself
    assert indexer.index("c2").already_indexed  # and this one's read-ahead is left unused
    # A selection stored meanwhile (another run told other docs) is read afresh.
    source.add("c3", {"docs/a.md": section_doc("Alpha", 3), "guides/g.md": section_doc("G", 1)})
    assert indexer.read_ahead("c3") is True
    told = MemorySource("ws", Selection(("guides",)))
    told.add("c4", source.refs["c3"])
    Indexer(store, embedder, told).index("c4")
    source.reads.clear()
    assert indexer.index("c3").files == 1  # guides only: the read-ahead's docs were not taken
    assert source.reads == ["c3"]


def test_a_source_with_no_docs_named_reads_those_its_current_ref_was_indexed_with(
    store: Store, embedder: FakeEmbedder
) -> None:
    files = {
        "docs/a.md": section_doc("Alpha", 2),
        "docs/i18n/fr/a.md": section_doc("Alpha FR", 2),
        "guides/b.md": section_doc("Beta", 1),
    }
    told = Selection(("docs",), exclude=("**/i18n/**",))
    named = MemorySource("ws", told)
    named.add("c1", files)
    first = Indexer(store, embedder, named).index("c1")
    assert (first.roots, first.files, first.excluded) == (("docs",), 1, 1)
    # serve --sync-interval, or docshelf index with nothing named: the stored docs and roots.
    plain = MemorySource("ws")
    plain.add("c1", files)
    plain.add("c2", {**files, "docs/c.md": section_doc("Gamma", 1)})
    indexer = Indexer(store, embedder, plain)
    again = indexer.index("c1")
    assert again.already_indexed and again.roots == ("docs",)
    assert plain.reads == []
    later = indexer.index("c2")
    assert plain.read_with == [told]
    assert (later.roots, later.files, later.excluded) == (("docs",), 2, 1)
    assert store.selection("ws", "c2") == told.key
    settled = indexer.index("c2")
    assert settled.already_indexed and settled.roots == ("docs",)
    # Named again, other docs replace the stored ones: the same commit is read again.
    other = MemorySource("ws", Selection(("guides",)))
    other.add("c2", plain.refs["c2"])
    replaced = Indexer(store, embedder, other).index("c2")
    assert not replaced.already_indexed
    assert (replaced.roots, replaced.files) == (("guides",), 1)
    assert Indexer(store, embedder, plain).index("c2").roots == ("guides",)
    assert plain.read_with == [told]


def test_a_ref_indexed_by_another_reading_of_docs_is_indexed_again_keeping_its_vectors(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", two_files())
    indexer = Indexer(store, embedder, source)
    first = indexer.index("c1")
    assert first.embedded > 0
    # As an older docshelf stored it: the same selection, without the reading's version.
    stored = json.loads(store.selection("ws", "c1") or "")
    assert stored.pop("reading") == DOCS_READING
    store.set_selection("ws", "c1", json.dumps(stored, separators=(",", ":")))
    upgraded = Indexer(store, embedder, source).index("c1")
    assert not upgraded.already_indexed and (upgraded.embedded, upgraded.reused) == (
        0,
        first.embedded,
    )
    assert store.selection("ws", "c1") == Selection().key
    assert Indexer(store, embedder, source).index("c1").already_indexed


def test_a_stored_selection_that_cannot_be_read_fails_the_run_and_the_previous_ref_serves(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", two_files())
    source.add("c2", two_files())
    indexer = Indexer(store, embedder, source)
    indexer.index("c1")
    store.set_selection("ws", "c1", '{"roots": ["docs"]}')
    with pytest.raises(IndexingError, match="stored docs selection cannot be read; index it"):
        indexer.index("c2")
    assert store.current("ws") == "c1" and not store.has_chunks("ws", "c2")


def test_a_directory_synced_with_no_docs_named_reads_the_docs_it_was_indexed_with(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "setup.md").write_text("# Setup\n\nRun the installer.\n")
    (root / "notes.md").write_text("# Notes\n\nNot part of the guides.\n")
    mirrors = tmp_path / "mirrors"
    named = open_workspace(str(root), docs=["guides"], mirrors_dir=mirrors)
    first = Indexer(store, FakeEmbedder(), named).index(named.sync())
    assert (first.roots, first.files) == (("guides",), 1)
    served = open_workspace(str(root), mirrors_dir=mirrors)
    assert not served.chosen
    indexer = Indexer(store, FakeEmbedder(), served)
    (root / "guides" / "faq.md").write_text("# FAQ\n\nAsk the team.\n")
    result = indexer.index(served.sync())
    assert (result.roots, result.files) == (("guides",), 2)
    hits = store.search_text(served.name, result.ref, "team OR installer OR guides", 10)
    assert {h.path for h in hits} == {"guides/faq.md", "guides/setup.md"}
    again = indexer.index(served.sync())
    assert again.already_indexed and again.roots == ("guides",)


def test_the_indexer_syncs_a_directory_with_the_docs_it_reads_so_its_ref_names_them_alone(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "setup.md").write_text("# Setup\n\nRun the installer.\n")
    (root / "notes.md").write_text("# Notes\n\nNot part of the guides.\n")
    mirrors = tmp_path / "mirrors"
    named = open_workspace(str(root), docs=["guides"], mirrors_dir=mirrors)
    told = Indexer(store, FakeEmbedder(), named)
    first = told.index(told.sync())
    told.close()
    # serve --sync-interval, or docshelf index with nothing named: the stored docs' ref.
    served = open_workspace(str(root), mirrors_dir=mirrors)
    indexer = Indexer(store, FakeEmbedder(), served)
    assert indexer.sync() == first.ref
    assert indexer.index(first.ref).already_indexed
    (root / "notes.md").write_text("# Notes\n\nEdited, still not part of the guides.\n")
    (root / "drafts").mkdir()
    (root / "drafts" / "plan.md").write_text("# Plan\n\nOutside the guides.\n")
    assert indexer.sync() == first.ref
    # An edit under the docs is a new ref, read from the sync's walk (no second one).
    (root / "guides" / "faq.md").write_text("# FAQ\n\nAsk the team.\n")
    walks: list[Selection] = []
    walk = served._walk

    def counted(selection: Selection, **kwargs: Any) -> Any:
        walks.append(selection)
        return walk(selection, **kwargs)

    monkeypatch.setattr(served, "_walk", counted)
    ref = indexer.sync()
    result = indexer.index(ref)
    assert ref != first.ref and not result.already_indexed
    assert (result.roots, result.files) == (("guides",), 2)
    assert walks == [Selection(("guides",))]
    indexer.close()


def test_a_corpus_larger_than_a_window_is_looked_up_and_embedded_a_window_at_a_time(
    store: Store, source: MemorySource, embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(indexer_module, "LOOKUP_WINDOW", 3)
    monkeypatch.setattr(indexer_module, "EMBED_WINDOW", 4)
    # 10 sections of different lengths, and one repeated in the same file (one hash, twice).
    files = {f"docs/s{i}.md": f"# S{i}\n\n" + "word " * (10 - i) + "\n" for i in range(10)}
    files["docs/twice.md"] = "# Step\n\nRun it.\n\n# Step\n\nRun it.\n"
    source.add("c1", files)
    counted = CountingStore(store)
    indexer = Indexer(counted, embedder, source)  # type: ignore[arg-type]
    try:
        result = indexer.index("c1")
        assert (result.chunks, result.embedded, result.reused) == (12, 12, 0)
        lookups = [args[0] for name, args in counted.args if name == "embeddings_for"]
        assert [len(hashes) for hashes in lookups] == [3, 3, 3, 2]  # 11 distinct hashes
        # Windows of 4 distinct texts, each sorted by length; every distinct text once.
        assert [len(call) for call in embedder.calls] == [4, 4, 3]
        assert all([len(t) for t in c] == sorted(len(t) for t in c) for c in embedder.calls)
        assert len(set(embedder.texts)) == len(embedder.texts) == 11
        # Every row has the vector of its own text, wherever its window was.
        for text in embedder.texts:
            h = content_hash(MODEL, text)
            assert np.array_equal(store.embeddings_for([h], MODEL)[h], fake_vector(text, DIM))

        # The next commit changes one file: the stored vectors are found window by window.
        embedder.calls.clear()
        changed = {**files, "docs/s3.md": "# S3\n\nA new body.\n"}
        source.add("c2", changed)
        result = indexer.index("c2")
        assert (result.chunks, result.embedded, result.reused) == (12, 1, 11)
        assert embedder.calls == [[embedder.texts[0]]] and "A new body." in embedder.texts[0]
    finally:
        indexer.close()


def test_the_rows_are_made_as_the_store_writes_them_never_all_at_once(
    store: Store, source: MemorySource, embedder: FakeEmbedder
) -> None:
    source.add("c1", two_files())
    seen: list[type] = []
    write = store.replace_doc_chunks

    def streamed(workspace: str, ref: str, rows: Any, files: Any = ()) -> None:
        seen.append(type(rows))
        write(workspace, ref, rows, files)

    counted = CountingStore(store)
    counted.replace_doc_chunks = streamed  # type: ignore[method-assign]
    indexer = Indexer(counted, embedder, source)  # type: ignore[arg-type]
    try:
        assert indexer.index("c1").chunks == 5
    finally:
        indexer.close()
    assert len(seen) == 1 and not issubclass(seen[0], list | tuple)  # a generator
    assert store.ref_counts("ws") == {"c1": 5}
    assert all(
        v is not None
        for v in store.embeddings_for(
            [content_hash(MODEL, t) for t in embedder.texts], MODEL
        ).values()
    )


def no_room_for(prefix: str) -> Any:
    """tempfile.TemporaryFile, failing for the files of `prefix` as on a full disk."""
    made = tempfile.TemporaryFile

    def temporary_file(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("prefix") == prefix:
            raise OSError(28, "No space left on device")
        return made(*args, **kwargs)

    return temporary_file


def test_a_temporary_file_of_vectors_that_cannot_be_written_fails_the_run_and_writes_nothing(
    store: Store, source: MemorySource, embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    source.add("c1", two_files())
    source.add("c2", {**two_files(), "docs/c.md": section_doc("Gamma", 2)})
    indexer = Indexer(store, embedder, source)
    try:
        indexer.index("c1")
        monkeypatch.setattr(tempfile, "TemporaryFile", no_room_for("docshelf-vectors-"))
        with pytest.raises(IndexingError, match=r"vectors in .*No space left on device.*TMPDIR"):
            indexer.index("c2")
    finally:
        indexer.close()
    assert store.current("ws") == "c1"
    assert store.ref_counts("ws") == {"c1": 5}


def test_sqlite_lists_made_in_parts_search_alike_and_a_failed_part_writes_nothing(
    tmp_path: Path, source: MemorySource, embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"docs/{w}.md": f"# {w}\n\nThe {w} service retries payments.\n" for w in "abcdef"}
    source.add("c1", files)
    source.add("c2", {**files, "docs/g.md": "# g\n\nThe g service owns checkout.\n"})
    hits = {}
    for name, spill in [("whole", None), ("parts", 3)]:
        if spill is not None:
            monkeypatch.setattr(bm25, "SPILL_ENTRIES", spill)  # a few chunks' entries a part
        store = open_store(str(tmp_path / f"{name}.sqlite3"), model_id=MODEL, dim=DIM)
        indexer = Indexer(store, embedder, source)
        try:
            indexer.index("c1")
            hits[name] = [(h.path, h.score) for h in store.search_text("ws", "c1", "payments", 10)]
            if spill is not None:
                monkeypatch.setattr(tempfile, "TemporaryFile", no_room_for("docshelf-lists-"))
                with pytest.raises(IndexingError, match=r"parts.*No space left.*TMPDIR"):
                    indexer.index("c2")
                assert store.current("ws") == "c1" and store.ref_counts("ws") == {"c1": 6}
        finally:
            indexer.close()
            store.close()
    assert hits["parts"] == hits["whole"] and len(hits["whole"]) == 6
