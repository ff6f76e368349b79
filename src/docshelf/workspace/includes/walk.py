"""`resolve_all`: the includes of a site's pages, followed transitively, each included file
listed once with the pages it appears in, and every include not followed a Problem.

Constraints:
- Pure: existence and symbolic links come from `listing`, text from `read`, so the same answer
  holds for a git tree and a directory.
- A path through a symbolic link is refused, never followed. Depth is bounded
  (MAX_INCLUDE_DEPTH); a cycle, a missing target, an unreadable file or a refused target is a
  Problem, and nothing here raises on what a file holds.
- Each file is scanned once per way it is read (Sphinx: once per page that includes it); one
  included as code, or of a kind docshelf does not read, is listed and not scanned.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from docshelf.chunking import Kind, kind_of
from docshelf.workspace.includes.find import find_includes
from docshelf.workspace.includes.model import (
    CYCLE,
    MISSING,
    SYMLINK,
    TOO_DEEP,
    UNREADABLE,
    Include,
    Syntax,
)
from docshelf.workspace.includes.paths import CONTROL_CHARACTER

# The sample sites nest includes at most 2 deep (mdBook: src/intro.md -> src/algorithms.md ->
# src/links.md); 8 leaves room for deeper sites and still stops a chain that never repeats a
# file (so is no cycle) but never ends either.
MAX_INCLUDE_DEPTH = 8

# A problem quotes a target up to this many characters: a reason is one line of the skipped list.
QUOTED_CHARS = 200

# A `listing` entry: a regular file, or a symbolic link (never followed).
Entry = Literal["file", "symlink"]


class Problem(NamedTuple):
    """An include that is not followed: the including file, and why (naming the line)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Included:
    """A file that pages include: indexed once, at its own path, naming where it appears.

    `pages` are the starting pages it appears in (through any chain of includes), `by` the
    files whose directives name it; both in the order they were found. `as_code` is True when
    every include of it takes it as code."""

    path: str
    pages: tuple[str, ...]
    by: tuple[str, ...]
    as_code: bool


@dataclass(frozen=True, slots=True)
class Resolution:
    """What `resolve_all` found: the included files, in the order found, and the problems."""

    included: tuple[Included, ...]
    problems: tuple[Problem, ...]


def resolve_all(
    pages: Iterable[str],
    listing: Mapping[str, Entry],
    read: Callable[[str], str | None],
    bases: Sequence[str] = (),
    *,
    syntaxes: Collection[Syntax] | None = None,
    attributes: Mapping[str, str] | None = None,
    max_depth: int = MAX_INCLUDE_DEPTH,
) -> Resolution:
    """Follow the includes of `pages` (repo-relative, in order) transitively.

    `listing` maps each path of the repository to what it is; a target that is not listed as a
    file, or lies under a listed symbolic link, is a problem. `read` gives a file's text (None
    when it cannot be read). Included files whose kind docshelf reads are searched for includes
    in turn, unless included as code; other included files (code, data) are listed, not read.
    An included file may also be one of `pages`: the caller decides what it indexes twice."""
    walk = _Walk(listing, read, bases, syntaxes, attributes, max_depth)
    for page in pages:
        kind = kind_of(page)
        if kind is None:
            continue
        text = read(page)
        if text is not None:
            walk.page(page, kind, text)
    included = tuple(
        Included(path, tuple(rec.pages), tuple(rec.by), rec.as_code)
        for path, rec in walk.included.items()
    )
    return Resolution(included, tuple(walk.problems))


@dataclass(slots=True)
class _Record:
    pages: list[str] = field(default_factory=list)
    by: list[str] = field(default_factory=list)
    as_code: bool = True


class _Walk:
    def __init__(
        self,
        listing: Mapping[str, Entry],
        read: Callable[[str], str | None],
        bases: Sequence[str],
        syntaxes: Collection[Syntax] | None,
        attributes: Mapping[str, str] | None,
        max_depth: int,
    ) -> None:
        self.listing = listing
        self.read = read
        self.bases = bases
        self.syntaxes = syntaxes
        self.attributes = attributes
        self.max_depth = max_depth
        self.included: dict[str, _Record] = {}
        self.problems: dict[Problem, None] = {}
        # The includes of a file, by how it was read (Sphinx: for which page); None: unreadable.
        self.scanned: dict[tuple[str, Kind, str | None], list[Include] | None] = {}

    def page(self, page: str, kind: Kind, text: str) -> None:
        self._visit(page, kind, [page], page, set(), text)

    def _includes(self, path: str, kind: Kind, page: str, text: str | None) -> list[Include] | None:
        document = page if kind in ("rst", "text") else None
        key = (path, kind, document)
        if key not in self.scanned:
            if text is None:
                text = self.read(path)
            self.scanned[key] = (
                None
                if text is None
                else find_includes(
                    path,
                    text,
                    kind,
                    self.bases,
                    paths=self.listing,
                    syntaxes=self.syntaxes,
                    attributes=self.attributes,
                    document=document,
                )
            )
        return self.scanned[key]

    def _visit(
        self, path: str, kind: Kind, stack: list[str], page: str, seen: set[str], text: str | None
    ) -> None:
        includes = self._includes(path, kind, page, text)
        if includes is None:
            self._problem(path, UNREADABLE)
            return
        for include in includes:
            where = f"include at line {include.line} ({_quoted(include.raw)})"
            target = include.target
            if target is None:
                self._problem(path, f"{where}: {include.problem}")
                continue
            if target in stack:
                loop = " -> ".join([*stack[stack.index(target) :], target])
                self._problem(path, f"{where}: {CYCLE.format(loop)}")
                continue
            link = _symlink_on(target, self.listing)
            if link is not None:
                self._problem(path, f"{where}: {SYMLINK.format(link)}")
                continue
            if self.listing.get(target) != "file":
                self._problem(path, f"{where}: {MISSING}")
                continue
            if len(stack) > self.max_depth:
                self._problem(path, f"{where}: {TOO_DEEP.format(self.max_depth)}")
                continue
            self._record(target, page, path, include.as_code)
            child = _included_kind(target, kind)
            if include.as_code or child is None or target in seen:
                continue
            seen.add(target)
            self._visit(target, child, [*stack, target], page, seen, None)

    def _record(self, target: str, page: str, by: str, as_code: bool) -> None:
        record = self.included.setdefault(target, _Record())
        if page not in record.pages:
            record.pages.append(page)
        if by not in record.by:
            record.by.append(by)
        record.as_code = record.as_code and as_code

    def _problem(self, path: str, reason: str) -> None:
        self.problems.setdefault(Problem(path, reason), None)


def _quoted(raw: str) -> str:
    """A target as a problem quotes it: one line, and short."""
    raw = CONTROL_CHARACTER.sub("?", raw)
    return raw if len(raw) <= QUOTED_CHARS else raw[: QUOTED_CHARS - 3] + "..."


def _symlink_on(target: str, listing: Mapping[str, Entry]) -> str | None:
    """The symbolic link `target` is or lies under, if any."""
    cut = len(target)
    while cut > 0:
        prefix = target[:cut]
        if listing.get(prefix) == "symlink":
            return prefix
        cut = target.rfind("/", 0, cut)
    return None


def _included_kind(target: str, includer: Kind) -> Kind | None:
    """How an included file is read: by its own kind, a .txt as its includer's markup (Sphinx
    includes .txt as reStructuredText); None for code and data, which hold no includes."""
    kind = kind_of(target)
    if kind == "text":
        return includer
    return kind
