"""Targets as repo-relative paths: joining a written target to a folder, normalising it, and
refusing what names no file of this repository.

Constraints:
- Pure string work on '/'-separated paths: no I/O, nothing is looked up on a file system.
- Inside the repository only: a target that climbs above the top (`..`), an absolute file-system
  path, a URL or a control character is refused with its reason, never guessed at.
- Where several bases could hold a target, the first whose path is listed wins, else the first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from docshelf.workspace.includes.model import (
    ABSOLUTE,
    CONTROL,
    FOLDER,
    LEAVES_REPOSITORY,
    NO_SOURCE_DIR,
    URL,
)


@dataclass(frozen=True, slots=True)
class Site:
    """What a site tells every scanner: its include bases, its files, its attributes."""

    bases: tuple[str, ...]
    paths: Collection[str] | None
    attributes: dict[str, str]


class Resolved(NamedTuple):
    target: str | None
    problem: str


# A URL: a scheme with '//', a protocol-relative '//', or a scheme that names no local file.
_URL = re.compile(r"(?i)[a-z][a-z0-9+.\-]*+://|//|(?:https?|ftp|file|data|mailto|javascript):")
_DRIVE = re.compile(r"[A-Za-z]:(?:[\\/]|$)")
CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def is_url(target: str) -> bool:
    return _URL.match(target) is not None


def _refusal(target: str) -> str:
    """Why `target` (as written, relative to some folder) cannot name a file here, or ""."""
    if _URL.match(target):
        return URL
    # `~/` is the home folder to a shell; to a generator it would be a folder named "~". Either
    # way it is no documentation of this repository.
    if target.startswith(("/", "\\", "~/")) or target == "~" or _DRIVE.match(target):
        return ABSOLUTE
    if CONTROL_CHARACTER.search(target):
        return CONTROL
    return ""


def join(folder: str, target: str) -> Resolved:
    """`target` (relative) joined to the repo-relative `folder` ("" for the top), normalised."""
    target = target.strip()
    problem = _refusal(target)
    if problem:
        return Resolved(None, problem)
    parts = folder.split("/") if folder else []
    for segment in target.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                return Resolved(None, LEAVES_REPOSITORY)
            parts.pop()
        else:
            parts.append(segment)
    if not parts or target.endswith(("/", "/.", "/..")) or target in (".", ".."):
        return Resolved(None, FOLDER)
    return Resolved("/".join(parts), "")


def folder_of(path: str) -> str:
    """The folder of a repo-relative file path ("" at the top)."""
    cut = path.rfind("/")
    return path[:cut] if cut >= 0 else ""


def folders(bases: Sequence[str]) -> tuple[str, ...]:
    """The bases as repo-relative folders ("" for the top); one that leaves the tree is dropped."""
    found = []
    for written in bases:
        base = written.strip()
        if base in ("", ".", "./"):
            found.append("")
            continue
        joined = join("", base.rstrip("/"))
        if joined.target is not None:
            found.append(joined.target)
    return tuple(found)


def first(candidates: Sequence[Resolved], paths: Collection[str] | None) -> Resolved:
    """The first candidate naming a listed path, else the first candidate that is a path, else
    the first refusal."""
    usable = [c for c in candidates if c.target is not None]
    if paths is not None:
        for c in usable:
            if c.target in paths:
                return c
    if usable:
        return usable[0]
    return candidates[0] if candidates else Resolved(None, NO_SOURCE_DIR)
