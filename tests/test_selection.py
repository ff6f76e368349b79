"""Which files are the docs: the roots found in a tree, and the --include/--exclude globs."""

from __future__ import annotations

import pytest

from docshelf.errors import WorkspaceError
from docshelf.workspace.selection import Selection, checked_globs, discover, in_vendored


@pytest.mark.parametrize(
    ("paths", "roots"),
    [
        # Sphinx, Docusaurus, Starlight at the top and in a docs/ package, Hugo, Nextra.
        (["README.md", "docs/index.rst", "src/app.py"], ("docs",)),
        (["Doc/library/os.rst", "Lib/os.py", "README.rst"], ("Doc",)),
        (["website/docs/intro.mdx", "website/blog/x.md", "README.md"], ("website/docs",)),
        (["src/content/docs/guide.mdx", "src/pages/index.astro"], ("src/content/docs",)),
        (["docs/src/content/docs/guide.mdx", "docs/astro.config.mjs"], ("docs",)),
        (["content/posts/a.md", "themes/x/README.md"], ("content",)),
        (["pages/index.mdx", "components/Card.tsx"], ("pages",)),
        (["doc/a.adoc", "docs/b.md"], ("doc", "docs")),
        # No docs folder: the whole tree, its vendored and hidden folders left to the readers.
        (["README.md", "pkg/README.md", "node_modules/x/README.md"], (".",)),
        # A docs folder only inside vendored code is not the repository's.
        (["vendor/lib/docs/a.md", "README.md"], (".",)),
        ([], (".",)),
    ],
)
def test_discovery_finds_the_documentation_folders(
    paths: list[str], roots: tuple[str, ...]
) -> None:
    assert discover(paths) == roots


def test_vendored_generated_and_hidden_folders_are_not_docs() -> None:
    for path in [
        "node_modules/a/README.md",
        "pkg/vendor/x.md",
        "third_party/y/doc.rst",
        "docs/_build/html/index.md",
        ".github/ISSUE_TEMPLATE/bug.md",
        "tests/fixtures/sample.md",
        "dist/README.md",
    ]:
        assert in_vendored(path), path
    for path in ["README.md", "docs/guide/build.md", "docs/vendoring.md", "src/pkg/README.md"]:
        assert not in_vendored(path), path


@pytest.mark.parametrize(
    ("glob", "kept", "left"),
    [
        # A pattern with no slash matches a name at any depth.
        ("CHANGELOG*", ["docs/guide.md"], ["CHANGELOG.md", "docs/CHANGELOG-2.md"]),
        # ** spans any number of folders, none included.
        ("**/i18n/**", ["docs/intro.md", "i18n.md"], ["i18n/fr/a.md", "docs/i18n/de/b.mdx"]),
        # A slash anchors the pattern at the workspace root; * stays in one segment.
        ("docs/*.md", ["docs/api/x.md", "other/docs/a.md"], ["docs/a.md"]),
        ("/docs/api", ["docs/apis.md", "x/docs/api/y.md"], ["docs/api/y.md", "docs/api/z/w.md"]),
        # A pattern naming a folder leaves out all it holds, with or without the slash.
        ("blog/", ["docs/blog.md"], ["blog/a.md", "site/blog/b.md"]),
        ("docs/legacy", ["docs/legacy.md"], ["docs/legacy/a.md"]),
        ("**/*.mdx", ["a.md"], ["a.mdx", "x/y/b.mdx"]),
        ("docs/v[12]/**", ["docs/v3/a.md"], ["docs/v1/a.md", "docs/v2/b/c.md"]),
        ("docs/?.md", ["docs/ab.md"], ["docs/a.md"]),
        ("*.md", ["a.rst"], ["a.md", "x/b.md"]),
    ],
)
def test_exclude_globs_are_gitignore_style(glob: str, kept: list[str], left: list[str]) -> None:
    selection = Selection(exclude=(glob,))
    for path in kept:
        assert selection.keeps(path), (glob, path)
    for path in left:
        assert not selection.keeps(path), (glob, path)


def test_include_keeps_only_its_matches_and_exclude_wins_over_it() -> None:
    selection = Selection(include=("guides/", "*.rst"), exclude=("**/draft-*",))
    assert selection.keeps("docs/guides/a.md")
    assert selection.keeps("docs/api.rst")
    assert not selection.keeps("docs/api.md")
    assert not selection.keeps("docs/guides/draft-x.md")
    assert Selection().keeps("anything/at/all.md")


def test_a_selection_is_stored_as_one_key_and_read_back_the_same() -> None:
    for selection in [
        Selection(),
        Selection(("docs", "website/docs")),
        Selection(None, ("**/*.mdx",), ("**/i18n/**", "CHANGELOG*")),
    ]:
        assert Selection.from_key(selection.key) == selection
    assert Selection(("docs",)).key != Selection(None).key
    with pytest.raises(WorkspaceError, match="cannot be read"):
        Selection.from_key('{"docs": 3')


@pytest.mark.parametrize("glob", ["", "  ", "a\nb", "a\0b", "docs/[ab"])
def test_a_malformed_glob_is_refused_with_an_example(glob: str) -> None:
    with pytest.raises(WorkspaceError, match=r"--exclude"):
        checked_globs([glob], "--exclude")
