"""Faults under the real command line and the real server: `docshelf index` killed with SIGKILL
at random points, PostgreSQL stopped and started under `docshelf serve`, and an embeddings
endpoint that is down, too slow or answers garbage. Each time: a clear error or error result,
the previous ref intact and served, and the next call or run works without a restart.

The SQLite store's own faults (a full disk, a read-only file) are in tests/stores/
test_sqlite_faults.py; the long version of the kill test is bench/kill.py.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pgserver
import psycopg
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult
from pgserver._commands import pg_ctl

from docshelf.embedders.openai_http import OpenAIEmbedder
from docshelf.errors import IndexingError
from docshelf.indexer import Indexer
from docshelf.mcp_server import build_server
from docshelf.stores import open_store
from docshelf.stores.postgres import POOL_TIMEOUT_SECONDS
from tests.embedders.openai_server import EmbeddingsServer, Reply
from tests.support.gitrepo import Repo
from tests.support.indexing import MODEL, FakeEmbedder, MemorySource, section_doc
from tests.support.kill_rounds import MID_WRITE, run_rounds
from tests.support.service import build_service
from tests.support.serving import shop_repo
from tests.test_cli_index import DOCSHELF, docshelf

# Asked again and again in one session: each answer is compared whole (repeat).
QUESTION = {"query": "who owns checkout?", "top_k": 1, "repeat": True}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return shop_repo(tmp_path)


@pytest.fixture
def sqlite_location(tmp_path: Path) -> str:
    return str(tmp_path / "docshelf.sqlite3")


@pytest.fixture
def endpoint() -> Iterator[EmbeddingsServer]:
    """A real OpenAI-compatible endpoint serving tests.support.indexing's deterministic vectors."""
    server = EmbeddingsServer(FakeEmbedder()).start()  # type: ignore[arg-type]
    yield server
    server.stop()


def openai_flags(endpoint: EmbeddingsServer) -> list[str]:
    return ["--embedder", "openai", "--base-url", endpoint.base_url, "--model", MODEL]


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert block.type == "text"
    return block.text


def serve_params(store: str, *flags: str) -> StdioServerParameters:
    env = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}
    return StdioServerParameters(
        command=str(DOCSHELF), args=["serve", "--store", store, *flags], env=env
    )


# -- SIGKILL at random points ---------------------------------------------------------------------

# Chunks of each commit of the fast version (bench/kill.py uses 3000), and its kills per store:
# one in embedding, one in writing (at a drawn point, in the write or just after it), and one
# mid-write (inside the transaction of the rows, seen open at the kill), so every run kills a
# half-written ref and all-or-nothing is tested.
KILL_CHUNKS = 500
KILL_PHASES = ["embedding", "writing", MID_WRITE]


def test_docshelf_index_killed_at_random_points_leaves_the_previous_ref_serving(
    location: str, tmp_path: Path
) -> None:
    seed = int(os.environ.get("DOCSHELF_KILL_SEED") or secrets.randbits(32))
    print(f"kill points drawn with seed {seed} (DOCSHELF_KILL_SEED={seed} draws them again)")
    kind = "postgresql" if location.startswith("postgresql") else "sqlite"
    try:
        rounds = run_rounds(
            tmp_path,
            location,
            kind,
            chunks=KILL_CHUNKS,
            rounds=len(KILL_PHASES),
            rng=random.Random(seed),
            phases=KILL_PHASES,
        )
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from e
    assert [r.point.phase for r in rounds] == KILL_PHASES
    assert {r.outcome for r in rounds} <= {"none", "all, not current", "all, current"}
    for r in rounds:
        print(f"round {r.number}: {r.point.phase} at {r.killed_at:.3f} s, in write: {r.in_write}")
    # The mid-write kill came while the transaction of the rows was open, none of them committed
    # (a round whose drawn look came after the write is run again at its first look).
    mid_write = [r for r in rounds if r.point.phase == MID_WRITE]
    assert [r.in_write for r in mid_write] == [True], f"seed {seed}: {mid_write}"


# A manifest of several repositories killed at random points: each workspace is whole at its
# previous commit or at the new one, never between, and the next run indexes the rest.
MANIFEST_TEAMS = 3
MANIFEST_FILES = 6  # files per commit of each team, 10 chunks each
MANIFEST_KILLS = 3


def test_docshelf_index_manifest_killed_at_random_points_leaves_each_workspace_whole(
    location: str, tmp_path: Path
) -> None:
    seed = int(os.environ.get("DOCSHELF_KILL_SEED") or secrets.randbits(32))
    print(f"kill times drawn with seed {seed} (DOCSHELF_KILL_SEED={seed} draws them again)")
    rng = random.Random(seed)
    commits: dict[str, dict[str, str]] = {}
    for t in range(MANIFEST_TEAMS):
        repo = Repo(tmp_path / f"team{t}")
        commits[f"team{t}"] = {}
        for name, word in (("A", "alpha"), ("B", "bravo")):
            for old in (repo.path / "docs").glob("*.md"):
                old.unlink()
            for i in range(MANIFEST_FILES):
                repo.write(f"docs/{word}{i}.md", section_doc(f"Team {t} {word} {i}", 10, word))
            commits[f"team{t}"][name] = repo.commit(name)
    chunks = MANIFEST_FILES * 10
    manifest = tmp_path / "org.toml"
    endpoint = EmbeddingsServer(FakeEmbedder()).start()  # type: ignore[arg-type]
    # Slow enough batches that a kill drawn over a clean run's time lands among the workspaces.
    endpoint.fallback = Reply(delay=0.15)

    def command(target: str) -> list[str]:
        manifest.write_text(
            "".join(
                f'[[workspace]]\nsource = "{tmp_path / name}"\nname = "{name}"\n'
                f'ref = "{refs[target]}"\n\n'
                for name, refs in commits.items()
            )
        )
        return [
            str(DOCSHELF),
            *("index", "--manifest", str(manifest), "--store", location, "--jobs", "2"),
            *("--embedder", "openai", "--base-url", endpoint.base_url, "--model", MODEL),
        ]

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def whole(target: str) -> None:
        with open_store(location, model_id=None, dim=None) as store:
            for name, refs in commits.items():
                counts = store.ref_counts(name)
                assert counts.get(refs[target]) == chunks, (name, counts)
                assert store.current(name) == refs[target]

    try:
        started = time.monotonic()
        first = subprocess.run(command("A"), check=False, env=env, capture_output=True)
        assert first.returncode == 0, first.stderr
        clean_seconds = time.monotonic() - started
        whole("A")
        target = "B"
        for round_number in range(MANIFEST_KILLS):
            process = subprocess.Popen(
                command(target), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            kill_at = rng.uniform(0.2, clean_seconds)
            time.sleep(kill_at)
            process.kill()
            process.wait()
            previous = "A" if target == "B" else "B"
            at_target = 0
            with open_store(location, model_id=None, dim=None) as store:
                for name, refs in commits.items():
                    counts = store.ref_counts(name)
                    for ref in refs.values():  # all of a ref's rows, or none
                        assert counts.get(ref, 0) in (0, chunks), (round_number, name, counts)
                    current = store.current(name)
                    assert current in (refs[previous], refs[target]), (round_number, name)
                    assert counts.get(current or "") == chunks
                    at_target += current == refs[target]
                    word = "bravo" if current == refs["B"] else "alpha"
                    found = build_service(store, None, name).search(word, 3, mode="text")
                    assert found.ref == current and word in found.hits[0].content
            print(f"round {round_number}: killed at {kill_at:.2f} s, {at_target} at {target}")
            done = subprocess.run(
                command(target), check=False, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
            whole(target)
            target = previous
    finally:
        endpoint.stop()


# -- PostgreSQL stopped and started under a running server ---------------------------------------


class OwnPostgres:
    """A PostgreSQL server of this test alone, which it stops and starts; the session's server,
    which other tests use, is never touched."""

    def __init__(self) -> None:
        self.data = Path(tempfile.mkdtemp(prefix="docshelf-pg-outage-", dir="/tmp"))
        self.server = pgserver.get_server(self.data, cleanup_mode="stop")
        self.socket_dir = parse_qs(urlsplit(self.server.get_uri()).query)["host"][0]
        self.log = self.data / "log"
        self.running = True

    def url(self, database: str) -> str:
        return str(self.server.get_uri(database))

    def stop(self) -> None:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.data, user=self.server.system_user)
        self.running = False

    def start(self) -> None:
        pg_ctl(
            [
                "-w",
                "-o",
                '-h ""',
                "-o",
                f"-k {self.socket_dir}",
                "-l",
                str(self.data / "log"),
                "start",
            ],
            pgdata=self.data,
            user=self.server.system_user,
            timeout=60,
        )
        self.running = True

    def remove(self) -> None:
        if self.running:
            self.stop()
        self.server.cleanup()
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[OwnPostgres]:
    made = OwnPostgres()
    try:
        yield made
    finally:
        made.remove()


def test_docs_search_says_the_store_is_unavailable_while_postgres_is_down_and_recovers(
    own_postgres: OwnPostgres, repo: Repo, tmp_path: Path
) -> None:
    with psycopg.connect(own_postgres.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE served")
    url = own_postgres.url("served")
    done = docshelf("index", str(repo.path), "--store", url, "--embedder", "none")
    assert done.returncode == 0, done.stderr
    errlog = (tmp_path / "serve.log").open("w")

    async def session() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with Client(
            stdio_client(serve_params(url, "--embedder", "none"), errlog=errlog)
        ) as c:
            seen["before"] = await c.call_tool("docs_search", QUESTION)
            await anyio.to_thread.run_sync(own_postgres.stop)
            started = time.monotonic()
            seen["during"] = [await c.call_tool("docs_search", QUESTION) for _ in range(3)]
            seen["during_seconds"] = time.monotonic() - started
            await anyio.to_thread.run_sync(own_postgres.start)
            seen["after"] = await c.call_tool("docs_search", QUESTION)
        return seen

    seen = anyio.run(session)
    errlog.close()
    before, after = seen["before"], seen["after"]
    assert not before.is_error, text_of(before)
    assert "Payments team" in text_of(before)
    for during in seen["during"]:
        assert during.is_error
        text = text_of(during)
        assert "is unavailable: PostgreSQL cannot be reached" in text, text
        assert "Check that the server is running and reachable, then try again" in text
        assert "Try again in a minute" in text
    # Each call fails fast, not after the pool's whole wait for a connection.
    assert seen["during_seconds"] < POOL_TIMEOUT_SECONDS, seen["during_seconds"]
    assert not after.is_error, text_of(after)
    assert after.structured_content == before.structured_content


def test_docshelf_index_says_the_store_is_unavailable_while_postgres_is_down(
    own_postgres: OwnPostgres, repo: Repo
) -> None:
    with psycopg.connect(own_postgres.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE DATABASE indexed")
    url = own_postgres.url("indexed")
    assert docshelf("index", str(repo.path), "--store", url, "--embedder", "none").returncode == 0
    first = repo.head()
    repo.write("docs/new.md", "# New\n\nA new page.\n")
    repo.commit("new page")
    own_postgres.stop()
    failed = docshelf("index", str(repo.path), "--store", url, "--embedder", "none")
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert "cannot connect to PostgreSQL" in line and "Check that the server is running" in line
    own_postgres.start()
    with open_store(url, model_id=None, dim=None) as store:
        assert store.current(str(repo.path.resolve())) == first
    again = docshelf("index", str(repo.path), "--store", url, "--embedder", "none")
    assert again.returncode == 0, again.stderr


# -- the embeddings endpoint down, slow or answering garbage --------------------------------------


def drop_one(payload: dict[str, Any]) -> None:
    payload["data"].pop()


def narrow(payload: dict[str, Any]) -> None:
    for item in payload["data"]:
        item["embedding"].pop()


def not_a_number(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"][0] = float("nan")


# Garbage answered with 200, and what the error says. None of it is retried.
GARBAGE = {
    "not-json": (Reply(body=b"<html>502 Bad Gateway</html>"), "the body is not valid JSON"),
    "no-data": (Reply(body=b'{"object": "list"}'), "the body has no 'data' list"),
    "wrong-count": (Reply(mutate=drop_one), "vectors for"),
    "wrong-width": (Reply(mutate=narrow), "15-dimensional vectors after earlier ones of 16"),
    "nan": (Reply(mutate=not_a_number), "NaN is not a number"),
}


def test_docs_search_answers_error_results_while_the_endpoint_fails_and_recovers_after(
    endpoint: EmbeddingsServer, repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    done = docshelf("index", str(repo.path), "--store", store, *openai_flags(endpoint))
    assert done.returncode == 0, done.stderr
    port = int(urlsplit(endpoint.base_url).port or 0)
    errlog = (tmp_path / "serve.log").open("w")
    revived: list[EmbeddingsServer] = []

    async def session() -> list[tuple[str, CallToolResult]]:
        seen = []
        params = serve_params(store, *openai_flags(endpoint))
        async with Client(stdio_client(params, errlog=errlog)) as c:
            seen.append(("good", await c.call_tool("docs_search", QUESTION)))
            for name, (reply, _) in GARBAGE.items():
                endpoint.fallback = reply
                seen.append((name, await c.call_tool("docs_search", QUESTION)))
                endpoint.fallback = Reply()
                seen.append(("good", await c.call_tool("docs_search", QUESTION)))
            await anyio.to_thread.run_sync(endpoint.stop)
            seen.append(("down", await c.call_tool("docs_search", QUESTION)))
            revived.append(EmbeddingsServer(FakeEmbedder(), port=port).start())  # type: ignore[arg-type]
            seen.append(("good", await c.call_tool("docs_search", QUESTION)))
        return seen

    try:
        seen = anyio.run(session)
    finally:
        errlog.close()
        for server in revived:
            server.stop()
    expected = {name: said for name, (_, said) in GARBAGE.items()}
    expected["down"] = "could not reach the endpoint"
    good = [result for name, result in seen if name == "good"]
    assert len(good) == len(GARBAGE) + 2
    for result in good:
        assert not result.is_error, text_of(result)
        assert result.structured_content == good[0].structured_content
    assert "Payments team" in text_of(good[0])
    for name, result in seen:
        if name == "good":
            continue
        text = text_of(result)
        assert result.is_error, (name, text)
        assert text.startswith("docs_search could not embed the query: "), (name, text)
        assert expected[name] in text, (name, text)
        assert "Try again in a minute" in text


def test_a_query_embedding_slower_than_the_timeout_is_an_error_result_and_the_next_call_works(
    endpoint: EmbeddingsServer, sqlite_location: str
) -> None:
    source = MemorySource()
    source.add("c1", {"docs/a.md": section_doc("Alpha", 3, "alpha words")})
    embedder = OpenAIEmbedder(endpoint.base_url, MODEL, timeout=0.3, max_retries=0)
    store = open_store(sqlite_location, model_id=MODEL, dim=embedder.dim)
    indexer = Indexer(store, embedder, source)
    indexer.index("c1")
    service = build_service(store, embedder, "ws", indexer=indexer)

    async def calls() -> list[CallToolResult]:
        async with Client(build_server(service)) as c:
            endpoint.replies.append(Reply(delay=2.0))
            started = time.monotonic()
            slow = await c.call_tool("docs_search", {"query": "alpha words"})
            assert time.monotonic() - started < 1.5
            return [slow, await c.call_tool("docs_search", {"query": "alpha words"})]

    try:
        slow, good = anyio.run(calls)
    finally:
        service.close()
    assert slow.is_error
    assert "could not reach the endpoint (ReadTimeout" in text_of(slow)
    assert "raise the timeout" in text_of(slow)
    assert not good.is_error and "alpha words" in text_of(good)


@pytest.mark.parametrize("fault", [*GARBAGE, "down"])
def test_docshelf_index_fails_clearly_on_a_bad_endpoint_and_leaves_the_index_untouched(
    endpoint: EmbeddingsServer, repo: Repo, tmp_path: Path, fault: str
) -> None:
    store = str(tmp_path / "store.sqlite3")
    flags = openai_flags(endpoint)
    assert docshelf("index", str(repo.path), "--store", store, *flags).returncode == 0
    first = repo.head()
    repo.write("docs/new.md", section_doc("New", 70, "fresh words"))  # two batches
    second = repo.commit("new page")
    workspace = str(repo.path.resolve())
    with open_store(store, model_id=None, dim=None) as opened:
        before = opened.ref_counts(workspace)
    if fault == "down":
        endpoint.stop()
        said = "could not reach the endpoint"
    else:
        # The probe that learns the width and the first batch are answered well, the second
        # batch with garbage.
        reply, said = GARBAGE[fault]
        endpoint.replies.extend([Reply(), Reply(), reply])
    failed = docshelf("index", str(repo.path), "--store", store, *flags)
    assert failed.returncode == 1
    # One line says what failed; any before it are the retries' warnings.
    *retries, line = failed.stderr.splitlines()
    assert all("retrying in" in retry for retry in retries), retries
    assert line.startswith("docshelf: error: ")
    assert said in line, line
    assert "Nothing of this ref was written; the previous ref keeps serving" in line or (
        fault == "down" and "Check that the server is running" in line
    )
    with open_store(store, model_id=None, dim=None) as opened:
        assert opened.current(workspace) == first
        assert opened.ref_counts(workspace) == before
        assert opened.search_text(workspace, first, "Payments", 1)
    if fault == "down":
        port = int(urlsplit(endpoint.base_url).port or 0)
        endpoint = EmbeddingsServer(FakeEmbedder(), port=port).start()  # type: ignore[arg-type]
    try:
        again = docshelf("index", str(repo.path), "--store", store, *flags, "--json")
    finally:
        if fault == "down":
            endpoint.stop()
    assert again.returncode == 0, again.stderr
    with open_store(store, model_id=None, dim=None) as opened:
        assert opened.current(workspace) == second
        assert opened.ref_counts(workspace) == {second: before[first] + 70}


def test_an_embedding_batch_slower_than_the_timeout_fails_the_index_and_leaves_it_untouched(
    endpoint: EmbeddingsServer, sqlite_location: str
) -> None:
    source = MemorySource()
    source.add("c1", {"docs/a.md": section_doc("Alpha", 3, "alpha words")})
    source.add("c2", {"docs/b.md": section_doc("Beta", 100, "beta words")})
    embedder = OpenAIEmbedder(endpoint.base_url, MODEL, timeout=0.3, max_retries=1)
    with open_store(sqlite_location, model_id=MODEL, dim=embedder.dim) as store:
        indexer = Indexer(store, embedder, source)
        indexer.index("c1")
        endpoint.replies.extend([Reply(), Reply(delay=2.0), Reply(delay=2.0)])
        with pytest.raises(IndexingError) as failed:
            indexer.index("c2")
        # The indexer's second batch of 64 (its inputs 64-99) is the endpoint's batch 1 of 1.
        assert "(inputs 0-35)" in str(failed.value)
        assert "failed after 2 attempts: could not reach the endpoint (ReadTimeout" in str(
            failed.value
        )
        assert store.current("ws") == "c1"
        assert store.ref_counts("ws") == {"c1": 3}
        assert indexer.index("c2").chunks == 100
        assert store.ref_counts("ws") == {"c2": 100}
        indexer.close()
