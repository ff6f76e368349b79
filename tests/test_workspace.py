"""Workspaces: real git repositories and directories built by each test in tmp_path."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import MAX_DOC_BYTES
from docshelf.errors import WorkspaceError
from docshelf.workspace import (
    DirectoryWorkspace,
    DocFile,
    Docs,
    GitWorkspace,
    Selection,
    Skipped,
    open_workspace,
    redact_url,
    skipped_from_record,
    skipped_record,
)
from tests.support.gitrepo import Repo

PASSWD = "/etc/passwd"
SECRET = "root:x:0:0"
BIG = 2 * 1024 * 1024


def make_repo(path: Path) -> Repo:
    repo = Repo(path)
    repo.write("README.md", "# Project\n")
    repo.write("docs/index.md", "# Index\n")
    repo.write("docs/runbooks/pay.md", "# Payments\n\nRestart the worker.\n")
    repo.write("docs/notes.txt", "plain text notes\n")
    repo.write("docs/logo.png", b"\x89PNG\r\n\x1a\n\xff\xfe")
    repo.commit("first")
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="module")
def unchanged(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The same repository, shared by the tests that only read it."""
    return make_repo(tmp_path_factory.mktemp("unchanged") / "repo")


@pytest.fixture
def mirrors(tmp_path: Path) -> Path:
    return tmp_path / "mirrors"


def open_git(repo: Repo, mirrors: Path, **kwargs: Any) -> GitWorkspace:
    ws = open_workspace(str(repo.path), mirrors_dir=mirrors, **kwargs)
    assert isinstance(ws, GitWorkspace)
    return ws


def paths(docs: Docs) -> list[str]:
    return [f.path for f in docs.files]


def skips(docs: Docs) -> dict[str, str]:
    return {s.path: s.reason for s in docs.skipped}


def texts(docs: Docs) -> str:
    return "\n".join(f.text for f in docs.files)


# Git: revisions


def test_sync_resolves_head_to_the_full_commit_id(unchanged: Repo, mirrors: Path) -> None:
    ws = open_git(unchanged, mirrors)
    assert ws.sync() == unchanged.head()
    assert len(ws.sync()) == 40


def test_sync_resolves_branches_tags_short_ids_and_ancestors(repo: Repo, mirrors: Path) -> None:
    first = repo.head()
    repo.tag("v1")
    repo.branch("release")
    repo.write("docs/index.md", "# Index, second edition\n")
    second = repo.commit("second")
    ws = open_git(repo, mirrors)
    assert ws.sync() == second
    assert ws.sync("main") == second
    assert ws.sync("release") == first
    assert ws.sync("v1") == first
    assert ws.sync(first[:8]) == first
    assert ws.sync("HEAD~1") == first


def test_read_docs_reads_the_commit_not_the_work_tree(repo: Repo, mirrors: Path) -> None:
    first = repo.head()
    repo.write("docs/index.md", "# Index, second edition\n")
    second = repo.commit("second")
    repo.write("docs/index.md", "# Uncommitted\n")
    repo.write("docs/new.md", "# Not committed either\n")
    ws = open_git(repo, mirrors)
    assert "Index, second edition" in texts(ws.read_docs(second))
    old = ws.read_docs(first)
    assert "# Index\n" in texts(old)
    assert "Uncommitted" not in texts(old)
    assert "docs/new.md" not in paths(old)


def test_read_docs_lists_documentation_files_sorted_and_ignores_other_kinds(
    unchanged: Repo, mirrors: Path
) -> None:
    docs = open_git(unchanged, mirrors).read_docs(unchanged.head())
    assert docs.files == [
        DocFile("docs/index.md", "# Index\n", "markdown"),
        DocFile("docs/notes.txt", "plain text notes\n", "text"),
        DocFile("docs/runbooks/pay.md", "# Payments\n\nRestart the worker.\n", "markdown"),
    ]
    assert docs.skipped == []  # logo.png is not documentation: ignored, not skipped


def test_checked_out_branch_is_what_sync_resolves_by_default(repo: Repo, mirrors: Path) -> None:
    repo.branch("topic")
    repo.checkout("topic")
    repo.write("docs/topic.md", "# Topic\n")
    topic = repo.commit("topic")
    repo.checkout("main")
    ws = open_git(repo, mirrors)
    assert ws.sync() != topic
    assert ws.sync("topic") == topic
    assert "docs/topic.md" in paths(ws.read_docs(topic))


def test_unknown_revision_is_an_error_naming_it(unchanged: Repo, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"no-such-branch names no commit; name a branch"):
        open_git(unchanged, mirrors).sync("no-such-branch")


@pytest.mark.parametrize(
    "rev",
    ["--output={out}", "--git-dir={out}", "-h", "--all", "--help", "-", "HEAD\n", "", "HEAD\x00"],
)
def test_hostile_revisions_are_data_not_options(
    unchanged: Repo, mirrors: Path, tmp_path: Path, rev: str
) -> None:
    out = tmp_path / "written"
    with pytest.raises(WorkspaceError, match=r"(names no commit|is not a revision)"):
        open_git(unchanged, mirrors).sync(rev.format(out=out))
    assert not out.exists()


@pytest.mark.parametrize("ref", ["HEAD", "main", "--output=/tmp/x", "abc123", "A" * 40, ""])
def test_read_docs_takes_only_a_full_commit_id(unchanged: Repo, mirrors: Path, ref: str) -> None:
    with pytest.raises(WorkspaceError, match="is not a full commit id; pass the id that sync"):
        open_git(unchanged, mirrors).read_docs(ref)


def test_read_docs_of_a_commit_the_repository_lacks_is_an_error(
    unchanged: Repo, mirrors: Path
) -> None:
    with pytest.raises(WorkspaceError, match=r"listing the docs of commit 0{40} .* failed: fatal"):
        open_git(unchanged, mirrors).read_docs("0" * 40)


def test_sha256_repository_gives_64_hex_commit_ids(tmp_path: Path, mirrors: Path) -> None:
    repo = Repo(tmp_path / "sha256", object_format="sha256")
    repo.write("docs/a.md", "# A\n")
    commit = repo.commit()
    ws = open_git(repo, mirrors)
    assert ws.sync() == commit
    assert len(commit) == 64
    assert paths(ws.read_docs(commit)) == ["docs/a.md"]


# Git: what is skipped


def test_symlink_to_etc_passwd_is_skipped_and_never_read(repo: Repo, mirrors: Path) -> None:
    repo.symlink("docs/passwd.md", PASSWD)
    repo.symlink("docs/relative.md", "../../../../../../etc/passwd")
    docs = open_git(repo, mirrors).read_docs(repo.commit("links"))
    assert skips(docs) == {
        "docs/passwd.md": "symbolic link, not followed",
        "docs/relative.md": "symbolic link, not followed",
    }
    assert SECRET not in texts(docs)
    assert PASSWD not in texts(docs)
    assert "docs/passwd.md" not in paths(docs)


def test_symlinked_directory_is_skipped_not_followed(repo: Repo, mirrors: Path) -> None:
    repo.write("private/secret.md", "# Secret\n")
    repo.symlink("docs/linked", "../private")
    docs = open_git(repo, mirrors).read_docs(repo.commit("linked dir"))
    assert skips(docs) == {"docs/linked": "symbolic link, not followed"}
    assert "Secret" not in texts(docs)


def test_file_over_the_size_limit_is_skipped_without_being_read(
    repo: Repo, mirrors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("docs/dump.md", "x" * BIG)
    repo.write("docs/limit.md", "y" * MAX_DOC_BYTES)
    commit = repo.commit("dump")
    read: list[str] = []
    original = GitWorkspace._blobs

    def spy(self: GitWorkspace, ref: str, wanted: Any) -> list[bytes]:
        read.extend(entry.path for entry in wanted)
        return original(self, ref, wanted)

    monkeypatch.setattr(GitWorkspace, "_blobs", spy)
    docs = open_git(repo, mirrors).read_docs(commit)
    assert skips(docs) == {"docs/dump.md": "2097152 bytes, over the 1048576-byte limit"}
    assert "docs/dump.md" not in read
    assert "docs/limit.md" in paths(docs)  # exactly at the limit is allowed


def test_latin1_file_is_skipped_with_a_warning_naming_it(
    repo: Repo, mirrors: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo.write("docs/cafe.md", "# Café\n".encode("latin-1"))
    commit = repo.commit("latin-1")
    with caplog.at_level(logging.INFO, logger="docshelf.workspace"):
        docs = open_git(repo, mirrors).read_docs(commit)
    assert skips(docs) == {"docs/cafe.md": "not UTF-8 text (invalid byte at offset 5)"}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.name for r in warnings] == ["docshelf.workspace"]
    assert "docs/cafe.md" in warnings[0].getMessage()
    assert "not UTF-8" in warnings[0].getMessage()


def test_file_name_that_is_not_utf8_is_skipped(repo: Repo, mirrors: Path) -> None:
    repo.write(os.fsdecode(b"docs/caf\xe9.md"), "# Fine content, bad name\n")
    docs = open_git(repo, mirrors).read_docs(repo.commit("bad name"))
    assert [s.reason for s in docs.skipped] == ["file name is not UTF-8"]
    assert "bad name" not in texts(docs)


def test_submodule_is_skipped(repo: Repo, mirrors: Path, tmp_path: Path) -> None:
    other = Repo(tmp_path / "other")
    other.write("docs/inner.md", "# Inner\n")
    other.commit()
    repo.add_submodule("docs/vendored", other)
    docs = open_git(repo, mirrors).read_docs(repo.commit("submodule"))
    assert skips(docs) == {"docs/vendored": "submodule, not read"}
    assert "Inner" not in texts(docs)


def test_tree_entries_named_dot_or_dot_dot_are_skipped(repo: Repo, mirrors: Path) -> None:
    # git fsck refuses such trees, but git mktree writes them: a hostile remote could send one.
    blob = repo.git("hash-object", "-w", "--stdin", input=b"# Evil\n")
    inner = repo.git("mktree", input=f"100644 blob {blob}\tevil.md\n".encode())
    docs_tree = repo.git(
        "mktree",
        input=(
            f"040000 tree {inner}\t..\n040000 tree {inner}\t.\n100644 blob {blob}\tok.md\n"
        ).encode(),
    )
    top = repo.git("mktree", input=f"040000 tree {docs_tree}\tdocs\n".encode())
    commit = repo.git("commit-tree", "-m", "crafted", top)
    docs = open_git(repo, mirrors).read_docs(commit)
    assert paths(docs) == ["docs/ok.md"]
    assert skips(docs) == {
        "docs/../evil.md": "path leaves the docs root",
        "docs/./evil.md": "path leaves the docs root",
    }


def test_docs_root_that_is_a_symlink_in_the_tree_is_skipped(repo: Repo, mirrors: Path) -> None:
    repo.remove("docs")
    repo.symlink("docs", "/etc")
    commit = repo.commit("docs is a link")
    named = open_git(repo, mirrors, docs=["docs"]).read_docs(commit)
    assert (named.files, named.skipped) == ([], [Skipped("docs", "symbolic link, not followed")])
    # Found: no docs folder is left, so the whole tree's markup is read; the link is reported.
    found = open_git(repo, mirrors).read_docs(commit)
    assert found.roots == (".",)
    assert paths(found) == ["README.md"]
    assert found.skipped == [Skipped("docs", "symbolic link, not followed")]


def test_docs_root_below_a_symlink_in_the_tree_reports_the_link(repo: Repo, mirrors: Path) -> None:
    repo.write("elsewhere/api/x.md", "# X\n")
    repo.remove("docs")
    repo.symlink("docs", "elsewhere")
    commit = repo.commit("docs is a link")
    docs = open_git(repo, mirrors, docs=["docs/api"]).read_docs(commit)
    assert docs == Docs([], [Skipped("docs", "symbolic link, not followed")], ("docs/api",))


# Git: docs roots


def test_default_docs_root_of_a_top_level_is_found_there(unchanged: Repo, mirrors: Path) -> None:
    ws = open_git(unchanged, mirrors)
    assert ws.docs_roots is None and not ws.chosen
    docs = ws.read_docs(unchanged.head())
    assert docs.roots == ("docs",) == ws.layout_at(unchanged.head()).roots
    assert "README.md" not in paths(docs)


def test_several_roots_and_overlapping_roots_give_each_file_once(repo: Repo, mirrors: Path) -> None:
    repo.write("guides/setup.md", "# Setup\n")
    commit = repo.commit("guides")
    ws = open_git(repo, mirrors, docs=["docs", "guides", "docs/runbooks", "./docs/", "missing"])
    docs = ws.read_docs(commit)
    assert paths(docs) == [
        "docs/index.md",
        "docs/notes.txt",
        "docs/runbooks/pay.md",
        "guides/setup.md",
    ]
    whole = open_git(repo, mirrors, docs=["."]).read_docs(commit)
    assert paths(whole) == ["README.md", *paths(docs)]


def test_a_file_can_be_a_docs_root(unchanged: Repo, mirrors: Path) -> None:
    docs = open_git(unchanged, mirrors, docs=["README.md"]).read_docs(unchanged.head())
    assert paths(docs) == ["README.md"]


def test_docs_roots_are_literal_paths_not_patterns(unchanged: Repo, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match="no documentation files"):
        open_git(unchanged, mirrors, docs=["d*"]).read_docs(unchanged.head())


def test_no_docs_at_the_commit_is_an_error_naming_it_and_the_roots(
    unchanged: Repo, mirrors: Path
) -> None:
    commit = unchanged.head()
    ws = open_git(unchanged, mirrors, docs=["missing", "also-missing"])
    with pytest.raises(WorkspaceError) as caught:
        ws.read_docs(commit)
    message = str(caught.value)
    assert commit in message
    assert "also-missing, missing" in message
    assert message.endswith("with --docs DIR")


@pytest.mark.parametrize(
    ("given", "expected"),
    [(["./docs/"], ("docs",)), (["docs//runbooks/."], ("docs/runbooks",)), (["./"], (".",))],
)
def test_docs_roots_are_normalised(
    unchanged: Repo, mirrors: Path, given: list[str], expected: tuple[str, ...]
) -> None:
    assert open_git(unchanged, mirrors, docs=given).docs_roots == expected


@pytest.mark.parametrize("root", ["..", "../docs", "docs/../../etc", "/etc", "/", "", "a\x00b"])
def test_docs_root_that_is_absolute_or_leaves_the_workspace_is_refused(
    unchanged: Repo, mirrors: Path, tmp_path: Path, root: str
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for source in (unchanged.path, plain):
        with pytest.raises(
            WorkspaceError, match=r"(absolute|leaves the workspace|not a directory)"
        ):
            open_workspace(str(source), docs=[root], mirrors_dir=mirrors)


def test_subdirectory_source_is_its_own_docs_root(unchanged: Repo, mirrors: Path) -> None:
    ws = open_workspace(str(unchanged.path / "docs" / "runbooks"), mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    assert ws.docs_roots == ("docs/runbooks",)
    assert ws.name == str(unchanged.path.resolve())
    assert paths(ws.read_docs(ws.sync())) == ["docs/runbooks/pay.md"]


def test_docs_of_a_subdirectory_source_are_relative_to_it(unchanged: Repo, mirrors: Path) -> None:
    ws = open_workspace(str(unchanged.path / "docs"), docs=["runbooks", "."], mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    assert ws.docs_roots == ("docs",)
    ws = open_workspace(str(unchanged.path / "docs"), docs=["runbooks"], mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    assert ws.docs_roots == ("docs/runbooks",)


def test_name_is_the_top_level_unless_given(unchanged: Repo, mirrors: Path) -> None:
    assert open_git(unchanged, mirrors).name == str(unchanged.path.resolve())
    assert open_git(unchanged, mirrors, name="payments").name == "payments"


def test_bare_repository_path_is_a_git_workspace(repo: Repo, mirrors: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    repo.git("clone", "--bare", "--quiet", str(repo.path), str(bare))
    ws = open_workspace(str(bare), mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    assert ws.name == str(bare.resolve())
    assert paths(ws.read_docs(ws.sync())) == paths(open_git(repo, mirrors).read_docs(repo.head()))


def test_git_dir_of_a_work_tree_is_refused(unchanged: Repo, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match=r"inside a repository's \.git directory; name"):
        open_workspace(str(unchanged.path / ".git"), mirrors_dir=mirrors)


# Git: clone URLs


def test_clone_url_is_mirrored_and_each_sync_fetches_new_commits(repo: Repo, mirrors: Path) -> None:
    ws = open_workspace(repo.url, mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    assert ws.name == repo.url
    assert ws.git_dir.parent == mirrors
    assert ws.git_dir.name.startswith("repo-")
    assert ws.git_dir.name.endswith(".git")
    first = ws.sync()
    assert first == repo.head()
    repo.write("docs/new.md", "# New\n")
    second = repo.commit("new")
    assert ws.sync() == second
    assert "docs/new.md" in paths(ws.read_docs(second))
    repo.branch("later")
    assert ws.sync("later") == second  # a branch made after the clone arrives with the fetch


def test_a_mirror_fetches_only_when_its_remote_moved(repo: Repo, mirrors: Path) -> None:
    ws = open_workspace(repo.url, mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    first = ws.sync()
    assert not ws.fetched  # cloned a moment ago
    fetch_head = ws.git_dir / "FETCH_HEAD"
    assert (ws.sync(), ws.fetched) == (first, False)  # git ls-remote saw nothing move
    assert not fetch_head.exists()
    repo.branch("release")
    repo.tag("v1")
    assert (ws.sync("release"), ws.fetched) == (first, True)  # a branch the mirror lacks
    assert (ws.sync("release"), ws.fetched) == (first, False)
    assert (ws.sync("v1"), ws.fetched) == (first, False)  # the tag came with that fetch
    assert (ws.sync(first), ws.fetched) == (first, False)  # a commit the mirror holds
    repo.write("docs/new.md", "# New\n")
    second = repo.commit("new")
    assert (ws.sync("release"), ws.fetched) == (first, False)  # release did not move
    assert (ws.sync(), ws.fetched) == (second, True)  # HEAD did: fetched, once
    assert (ws.sync(), ws.fetched) == (second, False)
    assert (ws.sync(second), ws.fetched) == (second, False)
    assert fetch_head.exists()


def test_mirror_is_reused_by_the_next_open(repo: Repo, mirrors: Path) -> None:
    ws = open_workspace(repo.url, mirrors_dir=mirrors)
    assert isinstance(ws, GitWorkspace)
    marker = ws.git_dir / "docshelf-test-marker"
    marker.write_text("still here")
    again = open_workspace(repo.url, mirrors_dir=mirrors)
    assert isinstance(again, GitWorkspace)
    assert again.git_dir == ws.git_dir
    assert marker.exists()
    assert [p.name for p in mirrors.iterdir()] == [ws.git_dir.name]
    assert again.sync() == repo.head()


def test_url_that_cannot_be_cloned_is_an_error_and_leaves_no_mirror(
    tmp_path: Path, mirrors: Path
) -> None:
    url = (tmp_path / "nothing-here").as_uri()
    with pytest.raises(WorkspaceError) as caught:
        open_workspace(url, mirrors_dir=mirrors)
    message = str(caught.value)
    assert message.startswith(f"cloning {url} failed: fatal:")
    assert message.endswith("check the URL, the network and your access to the repository")
    assert list(mirrors.iterdir()) == []


def test_password_in_a_url_never_appears_in_a_name_or_a_message(mirrors: Path) -> None:
    url = "https://alice:s3cret-pw@127.0.0.1:1/team/api.git"
    with pytest.raises(WorkspaceError) as caught:
        open_workspace(url, mirrors_dir=mirrors)
    assert "s3cret-pw" not in str(caught.value)
    assert "https://127.0.0.1:1/team/api.git" in str(caught.value)
    assert not any("s3cret" in p.name for p in mirrors.iterdir())


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """Put a `git` that runs `script` (sh) first and alone on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_password_in_a_url_without_a_path_never_names_the_mirror(
    tmp_path: Path, mirrors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A git whose clone succeeds: it makes the folder it is given (the last argument).
    fake_git(tmp_path, monkeypatch, 'for last; do :; done\n/bin/mkdir -p "$last"')
    for url in ("https://alice:s3cret-pw@example.invalid", "https://s3cret-token@example.invalid/"):
        ws = open_workspace(url, mirrors_dir=mirrors)
        assert isinstance(ws, GitWorkspace)
        assert "s3cret" not in ws.name
        assert ws.git_dir.parent == mirrors
    names = [p.name for p in mirrors.iterdir()]
    assert len(names) == 2
    assert not any("s3cret" in name for name in names), names


def test_git_output_that_repeats_the_url_is_cleared_of_its_password(
    tmp_path: Path, mirrors: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A git that quotes its whole command line, URL and all, in its error.
    fake_git(tmp_path, monkeypatch, 'echo "fatal: cannot run: $*" >&2\nexit 128')
    for url, shown in (
        ("https://alice:s3cret%21pw@example.invalid/x.git", "https://example.invalid/x.git"),
        ("https://s3cret-token@example.invalid/x.git", "https://example.invalid/x.git"),
        ("ssh://alice:s3cret%21pw@example.invalid/x.git", "ssh://alice@example.invalid/x.git"),
    ):
        with pytest.raises(WorkspaceError) as caught:
            open_workspace(url, mirrors_dir=mirrors)
        message = str(caught.value)
        assert "s3cret" not in message
        assert shown in message
        assert "fatal: cannot run: clone --mirror" in message


def test_git_variables_of_a_calling_hook_do_not_redirect_git(
    repo: Repo, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = Repo(tmp_path / "other")
    other.write("docs/other.md", "# Other\n")
    other.commit()
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    ws = open_git(repo, mirrors)
    assert ws.name == str(repo.path.resolve())
    assert ws.sync() == repo.head()
    assert "docs/other.md" not in paths(ws.read_docs(repo.head()))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://alice:pw@host/x.git", "https://host/x.git"),
        ("https://:pw@host/x.git", "https://host/x.git"),
        ("https://ghp_token123@host/x.git", "https://host/x.git"),
        ("HTTP://x-access-token:tok@host/x.git", "http://host/x.git"),
        ("ssh://git:pw@host:22/x.git", "ssh://git@host:22/x.git"),
        ("git@github.com:team/api.git", "git@github.com:team/api.git"),
        ("https://host/x.git", "https://host/x.git"),
    ],
)
def test_redact_url_removes_passwords_and_http_user_names(url: str, shown: str) -> None:
    assert redact_url(url) == shown


# Errors


def test_missing_path_is_an_error(tmp_path: Path, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match="no such file or directory; check the path"):
        open_workspace(str(tmp_path / "absent"), mirrors_dir=mirrors)


def test_a_file_as_source_is_an_error(unchanged: Repo, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a directory; name the repository"):
        open_workspace(str(unchanged.path / "README.md"), mirrors_dir=mirrors)


def test_missing_git_is_an_error_saying_to_install_it(
    unchanged: Repo, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_git(unchanged, mirrors)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(WorkspaceError, match=r"git is not installed .*; install git"):
        ws.sync()
    with pytest.raises(WorkspaceError, match="install git"):
        open_workspace(str(unchanged.path), mirrors_dir=mirrors)


# Plain directories


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    (root / "guides").mkdir(parents=True)
    (root / "index.md").write_text("# Index\n")
    (root / "guides" / "setup.md").write_text("# Setup\n")
    (root / "guides" / "image.png").write_bytes(b"\x89PNG")
    return root


def open_plain(plain: Path, mirrors: Path, **kwargs: Any) -> DirectoryWorkspace:
    ws = open_workspace(str(plain), mirrors_dir=mirrors, **kwargs)
    assert isinstance(ws, DirectoryWorkspace)
    return ws


def test_plain_directory_reads_the_whole_tree_by_default(plain: Path, mirrors: Path) -> None:
    ws = open_plain(plain, mirrors)
    assert ws.name == str(plain)
    assert ws.docs_roots == (".",)
    docs = ws.read_docs(ws.sync())
    assert docs == Docs(
        [
            DocFile("guides/setup.md", "# Setup\n", "markdown"),
            DocFile("index.md", "# Index\n", "markdown"),
        ],
        [],
        (".",),
    )
    assert open_plain(plain, mirrors, name="handbook").name == "handbook"


def test_plain_directory_ref_is_stable_and_changes_with_the_docs(
    plain: Path, mirrors: Path
) -> None:
    ws = open_plain(plain, mirrors)
    first = ws.sync()
    assert len(first) == 64
    assert ws.sync() == first
    assert open_plain(plain, mirrors).sync() == first
    (plain / "guides" / "image.png").write_bytes(b"other")  # not documentation
    assert ws.sync() == first
    refs = [first]
    for change in (
        lambda: (plain / "index.md").write_text("# Index, edited\n"),
        lambda: (plain / "guides" / "new.md").write_text("# New\n"),
        lambda: (plain / "guides" / "new.md").rename(plain / "guides" / "renamed.md"),
        lambda: (plain / "link.md").symlink_to(PASSWD),
    ):
        change()
        refs.append(ws.sync())
    assert len(set(refs)) == len(refs)
    (plain / "link.md").unlink()
    (plain / "guides" / "renamed.md").unlink()
    assert ws.sync() == refs[1]  # the same docs again: the same ref


def test_plain_directory_has_no_revisions(plain: Path, mirrors: Path) -> None:
    with pytest.raises(WorkspaceError, match="a plain directory has no revisions; leave out"):
        open_plain(plain, mirrors).sync("HEAD")


def test_plain_directory_read_docs_is_the_snapshot_of_the_sync(plain: Path, mirrors: Path) -> None:
    ws = open_plain(plain, mirrors)
    with pytest.raises(WorkspaceError, match="not the ref this workspace last read"):
        ws.read_docs("0" * 64)
    ref = ws.sync()
    (plain / "index.md").write_text("# Changed after the sync\n")
    assert "# Index\n" in texts(ws.read_docs(ref))
    new = ws.sync()
    with pytest.raises(WorkspaceError, match=r"the directory changed .*; sync again"):
        ws.read_docs(ref)
    assert "Changed after the sync" in texts(ws.read_docs(new))


def test_plain_directory_symlinks_at_every_level_are_skipped(
    plain: Path, mirrors: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "api").mkdir(parents=True)
    (outside / "api" / "secret.md").write_text("# Outside secret\n")
    (plain / "passwd.md").symlink_to(PASSWD)
    (plain / "guides" / "linked").symlink_to(outside)
    (plain / "docs-link").symlink_to(outside)
    ws = open_plain(plain, mirrors)
    docs = ws.read_docs(ws.sync())
    assert skips(docs) == {
        "docs-link": "symbolic link, not followed",
        "guides/linked": "symbolic link, not followed",
        "passwd.md": "symbolic link, not followed",
    }
    assert SECRET not in texts(docs)
    assert "Outside secret" not in texts(docs)
    for roots in (["docs-link"], ["docs-link/api"], ["guides/linked/api"]):
        ws = open_plain(plain, mirrors, docs=roots)
        link = roots[0].rsplit("/", 1)[0] if roots[0].endswith("/api") else roots[0]
        docs = ws.read_docs(ws.sync())
        assert (docs.files, docs.skipped) == ([], [Skipped(link, "symbolic link, not followed")])


def test_plain_directory_symlink_swapped_in_during_the_walk_is_not_followed(
    plain: Path, mirrors: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Outside secret\n")
    real_stat = os.stat
    swapped: list[str] = []

    def stat_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        # The entry is checked while it is a real directory or file, then replaced by a link
        # before it is opened.
        result = real_stat(path, *args, **kwargs)
        if path in ("guides", "index.md") and path not in swapped:
            swapped.append(path)
            target = plain / path
            target.rename(tmp_path / f"moved-{path}")
            target.symlink_to(outside if path == "guides" else Path(PASSWD))
        return result

    monkeypatch.setattr(os, "stat", stat_then_swap)
    ws = open_plain(plain, mirrors)
    docs = ws.read_docs(ws.sync())
    monkeypatch.undo()
    assert sorted(swapped) == ["guides", "index.md"]
    assert docs == Docs(
        [],
        [
            Skipped("guides", "symbolic link, not followed"),
            Skipped("index.md", "symbolic link, not followed"),
        ],
        (".",),
    )


def test_plain_directory_skips_big_latin1_special_and_badly_named_files(
    plain: Path, mirrors: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (plain / "dump.md").write_bytes(b"x" * BIG)
    (plain / "limit.md").write_bytes(b"y" * MAX_DOC_BYTES)
    (plain / "cafe.md").write_bytes("# Café\n".encode("latin-1"))
    os.mkfifo(plain / "pipe.md")
    bad_name = os.fsdecode(b"caf\xe9.md")
    (plain / bad_name).write_text("# Bad name\n")
    os.mkdir(plain / os.fsdecode(b"dir\xff"))
    ws = open_plain(plain, mirrors)
    with caplog.at_level(logging.INFO, logger="docshelf.workspace"):
        docs = ws.read_docs(ws.sync())
    assert skips(docs) == {
        "cafe.md": "not UTF-8 text (invalid byte at offset 5)",
        bad_name: "file name is not UTF-8",
        os.fsdecode(b"dir\xff"): "file name is not UTF-8",
        "dump.md": "2097152 bytes, over the 1048576-byte limit",
        "pipe.md": "not a regular file",
    }
    assert "limit.md" in paths(docs)
    logged = {r.getMessage() for r in caplog.records if r.name == "docshelf.workspace"}
    assert "skipped cafe.md: not UTF-8 text (invalid byte at offset 5)" in logged
    assert any(r.levelno == logging.WARNING and "cafe.md" in r.getMessage() for r in caplog.records)


def test_plain_directory_with_no_docs_is_an_error(tmp_path: Path, mirrors: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(WorkspaceError, match=r"no documentation files .* with --docs DIR"):
        open_plain(empty, mirrors).sync()


def test_plain_directory_walk_needs_no_recursion(tmp_path: Path, mirrors: Path) -> None:
    root = tmp_path / "deep"
    deep = root.joinpath(*["d"] * 300)
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("# Bottom\n")
    ws = open_plain(root, mirrors)
    with _recursion_limit(len(_stack()) + 100):
        docs = ws.read_docs(ws.sync())
    assert paths(docs) == ["d/" * 300 + "bottom.md"]


def test_plain_directory_roots_work_like_git_roots(plain: Path, mirrors: Path) -> None:
    (plain / "other").mkdir()
    (plain / "other" / "x.md").write_text("# X\n")
    ws = open_plain(plain, mirrors, docs=["guides", "./guides/", "index.md", "missing"])
    assert ws.docs_roots == ("guides", "index.md", "missing")
    assert paths(ws.read_docs(ws.sync())) == ["guides/setup.md", "index.md"]


def test_plain_directory_reads_another_selection_from_the_bytes_its_sync_read(
    plain: Path, mirrors: Path
) -> None:
    (plain / "guides" / "draft.md").write_text("# Draft\n")
    (plain / "guides" / "link.md").symlink_to(PASSWD)
    ws = open_plain(plain, mirrors)  # none named: the sync reads the whole directory
    ref = ws.sync()
    stored = Selection(("guides",), exclude=("draft*",))
    assert ws.layout_at(ref, stored).roots == ("guides",) and ws.layout_at(ref).roots == (".",)
    docs = ws.read_docs(ref, stored)
    assert (paths(docs), docs.roots, docs.excluded) == (["guides/setup.md"], ("guides",), 1)
    assert skips(docs) == {"guides/link.md": "symbolic link, not followed"}
    assert paths(ws.read_docs(ref)) == ["guides/draft.md", "guides/setup.md", "index.md"]
    # What is read must be what the ref names: a file changed or added since fails the read.
    (plain / "guides" / "setup.md").write_text("# Setup, edited\n")
    with pytest.raises(WorkspaceError, match=r"guides/setup\.md changed after the sync"):
        ws.read_docs(ref, stored)
    ref = ws.sync()
    (plain / "guides" / "new.md").write_text("# New\n")
    with pytest.raises(WorkspaceError, match=r"guides/new\.md changed .*the sync did not read"):
        ws.read_docs(ref, stored)
    ref = ws.sync()
    assert paths(ws.read_docs(ref, stored)) == ["guides/new.md", "guides/setup.md"]
    with pytest.raises(WorkspaceError, match=r"no documentation files .* under missing; name"):
        ws.read_docs(ref, Selection(("missing",)))


def test_a_git_workspace_reads_the_selection_it_is_given_at_a_commit(
    tmp_path: Path, mirrors: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    ws = open_git(repo, mirrors)
    head = repo.head()
    assert ws.layout_at(head).roots == ("docs",)
    given = Selection(("docs/runbooks",))
    assert ws.layout_at(head, given).roots == ("docs/runbooks",)
    docs = ws.read_docs(head, given)
    assert (paths(docs), docs.roots) == (["docs/runbooks/pay.md"], ("docs/runbooks",))
    assert ws.selection == Selection()  # the workspace keeps its own


def test_the_skipped_record_is_ascii_json_and_reads_back_a_name_that_is_not_utf8() -> None:
    skipped = [
        Skipped("docs/caf\udce9.md", "file name is not UTF-8"),
        Skipped("docs/é.md", "binary, not text (a NUL byte at offset 3)"),
    ]
    record = skipped_record(skipped)
    assert record == (
        '[{"path": "docs/caf\\udce9.md", "reason": "file name is not UTF-8"}, '
        '{"path": "docs/\\u00e9.md", "reason": "binary, not text (a NUL byte at offset 3)"}]'
    )
    assert record.isascii()
    assert skipped_from_record(record) == skipped
    assert skipped_from_record(skipped_record([])) == []
    assert skipped_from_record(None) is None


def _stack() -> list[Any]:
    frames = []
    frame = sys._getframe()
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back  # type: ignore[assignment]
    return frames


@contextlib.contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# Git: docs found where they live, and globs


def test_docs_in_content_are_found_with_no_docs_named(tmp_path: Path, mirrors: Path) -> None:
    repo = Repo(tmp_path / "hugo")
    repo.write("README.md", "# Site\n")
    repo.write("content/guide/install.md", "# Install\n\nRun it.\n")
    repo.write("content/_index.md", "# Home\n")
    repo.write("themes/x/layouts/a.html", "<p>\n")
    repo.write("node_modules/pkg/README.md", "# Vendored\n")
    head = repo.commit("site")
    ws = open_git(repo, mirrors)
    docs = ws.read_docs(head)
    assert docs.roots == ("content",)
    assert paths(docs) == ["content/_index.md", "content/guide/install.md"]


def test_starlight_docs_in_a_docs_package_are_found(tmp_path: Path, mirrors: Path) -> None:
    repo = Repo(tmp_path / "starlight")
    repo.write("README.md", "# Tool\n")
    repo.write("docs/astro.config.mjs", "export default {}\n")
    repo.write("docs/src/content/docs/guides/start.mdx", "# Start\n\nHello.\n")
    repo.write("docs/src/content/docs/reference/cli.rst", "CLI\n===\n\nFlags.\n")
    repo.write("docs/node_modules/astro/README.md", "# Astro\n")
    repo.write("packages/core/README.md", "# Core\n")
    head = repo.commit("docs")
    docs = open_git(repo, mirrors).read_docs(head)
    assert docs.roots == ("docs",)
    assert paths(docs) == [
        "docs/src/content/docs/guides/start.mdx",
        "docs/src/content/docs/reference/cli.rst",
    ]
    assert [f.kind for f in docs.files] == ["mdx", "rst"]


def test_with_no_docs_folder_the_whole_trees_markup_is_read(tmp_path: Path, mirrors: Path) -> None:
    repo = Repo(tmp_path / "lib")
    repo.write("README.md", "# Lib\n")
    repo.write("pkg/README.rst", "Pkg\n===\n\nText.\n")
    repo.write("pkg/guide.adoc", "= Guide\n\nText.\n")
    repo.write("requirements.txt", "click\n")
    repo.write("pkg/data/words.txt", "alpha\n")
    repo.write(".github/PULL_REQUEST_TEMPLATE.md", "# PR\n")
    repo.write("tests/fixtures/sample.md", "# Fixture\n")
    repo.write("vendor/dep/README.md", "# Dep\n")
    repo.write("build/html/index.md", "# Built\n")
    head = repo.commit("lib")
    docs = open_git(repo, mirrors).read_docs(head)
    assert docs.roots == (".",)
    assert paths(docs) == ["README.md", "pkg/README.rst", "pkg/guide.adoc"]


def test_include_and_exclude_choose_among_the_files_and_are_counted(
    tmp_path: Path, mirrors: Path
) -> None:
    repo = Repo(tmp_path / "site")
    repo.write("docs/intro.md", "# Intro\n")
    repo.write("docs/CHANGELOG.md", "# Changes\n")
    repo.write("docs/i18n/fr/intro.md", "# Intro FR\n")
    repo.write("docs/api/ref.mdx", "# Ref\n")
    repo.write("docs/img/logo.png", "png")
    head = repo.commit("docs")
    ws = open_git(repo, mirrors, exclude=["**/i18n/**", "CHANGELOG*"])
    assert ws.chosen
    docs = ws.read_docs(head)
    assert paths(docs) == ["docs/api/ref.mdx", "docs/intro.md"]
    assert docs.excluded == 2  # the image is no documentation file, so not counted
    only = open_git(repo, mirrors, include=["**/*.mdx"]).read_docs(head)
    assert paths(only) == ["docs/api/ref.mdx"]
    with pytest.raises(WorkspaceError, match=r"--include \*\.rst left out 4 files"):
        open_git(repo, mirrors, include=["*.rst"]).read_docs(head)
