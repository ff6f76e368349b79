"""What every reader of documentation shares: a file read, a file skipped and why, the docs of one
ref, and the rules that decide what is skipped (a name or a text that is not UTF-8, a NUL byte,
a control character in a name, a size over MAX_DOC_BYTES). Skips are logged on the
"docshelf.workspace" logger, whichever reader found them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docshelf.chunking import Kind
from docshelf.config import DOC_SUFFIXES, MAX_DOC_BYTES
from docshelf.errors import WorkspaceError
from docshelf.workspace.selection import Selection

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


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory left out of a workspace's docs, and why (short, lower case)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Docs:
    """The docs of one ref: files and skips, each sorted by path relative to the workspace root;
    the docs roots they were read from (named or found), and how many documentation files the
    --include and --exclude globs left out."""

    files: list[DocFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    roots: tuple[str, ...] = ()
    excluded: int = 0


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
    files: list[DocFile],
    skipped: list[Skipped],
    roots: tuple[str, ...] = (),
    excluded: int = 0,
) -> Docs:
    unique = {skip.path: skip for skip in skipped}
    return Docs(
        files=sorted(files, key=lambda f: f.path),
        skipped=sorted(unique.values(), key=lambda s: s.path),
        roots=roots,
        excluded=excluded,
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
