"""docs_search under load: concurrent MCP sessions over streamable HTTP against a real
`docshelf serve --http` subprocess with the packaged model, on each real store, while the
server's background sync indexes and promotes new commits. bench/load.py is the long version."""

from __future__ import annotations

import time
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
    assert load.refs() == list(repo.releases)  # each release answered from, in order
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
