"""What every reader of documentation shares: a file read, a file skipped and why, the docs of one
ref, and the rules that decide what is skipped (a name or a text that is not UTF-8, a NUL byte,
a control character in a name, a size over MAX_DOC_BYTES). Skips are logged on the
"docshelf.workspace" logger, whichever reader found them.

A ref's texts are held in memory when they are small (HELD_TEXT_BYTES in all). A larger ref's
files are a DocFiles: listed by path, kind, size and key, their texts read again from git (or
the directory) a window at a time each time the files are iterated, so that what a run holds
does not grow with the docs.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, overload

from docshelf.chunking import Kind
from docshelf.config import DOC_SUFFIXES, MAX_DOC_BYTES
from docshelf.errors import WorkspaceError
from docshelf.workspace.selection import Selection

if TYPE_CHECKING:
    from docshelf.workspace.found import Layout

log = logging.getLogger("docshelf.workspace")

SYMLINK = "symbolic link, not followed"
SUBMODULE = "submodule, not read"
NAME_NOT_UTF8 = "file name is not UTF-8"
NAME_CONTROL = "file name has a control character"
BINARY = "binary, not text"
LEAVES_ROOT = "path leaves the docs root"
NOT_REGULAR = "not a regular file"

# Characters a path may not hold: a path is cited as one line ("path:line"), and a newline or an
# escape sequence in a name would let a file forge lines of a listing or a search result.
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# A commit id as `git rev-parse` prints it: SHA-1, or SHA-256 in a repository that uses it.
COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class DocFile:
    """A documentation file: its path as shown to the user, its text and its kind."""

    path: str
    text: str
    kind: Kind


# The most bytes of text a ref's docs are held in memory with; past it, they are read again a
# window of at most READ_WINDOW_BYTES at a time whenever they are iterated (BENCHMARKS.md).
HELD_TEXT_BYTES = 16 * 1024 * 1024
READ_WINDOW_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Listed:
    """A documentation file whose text is read when it is needed: its path and kind, its size in
    bytes, and the key its reader finds it by (a git blob id, or the sha256 of the bytes that a
    directory's sync read)."""

    path: str
    kind: Kind
    size: int
    key: bytes


# Reads the texts of some listed files, in order; raises WorkspaceError when one is not what
# was listed any more.
TextReader = Callable[[Sequence[Listed]], list[str]]


class DocFiles(Sequence[DocFile]):
    """The files of a ref too large to hold: a DocFile at a time, in path order, read again
    from the source a window of READ_WINDOW_BYTES at a time on every iteration.

    Raises (on iteration or indexing):
        WorkspaceError: the source can no longer give a file as it was listed.
    """

    __slots__ = ("_listed", "_read")

    def __init__(self, listed: Sequence[Listed], read: TextReader) -> None:
        self._listed = list(listed)
        self._read = read

    @property
    def paths(self) -> list[str]:
        return [entry.path for entry in self._listed]

    def __len__(self) -> int:
        return len(self._listed)

    @overload
    def __getitem__(self, index: int) -> DocFile: ...

    @overload
    def __getitem__(self, index: slice) -> list[DocFile]: ...

    def __getitem__(self, index: int | slice) -> DocFile | list[DocFile]:
        if isinstance(index, slice):
            return list(DocFiles(self._listed[index], self._read))
        entry = self._listed[index]
        return DocFile(entry.path, self._read([entry])[0], entry.kind)

    def __iter__(self) -> Iterator[DocFile]:
        for window in read_windows(self._listed):
            texts = self._read(window)
            if len(texts) != len(window):
                raise WorkspaceError(f"read {len(texts)} texts for {len(window)} files")
            for entry, text in zip(window, texts, strict=True):
                yield DocFile(entry.path, text, entry.kind)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DocFiles({len(self)} files)"


def read_windows(listed: Sequence[Listed]) -> Iterator[Sequence[Listed]]:
    """`listed` in runs of at most READ_WINDOW_BYTES (a larger file is a run of its own)."""
    start = size = 0
    for i, entry in enumerate(listed):
        if i > start and size + entry.size > READ_WINDOW_BYTES:
            yield listed[start:i]
            start, size = i, 0
        size += entry.size
    if start < len(listed):
        yield listed[start:]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory left out of a workspace's docs, and why (short, lower case)."""

    path: str
    reason: str


def skipped_record(skipped: Sequence[Skipped]) -> str:
    """The skipped files of a ref as the store keeps them: a JSON array of {path, reason}, in
    ASCII (a name that is not UTF-8 holds lone surrogates, which neither store can encode)."""
    return json.dumps([{"path": s.path, "reason": s.reason} for s in skipped])


def skipped_from_record(record: str | None) -> list[Skipped] | None:
    """The skipped files a `skipped_record` holds (a name that was not UTF-8 comes back with
    its lone surrogates, for `shown` to escape); None when the store recorded none."""
    if record is None:
        return None
    return [Skipped(str(s["path"]), str(s["reason"])) for s in json.loads(record)]


@dataclass(frozen=True, slots=True)
class Docs:
    """The docs of one ref: files and skips, each sorted by path relative to the workspace root;
    the docs roots they were read from (named or found), and how many documentation files the
    --include and --exclude globs left out."""

    files: Sequence[DocFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    roots: tuple[str, ...] = ()
    excluded: int = 0
    # Where the docs were found (the sites and what they leave out), for the user; None when a
    # reader does not look for sites.
    layout: Layout | None = field(default=None, compare=False)
    # The files other pages include, each with the pages it appears in.
    included: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def shown(path: Path | str) -> str:
    """A path as one printable line: control characters and undecodable bytes escaped."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def skip(path: str, reason: str, level: int = logging.INFO) -> Skipped:
    log.log(level, "skipped %s: %s", shown(path), reason)
    return Skipped(path, reason)


def too_big(size: int) -> str:
    return f"{size} bytes, over the {MAX_DOC_BYTES}-byte limit"


def decoded(data: bytes) -> tuple[str | None, str]:
    # A NUL byte is valid UTF-8 but no text file holds one: it marks an image or an archive
    # renamed .md (git's own test for binary), and PostgreSQL cannot store it in a text column.
    nul = data.find(b"\0")
    if nul >= 0:
        return None, f"{BINARY} (a NUL byte at offset {nul})"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text (invalid byte at offset {e.start})"


def is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def sorted_docs(
    files: Sequence[DocFile],
    skipped: list[Skipped],
    roots: tuple[str, ...] = (),
    excluded: int = 0,
    layout: Layout | None = None,
    included: Mapping[str, tuple[str, ...]] | None = None,
) -> Docs:
    unique = {skip.path: skip for skip in skipped}
    return Docs(
        # A DocFiles is listed in path order already; sorting it would read every text.
        files=files if isinstance(files, DocFiles) else sorted(files, key=lambda f: f.path),
        skipped=sorted(unique.values(), key=lambda s: s.path),
        roots=roots,
        excluded=excluded,
        layout=layout,
        included=included or {},
    )


def suffixes() -> str:
    return ", ".join(DOC_SUFFIXES)


def globs_note(selection: Selection, excluded: int) -> str:
    """What the globs did, for a message: " (--exclude X left out 3 files)", or ""."""
    if not selection.include and not selection.exclude:
        return ""
    return f" ({selection.describe()} left out {excluded} file{'s' if excluded != 1 else ''})"


def listed(roots: Sequence[str]) -> str:
    return ", ".join(shown(root) for root in roots)


def unreadable(path: Path, e: OSError) -> WorkspaceError:
    return WorkspaceError(
        f"{shown(path)}: cannot be read ({e.strerror}); check the path and its permissions"
    )
