"""Which files a found selection reads at a commit, and what the docs include.

With no --docs, the docs are those the tree's site generators lay out (workspace.sites: their
configs, read as data), else the well-known docs folders (selection.discover), else the whole
tree. `Finder` answers, path by path, whether a file is read; `Layout` is what the user is told:
the roots, each site with what it leaves out, the configs that could not be read, and for the
whole tree the files read under each top folder. `follow_includes` adds the files the docs
include (workspace.includes), each once, naming the pages it appears in.

Constraints:
- Inside a root found, nothing is left out but what a site's config (or the rules every site
  shares: old versions, blogs, translations, include-only folders, navigation) says is not
  current docs, and the output names it. The folders that are never docs (NOT_DOCS_DIRS, hidden
  folders) apply to the whole-tree fallback only, and what they leave out is counted.
- An include never reaches outside the repository, through a symbolic link or to the network;
  a cycle, a missing target or a refused path is a skipped line naming the page, never a failed
  index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from docshelf.chunking import kind_of
from docshelf.config import DOC_SUFFIXES, NOT_DOCS_DIRS
from docshelf.workspace.includes import Entry, Resolution, Syntax, resolve_all
from docshelf.workspace.selection import WHOLE_TREE, Selection, discover, in_vendored, is_markup
from docshelf.workspace.sites import Discovery, Site, find_sites
from docshelf.workspace.sites.layout import Draft, Tree
from docshelf.workspace.sites.rules import finish

# The "generator" of docs found by their folder's name (docs/, website/docs/, ...), no config.
FOLDERS = "folders"

# Inside a docs root, a folder of tests may be a page about testing, and is read; vendored code,
# build output and hidden folders are not, each with a skipped line.
TEST_DIRS = frozenset({"tests", "test", "testdata", "__tests__", "fixtures"})
VENDORED = "a vendored, generated or hidden folder"

# A generator's config is a few kilobytes; a file of that name past this is not one to read.
CONFIG_MAX_BYTES = 256 * 1024

# Which include syntaxes each generator expands. Every AsciiDoc processor follows include::,
# and docutils follows .. include::, whatever builds the site: those hold for any file.
_SYNTAXES: dict[str, tuple[Syntax, ...]] = {
    "MkDocs": ("mkdocs-snippet",),
    "Hugo": ("hugo-include",),
    "Sphinx": ("sphinx-include", "sphinx-literalinclude"),
    "Antora": ("antora-include", "antora-include-code"),
    "mdBook": ("mdbook-include",),
    "VitePress": ("vitepress-include", "vitepress-snippet"),
    "Docusaurus": ("mdx-import",),
    "Starlight": ("mdx-import",),
    "Nextra": ("mdx-import",),
    "Mintlify": ("mdx-import",),
}
_ANY_SITE: tuple[Syntax, ...] = ("asciidoc-include", "sphinx-include", "sphinx-literalinclude")

# How many of a page's refused includes its skipped line quotes before it counts the rest.
_QUOTED_PROBLEMS = 3


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a ref's docs were read from, as the user is told: the roots; the sites found (each
    with what it does not read); a line per config that could not be read; and, when the whole
    tree was read, the files read under each top folder and the documentation files that the
    folders that are never docs left out."""

    roots: tuple[str, ...]
    sites: tuple[Site, ...] = ()
    notes: tuple[str, ...] = ()
    folders: tuple[tuple[str, int], ...] = ()
    left_out: int = 0

    def describe(self) -> str:
        """One line: "website/docs (Docusaurus; not read: website/versioned_docs, website/blog)",
        a site's roots each with its generator, or the roots alone."""
        if not self.sites:
            return ", ".join(self.roots)
        parts = []
        for site in self.sites:
            said = [] if site.generator == FOLDERS else [site.generator]
            if site.not_read:
                said.append(f"not read: {', '.join(site.not_read)}")
            roots = ", ".join(site.roots)
            parts.append(f"{roots} ({'; '.join(said)})" if said else roots)
        return "; ".join(parts)

    def data(self) -> dict[str, object]:
        """The layout as JSON (`docshelf index --json`'s `docs`)."""
        return {
            "roots": list(self.roots),
            "sites": [
                {
                    "generator": s.generator,
                    "config": s.config,
                    "roots": list(s.roots),
                    "not_read": list(s.not_read),
                    "navigation": list(s.nav),
                    "language": s.language,
                }
                for s in self.sites
            ],
            "notes": list(self.notes),
            "folders": dict(self.folders),
            "left_out": self.left_out,
        }


@dataclass(slots=True)
class Finder:
    """Whether each file of a tree is read, for a selection whose roots are found."""

    discovery: Discovery
    roots: tuple[str, ...]
    whole_tree: bool
    _not_current: Selection = field(default_factory=Selection)
    left_out: int = 0
    # Inside a root: the vendored, generated and hidden folders met, with the documentation
    # files each holds (each is one skipped line).
    vendored: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, paths: Sequence[str], read: Callable[[str], str | None]) -> Finder:
        """The finder of a tree: `paths` are every file at the commit, `read` a config's text."""
        discovery = find_sites(paths, read)
        if not discovery.sites:
            roots = discover(paths)
            if roots == WHOLE_TREE:
                return cls(discovery, roots, True)
            # Well-known docs folders and no generator: the rules every site shares still
            # leave out translations, old versions, blogs and include-only folders.
            draft = Draft(FOLDERS, "", list(roots), DOC_SUFFIXES)
            site = finish(draft, Tree(paths))
            if site is None:
                return cls(discovery, roots, False)
            discovery = Discovery((site,), discovery.notes)
        globs = (*discovery.exclude, *(n for s in discovery.sites for n in s.nav))
        return cls(discovery, discovery.roots, False, Selection(exclude=tuple(globs)))

    def reads(self, path: str) -> bool:
        """Whether `path` (clean, relative) is one of the docs: under a root, not left out by a
        site, and in the whole-tree fallback outside the folders that are never docs (counted)
        and markup."""
        if not any(root in (".", path) or path.startswith(root + "/") for root in self.roots):
            return False
        if not self.whole_tree:
            folder = _vendored_folder(path)
            if folder is not None:
                if kind_of(path) is not None:
                    self.vendored[folder] = self.vendored.get(folder, 0) + 1
                return False
            return self._not_current.keeps(path)
        if in_vendored(path):
            self.left_out += kind_of(path) is not None
            return False
        return is_markup(path)

    def layout(self, read: Iterable[str]) -> Layout:
        """What the user is told of the docs found, `read` being the paths read."""
        folders: tuple[tuple[str, int], ...] = ()
        if self.whole_tree:
            tops = Counter(p.split("/", 1)[0] if "/" in p else "." for p in read)
            folders = tuple(sorted(tops.items(), key=lambda item: (-item[1], item[0])))
        return Layout(
            self.roots,
            self.discovery.sites,
            self.discovery.notes,
            folders,
            self.left_out,
        )


def _vendored_folder(path: str) -> str | None:
    """The first folder of `path` that holds vendored code, build output or hidden files (a
    folder of tests is read: a page about testing is docs), or None."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part.startswith(".") or (part in NOT_DOCS_DIRS and part not in TEST_DIRS):
            return "/".join(parts[: i + 1])
    return None


def vendored_lines(folders: Mapping[str, int]) -> list[tuple[str, str]]:
    """The skipped line of each vendored, generated or hidden folder inside a root."""
    return [
        (
            folder,
            f"{VENDORED}: {count} documentation file{'s' if count != 1 else ''} not read; "
            f"name it with --docs {folder} to read them",
        )
        for folder, count in sorted(folders.items())
    ]


def include_syntaxes(sites: Iterable[Site]) -> tuple[Syntax, ...]:
    """The include syntaxes the docs' generators expand (and those every file's format does)."""
    found = list(_ANY_SITE)
    for site in sites:
        found += [s for s in _SYNTAXES.get(site.generator, ()) if s not in found]
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Includes:
    """What the docs include: the files to read besides the pages (path -> the pages it appears
    in), the pages each read file appears in, and the skipped lines (path, reason)."""

    extra: tuple[str, ...]
    pages: Mapping[str, tuple[str, ...]]
    problems: tuple[tuple[str, str], ...]


def follow_includes(
    pages: Sequence[str],
    listing: Mapping[str, Entry],
    read: Callable[[str], str | None],
    sites: Sequence[Site],
) -> Includes:
    """The files `pages` include, transitively: those docshelf reads (by their suffix) are
    indexed as their own files; code and data included are not documentation and are left
    out without a line (the page shows where they go)."""
    bases = tuple(b for s in sites for b in s.include_bases)
    found: Resolution = resolve_all(pages, listing, read, bases, syntaxes=include_syntaxes(sites))
    known = set(pages)
    extra: list[str] = []
    where: dict[str, tuple[str, ...]] = {}
    for included in found.included:
        if kind_of(included.path) is None:
            continue
        where[included.path] = included.pages
        if included.path not in known:
            extra.append(included.path)
    return Includes(tuple(extra), where, _problem_lines(found.problems))


def _problem_lines(problems: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """One skipped line per page: its refused includes, the first few quoted."""
    by_page: dict[str, list[str]] = {}
    for path, reason in problems:
        by_page.setdefault(path, []).append(reason)
    lines = []
    for path, reasons in by_page.items():
        said = "; ".join(reasons[:_QUOTED_PROBLEMS])
        if len(reasons) > _QUOTED_PROBLEMS:
            said += f"; and {len(reasons) - _QUOTED_PROBLEMS} more"
        noun = "include" if len(reasons) == 1 else f"{len(reasons)} includes"
        lines.append((path, f"{noun} not followed: {said}"))
    return tuple(lines)


def included_heading(heading: str, pages: Collection[str]) -> str:
    """A chunk's breadcrumb in a file other pages include: the page it appears in first."""
    if not pages:
        return heading
    first = next(iter(pages))
    where = f"included in {first}" + (f" and {len(pages) - 1} more" if len(pages) > 1 else "")
    return f"{where} > {heading}" if heading else where
