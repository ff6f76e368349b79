"""The Python API: what `import docshelf` offers, used as a user would, with names from
`docshelf.__all__` only."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

import docshelf
from docshelf.mcp_server import build_server
from tests.support.gitrepo import Repo, write_shop_docs


def test_everything_in_all_is_importable_and_nothing_public_is_missing() -> None:
    for name in docshelf.__all__:
        assert hasattr(docshelf, name), name
    public = {n for n in vars(docshelf) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(docshelf.__all__)


def test_errors_share_one_base() -> None:
    for error in (
        docshelf.ConfigError,
        docshelf.EmbeddingError,
        docshelf.StoreError,
        docshelf.WorkspaceError,
        docshelf.IndexingError,
        docshelf.NotIndexedError,
    ):
        assert issubclass(error, docshelf.DocshelfError)


@pytest.fixture
def shop(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "shop")
    write_shop_docs(repo)
    repo.commit("docs")
    return repo


def test_index_then_open_and_search_gives_the_hits_the_tool_gives(
    shop: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "docs.sqlite3"
    result = docshelf.index(shop.path, store=store, embedder="none")
    assert isinstance(result, docshelf.IndexResult)
    assert result.ref == shop.head()
    assert result.chunks > 0
    with docshelf.open(store, embedder="none") as shelf:
        assert isinstance(shelf, docshelf.Service)
        answer = shelf.search("payment gateway timeout")
        assert isinstance(answer, docshelf.Answer)
        assert answer.ref == shop.head()
        assert 1 <= len(answer.hits) <= 5
        assert all(isinstance(hit, docshelf.Hit) for hit in answer.hits)
        assert answer.hits[0].path == "docs/runbooks/payments.md"
        assert len(shelf.search("payment gateway timeout", top_k=1).hits) == 1

        async def through_the_tool() -> Any:
            async with Client(build_server(shelf)) as connected:
                called = await connected.call_tool("docs_search", {"query": answer.query})
                return called.structured_content

        structured = anyio.run(through_the_tool)
    # The same data, as JSON carries it (a hit's `copies` is a tuple in Python).
    assert structured["hits"] == json.loads(
        json.dumps([dataclasses.asdict(hit) for hit in answer.hits])
    )


def test_the_service_reads_outlines_and_narrows_and_serves_every_workspace_of_the_store(
    shop: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "docs.sqlite3"
    billing = Repo(tmp_path / "billing")
    billing.write("docs/invoices.md", "# Invoices\n\nInvoices time out after 60 seconds.\n")
    billing.commit("docs")
    docshelf.index(shop.path, store=store, embedder="none")
    with docshelf.open(store, embedder="none") as shelf:
        read = shelf.read("docs/runbooks/payments.md", 3, 5)
        assert isinstance(read, docshelf.Reading)
        assert (read.start_line, read.end_line, read.lines[0]) == (3, 5, "## Timeout")
        outline = shelf.outline("docs/runbooks/")
        assert isinstance(outline, docshelf.DocsOutline)
        assert [f.path for f in outline.files] == ["docs/runbooks/payments.md"]
        narrow = shelf.search("owned", path="docs/runbooks/")
        assert {h.path for h in narrow.hits} <= {"docs/runbooks/payments.md"}
    docshelf.index(billing.path, store=store, embedder="none")
    with docshelf.open(store, embedder="none") as shelf:  # both workspaces now
        assert sorted(shelf.labels) == ["billing", "shop"]
        answer = shelf.search("seconds")
        assert {h.workspace for h in answer.hits} == {"shop", "billing"}
        assert {h.workspace for h in shelf.search("seconds", workspace="billing").hits} == {
            "billing"
        }
        overview = shelf.outline()
        assert isinstance(overview, docshelf.WorkspacesPage)
        assert (overview.page, overview.pages, overview.total) == (1, 1, 2)
        assert all(isinstance(v, docshelf.WorkspaceOverview) for v in overview.views)
    with docshelf.open(store, workspace=str(shop.path.resolve()), embedder="none") as one:
        assert not one.several and one.search("seconds").ref == shop.head()


def test_paths_starting_with_a_tilde_are_the_home_folder(
    shop: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    result = docshelf.index("~/shop", store="~/stores/docs.sqlite3", embedder="none")
    assert result.ref == shop.head()
    assert (tmp_path / "stores" / "docs.sqlite3").is_file()
    assert not Path("~").exists()
    with docshelf.open("~/stores/docs.sqlite3", embedder="none") as shelf:
        assert shelf.search("owns checkout", top_k=1).hits[0].path.startswith("docs/")


def test_opening_a_store_that_holds_nothing_says_to_index_first(tmp_path: Path) -> None:
    with pytest.raises(docshelf.DocshelfError, match="docshelf index"):
        docshelf.open(tmp_path / "empty.sqlite3", embedder="none")


def test_importing_docshelf_loads_neither_numpy_nor_torch() -> None:
    code = "import sys, docshelf; print([m for m in ('numpy', 'torch') if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
