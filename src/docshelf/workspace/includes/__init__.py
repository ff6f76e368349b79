"""Include directives: which files a documentation file pulls in, as its generator reads them.

`find_includes` finds the directives of one file and resolves each target to a repo-relative
path; `resolve_all` follows them from a site's pages, transitively, and says which files are
included (each once, with the pages it appears in) and which includes were refused.

Constraints:
- Pure: no I/O. Existence, symbolic links and text come from the caller (`paths`, `listing`,
  `read`), so the same answer holds for a git tree and a directory.
- Inside the repository only: a target that climbs above the top (`..`), an absolute file-system
  path, a URL (the network is never read) or an attribute that is not set is refused with its
  reason, never guessed at; `resolve_all` also refuses any path through a symbolic link. Depth is
  bounded (MAX_INCLUDE_DEPTH); a cycle, a missing target or a refused one is a Problem, and
  nothing here raises on what a file holds.
- A target resolves as its generator resolves it: against the including file's folder (Sphinx:
  the page being built), or a site base for MkDocs snippets, a leading '/' (Sphinx, Hugo), '@/'
  (VitePress) and '@site/' (Docusaurus); Antora resource ids against the module's folders.
- Each syntax is found where its generator expands it, and nowhere else. Preprocessors expand
  inside code fences too (MkDocs snippets, mdBook, VitePress `<!--@include:-->`, Hugo
  shortcodes, AsciiDoc `include::` in listing blocks): such an include is `as_code`. Markdown
  block syntax (VitePress `<<<`, MDX imports) and reStructuredText directives are not found in
  code. Escaped forms (`;--8<--`, `\\{{#include}}`, `<!--@@include:`, `{{%/* include */%}}`,
  `\\include::`) are examples, not includes.
- Every pattern runs in time linear in its line: a 1 MB line costs one pass, not one per match.

Modules, each importing only those above it: model (the Include record, the syntaxes, the
reasons), paths (targets joined, normalised and refused), rst, asciidoc, markdown (the scanners
of each family of syntaxes; MyST fences reuse rst), find (`find_includes`), walk
(`resolve_all`).
"""

from __future__ import annotations

from docshelf.workspace.includes.find import DEFAULT_SYNTAXES, find_includes
from docshelf.workspace.includes.model import (
    ABSOLUTE,
    CONTROL,
    CYCLE,
    FOLDER,
    GENERATED,
    LEAVES_BASE,
    LEAVES_REPOSITORY,
    MISSING,
    NO_SOURCE_DIR,
    OTHER_COMPONENT,
    OTHER_VERSION,
    OUTSIDE_MODULE,
    STANDARD_FILE,
    SYMLINK,
    TOO_DEEP,
    UNREADABLE,
    UNSET_ATTRIBUTE,
    URL,
    Include,
    Syntax,
)
from docshelf.workspace.includes.walk import (
    MAX_INCLUDE_DEPTH,
    QUOTED_CHARS,
    Entry,
    Included,
    Problem,
    Resolution,
    resolve_all,
)

__all__ = [
    "ABSOLUTE",
    "CONTROL",
    "CYCLE",
    "DEFAULT_SYNTAXES",
    "FOLDER",
    "GENERATED",
    "LEAVES_BASE",
    "LEAVES_REPOSITORY",
    "MAX_INCLUDE_DEPTH",
    "MISSING",
    "NO_SOURCE_DIR",
    "OTHER_COMPONENT",
    "OTHER_VERSION",
    "OUTSIDE_MODULE",
    "QUOTED_CHARS",
    "STANDARD_FILE",
    "SYMLINK",
    "TOO_DEEP",
    "UNREADABLE",
    "UNSET_ATTRIBUTE",
    "URL",
    "Entry",
    "Include",
    "Included",
    "Problem",
    "Resolution",
    "Syntax",
    "find_includes",
    "resolve_all",
]
