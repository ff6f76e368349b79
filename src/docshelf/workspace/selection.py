"""Which files of a workspace are its documentation: the docs roots (named with --docs, or found),
then --include and --exclude globs.

Constraints:
- Found roots are the well-known documentation folders (DOC_ROOT_CANDIDATES) that hold a
  documentation file; where none does, the whole tree outside vendored and generated folders
  (NOT_DOCS_DIRS, hidden folders), its markup files only (a requirements.txt is no documentation).
- Globs are gitignore-style and match the path relative to the workspace root: `*` and `?` stay
  inside one path segment, `**` spans any number, a pattern without a slash matches a name at any
  depth, a pattern matching a folder matches everything under it. A file is kept when no include
  is given or one matches, and no exclude matches.
- A selection is part of a workspace's configuration: its `key` is stored with the workspace, so
  the next sync (serve --sync-interval, the next index) reads the same files without re-typing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from docshelf.config import DOC_ROOT_CANDIDATES, DOCS_READING, MARKUP_SUFFIXES, NOT_DOCS_DIRS
from docshelf.errors import WorkspaceError

# The roots a discovery that found no documentation folder reads: the whole tree.
WHOLE_TREE = (".",)


@dataclass(frozen=True, slots=True)
class Selection:
    """The documentation of a workspace: its roots (None: found at each commit), then globs."""

    docs: tuple[str, ...] | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _filter: _Globs = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_filter", _Globs(self.include, self.exclude))

    @property
    def key(self) -> str:
        """The selection as stored with the workspace: JSON, the same for the same choice, with
        the version of how docs are read (config.DOCS_READING): another one reads a ref again."""
        return json.dumps(
            {
                "docs": self.docs,
                "include": self.include,
                "exclude": self.exclude,
                "reading": DOCS_READING,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_key(cls, key: str) -> Selection:
        """The selection a `key` stored. Raises WorkspaceError on one this version cannot read."""
        try:
            data = json.loads(key)
            docs = data["docs"]
            return cls(
                None if docs is None else tuple(str(d) for d in docs),
                tuple(str(g) for g in data["include"]),
                tuple(str(g) for g in data["exclude"]),
            )
        except (ValueError, KeyError, TypeError) as e:
            raise WorkspaceError(
                "the workspace's stored docs selection cannot be read; index it again with "
                "--docs, --include or --exclude to store a new one"
            ) from e

    def keeps(self, path: str) -> bool:
        """Whether the globs keep `path` (relative to the workspace root)."""
        return self._filter.keeps(path)

    def describe(self) -> str:
        """The globs as the command line gives them: "--include A --exclude B", or ""."""
        parts = [f"--include {g}" for g in self.include] + [f"--exclude {g}" for g in self.exclude]
        return " ".join(parts)


class _Globs:
    def __init__(self, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.include = [compile_glob(g) for g in include]
        self.exclude = [compile_glob(g) for g in exclude]

    def keeps(self, path: str) -> bool:
        if not self.include and not self.exclude:
            return True
        prefixes = _prefixes(path)
        if self.include and not any(p.fullmatch(x) for p in self.include for x in prefixes):
            return False
        return not any(p.fullmatch(x) for p in self.exclude for x in prefixes)


def _prefixes(path: str) -> list[str]:
    """The path and each folder above it: a pattern matching a folder matches what it holds."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def checked_globs(globs: Iterable[str], option: str) -> tuple[str, ...]:
    """Globs as given, each compiled once to refuse a bad one early.

    Raises:
        WorkspaceError: a glob is empty, holds a NUL or a newline, or has an unclosed [.
    """
    kept = []
    for glob in globs:
        if not glob.strip() or "\0" in glob or "\n" in glob:
            raise WorkspaceError(
                f"{option} {glob!r} is not a glob; give one such as '**/i18n/**' or 'CHANGELOG*'"
            )
        compile_glob(glob, option)
        kept.append(glob)
    return tuple(kept)


def compile_glob(glob: str, option: str = "--include/--exclude") -> re.Pattern[str]:
    """A gitignore-style glob as a pattern over whole relative paths."""
    pattern = glob.strip()
    anchored = pattern.startswith("/")
    pattern = pattern.strip("/")
    if pattern.startswith("./"):
        pattern, anchored = pattern[2:], True
    if not anchored and "/" not in pattern:
        pattern = "**/" + pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if close < 0:
                raise WorkspaceError(f"{option} {glob!r}: a [ is not closed; escape it as [[]")
            body = pattern[i + 1 : close]
            if body.startswith("!"):
                body = "^" + body[1:]
            # A [ inside the set is a plain character (the [[] escape); escaped for re, which
            # would read it as the start of a nested set.
            body = body.replace("\\", "\\\\").replace("[", "\\[").replace("/", "")
            out.append("[" + body + "]")
            i = close + 1
        elif ch == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def in_vendored(path: str) -> bool:
    """Whether `path` lies in a vendored, generated or hidden folder (node_modules, build, .git)."""
    folders = path.split("/")[:-1]
    return any(f in NOT_DOCS_DIRS or f.startswith(".") for f in folders)


def discover(paths: Iterable[str]) -> tuple[str, ...]:
    """The docs roots of a tree, from the paths of its documentation files: every well-known docs
    folder that holds one (outside vendored folders), else the whole tree."""
    found: set[str] = set()
    candidates = set(DOC_ROOT_CANDIDATES)
    for path in paths:
        if in_vendored(path):
            continue
        parts = path.split("/")
        for i in range(1, len(parts)):
            root = "/".join(parts[:i])
            if root in candidates:
                found.add(root)
                break
    kept: list[str] = []
    for root in sorted(found):
        if not any(root.startswith(outer + "/") for outer in kept):
            kept.append(root)
    return tuple(kept) or WHOLE_TREE


def is_markup(path: str) -> bool:
    """Whether a file found in a whole-tree discovery is documentation: markup, not plain text
    (but for the top-level README, whatever its suffix)."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.endswith(MARKUP_SUFFIXES) or ("/" not in path and name.startswith("readme"))
