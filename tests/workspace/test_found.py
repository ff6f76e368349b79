"""Docs found at a commit as the site's generator lays them out, and the files they include,
through a real git repository: on every real site tree of ../shared/data/sites, and on small
repositories made for one rule each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.chunking import chunk_file
from docshelf.indexer import file_chunks
from docshelf.workspace import open_workspace
from tests.support.gitrepo import Repo
from tests.support.sites import (
    EXPECTED_NOT_READ,
    EXPECTED_ROOTS,
    TREES,
    file_markup,
    is_include_chunk,
    site_repo,
)

DOCSHELF = Path(sys.executable).parent / "docshelf"

# The share of chunks that may still hold generator markup (the bound).
MAX_MARKUP_SHARE = 0.02


def _docs(path: Path, **options: object):  # type: ignore[no-untyped-def]
    ws = open_workspace(str(path), mirrors_dir=path.parent / "mirrors", **options)  # type: ignore[arg-type]
    ref = ws.sync()
    return ws, ref, ws.read_docs(ref)


@pytest.mark.parametrize("tree", TREES)
def test_every_real_site_reads_the_roots_its_readme_names_and_no_markup(
    tree: str, tmp_path: Path
) -> None:
    repo = site_repo(tree, tmp_path / tree)
    _, _, docs = _docs(repo.path)
    assert docs.roots == EXPECTED_ROOTS[tree]
    assert docs.layout is not None
    described = docs.layout.describe()
    for folder in EXPECTED_NOT_READ[tree]:
        assert folder in described, described
    chunks = marked = 0
    for f in docs.files:
        cut = file_chunks(f, docs.included.get(f.path, ()))
        chunks += len(cut)
        marked += len(file_markup(cut, f.kind))
        assert not any(is_include_chunk(c.content) for c in cut), f.path
    assert marked / chunks < MAX_MARKUP_SHARE, (tree, marked, chunks)


def test_docusaurus_versions_blog_and_partials_are_not_read_and_a_partial_is_included(
    tmp_path: Path,
) -> None:
    repo = site_repo("docusaurus-jest", tmp_path / "jest")
    _, _, docs = _docs(repo.path)
    paths = {f.path for f in docs.files}
    assert not any(p.startswith(("website/versioned_docs/", "website/blog/")) for p in paths)
    assert "docs/_TypeScriptExamplesNote.md" in paths  # included by five pages
    pages = docs.included["docs/_TypeScriptExamplesNote.md"]
    assert "docs/ExpectAPI.md" in pages
    note = next(f for f in docs.files if f.path == "docs/_TypeScriptExamplesNote.md")
    (first, *_) = file_chunks(note, pages)
    assert first.heading.startswith(f"included in {pages[0]} and {len(pages) - 1} more")


def test_docs_named_bring_back_what_the_site_leaves_out(tmp_path: Path) -> None:
    repo = site_repo("docusaurus-jest", tmp_path / "jest")
    _, _, docs = _docs(repo.path, docs=["website/versioned_docs"])
    assert docs.roots == ("website/versioned_docs",)
    assert len(docs.files) == 115


def test_a_translated_site_reads_its_default_language_only(tmp_path: Path) -> None:
    for configs in (True, False):  # the locale folders say it even without the config
        repo = site_repo("vitepress-i18n", tmp_path / f"i18n-{configs}", configs=configs)
        _, _, docs = _docs(repo.path)
        # With the config, its rewrite serves docs/en at the root; without, the seven
        # translation folders beside it are left out.
        assert docs.roots == (("docs/en",) if configs else ("docs",))
        pages = {f.path for f in docs.files}
        assert len([p for p in pages if p.startswith("docs/en/")]) == 36
        translations = ("zh", "pt", "ru", "es", "ko", "fa", "ja")
        assert not [p for p in pages if p.split("/")[1] in translations]


def test_a_page_of_one_snippet_line_indexes_the_snippet_at_its_own_path(tmp_path: Path) -> None:
    repo = site_repo("mkdocs-chezmoi", tmp_path / "chezmoi")
    _, _, docs = _docs(repo.path)
    snippets = [f for f in docs.files if f.path.startswith("assets/chezmoi.io/snippets/")]
    assert len(snippets) == 12  # each once, however many pages include it
    for f in snippets:
        assert docs.included[f.path]
        for c in file_chunks(f, docs.included[f.path]):
            assert c.heading.startswith("included in assets/chezmoi.io/docs/"), c.heading


def test_includes_that_cannot_be_followed_are_skipped_lines_naming_the_page(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "r")
    repo.write("mkdocs.yml", "site_name: x\nmarkdown_extensions:\n  - pymdownx.snippets\n")
    repo.write("docs/index.md", '# Home\n\n--8<-- "missing.md"\n\nSome words of the home page.\n')
    repo.write("docs/a.md", '# A\n\n--8<-- "../../../etc/passwd"\n\nWords of page a.\n')
    repo.write("docs/b.md", '# B\n\n--8<-- "docs/c.md"\n\nWords of page b.\n')
    repo.write("docs/c.md", '# C\n\n--8<-- "docs/b.md"\n\nWords of page c.\n')
    repo.write("secret.md", "# Secret\n\nnot docs\n")
    repo.symlink("docs/link.md", "../secret.md")
    repo.write("docs/d.md", '# D\n\n--8<-- "docs/link.md"\n\nWords of page d.\n')
    repo.commit("c1")
    _, _, docs = _docs(repo.path)
    skipped = {s.path: s.reason for s in docs.skipped}
    assert "no such file" in skipped["docs/index.md"]
    assert "leaves the repository" in skipped["docs/a.md"]
    assert "symbolic link" in skipped["docs/d.md"]
    assert any("cycle" in reason for reason in skipped.values()), skipped
    assert "secret.md" not in {f.path for f in docs.files}
    for f in docs.files:  # no include line is a chunk's text
        assert all("--8<--" not in c.content for c in chunk_file(f.path, f.text, f.kind))


def test_a_folder_named_test_inside_a_found_root_is_read_and_vendored_code_is_a_skipped_line(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "r")
    repo.write("docs/index.md", "# Home\n\nWelcome.\n")
    repo.write("docs/test/setup.md", "# Testing a setup\n\nRun the checks.\n")
    repo.write("docs/node_modules/pkg/README.md", "# Vendored\n\nNot ours.\n")
    repo.write("docs/node_modules/pkg/CHANGES.md", "# Changes\n\nNot ours.\n")
    repo.commit("c1")
    _, _, docs = _docs(repo.path)
    assert {f.path for f in docs.files} == {"docs/index.md", "docs/test/setup.md"}
    # What a root holds and is not read is a skipped line, with its count and the way back.
    (vendored,) = docs.skipped
    assert vendored.path == "docs/node_modules"
    assert "2 documentation files not read" in vendored.reason
    assert "--docs docs/node_modules" in vendored.reason


def test_the_whole_tree_fallback_counts_files_per_top_folder_and_what_it_left_out(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "r")
    repo.write("README.md", "# Tool\n\nWhat it does.\n")
    repo.write("guide/a.md", "# A\n\nwords\n")
    repo.write("guide/b.md", "# B\n\nwords\n")
    repo.write("pkg/README.md", "# Pkg\n\nwords\n")
    repo.write("node_modules/x/README.md", "# Vendored\n\nwords\n")
    repo.write("tests/fixtures/sample.md", "# Fixture\n\nwords\n")
    repo.commit("c1")
    _, _, docs = _docs(repo.path)
    assert docs.layout is not None
    assert dict(docs.layout.folders) == {"guide": 2, "pkg": 1, ".": 1}
    assert docs.layout.left_out == 2


def test_an_unreadable_config_falls_back_and_says_so(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.write("mkdocs.yml", b"site_name: [unclosed\n\xff\xfe not text\n")
    repo.write("docs/index.md", "# Home\n\nWelcome.\n")
    repo.commit("c1")
    _, _, docs = _docs(repo.path)
    assert docs.roots == ("docs",)
    assert docs.layout is not None
    assert any("mkdocs.yml" in note for note in docs.layout.notes), docs.layout.notes


def test_docshelf_index_names_the_site_and_what_it_does_not_read(tmp_path: Path) -> None:
    repo = site_repo("docusaurus-jest", tmp_path / "jest")
    store = tmp_path / "s.db"
    run = subprocess.run(
        [
            str(DOCSHELF),
            "index",
            str(repo.path),
            "--store",
            str(store),
            "--embedder",
            "none",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "docs: docs (Docusaurus; not read: " in run.stdout
    assert "website/versioned_docs" in run.stdout
    again = subprocess.run(
        [
            str(DOCSHELF),
            "index",
            str(repo.path),
            "--store",
            str(store),
            "--embedder",
            "none",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(again.stdout)
    (site,) = data["docs"]["sites"]
    assert site["generator"] == "Docusaurus"
    assert site["roots"] == ["docs"]
    assert "website/versioned_docs" in site["not_read"]
