"""The composition root: the configured embedder and store, built and checked together; a
service's search against a sync that moves the current ref under it."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from docshelf import app
from docshelf.app import configured_embedder, indexing_batch, open_configured_store
from docshelf.config import Config
from docshelf.embedders import LocalEmbedder, OpenAIEmbedder
from docshelf.errors import ConfigError, StoreError
from docshelf.indexer import Indexer
from docshelf.stores import open_store, postgres_merged
from docshelf.stores.postgres import PostgresStore
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource, section_doc
from tests.support.service import build_service


def test_each_embedder_name_builds_its_embedder() -> None:
    assert isinstance(configured_embedder(Config(embedder="local")), LocalEmbedder)
    openai = configured_embedder(
        Config(embedder="openai", base_url="http://127.0.0.1:9/v1", model="m", dimensions=8)
    )
    assert isinstance(openai, OpenAIEmbedder)
    assert openai.dim == 8
    assert configured_embedder(Config(embedder="none")) is None
    with pytest.raises(ConfigError, match="unknown embedder"):
        configured_embedder(Config(embedder="word2vec"))


def test_a_store_made_without_embeddings_refuses_a_model_at_start_up(tmp_path: Path) -> None:
    config = Config(store=str(tmp_path / "store.sqlite3"), embedder="none")
    with open_configured_store(config, None) as store:
        assert (store.model_id, store.dim) == ("none", 0)
    local = LocalEmbedder()
    with pytest.raises(StoreError) as refused:
        open_configured_store(config, local)
    assert "none (0 dimensions)" in str(refused.value)
    assert "all-MiniLM-L6-v2 (384 dimensions)" in str(refused.value)
    assert local.device is None  # refused before any model was loaded


def test_the_store_is_created_for_the_configured_model(tmp_path: Path) -> None:
    config = Config(store=str(tmp_path / "deep" / "store.sqlite3"))
    with open_configured_store(config, LocalEmbedder()) as store:
        assert (store.model_id, store.dim) == ("sentence-transformers/all-MiniLM-L6-v2", 384)


def test_the_local_embedder_never_imports_httpx() -> None:
    code = (
        "import sys\n"
        "from docshelf.app import configured_embedder\n"
        "from docshelf.config import Config\n"
        "configured_embedder(Config())\n"
        "print('httpx' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"


class Interrupted:
    """A store whose first call of `method` runs `meanwhile` first: a sync in another thread or
    process landing between a search's reads."""

    def __init__(self, store: Any, method: str, meanwhile: Callable[[], object]) -> None:
        self._store = store
        self._method = method
        self._meanwhile: Callable[[], object] | None = meanwhile

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if name != self._method or self._meanwhile is None:
            return found

        def interrupted(*args: Any) -> Any:
            if self._meanwhile is not None:
                meanwhile, self._meanwhile = self._meanwhile, None
                meanwhile()
            return found(*args)

        return interrupted


@pytest.mark.parametrize("method", ["has_chunks", "search", "search_text"])
def test_a_search_whose_ref_is_pruned_under_it_answers_whole_from_the_new_current_ref(
    location: str, method: str
) -> None:
    old, new = (hashlib.sha1(name.encode()).hexdigest() for name in ("old", "new"))
    source = MemorySource("shop")
    source.add(old, {"docs/release.md": "# Release\n\nThe old release of the shop.\n"})
    source.add(new, {"docs/release.md": "# Release\n\nThe new release of the shop.\n"})
    embedder = FakeEmbedder()
    with open_store(location, model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, embedder, source)
        indexer.index(old)
        # The sync promotes `new` and prunes `old` after the search has chosen `old`.
        interrupted = Interrupted(store, method, lambda: indexer.index(new))
        service = build_service(interrupted, embedder, "shop", indexer=indexer)
        try:
            answer = service.search("release of the shop", 5)
        finally:
            indexer.close()
        assert store.ref_counts("shop") == {new: 1}
    assert answer.ref == new
    assert answer.note is None
    assert [hit.content for hit in answer.hits] == ["# Release\n\nThe new release of the shop."]


def test_a_batch_size_above_64_reaches_the_local_model_whole(tmp_path: Path) -> None:
    # The indexer hands the embedder 64 texts at a time unless --batch-size asks for more.
    config = Config(store=str(tmp_path / "s.sqlite3"), embedder="local", batch_size=100)
    assert indexing_batch(config) == 100
    assert indexing_batch(Config(batch_size=16)) == 64
    assert indexing_batch(Config()) == 64
    embedder = FakeEmbedder()
    source = MemorySource("shop")
    source.add("c1", {"docs/a.md": section_doc("Many", 150)})
    with open_store(str(tmp_path / "f.sqlite3"), model_id=MODEL, dim=DIM) as store:
        Indexer(store, embedder, source, batch_size=indexing_batch(config)).index("c1")
    assert [len(c) for c in embedder.calls] == [100, 50]


def test_a_served_source_syncs_with_the_docs_selection_its_workspace_was_indexed_with(
    tmp_path: Path,
) -> None:
    from docshelf.app import index_source, open_service  # noqa: PLC0415
    from tests.support.gitrepo import Repo  # noqa: PLC0415

    repo = Repo(tmp_path / "site")
    repo.write("website/docs/intro.mdx", "# Intro\n\nWelcome to the site.\n")
    repo.write("website/docs/i18n/fr/intro.mdx", "# Intro\n\nBienvenue.\n")
    repo.commit("docs")
    config = Config(store=str(tmp_path / "store.sqlite3"), embedder="none")
    first = index_source(config, str(repo.path), exclude=["**/i18n/**"])
    assert (first.roots, first.files, first.excluded) == (("website/docs",), 1, 1)
    repo.write("website/docs/i18n/de/intro.mdx", "# Intro\n\nWillkommen.\n")
    repo.write("website/docs/guide.mdx", "# Guide\n\nRead this first.\n")
    head = repo.commit("more")
    # serve SOURCE --sync-interval: no globs given, the stored ones are used.
    with open_service(config, source=str(repo.path)) as service:
        result = service.sync()
        assert result is not None and result.ref == head
        assert (result.files, result.excluded) == (2, 2)
        assert {h.path for h in service.search("Willkommen Bienvenue", mode="text").hits} == set()
        assert [h.path for h in service.search("Read this first", mode="text").hits] == [
            "website/docs/guide.mdx"
        ]
    # Given on the command line, a selection replaces the stored one.
    with open_service(config, source=str(repo.path), docs=["website"]) as service:
        result = service.sync()
        assert result is not None and result.files == 4


def test_an_index_ends_merging_the_term_lists_and_a_failed_merge_leaves_the_index_standing(
    tmp_path: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(app, "configured_embedder", lambda config, **_: FakeEmbedder())
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 1)
    config = Config(store=postgres_url, mirror_dir=str(tmp_path / "mirrors"))
    shop = Repo(tmp_path / "shop")
    shop.write("docs/runbook.md", "# Runbook\n\nRotate the payments key.\n")
    shop.commit("first")
    app.index_source(config, str(shop.path))
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM docs_merged_refs").fetchone() == (1,)

    def refused(self: PostgresStore, *, force: bool = False) -> int:
        raise StoreError("the merge was refused")

    monkeypatch.setattr(PostgresStore, "merge_term_lists", refused)
    shop.write("docs/runbook.md", "# Runbook\n\nRotate the payments key every 90 days.\n")
    shop.commit("second")
    result = app.index_source(config, str(shop.path))
    assert not result.already_indexed
    assert "merging the term lists: the merge was refused" in caplog.text
    with open_store(postgres_url, model_id=MODEL, dim=DIM) as store:
        assert store.current(result.workspace) == result.ref
