"""The includes of one file: the rule from a file's kind to the scanner of its markup.

Constraints:
- Pure: the text comes from the caller; nothing is read here.
- Without the generator's syntaxes, a file is scanned for every syntax its kind may hold; a site
  names its own, since a page documenting another generator's syntax in a fence is no include.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from docshelf.chunking import Kind
from docshelf.chunking.text import text_lines
from docshelf.workspace.includes import asciidoc, markdown, rst
from docshelf.workspace.includes.model import Include, Syntax
from docshelf.workspace.includes.paths import Site, folders

# The syntaxes a file of each kind may hold, when the caller does not name its generator's. A
# site names its own: a page documenting another generator's syntax in a fence is no include.
DEFAULT_SYNTAXES: Mapping[Kind, tuple[Syntax, ...]] = {
    "markdown": markdown.SYNTAXES,
    "mdx": markdown.SYNTAXES,
    "rst": rst.SYNTAXES,
    # Sphinx includes .txt files as reStructuredText (docs/includes/*.txt).
    "text": rst.SYNTAXES,
    "asciidoc": asciidoc.SYNTAXES,
}


def find_includes(
    path: str,
    text: str,
    kind: Kind,
    bases: Sequence[str] = (),
    *,
    paths: Collection[str] | None = None,
    syntaxes: Collection[Syntax] | None = None,
    attributes: Mapping[str, str] | None = None,
    document: str | None = None,
) -> list[Include]:
    """The include directives of one file, in line order.

    `path` is the file's repo-relative path. `bases` are the site's include bases, in order:
    MkDocs snippets' base_path folders, Sphinx's source folder (a leading '/'), Hugo's content
    folder, VitePress's srcDir ('@/'), Docusaurus's site folder ('@site/'). `paths` are the
    repository's files, for choosing among bases. `syntaxes` are the generator's (default: all
    a file of `kind` may hold). `attributes` are AsciiDoc attributes set by the site (Antora's
    `asciidoc.attributes`, `page-component-name`); they win over the file's own entries.
    `document` is the page being built when `path` is a file it includes: Sphinx resolves a
    relative include against the page, not the included file."""
    on = frozenset(DEFAULT_SYNTAXES[kind] if syntaxes is None else syntaxes)
    site = Site(folders(bases), paths, dict(attributes or {}))
    lines = text_lines(text)
    if kind in ("rst", "text"):
        return rst.scan_rst(path, lines, on, site, document)
    if kind == "asciidoc":
        return asciidoc.scan_asciidoc(path, lines, on, site)
    return markdown.scan_markdown(path, lines, on, site)
