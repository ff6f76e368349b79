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
        WorkspaceError: a path is missing, a directory holds no documentation, or a file cannot be
            read or is not UTF-8.
    """
    files: list[DocFile] = []
    for root in paths:
        if root.is_dir():
            found = _walk(root)
            if not found:
                suffixes = ", ".join(MARKDOWN_SUFFIXES + TEXT_SUFFIXES)
                raise WorkspaceError(
                    f"{root}: no documentation files ({suffixes}) below this directory; "
                    "name a directory that holds some, or the files themselves"
                )
            files.extend(DocFile(rel, _read(root / rel), kind) for rel, kind in found)
        elif root.exists():
            files.append(DocFile(root.as_posix(), _read(root), kind_of(root.name) or "markdown"))
        else:
            raise WorkspaceError(f"{root}: no such file or directory; check the path")
    return files


def _walk(root: Path) -> list[tuple[str, Kind]]:
    found: list[tuple[str, Kind]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(filenames):
            kind = kind_of(name)
            full = here / name
            if kind is not None and not full.is_symlink() and full.is_file():
                found.append((full.relative_to(root).as_posix(), kind))
    found.sort()
    return found


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise WorkspaceError(f"{path}: cannot be read ({e.strerror}); check its permissions") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorkspaceError(
            f"{path}: not UTF-8 text (invalid byte at offset {e.start}); "
            "convert it to UTF-8 or leave it out"
        ) from e
