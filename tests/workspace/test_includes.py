"""Include directives found and resolved as each generator reads them: one test per syntax with
lines from ../shared/data/sites (its README's "Include syntaxes" table), the real trees read in
place, and the safety rules (cycle, missing, outside the repository, URL, symlink, depth)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import pytest

from docshelf.chunking import Kind, kind_of
from docshelf.workspace.includes import (
    ABSOLUTE,
    CONTROL,
    GENERATED,
    LEAVES_BASE,
    LEAVES_REPOSITORY,
    MAX_INCLUDE_DEPTH,
    MISSING,
    STANDARD_FILE,
    UNREADABLE,
    URL,
    Entry,
    Include,
    Problem,
    Syntax,
    find_includes,
    resolve_all,
)

CHEZMOI_BASES = ("assets/chezmoi.io/snippets", "snippets")
ANTORA: tuple[Syntax, ...] = ("asciidoc-include", "antora-include", "antora-include-code")


def one(
    path: str,
    text: str,
    kind: Kind = "markdown",
    bases: Sequence[str] = (),
    *,
    paths: Collection[str] | None = None,
    syntaxes: Collection[Syntax] | None = None,
    attributes: dict[str, str] | None = None,
    document: str | None = None,
) -> Include:
    """The one include `text` holds."""
    found = find_includes(
        path,
        text,
        kind,
        bases,
        paths=paths,
        syntaxes=syntaxes,
        attributes=attributes,
        document=document,
    )
    assert len(found) == 1, found
    return found[0]


def tree_listing(root: Path) -> dict[str, Entry]:
    """Every file and symbolic link under `root`, as a git tree would list them."""
    listing: dict[str, Entry] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            full = Path(folder) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                listing[rel] = "symlink"
            elif full.is_file():
                listing[rel] = "file"
    return listing


def reader(root: Path) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        try:
            return (root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def scan_tree(
    root: Path,
    syntaxes: Collection[Syntax],
    bases: Sequence[str] = (),
    attributes: dict[str, str] | None = None,
    under: str = "",
) -> list[tuple[str, Include]]:
    """(file, include) for every documentation file of a tree under `under`."""
    listing = tree_listing(root)
    read = reader(root)
    found = []
    for path in sorted(listing):
        kind = kind_of(path)
        if listing[path] != "file" or kind is None or not path.startswith(under):
            continue
        text = read(path)
        assert text is not None, path
        for include in find_includes(
            path, text, kind, bases, paths=listing, syntaxes=syntaxes, attributes=attributes
        ):
            found.append((path, include))
    return found


# --- MkDocs snippets (pymdownx.snippets) -------------------------------------------------------


def test_snippet_resolves_under_the_first_base_that_holds_it() -> None:
    page = "assets/chezmoi.io/docs/reference/command-line-flags/common.md"
    text = "# Common flags\n\n" + '--8<-- "common-flags/exclude.md"\n'
    include = one(
        page,
        text,
        bases=("snippets", *CHEZMOI_BASES),
        paths={"assets/chezmoi.io/snippets/common-flags/exclude.md"},
        syntaxes=["mkdocs-snippet"],
    )
    assert include == Include(
        3, 3, "mkdocs-snippet", "common-flags/exclude.md",
        "assets/chezmoi.io/snippets/common-flags/exclude.md",
    )  # fmt: skip


def test_snippet_without_a_listed_path_takes_the_first_base() -> None:
    include = one("a.md", "--8<-- 'x.md'", bases=CHEZMOI_BASES, paths=set())
    assert include.target == "assets/chezmoi.io/snippets/x.md"
    assert one("docs/a.md", '--8<-- "x.md"').target == "x.md"  # no base: the top


def test_snippet_section_and_line_range_are_selectors_of_the_whole_file() -> None:
    text = (
        '--8<-- "common-flags/path-style.md:all"\n'
        '--8<-- "a.md:3:5"\n'
        '--8<-- "b.md::7"\n'
        '---8<--- "dir/c.md:no-source-tree"\n'
    )
    found = find_includes("page.md", text, "markdown", ["snips"])
    assert [(i.target, i.selector) for i in found] == [
        ("snips/common-flags/path-style.md", ":all"),
        ("snips/a.md", ":3:5"),
        ("snips/b.md", "::7"),
        ("snips/dir/c.md", ":no-source-tree"),
    ]


def test_snippet_block_names_one_file_a_line_and_spans_its_markers() -> None:
    text = "intro\n--8<--\nfirst.md\n\n;skipped.md\nsecond.md:2:3\n--8<--\nafter\n"
    found = find_includes("p.md", text, "markdown", ["s"])
    assert [(i.line, i.end_line, i.target, i.selector) for i in found] == [
        (2, 7, "s/first.md", ""),
        (2, 7, "s/second.md", ":2:3"),
    ]


def test_unclosed_snippet_block_still_names_its_files() -> None:
    found = find_includes("p.md", "--8<--\na.md\nb.md\n", "markdown")
    assert [(i.line, i.end_line, i.target) for i in found] == [(1, 3, "a.md"), (1, 3, "b.md")]


def test_escaped_snippets_and_section_markers_are_not_includes() -> None:
    text = (
        ';--8<-- "escaped.md"\n'
        '--8<-- "spaced.md" \n'  # a space after the quote is the old escape
        "--8<-- [start:all]\n"
        "--8<-- [end:all]\n"
        ";--8<--\nnot-a-block.md\n;--8<--\n"
    )
    assert find_includes("p.md", text, "markdown", ["s"]) == []


def test_snippet_inside_a_fence_is_code_because_snippets_preprocess() -> None:
    include = one("p.md", '```toml\n--8<-- "config.toml"\n```\n', bases=["s"])
    assert (include.target, include.as_code) == ("s/config.toml", True)


def test_snippet_climbing_out_of_its_base_is_refused() -> None:
    assert one("p.md", '--8<-- "../secret.md"', bases=["s"]).problem == LEAVES_BASE
    assert one("p.md", '--8<-- "../../x.md"', bases=["s"]).problem == LEAVES_REPOSITORY
    assert one("p.md", '--8<-- "/etc/passwd"', bases=["s"]).problem == ABSOLUTE


# --- Sphinx --------------------------------------------------------------------------------------


def test_sphinx_include_is_relative_to_the_file() -> None:
    include = one("docs/changelog.rst", ".. include:: ../Changelog.rst\n", "rst", ["docs"])
    assert (include.syntax, include.target, include.as_code) == (
        "sphinx-include",
        "Changelog.rst",
        False,
    )


def test_sphinx_include_with_a_leading_slash_is_under_the_source_folder() -> None:
    include = one("docs/a/b.rst", ".. include:: /includes/x.txt\n", "rst", ["docs"])
    assert include.target == "docs/includes/x.txt"


def test_literalinclude_is_code_and_spans_its_options() -> None:
    text = (
        "Intro.\n\n"
        ".. literalinclude:: ../../examples/next-steps/proj/celery.py\n"
        "    :language: python\n"
        "    :lines: 3-9\n\n"
        "In this module\n"
    )
    include = one("docs/getting-started/next-steps.rst", text, "rst", ["docs"])
    assert include == Include(
        3, 5, "sphinx-literalinclude", "../../examples/next-steps/proj/celery.py",
        "examples/next-steps/proj/celery.py", "", True, ":language: python :lines: 3-9",
    )  # fmt: skip


def test_sphinx_include_with_literal_option_is_code() -> None:
    include = one("docs/a.rst", ".. include:: ../setup.cfg\n   :literal:\n", "rst")
    assert include.as_code


def test_sphinx_include_in_code_literal_blocks_and_comments_is_not_one() -> None:
    text = (
        ".. code-block:: rst\n\n    .. include:: in-code.rst\n\n"
        "For example::\n\n    .. include:: in-literal.rst\n\n"
        "..\n   .. include:: in-comment.rst\n\n"
        ".. note::\n\n   .. include:: in-note.rst\n"
    )
    found = find_includes("docs/a.rst", text, "rst")
    assert [i.target for i in found] == ["docs/in-note.rst"]


def test_nested_sphinx_include_is_relative_to_the_page_being_built() -> None:
    include = one("Changelog.rst", ".. include:: includes/x.txt\n", "rst", document="docs/c.rst")
    assert include.target == "docs/includes/x.txt"


def test_docutils_standard_file_is_refused() -> None:
    assert one("a.rst", ".. include:: <isonum.txt>\n", "rst").problem == STANDARD_FILE


def test_myst_include_fence_is_a_sphinx_include() -> None:
    text = "# Intro\n\n```{include} ../README.md\n:start-after: <!-- x -->\n```\n"
    include = one("docs/index.md", text, syntaxes=["sphinx-include"])
    assert (include.line, include.end_line, include.target) == (3, 5, "README.md")
    assert include.selector == ":start-after: <!-- x -->"


# --- AsciiDoc and Antora -------------------------------------------------------------------------

ANTORA_PAGE = "docs/modules/ROOT/pages/reactive/oauth2/client/authorization-grants.adoc"


def test_antora_partial_resolves_in_the_pages_module() -> None:
    written = "partial$reactive/oauth2/client/web-client-access-token-response-client.adoc"
    include = one(ANTORA_PAGE, f"== Grants\n\ninclude::{written}[]\n", "asciidoc")
    assert include == Include(
        3, 3, "antora-include", written,
        "docs/modules/ROOT/partials/reactive/oauth2/client/"
        "web-client-access-token-response-client.adoc",
    )  # fmt: skip


def test_antora_example_in_a_listing_is_code_with_its_tags() -> None:
    text = (
        "[source,java,indent=0]\n----\n"
        "include::example$kerberos/DummyUserDetailsService.java[tags=snippetA]\n----\n"
    )
    page = "docs/modules/ROOT/pages/servlet/authentication/kerberos/appendix.adoc"
    include = one(page, text, "asciidoc")
    assert include.target == "docs/modules/ROOT/examples/kerberos/DummyUserDetailsService.java"
    assert (include.as_code, include.selector) == (True, "tags=snippetA")


def test_antora_module_and_component_coordinates() -> None:
    own = {"page-component-name": "security"}
    found = find_includes(
        ANTORA_PAGE,
        "include::other:partial$x.adoc[]\n"
        "include::security:ROOT:example$y.java[]\n"
        "include::boot:ROOT:partial$z.adoc[]\n"
        "include::6.1@security:ROOT:partial$z.adoc[]\n",
        "asciidoc",
        attributes=own,
    )
    assert [(i.target, i.problem) for i in found] == [
        ("docs/modules/other/partials/x.adoc", ""),
        ("docs/modules/ROOT/examples/y.java", ""),
        (None, "another Antora component: boot"),
        (None, "another version of the Antora component (another branch or tag): 6.1@"),
    ]


def test_antora_resource_id_outside_a_module_is_refused() -> None:
    include = one("README.adoc", "include::partial$x.adoc[]\n", "asciidoc")
    assert include.target is None and "outside an Antora module" in include.problem


def test_asciidoc_attribute_set_in_the_file_resolves_and_an_unset_one_is_refused() -> None:
    sample = "buildSrc/src/test/resources/samples/showcase/sgbcs-docs/src/docs/asciidoc/index.adoc"
    text = (
        ":example-caption!:\n"
        "ifndef::sourcedir[:sourcedir: ../java]\n"
        "----\ninclude::{sourcedir}/example/StringUtils.java[tags=contains,indent=0]\n----\n"
        "include::{build-gradle}[]\n"
    )
    found = find_includes(sample, text, "asciidoc")
    folder = "buildSrc/src/test/resources/samples/showcase/sgbcs-docs/src/docs"
    assert [(i.target, i.problem) for i in found] == [
        (f"{folder}/java/example/StringUtils.java", ""),
        (None, "an attribute that is not set: {build-gradle}"),
    ]


def test_site_attribute_can_name_an_antora_resource() -> None:
    site = {"include-java": "example$docs-src/test/java/org/springframework/security/docs"}
    include = one(ANTORA_PAGE, "include::{include-java}/A.java[]\n", "asciidoc", attributes=site)
    examples = "docs/modules/ROOT/examples/docs-src/test/java/org/springframework/security/docs"
    assert include.target == f"{examples}/A.java"


def test_asciidoc_relative_include_and_what_is_not_one() -> None:
    text = (
        ".include::subdir/_b.adoc[]\n"  # a block title
        "====\ninclude::subdir/_b.adoc[]\n====\n"
        "////\ninclude::in-comment.adoc[]\n////\n"
        "// include::line-comment.adoc[]\n"
        "\\include::escaped.adoc[]\n"
        " include::indented.adoc[]\n"
        "include::no-brackets.adoc\n"
    )
    found = find_includes("src/docs/asciidoc/index.adoc", text, "asciidoc")
    assert [(i.line, i.target, i.as_code) for i in found] == [
        (3, "src/docs/asciidoc/subdir/_b.adoc", False)
    ]


def test_spring_include_code_is_reported_as_not_in_the_repository() -> None:
    page = "docs/modules/ROOT/pages/features/authentication/password-storage.adoc"
    include = one(
        page, "include-code::./DelegatingPasswordEncoderUsage[tag=a,indent=0]\n", "asciidoc"
    )
    assert (include.syntax, include.target, include.problem) == (
        "antora-include-code",
        None,
        GENERATED,
    )


# --- mdBook --------------------------------------------------------------------------------------


def test_mdbook_include_is_relative_to_the_chapter() -> None:
    include = one("src/algorithms/randomness.md", "{{#include randomness/rand.md}}\n")
    assert (include.syntax, include.target, include.as_code) == (
        "mdbook-include",
        "src/algorithms/randomness/rand.md",
        False,
    )


def test_mdbook_include_in_a_fence_is_code_with_its_range_or_anchor() -> None:
    text = (
        "```rust,edition2018\n"
        "{{#include ../crates/algorithms/randomness/src/bin/rand.rs::7 }}\n"
        "{{ #include ../crates/web/src/main.rs:10:23}}{{#include x.rs:anchor}}\n"
        "{{#rustdoc_include ../y.rs:2}}\n"
        "```\n"
    )
    found = find_includes("src/about.md", text, "markdown", syntaxes=["mdbook-include"])
    assert [(i.line, i.target, i.selector, i.as_code) for i in found] == [
        (2, "crates/algorithms/randomness/src/bin/rand.rs", ":7", True),
        (3, "crates/web/src/main.rs", "10:23", True),
        (3, "src/x.rs", "anchor", True),
        (4, "y.rs", "2", True),
    ]


def test_mdbook_playground_is_code_even_outside_a_fence() -> None:
    include = one("src/a.md", "{{#playground example.rs editable}}\n")
    assert (include.raw, include.target, include.as_code) == ("example.rs", "src/example.rs", True)


def test_mdbook_escaped_link_is_not_an_include() -> None:
    assert find_includes("src/a.md", "\\{{#include links.md}}\n", "markdown") == []


# --- VitePress -----------------------------------------------------------------------------------


def test_vitepress_include_relative_srcdir_range_and_region() -> None:
    text = (
        "<!--@include: ./import-example.md-->\n"
        "<!-- @include: @/snippets/a.md{2,4} --> and <!--@include: ../b.md#basic-usage{,2}-->\n"
    )
    found = find_includes("docs/api/advanced/test-project.md", text, "markdown", ["docs"])
    assert [(i.line, i.target, i.selector) for i in found] == [
        (1, "docs/api/advanced/import-example.md", ""),
        (2, "docs/snippets/a.md", "{2,4}"),
        (2, "docs/api/b.md", "#basic-usage{,2}"),
    ]


def test_vitepress_include_in_a_fence_is_expanded_as_code_and_double_at_is_escaped() -> None:
    # VitePress replaces includes in the raw text before it parses code blocks.
    text = (
        "````md\n```js\n<!--@@include: @/snippets/s.js{2,4}-->\n```\n````\n\n"
        "```js\n<!--@include: @/snippets/s.js{2,4}-->\n```\n"
    )
    include = one("docs/en/guide/markdown.md", text, bases=["docs"])
    assert (include.line, include.target, include.as_code) == (8, "docs/snippets/s.js", True)


def test_vitepress_code_snippet_is_code_and_not_found_in_a_fence() -> None:
    text = (
        "<<< ./snippets/benchmark-table.ansi\n"
        "```md\n<<< @/snippets/snippet.js{2}\n```\n"
        "<<< @/snippets/snippet-with-region.js#snippet{1,2 ts:line-numbers} [snippet with region]\n"
    )
    found = find_includes("docs/guide/benchmarking.md", text, "markdown", ["docs"])
    assert [(i.line, i.syntax, i.target, i.as_code) for i in found] == [
        (1, "vitepress-snippet", "docs/guide/snippets/benchmark-table.ansi", True),
        (5, "vitepress-snippet", "docs/snippets/snippet-with-region.js", True),
    ]


def test_srcdir_paths_without_a_base_are_refused() -> None:
    include = one("docs/a.md", "<<< @/x.ts\n")
    assert include.target is None and "source folder" in include.problem


# --- MDX partials --------------------------------------------------------------------------------


def test_mdx_partial_import_rendered_as_a_component_is_an_include() -> None:
    text = (
        "---\nid: expect\n---\n\n"
        "import TypeScriptExamplesNote from './_TypeScriptExamplesNote.md';\n\n"
        "<TypeScriptExamplesNote />\n"
    )
    include = one("docs/ExpectAPI.md", text, syntaxes=["mdx-import"])
    assert include == Include(
        5, 5, "mdx-import", "./_TypeScriptExamplesNote.md", "docs/_TypeScriptExamplesNote.md"
    )


def test_mdx_imports_that_show_no_partial_are_not_includes() -> None:
    text = (
        "import TOCInline from '@theme/TOCInline';\n"
        "import Unused from './_unused.mdx';\n"
        "import {named} from './_named.md';\n"
        "```js\nimport Fenced from './_fenced.md';\n```\n"
        "<TOCInline toc={toc} /> <Fenced />\n"
    )
    assert find_includes("docs/a.mdx", text, "mdx", syntaxes=["mdx-import"]) == []


def test_mdx_site_alias_is_under_the_site_folder() -> None:
    text = "import Note from '@site/docs/_note.mdx';\n\n<Note/>\n"
    include = one("website/docs/a.mdx", text, "mdx", ["website"], syntaxes=["mdx-import"])
    assert include.target == "website/docs/_note.mdx"


# --- Hugo ----------------------------------------------------------------------------------------


def test_hugo_include_with_a_slash_is_under_the_content_folder() -> None:
    text = '{{% include "/_common/configuration/locale.md" %}}\n{{< include "/_common/a.md" >}}\n'
    found = find_includes("content/en/configuration/all.md", text, "markdown", ["content/en"])
    assert [(i.syntax, i.target) for i in found] == [
        ("hugo-include", "content/en/_common/configuration/locale.md"),
        ("hugo-include", "content/en/_common/a.md"),
    ]


def test_hugo_include_without_a_slash_looks_beside_the_page_first() -> None:
    text = '{{% include "_common/x.md" %}}\n{{% include "_common/y" %}}\n'
    paths = {"content/en/_common/x.md", "content/en/shortcodes/_common/y/index.md"}
    found = find_includes(
        "content/en/shortcodes/a.md", text, "markdown", ["content/en"], paths=paths
    )
    assert [i.target for i in found] == [
        "content/en/_common/x.md",
        "content/en/shortcodes/_common/y/index.md",
    ]


def test_hugo_escaped_shortcode_is_an_example_not_an_include() -> None:
    text = '{{%/* include "/posts/post-2" */%}}\n{{</* include "/a.md" */>}}\n'
    assert find_includes("content/en/x.md", text, "markdown", ["content/en"]) == []


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("p.md", '--8<-- "https://example.com/x.md"', "markdown"),
        ("src/p.md", "{{#include http://example.com/x.md}}", "markdown"),
        ("docs/p.md", "<!--@include: https://example.com/x.md-->", "markdown"),
        ("content/p.md", '{{% include "//cdn.example.com/x.md" %}}', "markdown"),
        ("docs/p.rst", ".. include:: https://example.com/x.rst", "rst"),
        ("p.adoc", "include::https://example.com/x.adoc[]", "asciidoc"),
    ],
)
def test_url_targets_are_refused(path: str, text: str, kind: Kind) -> None:
    include = one(path, text, kind, ["docs"])
    assert (include.target, include.problem) == (None, URL)


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("../../../../etc/passwd", LEAVES_REPOSITORY),
        ("/etc/passwd", ABSOLUTE),
        ("C:\\Windows\\win.ini", ABSOLUTE),
        ("~/x.md", ABSOLUTE),
        ("a\x01b.md", CONTROL),
    ],
)
def test_targets_outside_the_repository_are_refused(target: str, problem: str) -> None:
    include = one("src/a/b.md", "<!--@include: " + target + "-->\n")
    assert (include.target, include.problem) == (None, problem)


def test_dot_segments_are_normalised_inside_the_repository() -> None:
    include = one("src/a/b.md", "{{#include ./x/../../c/./d.md}}\n")
    assert include.target == "src/c/d.md"


# --- resolve_all ---------------------------------------------------------------------------------


def resolve(
    files: dict[str, str | None],
    pages: Sequence[str],
    symlinks: Sequence[str] = (),
    bases: Sequence[str] = (),
) -> tuple[dict[str, tuple[tuple[str, ...], tuple[str, ...]]], list[Problem]]:
    """resolve_all over `files` (None: unreadable): each included file's pages and includers,
    and the problems."""
    listing: dict[str, Entry] = dict.fromkeys(files, "file")
    listing.update(dict.fromkeys(symlinks, "symlink"))
    result = resolve_all(pages, listing, files.get, bases)
    return {i.path: (i.pages, i.by) for i in result.included}, list(result.problems)


def test_an_included_file_is_listed_once_with_every_page_it_appears_in() -> None:
    files: dict[str, str | None] = {
        "src/a.md": "{{#include part.md}}\n",
        "src/b.md": "{{#include part.md}}\n{{#include part.md}}\n",
        "src/part.md": "{{#include links.md}}\n",
        "src/links.md": "[x]: https://example.com\n",
    }
    included, problems = resolve(files, ["src/a.md", "src/b.md"])
    assert included == {
        "src/part.md": (("src/a.md", "src/b.md"), ("src/a.md", "src/b.md")),
        "src/links.md": (("src/a.md", "src/b.md"), ("src/part.md",)),
    }
    assert problems == []


def test_a_cycle_is_a_problem_not_a_failure() -> None:
    files: dict[str, str | None] = {
        "src/a.md": "{{#include b.md}}\n",
        "src/b.md": "text\n{{#include a.md}}\n",
    }
    included, problems = resolve(files, ["src/a.md"])
    assert list(included) == ["src/b.md"]
    assert problems == [
        ("src/b.md", "include at line 2 (a.md): a cycle: src/a.md -> src/b.md -> src/a.md")
    ]


def test_a_missing_target_is_a_problem() -> None:
    included, problems = resolve({"docs/c.rst": ".. include:: ../Changelog.rst\n"}, ["docs/c.rst"])
    assert included == {}
    assert problems == [("docs/c.rst", f"include at line 1 (../Changelog.rst): {MISSING}")]


def test_a_target_outside_the_repository_is_a_problem_and_never_read() -> None:
    asked: list[str] = []
    files = {"a.adoc": "include::../../etc/passwd[]\n"}

    def read(path: str) -> str | None:
        asked.append(path)
        return files.get(path)

    result = resolve_all(["a.adoc"], {"a.adoc": "file"}, read)
    assert asked == ["a.adoc"] and result.included == ()
    assert result.problems[0].reason.endswith(LEAVES_REPOSITORY)


def test_a_symbolic_link_is_never_followed_nor_a_path_through_one() -> None:
    files: dict[str, str | None] = {
        "docs/a.md": "{{#include link.md}}\n{{#include shared/x.md}}\n",
        "docs/shared/x.md": "x",
    }
    included, problems = resolve(files, ["docs/a.md"], symlinks=["docs/link.md", "docs/shared"])
    assert included == {}
    assert [reason for _, reason in problems] == [
        "include at line 1 (link.md): through a symbolic link, not followed: docs/link.md",
        "include at line 2 (shared/x.md): through a symbolic link, not followed: docs/shared",
    ]


def test_includes_deeper_than_the_bound_are_problems() -> None:
    chain = 12
    files: dict[str, str | None] = {
        f"f{n}.md": f"{{{{#include f{n + 1}.md}}}}\n" for n in range(chain)
    }
    files[f"f{chain}.md"] = "end\n"
    included, problems = resolve(files, ["f0.md"])
    assert list(included) == [f"f{n}.md" for n in range(1, MAX_INCLUDE_DEPTH + 1)]
    deepest = f"f{MAX_INCLUDE_DEPTH}.md"
    assert problems == [
        (deepest, f"include at line 1 (f{MAX_INCLUDE_DEPTH + 1}.md): deeper than 8 includes")
    ]


def test_code_is_listed_not_followed_and_an_unreadable_file_is_a_problem() -> None:
    files: dict[str, str | None] = {
        "docs/a.rst": ".. literalinclude:: x.rst\n\n.. include:: broken.rst\n",
        "docs/x.rst": ".. include:: never-followed.rst\n",
        "docs/broken.rst": None,
    }
    result = resolve_all(["docs/a.rst"], dict.fromkeys(files, "file"), files.get)
    assert [(i.path, i.as_code) for i in result.included] == [
        ("docs/x.rst", True),
        ("docs/broken.rst", False),
    ]
    assert result.problems == (("docs/broken.rst", UNREADABLE),)


def test_sphinx_includes_in_included_files_resolve_against_the_page() -> None:
    files: dict[str, str | None] = {
        "docs/changelog.rst": ".. include:: ../Changelog.rst\n",
        "Changelog.rst": ".. include:: includes/history.txt\n",
        "docs/includes/history.txt": "History\n=======\n",
    }
    included, problems = resolve(files, ["docs/changelog.rst"], bases=["docs"])
    assert list(included) == ["Changelog.rst", "docs/includes/history.txt"]
    assert problems == []


# --- the real trees ------------------------------------------------------------------------------


def test_all_85_chezmoi_snippet_lines_resolve_under_its_snippets_folder(shared_data: Path) -> None:
    root = shared_data / "sites" / "mkdocs-chezmoi"
    found = scan_tree(root, ["mkdocs-snippet"], CHEZMOI_BASES)
    listing = tree_listing(root)
    assert len(found) == 85
    assert len({path for path, _ in found}) == 26
    assert sum(1 for _, i in found if i.selector) == 17
    assert all(
        i.target in listing and i.target.startswith("assets/chezmoi.io/snippets/") for _, i in found
    )
    common = "assets/chezmoi.io/docs/reference/command-line-flags/common.md"
    by_line = {i.line: i for path, i in found if path == common}
    assert by_line[21].target == "assets/chezmoi.io/snippets/common-flags/exclude.md"
    assert (by_line[53].target, by_line[53].selector) == (
        "assets/chezmoi.io/snippets/common-flags/path-style.md",
        ":all",
    )


def test_hugo_docs_214_include_lines_name_45_files_all_in_common(shared_data: Path) -> None:
    root = shared_data / "sites" / "hugo-hugoDocs"
    found = scan_tree(root, ["hugo-include"], ["content/en"])
    listing = tree_listing(root)
    assert len(found) == 214
    assert len({path for path, _ in found}) == 162
    # 46 as written: one file is named both with and without its leading '/'.
    assert len({i.raw for _, i in found}) == 46
    targets = {i.target for _, i in found}
    assert len(targets) == 45
    assert all(t in listing and t.startswith("content/en/_common/") for t in targets)
    assert not any(
        path == "content/en/_common/render-hooks/pageinner.md" and i.line == 24 for path, i in found
    )


def test_mdbook_cookbook_includes_resolve_and_missing_code_is_reported(shared_data: Path) -> None:
    root = shared_data / "sites" / "mdbook-rust-cookbook"
    found = scan_tree(root, ["mdbook-include"], under="src/")
    prose = [i for _, i in found if not i.as_code]
    code = [i for _, i in found if i.as_code]
    assert (len(prose), len({p for p, i in found if not i.as_code})) == (340, 106)
    assert (len(code), len({p for p, i in found if i.as_code})) == (55, 36)
    listing = tree_listing(root)
    assert all(i.target in listing for i in prose)
    assert [i.target for i in code if i.target in listing] == [
        "crates/configuration/config/config.toml"
    ]

    pages = sorted(p for p in listing if p.startswith("src/") and p.endswith(".md"))
    result = resolve_all(pages, listing, reader(root))
    assert len(result.problems) == 54
    assert all(reason.endswith(MISSING) for _, reason in result.problems)
    included = {i.path: i for i in result.included}
    assert included["src/links.md"].as_code is False
    assert included["crates/configuration/config/config.toml"].pages == (
        "src/configuration/config.md",
    )
    # links.md appears on intro.md through a category page, two includes deep.
    assert "src/intro.md" in included["src/links.md"].pages


def test_sphinx_celery_changelog_page_includes_the_root_changelog(shared_data: Path) -> None:
    root = shared_data / "sites" / "sphinx-celery"
    found = scan_tree(root, ["sphinx-include", "sphinx-literalinclude"], ["docs"])
    includes = [(p, i) for p, i in found if i.syntax == "sphinx-include"]
    literal = [(p, i) for p, i in found if i.syntax == "sphinx-literalinclude"]
    assert (len(includes), len({p for p, _ in includes})) == (7, 5)
    assert (len(literal), len({p for p, _ in literal})) == (5, 2)
    assert ("docs/changelog.rst", 1, "Changelog.rst") in [(p, i.line, i.target) for p, i in found]
    listing = tree_listing(root)
    assert all(i.target in listing for _, i in includes)
    assert not any(i.target in listing for _, i in literal)  # examples/**/*.py are left out

    pages = sorted(p for p in listing if p.startswith("docs/") and p.endswith(".rst"))
    result = resolve_all(pages, listing, reader(root), ["docs"])
    included = {i.path: i.pages for i in result.included}
    assert included == {
        "CONTRIBUTING.rst": ("docs/contributing.rst",),
        "Changelog.rst": ("docs/changelog.rst",),
        "docs/includes/installation.txt": ("docs/getting-started/introduction.rst",),
        "docs/includes/resources.txt": ("docs/getting-started/resources.rst",),
    }
    assert len(result.problems) == 5
    assert all(reason.endswith(MISSING) for _, reason in result.problems)


def test_antora_security_partials_resolve_and_left_out_code_does_not(shared_data: Path) -> None:
    root = shared_data / "sites" / "antora-spring-security"
    found = scan_tree(root, ANTORA, attributes={"page-component-name": "security"})
    listing = tree_listing(root)
    partials = [i for _, i in found if i.raw.startswith("partial$")]
    examples = [i for _, i in found if i.raw.startswith("example$")]
    assert len(partials) == 12 and len({i.target for i in partials}) == 4
    assert all(i.target in listing for i in partials)
    assert len(examples) == 6 and not any(i.target in listing for i in examples)
    assert sum(1 for _, i in found if i.syntax == "antora-include-code") == 118


def test_vitepress_i18n_code_imports_in_fences_are_not_includes(shared_data: Path) -> None:
    root = shared_data / "sites" / "vitepress-i18n"
    page = "docs/en/guide/markdown.md"
    text = (root / page).read_text(encoding="utf-8")
    found = find_includes(page, text, "markdown", ["docs"])
    lines = text.split("\n")
    snippet_lines = [n for n, line in enumerate(lines, 1) if line.startswith("<<<")]
    found_lines = {i.line for i in found if i.syntax == "vitepress-snippet"}
    # Each `<<<` shown as "Input" stands in a fence; the "Code file" and "Output" ones render.
    assert 766 not in found_lines and {770, 774} <= found_lines
    assert len(found_lines) < len(snippet_lines)
    # The escaped `<!--@@include:` examples are not includes; line 1102, in a ```js fence, is
    # expanded there by VitePress (the page says so at line 1089): an include, as code.
    vitepress = [i for i in found if i.syntax == "vitepress-include"]
    assert [(i.line, i.target, i.as_code) for i in vitepress] == [
        (1102, "docs/snippets/snippet-with-region.js", True)
    ]


def test_vitepress_vitest_includes_and_code_snippets_resolve(shared_data: Path) -> None:
    root = shared_data / "sites" / "vitepress-vitest"
    found = scan_tree(root, ["vitepress-include", "vitepress-snippet"], ["docs"])
    listing = tree_listing(root)
    assert sum(1 for _, i in found if i.syntax == "vitepress-include") == 5
    assert sum(1 for _, i in found if i.syntax == "vitepress-snippet") == 6
    assert all(i.target in listing for _, i in found)


def test_docusaurus_jest_partial_import_resolves(shared_data: Path) -> None:
    root = shared_data / "sites" / "docusaurus-jest"
    found = scan_tree(root, ["mdx-import"], ["website"])
    assert len(found) == 20
    assert sum(1 for p, _ in found if p.startswith("docs/")) == 5
    expect = [i for p, i in found if p == "docs/ExpectAPI.md"]
    assert [(i.line, i.target) for i in expect] == [(14, "docs/_TypeScriptExamplesNote.md")]


# --- linear time ---------------------------------------------------------------------------------

# A 1 MB line must cost one pass: a pattern that backtracks would take minutes here.
MB_LINE_SECONDS = 5.0
MB = 1_000_000


@pytest.mark.parametrize(
    ("kind", "unit"),
    [
        ("markdown", "{{#include "),
        ("markdown", '{{% include "'),
        ("markdown", "{{% include x "),
        ("markdown", "<!--@include: "),
        ("markdown", "<!-- "),
        ("markdown", '--8<-- "a\\"'),
        ("markdown", "a:0"),
        ("markdown", "<<< a "),
        ("markdown", "import X from './"),
        ("markdown", "<X "),
        ("rst", ".. include:: a"),
        ("rst", ".. a:b"),
        ("asciidoc", "include::{a}["),
        ("asciidoc", ":a: {b}"),
    ],
)
def test_a_megabyte_line_is_scanned_in_linear_time(kind: Kind, unit: str) -> None:
    line = unit * (MB // len(unit))
    texts = [line, "<<< " + line, '--8<-- "' + line + '"', "import X from './" + line]
    if kind == "rst":
        texts = [line, ".. include:: " + line, ".. " + line + "::"]
    if kind == "asciidoc":
        texts = [line, "include::" + line + "[]", ":a: " + line, "include::partial$" + line + "[]"]
    start = time.perf_counter()
    for text in texts:
        find_includes("docs/p.md", text, kind, ["docs"])
    assert time.perf_counter() - start < MB_LINE_SECONDS
