"""A SQLite store whose disk fills or whose file is read-only in the middle of an index: a clear
error that names the problem and what to do, and the previous ref intact and served.

The faults are real: SQLite's own SQLITE_FULL (the connection's page limit), the kernel's file
size limit on the `docshelf index` process, and a file and folder the process may not write (as
root, the process runs without the capabilities that let root write whatever the mode says).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.errors import IndexingError
from docshelf.indexer import Indexer
from docshelf.stores.sqlite import SQLiteStore
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource, section_doc
from tests.test_cli_index import DOCSHELF

# prctl(2) and capabilities(7): dropping a capability from the bounding set before exec leaves
# the program root runs without it.
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2
CAP_FOWNER = 3

# Bytes any file of the `docshelf index` process may grow to: above SQLite's shared-memory index
# (32 KiB), far below what the new ref's rows take in the write-ahead log.
FILE_SIZE_LIMIT = 40_000

# SQLite's largest page count, to lift the limit a test set.
MAX_PAGES = 1_073_741_823


def bound_by_file_modes() -> None:
    """Run in the child before exec: as root, give up overriding file modes, as any other user
    is bound by them."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def limited_file_size() -> None:
    # Without this, the kernel kills the process at the limit instead of failing the write.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def index(
    docs: Path, store: Path, before: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DOCSHELF), "index", str(docs), "--store", str(store), "--embedder", "none", "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=before,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def write_docs(docs: Path, pages: int, word: str) -> None:
    docs.mkdir(exist_ok=True)
    for i in range(pages):
        (docs / f"{word}{i}.md").write_text(section_doc(f"{word} {i}", 4, f"{word} text") * 2)


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, Any]]]:
    """Docs indexed into a store in a folder of its own: (docs, store, what `index --json`
    said)."""
    docs, store = tmp_path / "docs", tmp_path / "store" / "docs.sqlite3"
    write_docs(docs, 3, "alpha")
    done = index(docs, store)
    assert done.returncode == 0, done.stderr
    yield docs, store, json.loads(done.stdout)
    for path in (store.parent, *store.parent.iterdir()):
        path.chmod(0o700 if path.is_dir() else 0o600)


def assert_serves_only(store: Path, indexed: dict[str, Any], word: str) -> None:
    """The store's current ref is `indexed`'s, whole and alone, and its words are found."""
    workspace, ref = indexed["workspace"], indexed["ref"]
    with SQLiteStore.open(store, model_id=None, dim=None) as opened:
        assert opened.current(workspace) == ref
        assert opened.ref_counts(workspace) == {ref: indexed["chunks"]}
        hits = opened.search_text(workspace, ref, word, 5)
        assert hits and all(word in hit.content for hit in hits)


@pytest.mark.parametrize("folder_writable", [True, False], ids=["file", "file-and-folder"])
def test_a_read_only_store_fails_the_index_with_what_to_do_and_keeps_the_previous_ref(
    indexed: tuple[Path, Path, dict[str, Any]], folder_writable: bool
) -> None:
    docs, store, first = indexed
    write_docs(docs, 2, "beta")
    store.chmod(0o444)
    if not folder_writable:
        store.parent.chmod(0o555)
    failed = index(docs, store, bound_by_file_modes)
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert line.startswith("docshelf: error: ")
    assert "read-only for this user" in line
    assert f"make {store} and its folder writable" in line
    store.chmod(0o600)
    store.parent.chmod(0o700)
    assert_serves_only(store, first, "alpha")
    again = index(docs, store)
    assert again.returncode == 0, again.stderr
    assert_serves_only(store, json.loads(again.stdout), "beta")


def test_a_write_past_the_file_size_limit_fails_with_what_to_do_and_keeps_the_previous_ref(
    indexed: tuple[Path, Path, dict[str, Any]],
) -> None:
    docs, store, first = indexed
    write_docs(docs, 60, "beta")  # far more than FILE_SIZE_LIMIT of new pages
    failed = index(docs, store, limited_file_size)
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert "disk" in line and "free space" in line, line
    assert "Nothing of this ref was written; the previous ref keeps serving" in line
    assert_serves_only(store, first, "alpha")
    again = index(docs, store)
    assert again.returncode == 0, again.stderr
    assert_serves_only(store, json.loads(again.stdout), "beta")


def test_a_full_disk_fails_the_write_with_what_to_do_and_the_next_run_indexes_cleanly(
    tmp_path: Path,
) -> None:
    source = MemorySource()
    source.add("c1", {"docs/a.md": section_doc("Alpha", 3, "alpha text")})
    source.add("big", {f"docs/p{i}.md": section_doc(f"P{i}", 20, "beta text") for i in range(30)})
    with SQLiteStore.open(tmp_path / "s.sqlite3", model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(), source)
        indexer.index("c1")
        # This thread's connection, the one the indexer writes with: a real SQLITE_FULL once
        # the file would grow past a few more pages.
        conn = store._connect()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        conn.execute(f"PRAGMA max_page_count = {pages + 4}")
        with pytest.raises(IndexingError) as failed:
            indexer.index("big")
        message = str(failed.value)
        assert "database or disk is full" in message
        assert "is full: free some space on it, then try again" in message
        assert store.current("ws") == "c1"
        assert store.ref_counts("ws") == {"c1": 3}
        assert store.search_text("ws", "c1", "alpha", 3)
        conn.execute(f"PRAGMA max_page_count = {MAX_PAGES}")
        assert indexer.index("big").chunks == 600
        assert store.current("ws") == "big"
        assert store.ref_counts("ws") == {"big": 600}
        indexer.close()
