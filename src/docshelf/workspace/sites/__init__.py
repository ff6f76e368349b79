"""Docs sites as their generators lay them out: where the current docs are, what the site holds
that is not current docs (old versions, blogs, translations, include-only folders), its
navigation files and where its includes resolve, read from each generator's config at a commit.

One module per generator (mkdocs, docusaurus, sphinx, hugo, antora, mdbook, vitepress, starlight,
jekyll, mintlify, nextra), each a `detect(tree, read) -> list[Draft]` that reads its own config;
rules.finish then applies what every site shares. `find_sites` runs them all.

Constraints:
- Pure: a function of the tree's paths and of the config texts `read` returns. Nothing is
  executed: JavaScript, TypeScript and Python configs are read by pattern, YAML by a small
  reader of the few keys needed (yamlish), TOML by tomllib, JSON by json.
- Only configs are read, each once, and a few small index files for Hugo's headless sections.
- A config in a vendored, test or template folder (node_modules, __tests__, template/) is some
  other project's site and makes none here.
- A config that cannot be read or parsed falls back to the generator's default layout where the
  file's presence says enough, with a note saying so; otherwise it makes no site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from docshelf.workspace.sites import (
    antora,
    docusaurus,
    hugo,
    jekyll,
    mdbook,
    mintlify,
    mkdocs,
    nextra,
    sphinx,
    starlight,
    vitepress,
)
from docshelf.workspace.sites.layout import Draft, Read, Site, Tree, inside, unique
from docshelf.workspace.sites.rules import finish

__all__ = ["DETECTORS", "Discovery", "Site", "find_sites"]

# Each generator's detect, in the order sites are listed when one tree holds several.
Detector = Callable[[Tree, Read], list[Draft]]
DETECTORS: tuple[Detector, ...] = (
    mkdocs.detect,
    docusaurus.detect,
    sphinx.detect,
    hugo.detect,
    antora.detect,
    mdbook.detect,
    vitepress.detect,
    starlight.detect,
    jekyll.detect,
    mintlify.detect,
    nextra.detect,
)


@dataclass(frozen=True, slots=True)
class Discovery:
    """The sites of a tree (none: the caller keeps its own discovery) and a line for each config
    that could not be read."""

    sites: tuple[Site, ...]
    notes: tuple[str, ...]

    @property
    def roots(self) -> tuple[str, ...]:
        """Every site's roots, a root inside another left out."""
        every = sorted({r for s in self.sites for r in s.roots})
        return tuple(r for r in every if not any(o != r and inside(r, o) for o in every))

    @property
    def not_read(self) -> tuple[str, ...]:
        return unique(p for s in self.sites for p in s.not_read)

    @property
    def exclude(self) -> tuple[str, ...]:
        return unique(g for s in self.sites for g in s.exclude)


def find_sites(paths: Sequence[str], read: Read) -> Discovery:
    """The docs sites of a tree.

    `paths` are every file of the tree at the commit (repo-relative, '/'-separated), as git
    ls-tree lists them; `read(path)` returns a config file's text, None when it cannot be read.
    """
    tree = Tree(paths)
    texts: dict[str, str | None] = {}

    def read_once(path: str) -> str | None:
        if path not in texts:
            texts[path] = read(path)
        return texts[path]

    sites: list[Site] = []
    notes: list[str] = []
    for detect in DETECTORS:
        for draft in detect(tree, read_once):
            site = finish(draft, tree)
            if site is not None:
                sites.append(site)
                if site.note:
                    notes.append(site.note)
            elif draft.note:
                notes.append(f"{draft.note}; no {draft.generator} site found")
    return Discovery(tuple(sites), tuple(notes))
