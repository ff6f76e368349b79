"""Sources of documentation: reading the files a command names.

Constraints: a directory is walked in sorted order so results are deterministic; symbolic links
below a directory are never followed (a link to /etc/passwd must never become documentation);
a file that is not UTF-8 is refused by name rather than decoded with replacement characters.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from docshelf.config import MARKDOWN_SUFFIXES, TEXT_SUFFIXES
from docshelf.errors import WorkspaceError

Kind = Literal["markdown", "text"]


@dataclass(frozen=True, slots=True)
class DocFile:
    """A documentation file: its path as shown to the user, its text and its kind."""

    path: str
    text: str
    kind: Kind


def kind_of(name: str) -> Kind | None:
    """Which chunker a file gets by default, or None when docshelf does not read such files."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def read_local(paths: Iterable[Path]) -> list[DocFile]:
    """Read the named files, and every documentation file below the named directories.

    A named file is read whatever its suffix (as Markdown unless it ends in .txt), with its path
    as given; a file found below a directory has its path relative to that directory.

    Raises:
        WorkspaceError: a path is missing or cannot be read, a directory holds no documentation,
            or a file or its name is not UTF-8.
    """
    files: list[DocFile] = []
    for root in paths:
        try:
            is_dir, exists = root.is_dir(), root.exists()
        except OSError as e:
            raise _unreadable(root, e) from e
        if is_dir:
            found = _walk(root)
            if not found:
                suffixes = ", ".join(MARKDOWN_SUFFIXES + TEXT_SUFFIXES)
                raise WorkspaceError(
                    f"{shown(root)}: no documentation files ({suffixes}) below this directory; "
                    "name a directory that holds some, or the files themselves"
                )
            files.extend(DocFile(rel, _read(root / rel), kind) for rel, kind in found)
        elif exists:
            path = _utf8_path(root.as_posix())
            files.append(DocFile(path, _read(root), kind_of(root.name) or "markdown"))
        else:
            raise WorkspaceError(f"{shown(root)}: no such file or directory; check the path")
    return files


def shown(path: Path | str) -> str:
    """A path as one printable line: control characters and undecodable bytes escaped."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _walk(root: Path) -> list[tuple[str, Kind]]:
    def fail(e: OSError) -> None:
        raise _unreadable(Path(e.filename or root), e)

    found: list[tuple[str, Kind]] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=fail):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(filenames):
            kind = kind_of(name)
            full = here / name
            if kind is not None and not full.is_symlink() and full.is_file():
                found.append((_utf8_path(full.relative_to(root).as_posix()), kind))
    found.sort()
    return found


def _utf8_path(path: str) -> str:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as e:
        raise WorkspaceError(
            f"{shown(path)}: the file name is not UTF-8; rename the file or leave it out"
        ) from e
    return path


def _unreadable(path: Path, e: OSError) -> WorkspaceError:
    return WorkspaceError(
        f"{shown(path)}: cannot be read ({e.strerror}); check the path and its permissions"
    )


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _unreadable(path, e) from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorkspaceError(
            f"{shown(path)}: not UTF-8 text (invalid byte at offset {e.start}); "
            "convert it to UTF-8 or leave it out"
        ) from e
