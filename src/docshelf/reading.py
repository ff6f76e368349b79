"""Reading and browsing the indexed docs: a file's lines at an indexed commit (docs_read), and the
docs as a tree of files and headings (docs_outline). How either is written out is present.py's.

Constraints:
- Only what was indexed can be read: every text comes from the store's copy of the ref's files,
  never from the repository or the disk, so a server with only the store (an HTTP replica, a
  directory changed since it was indexed) answers exactly as one beside the repository, and a
  path cannot name anything that was not indexed.
- A path is checked by paths.py; a path that is not an indexed file is refused with the closest
  indexed paths. Line numbers are refused with their bound, never clamped.
- An answer is bounded (READ_MAX_LINES lines and READ_MAX_BYTES bytes), cut at a line boundary,
  and says how to read on.
- Line numbers are the hits' own: the file's prepared lines (chunking.text_lines).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from docshelf.chunking.text import text_lines, utf8_size
from docshelf.chunking.toc import TocEntry, file_toc
from docshelf.config import MAX_DOC_BYTES, READ_MAX_BYTES, READ_MAX_LINES
from docshelf.errors import ConfigError, term
from docshelf.paths import GLOB_CHARS
from docshelf.shown import clip, plural, shown_int, shown_value

if TYPE_CHECKING:
    from docshelf.rows import StoredFile


# A line number's bound: a 1 MiB file (the largest docshelf indexes) has at most this many.
MAX_LINE_NUMBER = MAX_DOC_BYTES + 1

# How many indexed paths an unknown path's refusal names.
CLOSEST_PATHS = 5

# How many folders a cut outline names to narrow it with.
NARROWER_PATHS = 8


def check_line(value: object, argument: str) -> int | None:
    """A line number: None, or a whole number from 1 to MAX_LINE_NUMBER (12.0 counts; 12.5,
    "12", true do not); `argument` is its term (errors.TERMS).

    Raises:
        ConfigError: anything else, with the bound.
    """
    if value is None:
        return None
    return _from_one(value, term(argument), MAX_LINE_NUMBER)


def _from_one(value: object, name: str, high: int) -> int:
    """`value` as a whole number from 1 to `high` (12.0 counts; 12.5, "12", true do not).

    Raises:
        ConfigError: anything else, with the bound.
    """
    bound = f"{name} must be a whole number from 1 to {high}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{bound}; got {shown_value(value)}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ConfigError(f"{bound}; got {value!r}")
    number = int(value)
    if not 1 <= number <= high:
        raise ConfigError(f"{bound}; got {shown_int(number)}")
    return number


def no_such_path(path: str, files: Sequence[StoredFile], where: str, *, prefix: bool) -> str:
    """The refusal of a path that names no indexed file (or, with `prefix`, a filter that keeps
    none) of `where` (the workspace at its commit): what exists instead."""
    paths = [f.path for f in files]
    if not paths:
        return f"{where} holds no indexed docs"
    closest = difflib.get_close_matches(path, paths, n=CLOSEST_PATHS, cutoff=0.4)
    if prefix:
        folders = ", ".join(
            f"{p} ({plural(n, 'file')})" for p, n in top_folders(files)[:NARROWER_PATHS]
        )
        alike = f"; the closest files are {', '.join(closest)}" if closest else ""
        return (
            f"no indexed doc of {where} is under or matches {clip(path)!r}. Its docs are in "
            f"{folders}{alike}. Call {term('docs_outline')} to see them all."
        )
    if not closest:  # nothing alike: the files of the nearest folder that exists
        folder = path.rstrip("/")
        while folder and not any(p.startswith(folder + "/") for p in paths):
            folder = folder.rpartition("/")[0]
        closest = [p for p in paths if p.startswith(folder + "/")] if folder else paths
        closest = closest[:CLOSEST_PATHS]
    return (
        f"{clip(path)!r} is not an indexed doc of {where}. Only the indexed docs can be read; "
        f"the closest are: {', '.join(closest)}. Call {term('docs_outline')} to see them all."
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """Lines of one indexed file at one commit: `lines` are lines start_line..end_line of
    total_lines; next_start_line is where to read on from when the range was cut (or the file
    goes on past it); `note` says why the commit is not the one asked for."""

    workspace: str
    ref: str
    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[str]
    next_start_line: int | None
    note: str | None = None
    cut: str | None = None


def read_lines(
    text: str, start_line: int | None, end_line: int | None, path: str
) -> tuple[int, int, int, list[str], int | None, str | None]:
    """Lines start_line..end_line of `text` (from the start, READ_MAX_LINES at most without an
    end), bounded by READ_MAX_LINES and READ_MAX_BYTES: (first, last, total, lines, where to
    read on from or None, why it was cut or None).

    Raises:
        ConfigError: start_line past the file's end, or end_line before start_line.
    """
    lines = text_lines(text)
    total = len(lines)
    first = start_line or 1
    if end_line is not None and end_line < first:
        raise ConfigError(
            f"{term('end_line')} ({end_line}) must not be before {term('start_line')} ({first}); "
            "to read one line, give the same number twice"
        )
    if total == 0:
        if first > 1:
            raise ConfigError(f"{term('start_line')} must be 1: {path} is empty")
        return 1, 0, 0, [], None, None
    if first > total:
        raise ConfigError(
            f"{term('start_line')} must be from 1 to {total}: {path} has {plural(total, 'line')}"
        )
    wanted_last = min(end_line or total, total)
    last = min(wanted_last, first + READ_MAX_LINES - 1)
    cut = None if last == wanted_last else f"{READ_MAX_LINES} lines"
    shown_lines: list[str] = []
    size = 0
    for number in range(first, last + 1):
        line = lines[number - 1]
        line_size = utf8_size(line) + 1
        if size + line_size > READ_MAX_BYTES:
            if not shown_lines:  # one line over the bound: shown cut, say so
                shown_lines.append(_cut_line(line, READ_MAX_BYTES - 1))
                last, cut = number, f"{READ_MAX_BYTES} bytes (line {number} is cut short)"
            else:
                last, cut = number - 1, f"{READ_MAX_BYTES} bytes"
            break
        shown_lines.append(line)
        size += line_size
    next_start = last + 1 if last < total and (cut is not None or end_line is None) else None
    return first, last, total, shown_lines, next_start, cut


def _cut_line(line: str, budget: int) -> str:
    data = line.encode("utf-8", "surrogatepass")[:budget]
    return data.decode("utf-8", "ignore")


@dataclass(frozen=True, slots=True)
class OutlineFile:
    path: str
    lines: int
    headings: list[TocEntry]


@dataclass(frozen=True, slots=True)
class DocsOutline:
    """Files of one commit with their headings: `files` as far as the bound allowed, of
    `total_files` under `path`; `narrower` the folders to ask for when it was cut."""

    workspace: str
    ref: str
    path: str | None
    files: list[OutlineFile]
    total_files: int
    narrower: list[tuple[str, int]] = field(default_factory=list)
    note: str | None = None
    cut: bool = False


def outline_files(
    texts: Sequence[tuple[StoredFile, str | None]], kinds: Sequence[str]
) -> tuple[list[OutlineFile], bool]:
    """Files with their headings, as many as fit READ_MAX_LINES and READ_MAX_BYTES of the
    rendered outline (at least one file's name); and whether all fitted."""
    out: list[OutlineFile] = []
    lines = size = 0
    for (file, text), kind in zip(texts, kinds, strict=True):
        headings = file_toc(text, kind) if text is not None else []
        entry = OutlineFile(file.path, file.lines, headings)
        rendered = outline_file_lines(entry)
        cost = sum(utf8_size(line) + 1 for line in rendered)
        if out and (lines + len(rendered) > READ_MAX_LINES or size + cost > READ_MAX_BYTES):
            return out, False
        if not out and (len(rendered) > READ_MAX_LINES or cost > READ_MAX_BYTES):
            headings = _fitting(entry)
            out.append(OutlineFile(file.path, file.lines, headings))
            return out, len(headings) == len(entry.headings) and len(texts) == 1
        out.append(entry)
        lines += len(rendered)
        size += cost
    return out, True


def _fitting(entry: OutlineFile) -> list[TocEntry]:
    kept: list[TocEntry] = []
    size = utf8_size(entry.path) + 20
    for heading in entry.headings:
        line = heading_line(heading)
        if len(kept) + 2 > READ_MAX_LINES or size + utf8_size(line) + 1 > READ_MAX_BYTES:
            break
        kept.append(heading)
        size += utf8_size(line) + 1
    return kept


def narrower_paths(files: Sequence[StoredFile], path: str | None) -> list[tuple[str, int]]:
    """The folders below `path` (or the top) with how many files each holds, the largest first:
    what to name as `path` to see less. A level where one folder holds every file is stepped
    through (docs/ alone says nothing)."""
    base = "" if path is None or GLOB_CHARS.search(path) else path.rstrip("/") + "/"
    if base and not any(f.path.startswith(base) for f in files):
        base = ""  # a file named as path, or a glob: folders from the top
    while True:
        counts: Counter[str] = Counter()
        for file in files:
            if not file.path.startswith(base):
                continue
            folder, slash, _ = file.path[len(base) :].partition("/")
            if slash:
                counts[base + folder + "/"] += 1
        if len(counts) == 1 and next(iter(counts.values())) == len(files):
            base = next(iter(counts))  # one folder holds every file: one level down
            continue
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:NARROWER_PATHS]


def top_folders(files: Sequence[StoredFile]) -> list[tuple[str, int]]:
    """The top-level folders (and `.` for the files at the top) with their file counts."""
    counts: Counter[str] = Counter()
    for file in files:
        folder, slash, _ = file.path.partition("/")
        counts[folder + "/" if slash else "."] += 1
    return sorted(counts.items())


def outline_file_lines(file: OutlineFile) -> list[str]:
    lines = [f"{file.path} ({file.lines} line{'s' if file.lines != 1 else ''})"]
    lines.extend(heading_line(h) for h in file.headings)
    return lines


def heading_line(heading: TocEntry) -> str:
    indent = "  " * heading.depth
    return f"{indent}{heading.start_line}-{heading.end_line} {heading.title or '(untitled)'}"


@dataclass(frozen=True, slots=True)
class WorkspaceOverview:
    """A workspace at a glance: its commit (None: nothing indexed yet), how many docs it holds,
    its top-level folders with their counts, and the kinds of its docs (markdown, rst, ...)."""

    workspace: str
    ref: str | None
    files: int
    folders: list[tuple[str, int]]
    kinds: tuple[str, ...] = ()


# The workspaces one page of the overview shows: a thousand workspaces are twenty pages.
OVERVIEW_PAGE = 50


@dataclass(frozen=True, slots=True)
class WorkspacesPage:
    """One page of the served workspaces at a glance (page 1..pages of `total` workspaces,
    OVERVIEW_PAGE a page)."""

    views: list[WorkspaceOverview]
    page: int
    pages: int
    total: int


def check_page(value: object, pages: int) -> int:
    """A page of the overview: None (page 1), or a whole number from 1 to `pages`.

    Raises:
        ConfigError: anything else, with the bound.
    """
    return 1 if value is None else _from_one(value, term("page"), pages)
