"""Reading and browsing the indexed docs: a file's lines at an indexed commit (docs_read), the docs
as a tree of files and headings (docs_outline), and the path filter of docs_search.

Constraints:
- Only what was indexed can be read: every text comes from the store's copy of the ref's files,
  never from the repository or the disk, so a server with only the store (an HTTP replica, a
  directory changed since it was indexed) answers exactly as one beside the repository, and a
  path cannot name anything that was not indexed.
- A path the model can fix (not a string, empty, absolute, with `..`, a NUL byte, over
  MAX_PATH_BYTES) is refused with the rule; a path that is not an indexed file is refused with
  the closest indexed paths. Line numbers are refused with their bound, never clamped.
- An answer is bounded (READ_MAX_LINES lines and READ_MAX_BYTES bytes), cut at a line boundary,
  and says how to read on.
- Line numbers are the hits' own: the file's prepared lines (chunking.text_lines).
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docshelf.chunking.text import text_lines, utf8_size
from docshelf.chunking.toc import TocEntry, file_toc
from docshelf.config import MAX_DOC_BYTES
from docshelf.errors import ConfigError, WorkspaceError
from docshelf.workspace.docs import CONTROL_CHARS, shown
from docshelf.workspace.selection import compile_glob

if TYPE_CHECKING:
    from docshelf.rows import StoredFile

# What one docs_read or docs_outline answer holds at most. A hit is at most 2,000 bytes (about
# 50 lines of prose); 200 lines or 16,000 bytes (about 4,000 tokens, the size of eight hits) is
# a whole section or a long part of a page, enough to read around a hit, while ten such reads
# still take a small part of a model's context window. Longer ranges are cut at a line and the
# answer names the start_line to read on from.
READ_MAX_LINES = 200
READ_MAX_BYTES = 16_000

# The longest path a call may name, in UTF-8 bytes: Linux's PATH_MAX. An indexed path is
# shorter still (git and the file systems docshelf reads refuse longer ones).
MAX_PATH_BYTES = 4096

# A line number's bound: a 1 MiB file (the largest docshelf indexes) has at most this many.
MAX_LINE_NUMBER = MAX_DOC_BYTES + 1

# How many indexed paths an unknown path's refusal names.
CLOSEST_PATHS = 5

# How many folders a cut outline names to narrow it with.
NARROWER_PATHS = 8

# How many characters of a commit id the answers show (search.SHORT_REF).
SHORT_REF = 12

_GLOB_CHARS = re.compile(r"[*?\[]")


def check_path(value: object, argument: str = "path") -> str:
    """A path as the hits show it (relative to the repository, `/` between folders), with a
    leading `./` taken off.

    Raises:
        ConfigError: not a string, empty, absolute, with a `..` part, a NUL or another control
            character, not valid Unicode, or longer than MAX_PATH_BYTES.
    """
    rule = (
        f"{argument} must be a path relative to the repository, as the hits show it "
        "(docs/runbooks/payments.md)"
    )
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{rule}; got {_shown_value(value)}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ConfigError(f"{rule}; it holds an unpaired surrogate, not valid Unicode") from None
    if size > MAX_PATH_BYTES:
        raise ConfigError(f"{rule}, at most {MAX_PATH_BYTES} bytes; got {size} bytes")
    if "\x00" in value or CONTROL_CHARS.search(value):
        raise ConfigError(f"{rule}; it holds a NUL or control character")
    path = value
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:[\\/]", path):
        raise ConfigError(f"{rule}, not an absolute path; got {shown(value)!r}")
    if any(part == ".." for part in re.split(r"[\\/]", path)):
        raise ConfigError(f"{rule}, without '..'; got {_clip(value)!r}")
    if not path:
        raise ConfigError(f"{rule}; got {_clip(value)!r}")
    return path


def check_line(value: object, argument: str) -> int | None:
    """A line number: None, or a whole number from 1 to MAX_LINE_NUMBER (12.0 counts; 12.5,
    "12", true do not).

    Raises:
        ConfigError: anything else, with the bound.
    """
    if value is None:
        return None
    bound = f"{argument} must be a whole number from 1 to {MAX_LINE_NUMBER}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{bound}; got {_shown_value(value)}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ConfigError(f"{bound}; got {value!r}")
    number = int(value)
    if not 1 <= number <= MAX_LINE_NUMBER:
        shown_number = str(number) if abs(number) < 10**40 else "a number of more than 40 digits"
        raise ConfigError(f"{bound}; got {shown_number}")
    return number


@dataclass(frozen=True, slots=True)
class PathFilter:
    """docs_search's and docs_outline's `path`: a prefix (a folder or a file) or a glob."""

    text: str
    pattern: re.Pattern[str] | None

    def keeps(self, path: str) -> bool:
        if self.pattern is not None:
            return self.pattern.fullmatch(path) is not None
        prefix = self.text
        if prefix.endswith("/"):
            return path.startswith(prefix)
        return path == prefix or path.startswith(prefix + "/")


def check_path_filter(value: object) -> PathFilter | None:
    """None, or the path filter: a folder or file (`docs/runbooks/`, `docs/runbooks`) or a
    gitignore-style glob (`**/payments.md`, `docs/*.md`).

    Raises:
        ConfigError: as check_path, or a glob that does not compile.
    """
    if value is None:
        return None
    text = check_path(value)
    if not _GLOB_CHARS.search(text):
        return PathFilter(text, None)
    try:
        return PathFilter(text, compile_glob(text, "path"))
    except WorkspaceError as e:
        raise ConfigError(str(e)) from None


def selected(files: Sequence[StoredFile], chosen: PathFilter | None) -> list[StoredFile]:
    """The files a path filter keeps (all without one)."""
    if chosen is None:
        return list(files)
    return [f for f in files if chosen.keeps(f.path)]


def no_such_path(path: str, files: Sequence[StoredFile], where: str, *, prefix: bool) -> str:
    """The refusal of a path that names no indexed file (or, with `prefix`, a filter that keeps
    none) of `where` (the workspace at its commit): what exists instead."""
    paths = [f.path for f in files]
    if not paths:
        return f"{where} holds no indexed docs"
    closest = difflib.get_close_matches(path, paths, n=CLOSEST_PATHS, cutoff=0.4)
    if prefix:
        folders = ", ".join(f"{p} ({_files(n)})" for p, n in top_folders(files)[:NARROWER_PATHS])
        alike = f"; the closest files are {', '.join(closest)}" if closest else ""
        return (
            f"no indexed doc of {where} is under or matches {_clip(path)!r}. Its docs are in "
            f"{folders}{alike}. Call docs_outline to see them all."
        )
    if not closest:  # nothing alike: the files of the nearest folder that exists
        folder = path.rstrip("/")
        while folder and not any(p.startswith(folder + "/") for p in paths):
            folder = folder.rpartition("/")[0]
        closest = [p for p in paths if p.startswith(folder + "/")] if folder else paths
        closest = closest[:CLOSEST_PATHS]
    return (
        f"{_clip(path)!r} is not an indexed doc of {where}. Only the indexed docs can be read; "
        f"the closest are: {', '.join(closest)}. Call docs_outline to see them all."
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
            f"end_line ({end_line}) must not be before start_line ({first}); to read one line, "
            "give the same number twice"
        )
    if total == 0:
        if first > 1:
            raise ConfigError(f"start_line must be 1: {path} is empty")
        return 1, 0, 0, [], None, None
    if first > total:
        raise ConfigError(
            f"start_line must be from 1 to {total}: {path} has {total} line"
            f"{'s' if total != 1 else ''}"
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


def render_reading(reading: Reading, label: str | None = None) -> str:
    """A reading as the tool's text: a header naming the path, range, total lines and commit,
    the numbered lines, then how to read on."""
    out = []
    if reading.note:
        out += [reading.note, ""]
    where = f" of workspace {label}" if label else ""
    if reading.total_lines == 0:
        header = f"{reading.path}{where} at commit {reading.ref[:SHORT_REF]} is empty (0 lines)"
    else:
        header = (
            f"{reading.path}{where}, lines {reading.start_line}-{reading.end_line} of "
            f"{reading.total_lines}, at commit {reading.ref[:SHORT_REF]}"
        )
    out.append(header)
    width = len(str(reading.end_line))
    for number, line in enumerate(reading.lines, start=reading.start_line):
        out.append(f"{number:>{width}}  {line}")
    if reading.next_start_line is not None:
        why = f"cut at {reading.cut}; " if reading.cut else ""
        out += [
            "",
            f"[{why}the file goes on: read on with start_line={reading.next_start_line}]",
        ]
    return "\n".join(out) + "\n"


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
        rendered = _outline_file_lines(entry)
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
        line = _heading_line(heading)
        if len(kept) + 2 > READ_MAX_LINES or size + utf8_size(line) + 1 > READ_MAX_BYTES:
            break
        kept.append(heading)
        size += utf8_size(line) + 1
    return kept


def narrower_paths(files: Sequence[StoredFile], path: str | None) -> list[tuple[str, int]]:
    """The folders below `path` (or the top) with how many files each holds, the largest first:
    what to name as `path` to see less. A level where one folder holds every file is stepped
    through (docs/ alone says nothing)."""
    base = "" if path is None or _GLOB_CHARS.search(path) else path.rstrip("/") + "/"
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


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def top_folders(files: Sequence[StoredFile]) -> list[tuple[str, int]]:
    """The top-level folders (and `.` for the files at the top) with their file counts."""
    counts: Counter[str] = Counter()
    for file in files:
        folder, slash, _ = file.path.partition("/")
        counts[folder + "/" if slash else "."] += 1
    return sorted(counts.items())


def render_outline(outline: DocsOutline, label: str | None = None) -> str:
    """An outline as the tool's text: a header, each file with its line count, each heading
    indented by depth with its line range, then how to see the rest when it was cut."""
    out = []
    if outline.note:
        out += [outline.note, ""]
    where = f" of workspace {label}" if label else ""
    under = f" under {outline.path}" if outline.path else ""
    shown_count = len(outline.files)
    count = (
        f"{outline.total_files} file{'s' if outline.total_files != 1 else ''}"
        if shown_count == outline.total_files
        else f"{shown_count} of {outline.total_files} files"
    )
    out.append(f"The docs{where}{under} at commit {outline.ref[:SHORT_REF]}: {count}")
    for file in outline.files:
        out.extend(_outline_file_lines(file))
    if outline.cut or shown_count < outline.total_files:
        out.append("")
        cut = f"[cut at {READ_MAX_LINES} lines or {READ_MAX_BYTES} bytes"
        if outline.narrower:
            named = ", ".join(f"path={p} ({_files(n)})" for p, n in outline.narrower)
            out.append(f"{cut}; see less at once with {named}]")
        elif shown_count == 1 and outline.total_files == 1:
            last = outline.files[0].headings[-1].end_line if outline.files[0].headings else 0
            out.append(
                f"{cut}: the first headings of {outline.files[0].path} only; read on from line "
                f"{last + 1} with docs_read]"
            )
        else:
            out.append(f"{cut}; name one file as path to see all its headings]")
    return "\n".join(out) + "\n"


def _outline_file_lines(file: OutlineFile) -> list[str]:
    lines = [f"{file.path} ({file.lines} line{'s' if file.lines != 1 else ''})"]
    lines.extend(_heading_line(h) for h in file.headings)
    return lines


def _heading_line(heading: TocEntry) -> str:
    indent = "  " * heading.depth
    return f"{indent}{heading.start_line}-{heading.end_line} {heading.title or '(untitled)'}"


@dataclass(frozen=True, slots=True)
class WorkspaceOverview:
    workspace: str
    ref: str | None
    files: int
    folders: list[tuple[str, int]]


def render_overview(overviews: Sequence[WorkspaceOverview]) -> str:
    """Several workspaces at a glance: each with its commit and its top-level folders."""
    out = [f"{len(overviews)} workspaces; name one as workspace to see its docs:"]
    for view in overviews:
        if view.ref is None:
            out += ["", f"{view.workspace}: nothing indexed yet"]
            continue
        count = f"{view.files} file{'s' if view.files != 1 else ''}"
        out += ["", f"{view.workspace} at commit {view.ref[:SHORT_REF]}: {count}"]
        out += [f"  {folder} ({n} file{'s' if n != 1 else ''})" for folder, n in view.folders]
    return "\n".join(out) + "\n"


def reading_data(reading: Reading) -> dict[str, Any]:
    """A reading as JSON (docs_read's structured content, `docshelf read --json`)."""
    return {
        "workspace": reading.workspace,
        "ref": reading.ref,
        "path": reading.path,
        "start_line": reading.start_line,
        "end_line": reading.end_line,
        "total_lines": reading.total_lines,
        "text": "\n".join(reading.lines),
        "next_start_line": reading.next_start_line,
        "note": reading.note,
    }


def outline_data(outline: DocsOutline | Sequence[WorkspaceOverview]) -> dict[str, Any]:
    """An outline (or the workspaces' overview) as JSON (docs_outline's structured content,
    `docshelf outline --json`)."""
    if not isinstance(outline, DocsOutline):
        return {
            "workspaces": [
                {
                    "workspace": view.workspace,
                    "ref": view.ref,
                    "files": view.files,
                    "folders": [{"path": p, "files": n} for p, n in view.folders],
                }
                for view in outline
            ]
        }
    return {
        "workspace": outline.workspace,
        "ref": outline.ref,
        "path": outline.path,
        "total_files": outline.total_files,
        "files": [
            {"path": f.path, "lines": f.lines, "headings": [h._asdict() for h in f.headings]}
            for f in outline.files
        ],
        "narrower": [{"path": p, "files": n} for p, n in outline.narrower],
        "note": outline.note,
        "cut": outline.cut,
    }


def _clip(text: str) -> str:
    text = shown(text)
    return text if len(text) <= 80 else text[:77] + "..."


def _shown_value(value: object) -> str:
    if isinstance(value, str):
        return repr(_clip(value))
    try:
        text = repr(value)
    except ValueError:
        return f"a {type(value).__name__}"
    return text if len(text) <= 40 else text[:37] + "..."
