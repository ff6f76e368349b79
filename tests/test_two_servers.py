"""Two `docshelf serve` processes on one PostgreSQL, both syncing the same repository: the
store's indexing lock lets one of them index each commit, once, and a commit pinned by a session
of one server survives the prunes of both."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from docshelf.stores import open_store
from tests.support.load import Answer, ReleaseRepo, problem, read_answer, serve, wait_for_ref

# Two copies of the docs: a release takes a few seconds to embed, so both servers' syncs (a
# second apart) ask for the same commit while one of them indexes it.
COPIES = 3


def checked(result: CallToolResult, repo: ReleaseRepo) -> str:
    """The commit an answer comes from, once it passes the load test's checks."""
    answer = Answer(session=0, started=0.0, seconds=0.0, **read_answer(result))
    why = problem(answer, repo.releases)
    assert why is None, why
    assert answer.ref is not None
    return answer.ref


def test_two_servers_index_each_commit_once_and_keep_each_other_s_pins(
    postgres_url: str, tmp_path: Path
) -> None:
    repo = ReleaseRepo(tmp_path / "shop", copies=COPIES)
    first = repo.release()
    sync = ("--sync-interval", "1")
    # The pinned session asks again and again: each answer is checked whole (repeat).
    query = {"query": "who owns checkout?", "top_k": 5, "repeat": True}
    with (
        serve(repo.path, postgres_url, tmp_path / "a.log", *sync) as a,
        serve(repo.path, postgres_url, tmp_path / "b.log", *sync) as b,
    ):
        workspace = str(repo.path.resolve())

        def stored_counts() -> dict[str, int]:
            with open_store(postgres_url, model_id=None, dim=None) as store:
                return store.ref_counts(workspace)

        async def scenario() -> tuple[list[str], str, dict[str, int]]:
            await wait_for_ref(a.url, first)
            await wait_for_ref(b.url, first)
            async with AsyncExitStack() as stack:
                # A session of server A pinned to the first release, held while B syncs.
                pinned = await stack.enter_async_context(
                    Client(streamable_http_client(f"{a.url}?ref={first}"), mode="legacy")
                )
                answered = [checked(await pinned.call_tool("docs_search", query), repo)]
                for _ in range(2):
                    commit = await anyio.to_thread.run_sync(repo.release)
                    await wait_for_ref(b.url, commit)
                    await wait_for_ref(a.url, commit)
                    answered.append(checked(await pinned.call_tool("docs_search", query), repo))
                # B's sessions pinned to it too answer from the first release.
                async with Client(
                    streamable_http_client(f"{b.url}?ref={first}"), mode="legacy"
                ) as on_b:
                    from_b = checked(await on_b.call_tool("docs_search", query), repo)
                # Read while the pin is held: once it is released, the next sync prunes it.
                counts = await anyio.to_thread.run_sync(stored_counts)
            return answered, from_b, counts

        answered, from_b, counts = anyio.run(scenario)
        logs = a.logged() + b.logged()
        indexed = a.indexed() + b.indexed()
    assert answered == [first, first, first]
    assert from_b == first
    last = repo.latest()
    # The middle release was promoted, then pruned; the first one, pinned, was kept.
    assert sorted(counts) == sorted([first, last])
    assert counts[first] == counts[last]
    # Each commit indexed by one server, once: the other found it indexed.
    assert sorted(indexed) == sorted(c[:12] for c in repo.releases), logs
    assert "ERROR" not in logs and "Traceback" not in logs, logs
    with open_store(postgres_url, model_id=None, dim=None) as store:
        assert store.pinned_refs(workspace) == set()  # released when the servers stopped
