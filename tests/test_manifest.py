"""A manifest of repositories: what it may say (unknown keys and wrong types refused by name,
relative paths relative to the file), and `docshelf index --manifest` on real git repositories
and a real store: every workspace indexed with one embedder, a failure reported and the rest
carried on, a summary, exit status 1 when one failed."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from docshelf import app
from docshelf.app.manifest import index_manifest
from docshelf.config import Config
from docshelf.errors import ConfigError
from docshelf.stores import SQLiteStore, is_postgres_url, open_store, postgres_merged
from docshelf.workspace import GitWorkspace
from docshelf.workspace.manifest import ManifestEntry, read_manifest
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder
from tests.test_cli_index import DOCSHELF, docshelf
from tests.test_cli_serve import SYNC_TIMEOUT_SECONDS


def manifest(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "org" / "manifest.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def repo(path: Path, title: str) -> Repo:
    made = Repo(path)
    made.write("docs/runbook.md", f"# {title} runbook\n\nRotate the {title} key every 90 days.\n")
    made.commit(title)
    return made


# -- what a manifest may say ------------------------------------------------------------------


def test_a_manifest_lists_workspaces_with_paths_relative_to_its_folder(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        """
[[workspace]]
source = "../payments"
name = "payments"
ref = "main"
docs = ["docs"]
include = ["**/*.md"]
exclude = ["**/i18n/**"]

[[workspace]]
source = "https://user:secret@git.example.com/shop/checkout.git"

[[workspace]]
source = "git@github.com:shop/search.git"

[[workspace]]
source = "~/src/billing"
""",
    )
    entries = read_manifest(path)
    assert entries[0] == ManifestEntry(
        str(tmp_path / "payments"), "payments", "main", ("docs",), ("**/*.md",), ("**/i18n/**",)
    )
    assert [e.source for e in entries[1:]] == [
        "https://user:secret@git.example.com/shop/checkout.git",
        "git@github.com:shop/search.git",
        "~/src/billing",
    ]
    assert entries[1].label == "https://git.example.com/shop/checkout.git"  # no secret shown
    assert entries[1].docs is None and entries[1].include == ()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[workspace]]\nsource = "a"\ndoc = ["docs"]\n', r"workspace 1: unknown key 'doc'; the"),
        ('[[workspace]]\nsource = "a"\n[settings]\nx = 1\n', r"unknown key 'settings'"),
        ('[[workspace]]\nname = "a"\n', r"workspace 1: source must be a path or a clone URL"),
        ('[[workspace]]\nsource = "  "\n', r"source must be a path or a clone URL"),
        ('[[workspace]]\nsource = "a"\ndocs = "docs"\n', r"docs must be a list of non-empty"),
        ('[[workspace]]\nsource = "a"\nexclude = [1]\n', r"exclude must be a list of non-empty"),
        ('[[workspace]]\nsource = "a"\nname = 7\n', r"name must be a non-empty string; got 7"),
        ('[[workspace]]\nsource = "a"\nref = ""\n', r"ref must be a non-empty string"),
        ("workspace = 3\n", r"lists no workspace; add \[\[workspace\]\] entries"),
        ("", r"lists no workspace"),
        ("[[workspace]\nsource = 1\n", r"is not valid TOML: .*line 1"),
        (
            '[[workspace]]\nsource = "a"\nname = "x"\n[[workspace]]\nsource = "b"\nname = "x"\n',
            r"workspace 2 \(x\): the same workspace as workspace 1",
        ),
        (
            '[[workspace]]\nsource = "a"\n[[workspace]]\nsource = "./a"\n',
            r"workspace 2 \(.*/org/a\): the same workspace as workspace 1",
        ),
    ],
)
def test_a_manifest_that_says_something_docshelf_does_not_know_is_refused_by_name(
    tmp_path: Path, text: str, said: str
) -> None:
    path = manifest(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"manifest {path}.*{said}"):
        read_manifest(path)


def test_a_manifest_that_is_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file; give the path of a TOML manifest"):
        read_manifest(tmp_path / "none.toml")


# -- indexing a manifest ----------------------------------------------------------------------


def test_every_workspace_is_indexed_with_one_embedder_and_a_failure_is_one_outcome(
    tmp_path: Path, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo(tmp_path / "payments", "payments")
    repo(tmp_path / "checkout", "checkout")
    made: list[FakeEmbedder] = []

    def one_embedder(config: Config, *, serving: bool = False) -> FakeEmbedder:
        made.append(FakeEmbedder())
        return made[-1]

    monkeypatch.setattr(app, "configured_embedder", one_embedder)
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 2)
    store = location  # a SQLite file, then a PostgreSQL database
    entries = [
        ManifestEntry(str(tmp_path / "payments"), "payments"),
        ManifestEntry(str(tmp_path / "missing"), "missing"),
        ManifestEntry(str(tmp_path / "checkout"), "checkout", "main"),
    ]
    seen: list[str] = []
    outcomes = index_manifest(
        Config(store=store, mirror_dir=str(tmp_path / "mirrors")),
        entries,
        jobs=2,
        report=lambda o: seen.append(o.entry.label),
    )
    assert seen == ["payments", "missing", "checkout"]  # in the manifest's order
    assert len(made) == 1  # one model for every workspace
    assert [o.result is not None for o in outcomes] == [True, False, True]
    assert outcomes[1].error is not None and "no such file or directory" in outcomes[1].error
    assert len(made[0].texts) == 2  # one chunk of each repository
    with open_store(store, model_id=MODEL, dim=DIM) as opened:
        assert opened.workspaces() == ["checkout", "payments"]
        for name in ("checkout", "payments"):
            assert opened.current(name) is not None
            assert opened.ref_counts(name) == {opened.current(name): 1}
    # On PostgreSQL the run ends merging the term lists of the current refs.
    assert merged_refs(store) == (2 if is_postgres_url(store) else 0)


def merged_refs(location: str) -> int:
    """How many refs the merged term lists of a PostgreSQL store hold (0 on SQLite)."""
    if not is_postgres_url(location):
        return 0
    with psycopg.connect(location) as conn:
        return int((conn.execute("SELECT count(*) FROM docs_merged_refs").fetchone() or (0,))[0])


def test_a_manifest_reads_the_next_workspaces_docs_while_one_indexes_and_each_once(
    tmp_path: Path, one_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"team{i}" for i in range(5)]
    for name in names:
        repo(tmp_path / name, name)
    reads: list[tuple[str, str]] = []
    real = GitWorkspace.read_docs

    def spied(self: GitWorkspace, ref: str, selection: Any = None) -> Any:
        reads.append((self.name, threading.current_thread().name))
        return real(self, ref, selection)

    monkeypatch.setattr(GitWorkspace, "read_docs", spied)
    entries = [ManifestEntry(str(tmp_path / n), n) for n in names]
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "m"))
    outcomes = index_manifest(config, entries, jobs=2)
    assert [o.result is not None and o.result.chunks == 1 for o in outcomes] == [True] * 5
    assert sorted(name for name, _ in reads) == names  # each workspace's docs read once
    assert all(thread.startswith("docshelf-sync") for _, thread in reads)  # ahead, in the pool
    again = index_manifest(config, entries, jobs=2)
    assert all(o.result is not None and o.result.already_indexed for o in again)
    assert len(reads) == 5  # nothing read ahead for commits already indexed


def test_one_commit_is_written_while_the_next_embeds_and_the_model_embeds_for_one_at_a_time(
    tmp_path: Path, one_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"team{i}" for i in range(4)]
    for name in names:
        repo(tmp_path / name, name)
    inside = 0
    most_inside = 0
    lock = threading.Lock()
    team1_embedding = threading.Event()
    real_embed = FakeEmbedder.embed

    def embed(self: FakeEmbedder, texts: Any) -> Any:
        nonlocal inside, most_inside
        with lock:
            inside += 1
            most_inside = max(most_inside, inside)
        if any("team1 runbook" in t for t in texts):
            team1_embedding.set()
        time.sleep(0.05)  # long enough for another caller to arrive if it could
        try:
            return real_embed(self, texts)
        finally:
            with lock:
                inside -= 1

    monkeypatch.setattr(FakeEmbedder, "embed", embed)
    real_write = SQLiteStore.replace_doc_chunks
    overlapped: list[bool] = []

    def write(self: SQLiteStore, workspace: str, ref: str, rows: Any, files: Any = ()) -> None:
        if workspace == "team0":
            # team0's write waits for team1's embedding: indexed one after the other, team1
            # would not start before this write ended, and the wait would time out.
            overlapped.append(team1_embedding.wait(30))
        real_write(self, workspace, ref, rows, files)

    monkeypatch.setattr(SQLiteStore, "replace_doc_chunks", write)
    entries = [ManifestEntry(str(tmp_path / n), n) for n in names]
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "m"))
    seen: list[str] = []
    outcomes = index_manifest(config, entries, jobs=2, report=lambda o: seen.append(o.entry.label))
    assert overlapped == [True]
    assert most_inside == 1  # never two commits' texts in the model at once
    assert seen == names  # reported in the manifest's order
    assert [o.result is not None and o.result.chunks == 1 for o in outcomes] == [True] * 4


def test_two_forks_side_by_side_embed_their_shared_texts_once(
    tmp_path: Path, one_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same docs in two repositories indexed at once: neither finds the other's vectors in
    # the store (upstream's write waits until both have looked theirs up), and the model still
    # embeds each text once.
    looked_up = threading.Semaphore(0)
    real_lookup = SQLiteStore.embeddings_for

    def lookup(self: SQLiteStore, hashes: Any, model_id: str) -> Any:
        found = real_lookup(self, hashes, model_id)
        looked_up.release()
        return found

    real_write = SQLiteStore.replace_doc_chunks

    def write(self: SQLiteStore, workspace: str, ref: str, rows: Any, files: Any = ()) -> None:
        if workspace == "upstream":
            assert looked_up.acquire(timeout=10) and looked_up.acquire(timeout=10)
        real_write(self, workspace, ref, rows, files)

    monkeypatch.setattr(SQLiteStore, "embeddings_for", lookup)
    monkeypatch.setattr(SQLiteStore, "replace_doc_chunks", write)
    for name in ("upstream", "fork"):
        made = Repo(tmp_path / name)
        for i in range(12):
            made.write(f"docs/page{i}.md", f"# Page {i}\n\nShared text number {i}.\n")
        made.commit(name)
    entries = [ManifestEntry(str(tmp_path / n), n) for n in ("upstream", "fork")]
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "m"))
    outcomes = index_manifest(config, entries, jobs=2)
    assert [o.result is not None and o.result.chunks == 12 for o in outcomes] == [True, True]
    sent = one_model[0].texts
    assert len(sent) == len(set(sent)) == 12


def test_an_interrupt_stops_the_commit_under_way_at_its_next_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo(tmp_path / "team0", "team0")
    big = Repo(tmp_path / "team1")
    for i in range(30):
        big.write(f"docs/page{i}.md", f"# Page {i}\n\nTeam 1 text number {i}.\n")
    big.commit("team1")
    made: list[FakeEmbedder] = []

    def one_embedder(config: Config, *, serving: bool = False) -> FakeEmbedder:
        made.append(FakeEmbedder())
        made[-1].batch_chars = 60  # a text or two a batch: team1 takes 15 or more
        return made[-1]

    monkeypatch.setattr(app, "configured_embedder", one_embedder)
    real = FakeEmbedder.embed

    def slow(self: FakeEmbedder, texts: Any) -> Any:
        time.sleep(0.1)
        return real(self, texts)

    monkeypatch.setattr(FakeEmbedder, "embed", slow)

    def interrupted(outcome: Any) -> None:
        raise KeyboardInterrupt

    entries = [ManifestEntry(str(tmp_path / n), n) for n in ("team0", "team1")]
    location = str(tmp_path / "org.sqlite3")
    config = Config(store=location, mirror_dir=str(tmp_path / "m"))
    with pytest.raises(KeyboardInterrupt):
        index_manifest(config, entries, jobs=2, report=interrupted)
    assert len(made[0].calls) < 10  # team1 stopped after a few of its batches
    with open_store(location, model_id=MODEL, dim=DIM) as opened:
        assert opened.current("team0") is not None
        assert opened.current("team1") is None  # nothing of it written


def test_index_manifest_prints_each_workspace_and_a_summary_and_fails_when_one_failed(
    tmp_path: Path,
) -> None:
    repo(tmp_path / "repos" / "payments", "payments")
    repo(tmp_path / "repos" / "checkout", "checkout")
    path = manifest(
        tmp_path,
        """
[[workspace]]
source = "../repos/payments"
name = "payments"

[[workspace]]
source = "../repos/missing"
name = "missing"

[[workspace]]
source = "../repos/checkout"
docs = ["docs"]
""",
    )
    store = str(tmp_path / "org.sqlite3")
    done = docshelf("index", "--manifest", str(path), "--store", store, "--embedder", "none")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("indexed ") and lines[0].split(" of ")[1].startswith("payments:")
    assert lines[2].startswith("failed: missing: ") and "no such file or directory" in lines[2]
    assert f"of {tmp_path / 'repos' / 'checkout'}: 1 file, 1 chunk" in lines[3]
    assert lines[-1] == "manifest: 3 workspaces: 2 indexed, 0 already indexed, 1 failed (missing)"
    again = docshelf(
        "index", "--manifest", str(path), "--store", store, "--embedder", "none", "--json"
    )
    assert again.returncode == 1
    data = json.loads(again.stdout)
    assert data["failed"] == 1
    assert [w["name"] for w in data["workspaces"]] == ["payments", "missing", None]
    assert data["workspaces"][0]["result"]["already_indexed"] is True
    assert data["workspaces"][1]["result"] is None and data["workspaces"][1]["error"]
    found = docshelf("search", "rotate the key", "--store", store, "--workspace", "payments")
    assert found.returncode == 0 and "docs/runbook.md:1-3" in found.stdout


def test_index_manifest_with_the_options_of_one_workspace_is_refused(tmp_path: Path) -> None:
    path = manifest(tmp_path, '[[workspace]]\nsource = "a"\n')
    for extra in (["somewhere"], ["--ref", "main"], ["--docs", "docs"], ["--workspace", "x"]):
        done = docshelf("index", "--manifest", str(path), *extra, "--embedder", "none")
        assert done.returncode == 2
        assert "--manifest lists the workspaces and their options" in done.stderr
    for extra in (["somewhere"], ["--docs", "docs"], ["--workspace", "x"]):
        done = docshelf("serve", "--manifest", str(path), *extra, "--embedder", "none")
        assert done.returncode == 2
        assert f"give {extra[0] if extra[0].startswith('-') else 'SOURCE'} in the" in done.stderr
    bad = manifest(tmp_path, '[[workspace]]\nsource = "a"\nrefs = "main"\n')
    done = docshelf("index", "--manifest", str(bad), "--embedder", "none")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "workspace 1: unknown key 'refs'; the keys are source, name, ref, docs, include, exclude"
    )


# -- serving a manifest: read again each round, checks spread over the interval ----------------


@pytest.fixture
def one_model(monkeypatch: pytest.MonkeyPatch) -> list[FakeEmbedder]:
    """Every embedder the app makes, each a FakeEmbedder."""
    made: list[FakeEmbedder] = []

    def one_embedder(config: Config, *, serving: bool = False) -> FakeEmbedder:
        made.append(FakeEmbedder())
        return made[-1]

    monkeypatch.setattr(app, "configured_embedder", one_embedder)
    return made


def entries_text(*entries: tuple[str, str]) -> str:
    return "".join(
        f'[[workspace]]\nsource = "{source}"\nname = "{name}"\n\n' for name, source in entries
    )


def test_a_served_manifest_is_read_again_each_round_and_its_workspaces_come_and_go(
    tmp_path: Path,
    location: str,
    one_model: list[FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo(tmp_path / "repos" / "payments", "payments")
    repo(tmp_path / "repos" / "checkout", "checkout")
    repo(tmp_path / "repos" / "search", "search")
    path = manifest(
        tmp_path,
        entries_text(("payments", "../repos/payments"), ("checkout", "../repos/checkout")),
    )
    config = Config(store=location, mirror_dir=str(tmp_path / "mirrors"))
    indexed: list[str] = []
    reloads: list[app.Reloaded] = []
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 2)
    with app.open_manifest_service(config, path) as service:
        poller = app.Poller(
            service,
            60.0,
            jobs=2,
            indexed=lambda label, result: indexed.append(label),
            reloaded=reloads.append,
        )
        poller.round(threading.Event(), 0.0)
        assert len(one_model) == 1 and service.labels == ["payments", "checkout"]
        assert sorted(indexed) == ["checkout", "payments"]
        assert reloads[-1] == app.Reloaded([], [])
        # A round that indexed ends merging the term lists (PostgreSQL).
        assert merged_refs(location) == (2 if is_postgres_url(location) else 0)
        found = service.search("rotate the key", 5)
        assert {h.workspace for h in found.hits} == {"payments", "checkout"}
        kept = service.served_as("payments")
        # search added, checkout removed: no restart
        path.write_text(
            entries_text(("search", "../repos/search"), ("payments", "../repos/payments"))
        )
        indexed.clear()
        poller.round(threading.Event(), 0.0)
        assert reloads[-1] == app.Reloaded(["search"], ["checkout"])
        assert service.labels == ["search", "payments"]
        assert service.served_as("payments") is kept  # unchanged: the same indexer and name
        assert indexed == ["search"]
        # A third of the current refs' chunks new: merged again (checkout is still current).
        assert merged_refs(location) == (3 if is_postgres_url(location) else 0)
        assert service.search("rotate the key", 5, workspace="search").hits
        with pytest.raises(ConfigError, match="must be one of search, payments; got 'checkout'"):
            service.search("rotate the key", 5, workspace="checkout")
        assert {h.workspace for h in service.search("rotate the key", 5).hits} == {
            "search",
            "payments",
        }
        # A manifest that is now refused leaves the workspaces served as they are.
        path.write_text('[[workspace]]\nsource = "x"\nrefs = "main"\n')
        poller.round(threading.Event(), 0.0)
        assert reloads[-1].error is not None and "unknown key 'refs'" in reloads[-1].error
        assert service.labels == ["search", "payments"]
        # An entry whose docs changed is opened again, under the name it was shown by.
        path.write_text(
            entries_text(("search", "../repos/search"))
            + '[[workspace]]\nsource = "../repos/payments"\nname = "payments"\ndocs = ["docs"]\n'
        )
        poller.round(threading.Event(), 0.0)
        assert reloads[-1] == app.Reloaded([], [])
        assert service.served_as("payments") is not kept
        assert service.served_as("payments").label == "payments"
    with open_store(location, model_id=MODEL, dim=DIM) as opened:
        # What the store holds of a workspace no longer served stays; no pin is left behind.
        assert opened.workspaces() == ["checkout", "payments", "search"]
        assert all(not opened.pinned_refs(n) for n in opened.workspaces())


def test_a_manifest_entry_that_cannot_be_opened_is_left_out_and_tried_again(
    tmp_path: Path, one_model: list[FakeEmbedder], caplog: pytest.LogCaptureFixture
) -> None:
    repo(tmp_path / "repos" / "payments", "payments")
    path = manifest(
        tmp_path,
        entries_text(("payments", "../repos/payments"), ("later", "../repos/later")),
    )
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "mirrors"))
    with app.open_manifest_service(config, path) as service:
        assert service.labels == ["payments"]
        assert "manifest " in caplog.text and "later: " in caplog.text
        assert "tried again at the next sync" in caplog.text
        repo(tmp_path / "repos" / "later", "later")
        poller = app.Poller(service, 60.0, jobs=1)
        poller.round(threading.Event(), 0.0)
        assert service.labels == ["payments", "later"]
        assert service.search("rotate the key", 5, workspace="later").hits
    nothing = manifest(tmp_path / "other", entries_text(("gone", "../nowhere")))
    with pytest.raises(ConfigError, match=r"none of the workspaces of manifest .* can be opened"):
        app.open_manifest_service(config, nothing)


def test_a_served_clone_url_fetches_only_when_its_remote_moved(
    tmp_path: Path, one_model: list[FakeEmbedder]
) -> None:
    upstream = repo(tmp_path / "upstream", "payments")
    path = manifest(tmp_path, entries_text(("payments", upstream.url)))
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "mirrors"))
    with app.open_manifest_service(config, path) as service:
        source = service.served_as("payments").source
        assert isinstance(source, GitWorkspace)
        poller = app.Poller(service, 60.0, jobs=1)
        poller.round(threading.Event(), 0.0)
        assert not source.fetched  # cloned when opened
        poller.round(threading.Event(), 0.0)
        assert not source.fetched  # nothing moved: git ls-remote only
        upstream.write("docs/runbook.md", "# payments runbook\n\nRotate it every 30 days.\n")
        moved = upstream.commit("30 days")
        poller.round(threading.Event(), 0.0)
        assert source.fetched and service.current("payments") == moved
        poller.round(threading.Event(), 0.0)
        assert not source.fetched


def test_checks_are_spread_over_the_interval_each_in_its_own_slot() -> None:
    labels = [f"ws{i}" for i in range(100)]
    plan = app.spread(labels, 60.0, random.Random(7))
    assert sorted(label for _, label in plan) == sorted(labels)
    assert plan != app.spread(labels, 60.0, random.Random(8))  # another server, other moments
    assert [label for _, label in plan] != labels  # shuffled
    for slot, (offset, _) in enumerate(plan):
        assert slot * 0.6 <= offset < (slot + 1) * 0.6
    assert app.spread([], 60.0, random.Random(7)) == []
    assert app.spread(labels, 0.0, random.Random(7))[-1][0] == 0.0  # the first round: at once


def test_a_round_checks_at_most_jobs_at_once_and_spreads_them_over_its_time(
    tmp_path: Path, one_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"team{i}" for i in range(6)]
    for name in names:
        repo(tmp_path / "repos" / name, name)
    path = manifest(tmp_path, entries_text(*((n, f"../repos/{n}") for n in names)))
    config = Config(store=str(tmp_path / "org.sqlite3"), mirror_dir=str(tmp_path / "mirrors"))
    with app.open_manifest_service(config, path) as service:
        real_check = service.check
        running, most, started = [0], [0], []
        lock = threading.Lock()

        def slow_check(label: str | None = None) -> str | None:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                started.append(time.monotonic())
            time.sleep(0.3)
            try:
                return real_check(label)
            finally:
                with lock:
                    running[0] -= 1

        monkeypatch.setattr(service, "check", slow_check)
        poller = app.Poller(service, 60.0, jobs=2)
        poller.round(threading.Event(), 0.0)  # the first round: all at once, two at a time
        assert most[0] == 2 and len(started) == 6
        assert all(service.current(n) is not None for n in names)
        started.clear()
        begun = time.monotonic()
        poller.round(threading.Event(), 3.0)  # later rounds: one slot of 0.5 s each
        assert len(started) == 6
        assert max(started) - min(started) >= 1.5
        assert max(started) - begun < 3.0


def test_serve_manifest_over_stdio_serves_a_workspace_added_without_a_restart(
    tmp_path: Path,
) -> None:
    repo(tmp_path / "repos" / "payments", "payments")
    path = manifest(tmp_path, entries_text(("payments", "../repos/payments")))
    store = tmp_path / "org.sqlite3"
    log = tmp_path / "stderr.txt"
    args = [
        "serve",
        "--manifest",
        str(path),
        "--sync-interval",
        "1",
        "--store",
        str(store),
        "--embedder",
        "none",
        "--mirror-dir",
        str(tmp_path / "mirrors"),
    ]
    env = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}
    asked = {"query": "rotate the key", "top_k": 5}

    async def until(connected: Client, arguments: dict[str, Any], done: Any) -> CallToolResult:
        deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
        while True:
            answer = await connected.call_tool("docs_search", arguments)
            if done(answer):
                return answer
            assert time.monotonic() < deadline, log.read_text()
            await anyio.sleep(0.3)

    async def session() -> tuple[CallToolResult, CallToolResult, list[str]]:
        params = StdioServerParameters(command=str(DOCSHELF), args=args, env=env)
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as connected:
                first = await until(connected, asked, lambda a: not a.is_error)
                repo(tmp_path / "repos" / "checkout", "checkout")
                path.write_text(
                    entries_text(
                        ("payments", "../repos/payments"), ("checkout", "../repos/checkout")
                    )
                )
                both = await until(
                    connected,
                    asked,
                    lambda a: (
                        not a.is_error
                        and len({h["workspace"] for h in a.structured_content["hits"]}) == 2
                    ),
                )
                listed = (await connected.list_tools()).tools[0].input_schema
                return first, both, listed["properties"]["workspace"]["enum"]

    first, both, enum = anyio.run(session)
    assert first.structured_content["workspace"] == "payments"
    assert {h["workspace"] for h in both.structured_content["hits"]} == {"payments", "checkout"}
    assert enum == ["payments", "checkout"]
    logged = log.read_text()
    assert "docshelf: INFO serving checkout too" in logged
    assert "docshelf: INFO indexed checkout at " in logged
