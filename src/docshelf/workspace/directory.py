"""Plain directories, read safely: the one walk that serves both `docshelf index` (a directory
outside git) and `docshelf chunk`.

Constraints:
- Every step is opened relative to its parent's descriptor with O_NOFOLLOW, so no symbolic link is
  followed at any level, not even one swapped in during the walk.
- A directory workspace's snapshot is kept from the sync that read it, so the tree cannot change
  under the indexer; its ref is a digest of what was read and skipped. A snapshot over
  HELD_TEXT_BYTES keeps each file's sha256 instead of its text: its texts are read again (by the
  same walk's rules) when they are needed, and a file that no longer has those bytes fails the
  run, never a row of it.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docshelf.chunking import kind_of
from docshelf.config import MAX_DOC_BYTES
from docshelf.errors import WorkspaceError
from docshelf.workspace.docs import (
    BINARY,
    COMMIT_ID,
    CONTROL_CHARS,
    HELD_TEXT_BYTES,
    NAME_CONTROL,
    NAME_NOT_UTF8,
    NOT_REGULAR,
    SYMLINK,
    DocFile,
    DocFiles,
    Docs,
    Listed,
    Skipped,
    decoded,
    globs_note,
    is_utf8,
    listed,
    shown,
    skip,
    sorted_docs,
    suffixes,
    too_big,
    unreadable,
)
from docshelf.workspace.found import Layout
from docshelf.workspace.selection import WHOLE_TREE, Selection


class DirectoryWorkspace:
    """A plain directory that is not in a git repository. Build it with open_workspace."""

    def __init__(
        self, path: Path, *, name: str, selection: Selection, chosen: bool = False
    ) -> None:
        self.name = name
        self.path = path
        # The roots (None: the whole directory) and globs; `chosen` when the user named them.
        self.selection = selection
        self.chosen = chosen
        self._snapshot: _Snapshot | None = None

    @property
    def docs_roots(self) -> tuple[str, ...]:
        return self.selection.docs or WHOLE_TREE

    def layout_at(self, ref: str, selection: Selection | None = None) -> Layout:
        return Layout((self.selection if selection is None else selection).docs or WHOLE_TREE)

    def __repr__(self) -> str:
        return f"DirectoryWorkspace({self.name!r}, selection={self.selection!r})"

    def sync(self, rev: str | None = None, selection: Selection | None = None) -> str:
        """Read the docs `selection` picks (default: the one this workspace was opened with) now
        and return their ref: the sha256 of their paths and contents (and of what was skipped),
        so it changes whenever a doc is edited, added, removed or renamed, and only then.

        Raises:
            WorkspaceError: a revision was named, the directory cannot be read, or it holds no
                documentation file and nothing was skipped.
        """
        if rev is not None:
            raise WorkspaceError(
                f"a plain directory has no revisions; leave out the revision {shown(rev)!r}, or "
                f"index a git repository ({shown(self.name)} is not in one)"
            )
        walked = self.selection if selection is None else selection
        docs, read = self._walk(walked)
        ref = _digest(read, docs.skipped)
        self._snapshot = _Snapshot(ref, walked, docs, {entry.path: entry.key for entry in read})
        return ref

    def resolve(self, rev: str | None = None) -> str:
        """A ref this directory was indexed at, as given: a plain directory has no revision
        names, only the refs its syncs returned.

        Raises:
            WorkspaceError: `rev` is not such a ref (64 hexadecimal digits).
        """
        if rev is None or not COMMIT_ID.fullmatch(rev):
            raise WorkspaceError(
                f"a plain directory has no revisions; name a ref that docshelf index printed "
                f"for it (64 hexadecimal digits), not {shown(str(rev))!r}"
            )
        return rev

    def read_docs(self, ref: str, selection: Selection | None = None) -> Docs:
        """The docs the sync() that returned `ref` read, as `selection` (default: the one this
        workspace was opened with) picks them: the sync's own docs when it walked the same
        selection (the indexer syncs with the one it reads). Another selection is walked again,
        each file held to the bytes the sync read, so `ref` still names the docs.

        Raises:
            WorkspaceError: `ref` is not the ref of the last sync, or the directory changed
                since under the selection's roots, or they hold no documentation file.
        """
        snapshot = self._snapshot
        if snapshot is None or snapshot.ref != ref:
            raise WorkspaceError(
                f"{shown(self.name)}: {shown(ref)!r} is not the ref this workspace last read; the "
                "directory changed or was not read yet; sync again and index the ref it returns"
            )
        wanted = self.selection if selection is None else selection
        if wanted == snapshot.selection:
            return snapshot.docs
        docs, read = self._walk(wanted, quiet=True)  # its sync logged every skip
        for entry in read:
            if entry.path not in snapshot.keys:
                raise _changed(entry, "the sync did not read it")
            if snapshot.keys[entry.path] != entry.key:
                raise _changed(entry, "its bytes are not those the sync read")
        if not set(docs.skipped) <= set(snapshot.docs.skipped):
            raise WorkspaceError(
                f"{shown(self.name)} changed after the sync that read it (it skips other files "
                "now); sync again and index the ref it returns"
            )
        return docs

    def _walk(self, selection: Selection, *, quiet: bool = False) -> tuple[Docs, list[Listed]]:
        """The docs `selection` picks, read now, and every text file read with its sha256.

        Raises:
            WorkspaceError: the directory cannot be read, or its docs roots hold no
                documentation file and nothing was skipped.
        """
        roots = selection.docs or WHOLE_TREE
        found = _Walk(quiet=quiet, selection=selection)
        docs = _walk_roots(self.path, roots, found)
        if not docs.files and not docs.skipped:
            raise WorkspaceError(
                f"{shown(self.name)}: no documentation files ({suffixes()}) under "
                f"{listed(roots)}{globs_note(selection, docs.excluded)}; name "
                "the directory that holds them with --docs DIR"
            )
        return docs, found.listed


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What a directory's sync read: its ref, the selection it walked, the docs, and the sha256
    of every text file it read, by path (what a read of other docs is held to)."""

    ref: str
    selection: Selection
    docs: Docs
    keys: dict[str, bytes]


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in for a file must not block the open; no effect on regular files.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(slots=True)
class _Walk:
    """What a directory walk collected so far."""

    files: list[DocFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    # Every text file read, with its bytes' sha256 (the ref's digest is made of them). Past
    # HELD_TEXT_BYTES in all, `files` is emptied and texts are no longer kept.
    listed: list[Listed] = field(default_factory=list)
    held: bool = True
    text_bytes: int = 0
    # `docshelf chunk` logs nothing while it walks: it refuses what must be fixed (each skip
    # logged at WARNING) and reports the rest itself.
    quiet: bool = False
    problems: set[str] = field(default_factory=set)
    # The --include and --exclude globs, and how many documentation files they left out.
    selection: Selection = field(default_factory=Selection)
    excluded: int = 0

    def skip(self, path: str, reason: str, level: int = logging.INFO) -> None:
        if level >= logging.WARNING:
            self.problems.add(path)
        self.skipped.append(Skipped(path, reason) if self.quiet else skip(path, reason, level))


def _walk_roots(path: Path, roots: tuple[str, ...], found: _Walk) -> Docs:
    try:
        # The workspace itself may be reached through a link the user named; nothing below it is.
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise unreadable(path, e) from e
    try:
        for root in roots:
            _read_root(top, root, found)
    finally:
        os.close(top)
    if found.held:
        return sorted_docs(found.files, found.skipped, roots, found.excluded)
    entries = sorted(found.listed, key=lambda entry: entry.path)
    files = DocFiles(entries, lambda window: _read_again(path, window))
    return sorted_docs(files, found.skipped, roots, found.excluded)


def _read_again(path: Path, listed: Sequence[Listed]) -> list[str]:
    """The texts of files a sync of the directory at `path` listed, read again by the walk's
    rules (no link followed at any level, regular files only), each checked against the sha256
    the sync read.

    Raises:
        WorkspaceError: a file is gone, cannot be read, or holds other bytes than the sync read.
    """
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise unreadable(path, e) from e
    try:
        return [_read_entry(top, entry) for entry in listed]
    finally:
        os.close(top)


def _read_entry(top: int, entry: Listed) -> str:
    parts = entry.path.split("/")
    parent = top
    try:
        for part in parts[:-1]:
            step = os.open(part, _DIR_FLAGS, dir_fd=parent)
            if parent != top:
                os.close(parent)
            parent = step
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
        with os.fdopen(fd, "rb", closefd=True) as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise OSError(errno.EINVAL, "not a regular file any more")
            data = file.read(MAX_DOC_BYTES + 1)
    except OSError as e:
        raise _changed(entry, e.strerror or str(e)) from e
    finally:
        if parent != top:
            os.close(parent)
    if hashlib.sha256(data).digest() != entry.key:
        raise _changed(entry, "its bytes are not those the sync read")
    text, reason = decoded(data)
    if text is None:  # the same bytes as before: not reached
        raise _changed(entry, reason)
    return text


def _changed(entry: Listed, why: str) -> WorkspaceError:
    return WorkspaceError(
        f"{shown(entry.path)} changed after the sync that read it ({why}); sync again and index "
        "the ref it returns"
    )


def _read_root(top: int, root: str, found: _Walk) -> None:
    """Step down to a docs root one component at a time, then walk it (or read it, a file)."""
    if root == ".":
        _walk_directory(top, "", found, close=False)
        return
    parts = root.split("/")
    parent = top
    try:
        for depth, part in enumerate(parts, start=1):
            rel = "/".join(parts[:depth])
            opened = _open_entry(parent, part, rel, found)
            if parent != top:
                os.close(parent)
            parent = top
            if opened is None:
                return
            fd, is_dir = opened
            if depth == len(parts):
                if is_dir:
                    _walk_directory(fd, rel, found, close=True)
                else:
                    _read_file(fd, rel, found)
            elif is_dir:
                parent = fd
            else:
                os.close(fd)
                return
    finally:
        if parent != top:
            os.close(parent)


def _walk_directory(fd: int, rel: str, found: _Walk, *, close: bool) -> None:
    """Walk the directory open at `fd` iteratively, in sorted order, one descriptor per level."""
    stack: list[tuple[int, str, Iterator[str], bool]] = [(fd, rel, _names(fd, rel, found), close)]
    try:
        while stack:
            dir_fd, dir_rel, names, owned = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if owned:
                    os.close(dir_fd)
                continue
            child_rel = f"{dir_rel}/{name}" if dir_rel else name
            opened = _open_entry(dir_fd, name, child_rel, found)
            if opened is None:
                continue
            child, is_dir = opened
            if is_dir:
                stack.append((child, child_rel, _names(child, child_rel, found), True))
            else:
                _read_file(child, child_rel, found)
    finally:
        for dir_fd, _rel, _left, owned in stack:
            if owned:
                os.close(dir_fd)


def _names(fd: int, rel: str, found: _Walk) -> Iterator[str]:
    try:
        with os.scandir(fd) as entries:
            names = sorted(entry.name for entry in entries)
    except OSError as e:
        found.skip(rel or ".", f"cannot be read ({e.strerror})", logging.WARNING)
        names = []
    return iter(names)


def _open_entry(parent: int, name: str, rel: str, found: _Walk) -> tuple[int, bool] | None:
    """An open descriptor for a directory or a documentation file, and whether it is a directory;
    None for anything skipped (recorded) or ignored (a file of another kind, an entry gone)."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        found.skip(rel, f"cannot be read ({e.strerror})", logging.WARNING)
        return None
    is_dir = stat.S_ISDIR(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        found.skip(rel, SYMLINK)
        return None
    if not is_dir and kind_of(name) is None:
        return None
    if not is_dir and not found.selection.keeps(rel):
        found.excluded += 1
        return None
    if not is_utf8(rel):
        found.skip(rel, NAME_NOT_UTF8, logging.WARNING)
        return None
    if CONTROL_CHARS.search(name):
        found.skip(rel, NAME_CONTROL, logging.WARNING)
        return None
    if not is_dir and not stat.S_ISREG(info.st_mode):
        found.skip(rel, NOT_REGULAR)
        return None
    try:
        fd = os.open(name, _DIR_FLAGS if is_dir else _FILE_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as e:
        # ELOOP (a file) or ENOTDIR (a directory): swapped for a link since the stat above.
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, name):
            found.skip(rel, SYMLINK)
        else:
            found.skip(rel, f"cannot be read ({e.strerror})", logging.WARNING)
        return None
    if stat.S_ISDIR(os.fstat(fd).st_mode) != is_dir:
        os.close(fd)
        found.skip(rel, "changed while being read", logging.WARNING)
        return None
    return fd, is_dir


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_file(fd: int, rel: str, found: _Walk) -> None:
    """Read an opened documentation file (the descriptor is closed) unless it must be skipped."""
    with os.fdopen(fd, "rb", closefd=True) as file:
        info = os.fstat(file.fileno())
        kind = kind_of(rel)
        if kind is None or rel in found.seen:
            return
        found.seen.add(rel)
        if not stat.S_ISREG(info.st_mode):
            found.skip(rel, NOT_REGULAR)
            return
        if info.st_size > MAX_DOC_BYTES:
            found.skip(rel, too_big(info.st_size))
            return
        try:
            data = file.read(MAX_DOC_BYTES + 1)
        except OSError as e:
            found.skip(rel, f"cannot be read ({e.strerror})", logging.WARNING)
            return
    if len(data) > MAX_DOC_BYTES:
        found.skip(rel, f"over the {MAX_DOC_BYTES}-byte limit")
        return
    text, reason = decoded(data)
    if text is None:
        found.skip(rel, reason, logging.WARNING)
        return
    found.listed.append(Listed(rel, kind, len(data), hashlib.sha256(data).digest()))
    found.text_bytes += len(data)
    if found.held and found.text_bytes > HELD_TEXT_BYTES:
        found.held = False
        found.files.clear()
    if found.held:
        found.files.append(DocFile(rel, text, kind))


def _digest(listed: Iterable[Listed], skips: Iterable[Skipped]) -> str:
    """A ref for a directory's docs: sha256 over each file's path, size and sha256 (in path
    order), and each skip."""
    h = hashlib.sha256()
    for entry in sorted(listed, key=lambda entry: entry.path):
        h.update(b"file\0%s\0%d\0" % (entry.path.encode("utf-8"), entry.size))
        h.update(entry.key)
    for skipped in skips:
        h.update(b"skipped\0%s\0" % skipped.path.encode("utf-8", "surrogateescape"))
        h.update(b"%s\0" % skipped.reason.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def read_local(paths: Iterable[Path]) -> Docs:
    """Read the named files, and every documentation file below the named directories, by the
    walk that a plain directory's index takes: what is read and what is skipped are the same.

    A named file is read whatever its suffix (as Markdown unless it ends in .txt), with its path
    as given; a file found below a directory has its path relative to that directory. Below a
    directory, what the index skips without a warning (a symbolic link, a file over the size
    limit, a special file) is returned as skipped; what it warns about is refused.

    Raises:
        WorkspaceError: a path is missing or cannot be read, a directory holds no documentation,
            or a file or its name is not UTF-8 text.
    """
    files: list[DocFile] = []
    skipped: list[Skipped] = []
    for root in paths:
        try:
            is_dir, exists = root.is_dir(), root.exists()
        except OSError as e:
            raise unreadable(root, e) from e
        if is_dir:
            found = _Walk(quiet=True)
            docs = _walk_roots(root, (".",), found)
            for skip_ in docs.skipped:
                if skip_.path in found.problems:
                    raise _refusal(root, skip_)
            if not docs.files:
                raise WorkspaceError(
                    f"{shown(root)}: no documentation files ({suffixes()}) below this directory; "
                    "name a directory that holds some, or the files themselves"
                )
            files.extend(docs.files)
            skipped.extend(docs.skipped)
        elif exists:
            path = _utf8_path(root.as_posix())
            files.append(DocFile(path, _read(root), kind_of(root.name) or "markdown"))
        else:
            raise WorkspaceError(f"{shown(root)}: no such file or directory; check the path")
    return Docs(files, skipped)


def _refusal(root: Path, skipped: Skipped) -> WorkspaceError:
    """What `docshelf chunk` says of a file below `root` that the index would warn about."""
    if skipped.reason in (NAME_NOT_UTF8, NAME_CONTROL):
        return WorkspaceError(
            f"{shown(skipped.path)}: the {skipped.reason}; rename the file or leave it out"
        )
    path = root / skipped.path
    if skipped.reason.startswith(BINARY):
        return WorkspaceError(f"{shown(path)}: {skipped.reason}; name only text files")
    if skipped.reason.startswith("not UTF-8"):
        return WorkspaceError(
            f"{shown(path)}: {skipped.reason}; convert it to UTF-8 or leave it out"
        )
    return WorkspaceError(f"{shown(path)}: {skipped.reason}; check the path and its permissions")


def _utf8_path(path: str) -> str:
    """`path` when it may be cited as one line of text (see CONTROL_CHARS)."""
    if not is_utf8(path):
        raise WorkspaceError(
            f"{shown(path)}: the file name is not UTF-8; rename the file or leave it out"
        )
    if CONTROL_CHARS.search(path):
        raise WorkspaceError(
            f"{shown(path)}: the file name has a control character; rename the file or leave it out"
        )
    return path


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise unreadable(path, e) from e
    text, reason = decoded(data)
    if text is None and reason.startswith(BINARY):
        raise WorkspaceError(f"{shown(path)}: {reason}; name only text files")
    if text is None:
        raise WorkspaceError(f"{shown(path)}: {reason}; convert it to UTF-8 or leave it out")
    return text
