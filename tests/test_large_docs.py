"""Docs too large to hold: past HELD_TEXT_BYTES a ref's texts are read again from git or the
directory a window at a time, never all held, and they index to exactly the rows of a ref held
in memory. A directory file that changes after its sync fails the run, and writes nothing."""

from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from docshelf.errors import IndexingError, WorkspaceError
from docshelf.indexer import Indexer
from docshelf.stores import open_store
from docshelf.workspace import DirectoryWorkspace, GitWorkspace, open_workspace
from docshelf.workspace import directory as directory_module
from docshelf.workspace import docs as docs_module
from docshelf.workspace import git as git_module
from docshelf.workspace.docs import DocFiles
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder, section_doc

FILES = 40


def doc(i: int) -> str:
    return section_doc(f"Guide {i}", 3, words=f"word{i} " * 200)


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ref is too large to hold, and read again 16 KB at a time."""
    monkeypatch.setattr(git_module, "HELD_TEXT_BYTES", 0)
    monkeypatch.setattr(directory_module, "HELD_TEXT_BYTES", 0)
    monkeypatch.setattr(docs_module, "READ_WINDOW_BYTES", 16 * 1024)


def write_docs(root: Path) -> None:
    (root / "docs" / "deep" / "er").mkdir(parents=True)
    for i in range(FILES):
        folder = root / "docs" / ("deep/er" if i % 3 else "")
        (folder / f"guide-{i:02}.md").write_text(doc(i))
    (root / "docs" / "binary.md").write_bytes(b"# Binary\0\n")
    (root / "docs" / "latin1.md").write_bytes(b"caf\xe9\n")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    write_docs(repo.path)
    repo.commit("docs")
    return repo


def git(repo: Repo, tmp_path: Path) -> GitWorkspace:
    ws = open_workspace(str(repo.path), mirrors_dir=tmp_path / "mirrors")
    assert isinstance(ws, GitWorkspace)
    return ws


def directory(root: Path) -> DirectoryWorkspace:
    ws = open_workspace(str(root), mirrors_dir=root.parent / "mirrors")
    assert isinstance(ws, DirectoryWorkspace)
    return ws


def index_rows(ws: Any, store_path: Path) -> list[tuple[Any, ...]]:
    with open_store(str(store_path), model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(), ws)
        try:
            ref = ws.sync()
            indexer.index(ref)
        finally:
            indexer.close()
    with sqlite3.connect(store_path) as conn:
        chunks = conn.execute(
            "SELECT path, chunk, heading, content, start_line, end_line, content_hash, embedding "
            "FROM chunks ORDER BY path, chunk"
        ).fetchall()
        files = conn.execute(
            "SELECT f.path, f.lines, f.size, t.text FROM ref_files f "
            "JOIN file_texts t USING (text_hash) ORDER BY f.path"
        ).fetchall()
    return [*chunks, *files]


def test_git_docs_past_the_limit_are_listed_not_held_and_read_again_in_windows(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = git(repo, tmp_path).read_docs(repo.head())
    assert isinstance(held.files, list)
    monkeypatch.setattr(git_module, "HELD_TEXT_BYTES", 0)
    monkeypatch.setattr(docs_module, "READ_WINDOW_BYTES", 16 * 1024)
    windows: list[int] = []
    real_blobs = GitWorkspace._blobs

    def spy(self: GitWorkspace, ref: str, wanted: Any) -> list[bytes]:
        windows.append(sum(entry.size for entry in wanted))
        return real_blobs(self, ref, wanted)

    monkeypatch.setattr(GitWorkspace, "_blobs", spy)
    docs = git(repo, tmp_path).read_docs(repo.head())
    assert isinstance(docs.files, DocFiles)
    assert len(windows) > 3 and max(windows) <= 16 * 1024
    assert docs.skipped == held.skipped  # the binary file and the one not UTF-8, found once
    assert len(docs.skipped) == 2
    windows.clear()
    assert docs.files == held.files
    assert list(docs.files) == held.files  # each iteration reads the blobs again
    assert len(windows) > 6
    assert docs.files[5] == held.files[5]
    assert docs.files[2:4] == held.files[2:4]
    assert len(docs.files) == FILES


def test_git_docs_past_the_limit_hold_one_window_of_text_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    (repo.path / "docs").mkdir(parents=True)
    for i in range(300):  # 3 MB of text
        (repo.path / "docs" / f"page-{i:03}.md").write_text(f"# Page {i}\n\n" + "prose " * 1_700)
    repo.commit("many pages")
    ws = git(repo, tmp_path)
    monkeypatch.setattr(git_module, "HELD_TEXT_BYTES", 256 * 1024)
    monkeypatch.setattr(docs_module, "READ_WINDOW_BYTES", 64 * 1024)
    tracemalloc.start()
    try:
        docs = ws.read_docs(repo.head())
        total = sum(len(f.text) for f in docs.files)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total > 3_000_000
    assert peak < 1_000_000  # held, the texts alone would be 3 MB


def test_git_docs_read_again_index_to_the_same_rows_as_docs_held(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = index_rows(git(repo, tmp_path), tmp_path / "held.sqlite3")
    monkeypatch.setattr(git_module, "HELD_TEXT_BYTES", 0)
    monkeypatch.setattr(docs_module, "READ_WINDOW_BYTES", 16 * 1024)
    again = index_rows(git(repo, tmp_path), tmp_path / "again.sqlite3")
    assert len(held) > FILES * 3
    assert again == held


def test_directory_past_the_limit_has_the_same_ref_docs_and_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plain"
    write_docs(root)
    ws = directory(root)
    ref = ws.sync()
    held = ws.read_docs(ref)
    held_rows = index_rows(directory(root), tmp_path / "held.sqlite3")
    monkeypatch.setattr(directory_module, "HELD_TEXT_BYTES", 0)
    monkeypatch.setattr(docs_module, "READ_WINDOW_BYTES", 16 * 1024)
    ws = directory(root)
    assert ws.sync() == ref  # the ref is a digest of the bytes read, held or not
    docs = ws.read_docs(ref)
    assert isinstance(docs.files, DocFiles)
    assert docs == held
    assert index_rows(directory(root), tmp_path / "again.sqlite3") == held_rows


@pytest.mark.usefixtures("small_windows")
@pytest.mark.parametrize("change", ["edited", "removed", "linked", "directory linked"])
def test_directory_file_changed_after_its_sync_fails_the_run_and_writes_nothing(
    tmp_path: Path, change: str
) -> None:
    root = tmp_path / "plain"
    write_docs(root)
    secret = tmp_path / "secret.md"
    secret.write_text(doc(7))  # the very bytes of a doc, outside the tree
    ws = directory(root)
    store_path = tmp_path / "store.sqlite3"
    with open_store(str(store_path), model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(), ws)
        try:
            first = ws.sync()
            indexer.index(first)
            (root / "docs" / "deep" / "er" / "guide-40.md").write_text("# New\n")
            ref = ws.sync()
            target = root / "docs" / "deep" / "er" / "guide-07.md"
            if change == "edited":
                target.write_text(doc(7).replace("word7", "edited"))
            elif change == "removed":
                target.unlink()
            elif change == "linked":
                target.unlink()
                target.symlink_to(secret)
            else:
                moved = tmp_path / "moved"
                (root / "docs" / "deep").rename(moved)
                (root / "docs" / "deep").symlink_to(moved)
            failed = "guide-01" if change == "directory linked" else "guide-07"
            with pytest.raises(IndexingError, match=rf"{failed}\.md changed after the sync"):
                indexer.index(ref)
            assert store.current(ws.name) == first
            assert set(store.ref_counts(ws.name)) == {first}
        finally:
            indexer.close()


@pytest.mark.usefixtures("small_windows")
def test_directory_docs_read_again_refuse_other_bytes(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_docs(root)
    ws = directory(root)
    docs = ws.read_docs(ws.sync())
    first = next(iter(docs.files))
    assert first.path == "docs/deep/er/guide-01.md"
    (root / first.path).write_text(first.text.upper())
    with pytest.raises(WorkspaceError, match=r"\(its bytes are not those the sync read\); sync"):
        list(docs.files)
