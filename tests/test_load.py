"""docs_search under load: concurrent MCP sessions over streamable HTTP against a real
`docshelf serve --http` subprocess with the packaged model, on each real store, while the
server's background sync indexes and promotes new commits. bench/load.py is the long version."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import anyio

from docshelf.stores import open_store
from tests.support.load import (
    SYNC_TIMEOUT_SECONDS,
    Load,
    ReleaseRepo,
    percentile_ms,
    problem,
    serve,
    wait_for_ref,
)

SESSIONS = 8

# The calls go on at least this long, and until every session has answered from the last commit.
MIN_SECONDS = 4.0

# Releases committed while the calls run, each once the previous one is answered from.
NEW_RELEASES = 2


def test_every_answer_comes_whole_from_one_commit_while_syncs_promote_new_ones(
    location: str, tmp_path: Path
) -> None:
    repo = ReleaseRepo(tmp_path / "shop")
    first = repo.release()
    with serve(repo.path, location, tmp_path / "serve.log", "--sync-interval", "1") as server:
        anyio.run(wait_for_ref, server.url, first)
        load = Load(server.url, SESSIONS)

        async def until(load: Load) -> None:
            started = time.monotonic()
            for _ in range(NEW_RELEASES):
                await anyio.sleep(0.5)
                commit = await anyio.to_thread.run_sync(repo.release)
                deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
                while commit not in load.refs():
                    assert time.monotonic() < deadline, server.logged()
                    await anyio.sleep(0.1)
            # Every session moves to the last commit, each having called throughout.
            last = repo.latest()
            deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
            while time.monotonic() - started < MIN_SECONDS or not all(
                any(a.session == i and a.ref == last for a in load.answers) for i in range(SESSIONS)
            ):
                assert time.monotonic() < deadline, server.logged()
                await anyio.sleep(0.1)

        anyio.run(load.run, until)
        logged = server.logged()
    wrong = [(a, why) for a in load.answers if (why := problem(a, repo.releases)) is not None]
    assert not wrong, f"{len(wrong)} of {len(load.answers)} answers wrong, e.g. {wrong[:5]}"
    assert set(load.refs()) == set(repo.releases)  # each release answered from
    # In order within each session, whose calls follow one another (across sessions, a call
    # that started first may read the current ref after one that started later).
    in_order(load, repo.releases)
    assert {a.session for a in load.answers} == set(range(SESSIONS))
    indexed = [line.split()[3][:12] for line in logged.splitlines() if " INFO indexed " in line]
    assert indexed == [c[:12] for c in repo.releases], logged
    assert "ERROR" not in logged and "Traceback" not in logged, logged
    with open_store(location, model_id=None, dim=None) as store:
        # The earlier releases were pruned while the calls ran; nothing pinned them.
        assert list(store.ref_counts(str(repo.path.resolve()))) == [repo.latest()]
    seconds = [a.seconds for a in load.answers]
    print(
        f"{len(seconds)} calls, p50 {percentile_ms(seconds, 0.5):.0f} ms, "
        f"p99 {percentile_ms(seconds, 0.99):.0f} ms"
    )


def test_a_manifest_of_several_repositories_answers_each_whole_from_one_commit_under_load(
    location: str, tmp_path: Path
) -> None:
    teams = {f"team{i}": ReleaseRepo(tmp_path / f"team{i}") for i in range(3)}
    for repo in teams.values():
        repo.release()
    manifest = tmp_path / "org.toml"
    manifest.write_text(
        "".join(f'[[workspace]]\nsource = "{r.path}"\nname = "{n}"\n\n' for n, r in teams.items())
    )
    more = ("--manifest", str(manifest), "--sync-interval", "1", "--jobs", "2")
    with serve(None, location, tmp_path / "serve.log", *more) as server:
        for name, repo in teams.items():
            anyio.run(partial(wait_for_ref, server.url, repo.latest(), workspace=name))
        load = Load(server.url, 2 * len(teams), workspaces=list(teams))

        async def until(load: Load) -> None:
            started = time.monotonic()
            for _ in range(NEW_RELEASES):
                await anyio.sleep(0.5)
                made = [await anyio.to_thread.run_sync(r.release) for r in teams.values()]
                deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
                while not set(made) <= set(load.refs()):
                    assert time.monotonic() < deadline, server.logged()
                    await anyio.sleep(0.1)
            last = {name: repo.latest() for name, repo in teams.items()}
            deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
            while time.monotonic() - started < MIN_SECONDS or not all(
                any(a.session == i and a.ref == last[a.workspace or ""] for a in load.answers)
                for i in range(load.sessions)
            ):
                assert time.monotonic() < deadline, server.logged()
                await anyio.sleep(0.1)

        anyio.run(load.run, until)
        logged = server.logged()
    releases = {c: n for repo in teams.values() for c, n in repo.releases.items()}
    wrong = [(a, why) for a in load.answers if (why := problem(a, releases)) is not None]
    assert not wrong, f"{len(wrong)} of {len(load.answers)} answers wrong, e.g. {wrong[:5]}"
    for answer in load.answers:  # each from the workspace asked, and a commit of its repository
        assert set(answer.answered_by) == {answer.workspace}
        assert answer.ref in teams[answer.workspace or ""].releases
    in_order(load, releases)
    for name, repo in teams.items():
        assert repo.latest() in {a.ref for a in load.answers if a.workspace == name}
    assert "ERROR" not in logged and "Traceback" not in logged, logged
    with open_store(location, model_id=None, dim=None) as store:
        for name, repo in teams.items():
            assert list(store.ref_counts(name)) == [repo.latest()]  # pruned under load


def in_order(load: Load, releases: dict[str, int]) -> None:
    """Each session answered from releases in the order they were made."""
    for session in range(load.sessions):
        seen = [releases[a.ref] for a in load.answers if a.session == session and a.ref]
        assert seen == sorted(seen), (session, seen)
