"""`serve --read-store`: searches, reads and outlines answered from a real PostgreSQL streaming
replica (a hot standby made with pgserver's own pg_basebackup), pins and indexing on the
primary; a pinned commit the replica has not replayed yet waited for a bounded time, then
answered from the commit the replica holds, and said so; reads going on with the primary
stopped."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from docshelf import app
from docshelf.app import service as service_module
from docshelf.config import Config
from docshelf.errors import ConfigError
from tests.support.gitrepo import Repo
from tests.support.indexing import FakeEmbedder
from tests.support.standby import Pair, primary_and_standby
from tests.test_cli_index import DOCSHELF, docshelf


@pytest.fixture
def pair() -> Iterator[Pair]:
    with primary_and_standby() as made:
        yield made


@pytest.fixture
def one_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "configured_embedder", lambda config, serving=False: FakeEmbedder())


def runbook(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "payments")
    repo.write("docs/runbook.md", "# Payments runbook\n\nRotate the payments key every 90 days.\n")
    repo.commit("first")
    return repo


def test_reads_come_from_the_replica_and_a_pin_it_lacks_is_waited_for_then_said(
    pair: Pair, tmp_path: Path, one_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = runbook(tmp_path)
    first = repo.head()
    config = Config(store=pair.primary, mirror_dir=str(tmp_path / "mirrors"))
    app.index_source(config, str(repo.path))
    pair.caught_up()
    monkeypatch.setattr(service_module, "REPLICA_WAIT_SECONDS", 0.6)
    replicated = Config(
        store=pair.primary, read_store=pair.standby, mirror_dir=str(tmp_path / "mirrors")
    )
    with app.open_service(replicated, source=str(repo.path)) as service:
        assert service.reads is not service.store
        assert service.search("rotate the key", 3).ref == first
        pair.pause_replay()
        repo.write("docs/runbook.md", "# Payments runbook\n\nRotate the key every 30 days.\n")
        second = repo.commit("30 days")
        result = service.sync()
        assert result is not None and result.ref == second
        assert service.store.current(service.workspace) == second  # the primary moved
        # The replica has not replayed it: an unpinned call answers from what the replica holds.
        assert service.current() == first
        unpinned = service.search("rotate the key", 3)
        assert (unpinned.ref, unpinned.note) == (first, None)
        assert "90 days" in unpinned.hits[0].content
        pins, release = service.pin_all([second])
        started = time.monotonic()
        lagging = service.search("rotate the key", 3, ref=pins)
        assert time.monotonic() - started >= 0.6  # waited for the replica, a bounded time
        assert lagging.ref == first
        assert lagging.note is not None
        assert f"pinned to commit {second[:12]}, which is indexed but not yet on the replica" in (
            lagging.note
        )
        assert f"come from commit {first[:12]}, the latest the replica holds" in lagging.note
        reading = service.read("docs/runbook.md", ref=pins)
        assert reading.ref == first and "not yet on the replica" in (reading.note or "")
        pair.resume_replay()
        pair.caught_up()
        caught = service.search("rotate the key", 3, ref=pins)
        assert (caught.ref, caught.note) == (second, None)
        assert "30 days" in caught.hits[0].content
        # A replica that replays within the wait is waited for, and answers the pinned commit.
        pair.pause_replay()
        repo.write("docs/runbook.md", "# Payments runbook\n\nRotate the key every week.\n")
        third = repo.commit("weekly")
        assert (service.sync() or pytest.fail("not indexed")).ref == third
        third_pins, release_third = service.pin_all([third])

        def resume_soon() -> None:
            time.sleep(0.2)
            pair.resume_replay()

        threading.Thread(target=resume_soon).start()
        waited = service.search("rotate the key", 3, ref=third_pins)
        assert (waited.ref, waited.note) == (third, None)
        release_third()
        release()
        # The primary stops: searches, reads and outlines go on from the replica.
        pair.caught_up()
        pair.stop_primary()
        assert service.search("rotate the key", 3).ref == third
        assert "Rotate the key every week." in service.read("docs/runbook.md").lines
        outline = service.outline()
        assert not isinstance(outline, list) and outline.ref == third


def test_a_read_store_beside_a_store_that_is_not_postgresql_is_refused(tmp_path: Path) -> None:
    config = Config(store=str(tmp_path / "store.sqlite3"), read_store="postgresql://x@/y")
    with pytest.raises(ConfigError, match="--read-store names a PostgreSQL streaming replica"):
        app.open_read_store(config, object())  # type: ignore[arg-type]
    served = docshelf(
        "serve", "--store", str(tmp_path / "s.sqlite3"), "--read-store", "postgresql://x@/y"
    )
    assert served.returncode == 1
    assert "--read-store names a PostgreSQL streaming replica" in served.stderr


def test_serve_manifest_with_read_store_answers_from_the_replica_over_stdio(
    pair: Pair, tmp_path: Path
) -> None:
    repo = runbook(tmp_path)
    first = repo.head()
    manifest = tmp_path / "org.toml"
    manifest.write_text(f'[[workspace]]\nsource = "{repo.path}"\nname = "payments"\n')
    indexed = docshelf(
        "index", "--manifest", str(manifest), "--store", pair.primary, "--embedder", "none"
    )
    assert indexed.returncode == 0, indexed.stderr
    pair.caught_up()
    pair.pause_replay()
    repo.write("docs/runbook.md", "# Payments runbook\n\nRotate the key every 30 days.\n")
    second = repo.commit("30 days")
    again = docshelf(
        "index", "--manifest", str(manifest), "--store", pair.primary, "--embedder", "none"
    )
    assert again.returncode == 0, again.stderr
    args = [
        "serve",
        "--manifest",
        str(manifest),
        "--store",
        pair.primary,
        "--read-store",
        pair.standby,
        "--embedder",
        "none",
    ]
    env = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}

    async def ask() -> Any:
        params = StdioServerParameters(command=str(DOCSHELF), args=args, env=env)
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as connected:
                return await connected.call_tool("docs_search", {"query": "rotate the key"})

    behind = anyio.run(ask)
    assert behind.structured_content["ref"] == first  # the replica's commit, not the primary's
    assert "90 days" in behind.structured_content["hits"][0]["content"]
    pair.resume_replay()
    pair.caught_up()
    now = anyio.run(ask)
    assert now.structured_content["ref"] == second
