"""Hostile repositories, read by both workspace kinds and indexed through the real Indexer into a
real SQLite store: links out of the root and in loops, names with newlines or bytes that are not
UTF-8, binary and oversized files, `..` in tree entries, many files and deep directories.

Each hostile entry is skipped with its reason, nothing outside the docs root is opened or read,
and every good file's chunks are in the store. The long cases (a 1 GiB blob, 100k files) are in
bench/hostile_repos.py.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import MAX_DOC_BYTES
from docshelf.errors import WorkspaceError
from docshelf.indexer import Indexer, IndexResult, file_chunks
from docshelf.stores import open_store
from docshelf.workspace import (
    DirectoryWorkspace,
    DocFile,
    GitWorkspace,
    kind_of,
    open_workspace,
    read_local,
)
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder

SYMLINK = "symbolic link, not followed"
NAME_CONTROL = "file name has a control character"
NAME_NOT_UTF8 = "file name is not UTF-8"
LEAVES_ROOT = "path leaves the docs root"

# Text that only files outside the docs root hold: it must never reach a doc or the store.
SECRET_OUTSIDE = "secret-outside-the-workspace"
SECRET_PRIVATE = "secret-outside-the-docs-root"
FORGED = "forged-by-a-hostile-name"

# A PNG header: valid bytes up to the first NUL, at offset 8.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
# Many tiny files and a deep tree; the bench runs 100k files.
TINY_FILES = 1000
DEPTH = 200
# Directory names this long put the deepest doc past PATH_MAX (4096 bytes on Linux).
LONG_NAME = "n" * 40
# Reading a 1 GiB file would take seconds; skipping it by its size takes far less than this.
SPARSE_SECONDS = 2.0
GIB = 1024**3


def good_docs() -> dict[str, str]:
    """Every file that must be indexed, by its path from the workspace root."""
    docs = {
        "docs/index.md": "# Index\n\nWelcome to the handbook.\n",
        "docs/guide/setup.md": "# Setup\n\n## Install\n\nRun the installer.\n\n## Run\n\nStart.\n",
        "docs/notes.txt": "plain text notes\n\nsecond paragraph\n",
        "docs/café/menü.md": "# Menü\n\nUTF-8 names are fine.\n",
        "docs/with space.md": "# Spaces\n\nin the name\n",
        "docs/-rf.md": "# Dash\n\nlooks like an option\n",
        "docs/--output=x.md": "# Option\n\nlooks like an option too\n",
        "docs/nearly-too-big.md": "# Big\n\n" + "y" * (MAX_DOC_BYTES - 8),
        "docs/" + "/".join(f"level-{i:03d}" for i in range(DEPTH)) + "/bottom.md": (
            "# Bottom\n\n200 directories down.\n"
        ),
    }
    for i in range(TINY_FILES):
        docs[f"docs/tiny/{i:04d}.md"] = f"# Tiny {i}\n\nfile {i}\n"
    return docs


def write_tree(root: Path, outside: Path) -> None:
    """The good docs, the hostile entries git can hold, and files outside the docs root."""
    for path, text in good_docs().items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
    (root / "README.md").write_text(f"# Readme\n\n{SECRET_PRIVATE}\n")
    (root / "private").mkdir()
    (root / "private" / "secret.md").write_text(f"# Private\n\n{SECRET_PRIVATE}\n")
    docs = root / "docs"
    links = {
        "passwd.md": "/etc/passwd",
        "escape.md": os.path.relpath(outside / "secret.md", docs),
        "private.md": "../private/secret.md",
        "outside-dir": str(outside),
        "up": "..",
        "loop": "loop",
        "self.md": "self.md",
        "ping.md": "pong.md",
        "pong.md": "ping.md",
    }
    for name, target in links.items():
        (docs / name).symlink_to(target)
    (docs / "guide" / "back-to-docs").symlink_to("..")  # a cycle through a directory link
    (docs / "new\nline.md").write_text(f"# {FORGED}\n")
    (docs / "esc\x1b[31m.md").write_text(f"# {FORGED}\n")
    (docs / "line\nbreak").mkdir()
    (docs / "line\nbreak" / "inner.md").write_text(f"# {FORGED}\n")
    (docs / os.fsdecode(b"caf\xe9.md")).write_text(f"# {FORGED}\n")
    (docs / "image.md").write_bytes(PNG)
    (docs / "nul.md").write_bytes(b"# Title\n\nText\x00more\n")
    (docs / "latin1.txt").write_bytes("Café\n".encode("latin-1"))
    (docs / "over.md").write_bytes(b"z" * (MAX_DOC_BYTES + 1))


def common_skips() -> dict[str, str]:
    names = ["passwd.md", "escape.md", "private.md", "outside-dir", "up", "loop", "self.md"]
    names += ["ping.md", "pong.md"]
    return {
        **{f"docs/{name}": SYMLINK for name in names},
        "docs/guide/back-to-docs": SYMLINK,
        "docs/new\nline.md": NAME_CONTROL,
        "docs/esc\x1b[31m.md": NAME_CONTROL,
        os.fsdecode(b"docs/caf\xe9.md"): NAME_NOT_UTF8,
        "docs/image.md": "binary, not text (a NUL byte at offset 8)",
        "docs/nul.md": "binary, not text (a NUL byte at offset 13)",
        "docs/latin1.txt": "not UTF-8 text (invalid byte at offset 3)",
        "docs/over.md": f"{MAX_DOC_BYTES + 1} bytes, over the {MAX_DOC_BYTES}-byte limit",
    }


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "api").mkdir(parents=True)
    (folder / "secret.md").write_text(f"# Outside\n\n{SECRET_OUTSIDE}\n")
    (folder / "api" / "x.md").write_text(f"# X\n\n{SECRET_OUTSIDE}\n")
    return folder


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def index(ws: GitWorkspace | DirectoryWorkspace, store_path: Path) -> IndexResult:
    with open_store(str(store_path), model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(), ws)
        try:
            return indexer.index(ws.sync())
        finally:
            indexer.close()


def stored(store_path: Path, result: IndexResult) -> list[tuple[str, int, str, str, int, int]]:
    with sqlite3.connect(store_path) as conn:
        rows = conn.execute(
            "SELECT path, chunk, heading, content, start_line, end_line FROM chunks "
            "WHERE workspace = ? AND ref = ? ORDER BY path, chunk",
            (result.workspace, result.ref),
        ).fetchall()
    return [tuple(row) for row in rows]


def expected_rows(docs: dict[str, str]) -> list[tuple[str, int, str, str, int, int]]:
    rows = []
    for path, text in sorted(docs.items()):
        kind = kind_of(path)
        assert kind is not None
        rows += [
            (c.path, c.index, c.heading, c.content, c.start_line, c.end_line)
            for c in file_chunks(DocFile(path, text, kind))
        ]
    return sorted(rows)


def assert_complete_and_clean(store_path: Path, result: IndexResult, good: dict[str, str]) -> None:
    rows = stored(store_path, result)
    assert {row[0] for row in rows} == set(good), "every good file, and only those, is indexed"
    assert rows == expected_rows(good)
    assert result.files == len(good)
    assert result.chunks == len(rows)
    for row in rows:
        for secret in (SECRET_OUTSIDE, SECRET_PRIVATE, FORGED, "root:x:0:0"):
            assert secret not in row[3], (row[0], secret)


@contextlib.contextmanager
def opened_files(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The real path of everything os.open opens meanwhile, read back from its descriptor."""
    real_open = os.open
    seen: list[str] = []

    def spy(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        return fd

    with monkeypatch.context() as patched:
        patched.setattr(os, "open", spy)
        yield seen


@contextlib.contextmanager
def blobs_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The paths whose blobs a GitWorkspace asks git for meanwhile."""
    real_blobs = GitWorkspace._blobs
    seen: list[str] = []

    def spy(self: GitWorkspace, ref: str, wanted: Any) -> list[bytes]:
        seen.extend(entry.path for entry in wanted)
        return real_blobs(self, ref, wanted)

    with monkeypatch.context() as patched:
        patched.setattr(GitWorkspace, "_blobs", spy)
        yield seen


# Both kinds


def test_hostile_git_repository_skips_each_entry_and_indexes_every_good_file(
    tmp_path: Path, outside: Path, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "repo")
    write_tree(repo.path, outside)
    repo.commit("hostile")
    ws = open_workspace(str(repo.path), mirrors_dir=tmp_path / "mirrors")
    assert isinstance(ws, GitWorkspace)
    with blobs_read(monkeypatch) as read:
        result = index(ws, store_path)
    assert {s.path: s.reason for s in result.skipped} == {
        **common_skips(),
        "docs/line\nbreak/inner.md": NAME_CONTROL,
    }
    # Only blobs under the docs root, of regular files within the size limit, are read.
    binary_or_latin1 = {"docs/image.md", "docs/nul.md", "docs/latin1.txt"}
    assert sorted(read) == sorted(set(good_docs()) | binary_or_latin1)
    assert_complete_and_clean(store_path, result, good_docs())


def test_hostile_directory_skips_each_entry_and_indexes_every_good_file(
    tmp_path: Path, outside: Path, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plain"
    write_tree(root, outside)
    os.mkfifo(root / "docs" / "pipe.md")  # opening it for reading would block
    ws = open_workspace(str(root), docs=["docs"], mirrors_dir=tmp_path / "mirrors")
    assert isinstance(ws, DirectoryWorkspace)
    with opened_files(monkeypatch) as opened:
        ref = ws.sync()
    # Nothing is opened outside the docs root but the workspace itself, on the way down.
    docs_root = str(root / "docs")
    assert opened[0] == str(root)
    assert all(p == docs_root or p.startswith(docs_root + "/") for p in opened[1:]), opened
    assert len(opened) > TINY_FILES
    with open_store(str(store_path), model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, FakeEmbedder(), ws)
        result = indexer.index(ref)
        indexer.close()
    assert {s.path: s.reason for s in result.skipped} == {
        **common_skips(),
        "docs/line\nbreak": NAME_CONTROL,
        "docs/pipe.md": "not a regular file",
    }
    assert_complete_and_clean(store_path, result, good_docs())


@pytest.mark.parametrize("kind", ["git", "directory"])
def test_a_doc_nested_200_directories_deep_past_path_max_is_indexed(
    tmp_path: Path, store_path: Path, kind: str
) -> None:
    parts = [f"{LONG_NAME}{i:03d}" for i in range(DEPTH)]
    deep = "/".join(["docs", *parts, "bottom.md"])
    assert len(deep.encode()) > os.pathconf("/", "PC_PATH_MAX")
    good = {"docs/top.md": "# Top\n\nshallow\n", deep: "# Bottom\n\nvery deep\n"}
    root = tmp_path / kind
    if kind == "git":
        repo = Repo(root)
        fast_import(repo, good)
    else:
        write_deep(root, good)
    ws = open_workspace(str(root), docs=["docs"], mirrors_dir=tmp_path / "mirrors")
    result = index(ws, store_path)
    assert result.skipped == []
    assert_complete_and_clean(store_path, result, good)


def fast_import(repo: Repo, files: dict[str, str]) -> None:
    """Commit `files` without a work tree, which could not hold a path past PATH_MAX."""
    stream = [b"commit refs/heads/main", b"committer t <t@docshelf.invalid> 0 +0000", b"data 1"]
    stream.append(b"m")
    for path, text in files.items():
        data = text.encode()
        stream += [b"M 100644 inline " + path.encode(), b"data %d" % len(data), data]
    repo.git("fast-import", "--quiet", input=b"\n".join(stream) + b"\n")


def write_deep(root: Path, files: dict[str, str]) -> None:
    """Write `files` one directory descriptor at a time: their full paths are past PATH_MAX."""
    root.mkdir()
    for path, text in files.items():
        *dirs, name = path.split("/")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in dirs:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
            out = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(out, text.encode())
            os.close(out)
        finally:
            os.close(fd)


# Git only


def test_tree_entries_named_dot_dot_are_skipped_when_the_root_is_the_whole_tree(
    tmp_path: Path, store_path: Path
) -> None:
    # git fsck refuses such trees, but git mktree writes them: a hostile remote could send one.
    repo = Repo(tmp_path / "repo")
    evil = repo.git("hash-object", "-w", "--stdin", input=f"# {FORGED}\n".encode())
    good = repo.git("hash-object", "-w", "--stdin", input=b"# Ok\n\nfine\n")
    inner = repo.git("mktree", input=f"100644 blob {evil}\tevil.md\n".encode())
    top = repo.git(
        "mktree",
        input=(
            f"040000 tree {inner}\t..\n040000 tree {inner}\t.\n100644 blob {good}\tok.md\n"
        ).encode(),
    )
    repo.git("update-ref", "refs/heads/main", repo.git("commit-tree", "-m", "crafted", top))
    ws = open_workspace(str(repo.path), docs=["."], mirrors_dir=tmp_path / "mirrors")
    result = index(ws, store_path)
    assert {s.path: s.reason for s in result.skipped} == {
        "../evil.md": LEAVES_ROOT,
        "./evil.md": LEAVES_ROOT,
    }
    ok = "# Ok\n\nfine\n"
    assert_complete_and_clean(store_path, result, {"ok.md": ok})


# Plain directories only


def test_a_sparse_1_gib_file_is_skipped_by_its_size_without_being_read(
    tmp_path: Path, store_path: Path
) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "ok.md").write_text("# Ok\n\nfine\n")
    with open(root / "huge.md", "wb") as huge:
        huge.truncate(GIB)  # sparse: no disk blocks
    ws = open_workspace(str(root), mirrors_dir=tmp_path / "mirrors")
    started = time.perf_counter()
    result = index(ws, store_path)
    assert time.perf_counter() - started < SPARSE_SECONDS
    # The reason carries the size from fstat: the file was refused before any read.
    assert {s.path: s.reason for s in result.skipped} == {
        "huge.md": f"{GIB} bytes, over the {MAX_DOC_BYTES}-byte limit"
    }
    assert_complete_and_clean(store_path, result, {"ok.md": "# Ok\n\nfine\n"})


def test_a_workspace_path_that_is_a_symlink_loop_is_an_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(WorkspaceError, match="check the path"):
        open_workspace(str(loop), mirrors_dir=tmp_path / "mirrors")


def test_a_binary_file_named_on_the_command_line_is_refused_as_binary(tmp_path: Path) -> None:
    (tmp_path / "image.md").write_bytes(PNG)
    with pytest.raises(WorkspaceError) as caught:
        read_local([tmp_path / "image.md"])
    assert str(caught.value).endswith(
        "image.md: binary, not text (a NUL byte at offset 8); name only text files"
    )
