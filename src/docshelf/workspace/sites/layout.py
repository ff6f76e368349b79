"""What every generator module shares: the tree of paths it looks at, the draft of a site it
answers with, the Site that finding it ends in, and path arithmetic that never leaves the tree.

Constraints:
- Pure: a Tree is built from the paths git lists, and nothing here touches a disk. Paths are
  repo-relative and '/'-separated; "." is the top of the tree.
- A joined path that leaves the tree (`../..` above the top, an absolute path) is None, never a
  path outside the repository.
- Globs are written in the syntax of docshelf.workspace.selection.compile_glob, anchored at the
  top of the tree, with a name's glob characters escaped.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from docshelf.config import DOC_SUFFIXES, NOT_DOCS_DIRS
from docshelf.errors import WorkspaceError
from docshelf.workspace.selection import compile_glob

T = TypeVar("T")

# Reads a config file's text at the commit; None when it cannot be read.
Read = Callable[[str], str | None]

# Folders whose configs are someone else's site: a generator's project template, an example or
# a sample shipped with the code, end-to-end fixtures. Read with NOT_DOCS_DIRS (node_modules,
# test, __tests__, ...), which hold vendored and test copies.
NOT_SITE_DIRS = frozenset(
    {
        "template",
        "templates",
        "example",
        "examples",
        "sample",
        "samples",
        "e2e",
        "__fixtures__",
        "fixture",
        "starter",
        "starters",
        "boilerplate",
        "scaffold",
        "scaffolds",
    }
)


@dataclass(frozen=True, slots=True)
class Site:
    """A docs site as its generator's config lays it out. Paths are repo-relative folders or
    files; globs are in selection.compile_glob's syntax."""

    generator: str  # "MkDocs", "Docusaurus", "Sphinx", "Hugo", "Antora", "mdBook", ...
    config: str  # the config that was read
    roots: tuple[str, ...]  # the current docs ("." is the whole tree)
    # What the site holds that is not current docs, to show the user: old versions, blogs,
    # translations, include-only folders, files the generator renders as no page (paths, globs).
    not_read: tuple[str, ...]
    # Globs of what is not read under the roots: not_read's, the config's own exclusions, the
    # generator's built-in ones, navigation files.
    exclude: tuple[str, ...]
    nav: tuple[str, ...]  # navigation files (SUMMARY.md, nav.adoc): not content
    # Where includes resolve that are not relative to the including file (snippets base_path,
    # Hugo's content folder, VitePress srcDir for '@/', Antora module folders, Jekyll _includes).
    include_bases: tuple[str, ...]
    language: str  # the default language, as the config writes it ("en" when it does not)
    note: str = ""  # why the config could not be read, and the layout read instead


@dataclass(slots=True)
class Draft:
    """What a generator module reads from one config, before the rules every site shares
    (translations, old versions, blogs) are applied. Paths are repo-relative."""

    generator: str
    config: str
    roots: list[str]
    # The page suffixes the generator renders: other documentation files under a root are not
    # pages of the site (Sphinx reads .rst, not the .txt files its pages include).
    suffixes: tuple[str, ...]
    not_read: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    translations: list[str] = field(default_factory=list)
    nav: list[str] = field(default_factory=list)
    include_bases: list[str] = field(default_factory=list)
    language: str = "en"
    note: str = ""


class Tree:
    """The paths of a tree at a commit, indexed for prefix and name lookups."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files = sorted({p.strip("/") for p in paths if p.strip("/")})
        self._file_set = set(self.files)
        dirs: set[str] = set()
        self._by_name: dict[str, list[str]] = {}
        for path in self.files:
            cut = path.rfind("/")
            self._by_name.setdefault(path[cut + 1 :], []).append(path)
            while cut > 0:
                folder = path[:cut]
                if folder in dirs:
                    break
                dirs.add(folder)
                cut = path.rfind("/", 0, cut)
        self.dirs = sorted(dirs)
        self._dir_set = dirs
        self._docs = [p for p in self.files if is_doc(p)]

    def is_file(self, path: str) -> bool:
        return path in self._file_set

    def is_dir(self, path: str) -> bool:
        return path == "." or path in self._dir_set

    def named(self, *names: str) -> list[str]:
        """The files with one of these names, anywhere, in path order."""
        return sorted(p for n in names for p in self._by_name.get(n, ()))

    def files_under(self, folder: str) -> list[str]:
        return _under(self.files, folder)

    def dirs_under(self, folder: str) -> list[str]:
        return _under(self.dirs, folder)

    def children(self, folder: str) -> tuple[list[str], list[str]]:
        """The names of the folders and the files directly in `folder`."""
        prefix = "" if folder == "." else folder + "/"
        dirs = [d[len(prefix) :] for d in self.dirs_under(folder) if "/" not in d[len(prefix) :]]
        files = [f[len(prefix) :] for f in self.files_under(folder) if "/" not in f[len(prefix) :]]
        return dirs, files

    def docs_under(self, folder: str) -> list[str]:
        """The documentation files (by suffix) at any depth under `folder`, or `folder` itself
        when it is one."""
        if self.is_file(folder):
            return [folder] if is_doc(folder) else []
        return _under(self._docs, folder)


def _under(items: Sequence[str], folder: str) -> list[str]:
    if folder == ".":
        return list(items)
    prefix = folder + "/"
    # "0" is the character after "/": the range holds exactly the paths starting with prefix.
    return list(items[bisect_left(items, prefix) : bisect_left(items, folder + "0")])


def is_doc(path: str) -> bool:
    return path.lower().endswith(DOC_SUFFIXES)


def parent(path: str) -> str:
    return posixpath.dirname(path) or "."


def join(base: str, relative: str) -> str | None:
    """`relative` resolved against the folder `base`, or None when it leaves the tree."""
    relative = relative.strip()
    if not relative or relative.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", relative):
        return None
    joined = posixpath.normpath(posixpath.join(base, relative))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies under it."""
    return folder in (".", path) or path.startswith(folder + "/")


def vendored(folder: str) -> bool:
    """Whether a config in `folder` belongs to vendored code, a test or a template, not to the
    repository's own site."""
    names = [] if folder == "." else folder.split("/")
    return any(n in NOT_DOCS_DIRS or n in NOT_SITE_DIRS or n.startswith(".") for n in names)


def glob(path: str) -> str:
    """A repo-relative path as a glob that matches it (and what it holds) at the top only."""
    escaped = re.sub(r"([*?\[\\])", r"\\\1", path)
    return escaped if "/" in escaped else "/" + escaped


def glob_under(base: str, pattern: str, *, gitignore: bool) -> str | None:
    """A config's glob, relative to the folder `base`, as a glob from the top of the tree;
    None when it cannot be written so (a negation, or one that leaves the tree). A gitignore
    pattern without a slash matches a name at any depth; other globs match from `base`."""
    pattern = pattern.strip()
    if not pattern or pattern.startswith("!"):
        return None
    anchored = pattern.startswith("/")
    pattern = pattern.strip("/")
    if pattern.startswith("./"):
        pattern, anchored = pattern[2:], True
    if ".." in pattern.split("/"):
        return None
    if gitignore and not anchored and "/" not in pattern:
        pattern = "**/" + pattern
    prefix = "" if base == "." else re.sub(r"([*?\[\\])", r"\\\1", base) + "/"
    full = prefix + pattern
    return full if "/" in full else "/" + full


def glob_matches(tree: Tree, pattern: str) -> bool:
    """Whether a glob (as glob() and glob_under() write them) matches a documentation file."""
    body = pattern.lstrip("/")
    literal = re.match(r"(?:[^*?\[\\/]*/)*", body)
    base = literal.group(0).rstrip("/") if literal else ""
    try:
        # As a selection reads it: a glob that matches a folder matches what it holds.
        regex = re.compile(compile_glob(pattern).pattern + "(?:/.*)?", re.DOTALL)
    except WorkspaceError:  # a config's glob that does not compile matches nothing
        return False
    return any(regex.fullmatch(f) for f in tree.docs_under(base or "."))


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """The items once each, in first-seen order."""
    return tuple(dict.fromkeys(items))


def site_configs(tree: Tree, *names: str) -> list[str]:
    """The files with one of these names whose folder is the repository's own (not vendored,
    not a test's, not a template's)."""
    return [p for p in tree.named(*names) if not vendored(parent(p))]


def load(draft: Draft, read: Read, parse: Callable[[str], T]) -> T | None:
    """The draft's config read and parsed; None, with the draft's note saying why, when it
    cannot be read or parsed (the generator's default layout is then used)."""
    text = read(draft.config)
    if text is None:
        draft.note = f"{draft.config} could not be read"
        return None
    try:
        return parse(text)
    except (ValueError, RecursionError) as e:
        draft.note = f"{draft.config} could not be parsed ({e})"
        return None
