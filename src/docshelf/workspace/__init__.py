"""Sources of documentation: a git repository's docs at a commit, a plain directory's docs, and the
files a command names.

Constraints:
- A workspace's docs are read as they are at one ref, and only as data: git trees are listed and
  their blobs read from git's objects (nothing is checked out), so the index matches the commit
  whatever the work tree holds. A plain directory's snapshot is kept from the sync that read it,
  so the tree cannot change under the indexer.
- The content is untrusted. Symbolic links are never followed, in git or on disk, at any level
  (a link to /etc/passwd must never become documentation); on disk every step is opened relative
  to its parent's descriptor with O_NOFOLLOW, so a link swapped in during the walk is refused too.
  Submodules are not entered, files over MAX_DOC_BYTES are not read, and a file or a file name
  that is not UTF-8 is skipped by name rather than decoded with replacement characters, as is a
  file holding a NUL byte (binary) or a name holding a control character. What is skipped is
  reported with the reason, and logged.
- Git runs as a subprocess with `--end-of-options` before any revision a user supplies, no
  terminal prompts, and a timeout; passwords in clone URLs never reach a message or a name.
- Results are deterministic: files and skips sorted by path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from docshelf.chunking import Kind, kind_of
from docshelf.errors import WorkspaceError
from docshelf.workspace.directory import DirectoryWorkspace, read_local
from docshelf.workspace.docs import (
    BINARY,
    COMMIT_ID,
    LEAVES_ROOT,
    NAME_CONTROL,
    NAME_NOT_UTF8,
    NOT_REGULAR,
    SUBMODULE,
    SYMLINK,
    DocFile,
    Docs,
    Skipped,
    shown,
    skipped_from_record,
    skipped_record,
    unreadable,
)
from docshelf.workspace.found import Layout, included_heading
from docshelf.workspace.git import GitWorkspace, git_said, run_git
from docshelf.workspace.redaction import SCP_LIKE, URL, redact_url
from docshelf.workspace.remote import open_url
from docshelf.workspace.selection import Selection, checked_globs

__all__ = [
    "BINARY",
    "COMMIT_ID",
    "LEAVES_ROOT",
    "NAME_CONTROL",
    "NAME_NOT_UTF8",
    "NOT_REGULAR",
    "SUBMODULE",
    "SYMLINK",
    "DirectoryWorkspace",
    "DocFile",
    "Docs",
    "GitWorkspace",
    "Kind",
    "Layout",
    "Selection",
    "Skipped",
    "Workspace",
    "included_heading",
    "kind_of",
    "open_workspace",
    "read_local",
    "redact_url",
    "shown",
    "skipped_from_record",
    "skipped_record",
]

Workspace: TypeAlias = GitWorkspace | DirectoryWorkspace


def open_workspace(
    source: str,
    *,
    docs: Sequence[str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    name: str | None = None,
    mirrors_dir: Path,
) -> Workspace:
    """The workspace at `source`: a path or a clone URL (https://, http://, ssh://, git://,
    file://, or scp-like user@host:path).

    A path in a git work tree is that repository, its docs in `docs` (relative to the path) or,
    by default, the path itself when it is a subdirectory, else the docs folders found at each
    commit (selection.discover). A path outside any git repository is a plain directory, its docs
    in `docs` or the whole of it. A clone URL is mirrored into `mirrors_dir` (once; each sync
    fetches) and its docs found as a repository's. `include` and `exclude` globs then choose
    among the files. A path may start with ~ (the user's home). The name defaults to the
    repository's top level, the directory's absolute path, or the URL without its password.

    The workspace's `chosen` is True when `docs`, a glob or a subdirectory named the docs: only
    then does the caller keep this selection over the one stored with the workspace.

    Raises:
        WorkspaceError: the path is missing, the URL cannot be cloned, a docs root is absolute or
            leaves the workspace, a glob is malformed, or git fails.
    """
    roots = None if docs is None else _normalised_roots(docs)
    selection = Selection(
        roots,
        checked_globs(include, "--include"),
        checked_globs(exclude, "--exclude"),
    )
    chosen = roots is not None or bool(selection.include or selection.exclude)
    if URL.match(source) or SCP_LIKE.match(source):
        return open_url(source, selection, chosen, name, mirrors_dir)
    return _open_path(os.path.expanduser(source), selection, chosen, name)


def _open_path(source: str, selection: Selection, chosen: bool, name: str | None) -> Workspace:
    path = Path(source)
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as e:
        raise unreadable(path, e) from e
    if not exists:
        raise WorkspaceError(
            f"{shown(source)}: no such file or directory; check the path, or give a clone URL "
            "(https://..., ssh://..., user@host:path)"
        )
    if not is_dir:
        raise WorkspaceError(
            f"{shown(source)}: not a directory; name the repository or the directory that holds "
            "the docs (docshelf chunk reads single files)"
        )
    probe = run_git(
        [
            "-C",
            str(path),
            "rev-parse",
            "--is-bare-repository",
            "--is-inside-git-dir",
            "--absolute-git-dir",
        ],
        purpose=f"looking for a git repository at {shown(source)}",
        next_step="fix the repository, or index a plain directory outside it",
        check=False,
    )
    if probe.returncode != 0:
        if b"not a git repository" not in probe.stderr:
            raise WorkspaceError(
                f"looking for a git repository at {shown(source)} failed: "
                f"{git_said(probe.stderr)}; fix the repository, or index a plain directory "
                "outside it"
            )
        absolute = Path(os.path.abspath(path))
        return DirectoryWorkspace(
            absolute, name=name or str(absolute), selection=selection, chosen=chosen
        )
    bare, in_git_dir, git_dir = os.fsdecode(probe.stdout).splitlines()
    if bare == "true":
        return GitWorkspace(Path(git_dir), name=name or git_dir, selection=selection, chosen=chosen)
    if in_git_dir == "true":
        raise WorkspaceError(
            f"{shown(source)} is inside a repository's .git directory; name the repository's top "
            "level instead"
        )
    where = run_git(
        ["-C", str(path), "rev-parse", "--show-toplevel", "--show-prefix"],
        purpose=f"finding the top level of the git repository at {shown(source)}",
        next_step="check the repository with git status",
    )
    top, prefix = (os.fsdecode(line) for line in where.stdout.split(b"\n")[:2])
    prefix = prefix.rstrip("/")
    roots = selection.docs
    if prefix:
        chosen = True
        if roots is None:
            roots = (prefix,)
        else:
            roots = tuple(prefix if root == "." else f"{prefix}/{root}" for root in roots)
        selection = Selection(roots, selection.include, selection.exclude)
    return GitWorkspace(Path(git_dir), name=name or top, selection=selection, chosen=chosen)


def _normalised_roots(docs: Sequence[str]) -> tuple[str, ...]:
    """Docs roots as clean relative paths ("./docs/" -> "docs"), any root inside another dropped.

    Raises:
        WorkspaceError: none given, or one is absolute, empty or leaves the workspace.
    """
    if isinstance(docs, str):
        docs = [docs]
    if not docs:
        raise WorkspaceError(
            "no docs directory given; name one or more with --docs DIR (. for the whole tree)"
        )
    roots: set[str] = set()
    for given in docs:
        if given.startswith("/"):
            raise WorkspaceError(
                f"--docs {shown(given)}: an absolute path; name a directory inside the workspace, "
                "relative to its top, such as docs"
            )
        if not given or "\0" in given:
            raise WorkspaceError(
                f"--docs {shown(given)!r} is not a directory name; name one such as docs, or . "
                "for the whole tree"
            )
        parts = [part for part in given.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise WorkspaceError(
                f"--docs {shown(given)}: the path leaves the workspace; name a directory inside "
                "it, such as docs"
            )
        roots.add("/".join(parts) or ".")
    if "." in roots:
        return (".",)
    kept: list[str] = []
    for root in sorted(roots):
        if not any(root.startswith(outer + "/") for outer in kept):
            kept.append(root)
    return tuple(kept)
