"""The MCP server through the SDK's own client: in process (both protocol eras) for the tool's
answers and refusals, and over real HTTP (uvicorn in a thread) for pins, the guard and syncs, on
both real stores with the deterministic embedder."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult

from docshelf.app import Service
from docshelf.errors import ConfigError, EmbeddingError, StoreError
from docshelf.indexer import Indexer
from docshelf.mcp_server import (
    INPUT_SCHEMA,
    MAX_REQUEST_BODY_BYTES,
    OUTLINE_OUTPUT_SCHEMA,
    OUTLINE_SCHEMA,
    OUTPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
    READ_SCHEMA,
    HttpApp,
    HttpOptions,
    build_http_app,
    build_server,
    check_http_options,
    is_loopback,
    listen,
    normal_origin,
    serve,
)
from docshelf.mcp_server.tool import MAX_REMEMBERED_PASSAGES, Shown
from docshelf.present import render_answer
from docshelf.search import Answer, Hit
from docshelf.stores import SQLiteStore, open_store
from docshelf.stores.postgres import PostgresStore
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource
from tests.support.service import build_service
from tests.support.serving import INITIALIZE

Store = SQLiteStore | PostgresStore

WORKSPACE = "shop"
TOKEN = "s3cret-token-for-the-tests"


def commit_id(name: str) -> str:
    """A full commit id for a MemorySource ref, so that Service.resolve takes it as given."""
    return hashlib.sha1(name.encode()).hexdigest()


A, B, C = commit_id("a"), commit_id("b"), commit_id("c")


def docs_at(release: str) -> dict[str, str]:
    return {
        "docs/checkout.md": "# Checkout\n\n## Owners\n\nCheckout is owned by the Payments team; "
        "page them on call.\n",
        "docs/runbooks/payments.md": "# Payments runbook\n\n## Timeout\n\nWhen the payment "
        "gateway times out, raise the timeout to 30 seconds and restart the worker.\n",
        "docs/release.md": f"# Release\n\nThis is the {release} release of the shop.\n",
    }


@pytest.fixture
def sqlite_location(tmp_path: Path) -> str:
    return str(tmp_path / "docshelf.sqlite3")


@pytest.fixture
def source() -> MemorySource:
    made = MemorySource(WORKSPACE)
    made.add(A, docs_at("alpha"))
    made.add(B, docs_at("beta"))
    made.add(C, docs_at("gamma"))
    return made


@contextmanager
def opened_service(
    location: str, source: MemorySource, *, embedder: Any = "fake", searcher_store: Any = None
) -> Iterator[Service]:
    """A Service as app.open_service builds it, on a real store, with a deterministic embedder
    (or None for the `none` embedder) and an indexer for the pins."""
    if embedder == "fake":
        embedder = FakeEmbedder()
    model, dim = (MODEL, DIM) if embedder is not None else ("none", 0)
    store = open_store(location, model_id=model, dim=dim)
    indexer = Indexer(store, embedder, source)
    service = build_service(
        searcher_store or store,
        embedder,
        WORKSPACE,
        index_hint=f"docshelf index {WORKSPACE}",
        indexer=indexer,
    )
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def service(location: str, source: MemorySource) -> Iterator[Service]:
    with opened_service(location, source) as made:
        yield made


@pytest.fixture
def sqlite_service(sqlite_location: str, source: MemorySource) -> Iterator[Service]:
    with opened_service(sqlite_location, source) as made:
        yield made


def run(scenario: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
    return anyio.run(partial(scenario, *args, **kwargs))


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert block.type == "text"
    return block.text


async def call(server: Any, arguments: dict[str, Any], **client: Any) -> CallToolResult:
    async with Client(server, **client) as connected:
        return await connected.call_tool("docs_search", arguments)


# -- the tool, in process ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_list_shows_the_three_tools_with_their_schemas_and_what_they_cover(
    service: Service, mode: str
) -> None:
    assert service.indexer is not None
    service.indexer.index(A)

    async def scenario() -> Any:
        async with Client(build_server(service), mode=mode) as connected:
            assert connected.server_info is not None
            assert connected.server_info.name == "docs"
            return (await connected.list_tools()).tools

    tool, read, outline = run(scenario)
    assert (tool.name, read.name, outline.name) == ("docs_search", "docs_read", "docs_outline")
    assert read.input_schema == READ_SCHEMA and outline.input_schema == OUTLINE_SCHEMA
    assert read.output_schema == READ_OUTPUT_SCHEMA
    assert outline.output_schema == OUTLINE_OUTPUT_SCHEMA
    for listed in (read, outline):
        assert listed.annotations is not None and listed.annotations.read_only_hint
        assert "workspace" not in listed.input_schema["properties"]
    assert "after docs_search, to read around an excerpt" in (read.description or "")
    assert f"at commit {A[:12]}, the latest indexed" in (read.description or "")
    assert "to find where a topic lives" in (outline.description or "")
    assert tool.input_schema == INPUT_SCHEMA
    assert tool.input_schema["properties"]["top_k"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 20,
        "default": 5,
        "description": "How many excerpts to return, a whole number from 1 to 20.",
    }
    assert tool.input_schema["required"] == ["query"]
    assert tool.output_schema == OUTPUT_SCHEMA
    assert tool.annotations is not None and tool.annotations.read_only_hint
    description = tool.description or ""
    assert f"Search the documentation of the repository {WORKSPACE}" in description
    assert f"at commit {A[:12]}, the latest indexed" in description
    # What is served, read from the store; nothing assumed of what the docs hold.
    assert f"at commit {A[:12]}, the latest indexed: 3 docs (Markdown) in docs/ (3)" in description
    assert "who owns" not in description and "runbooks" not in description
    assert "Call it whenever you need what the repository's docs say" in description
    assert "matches by meaning and by words" in description


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_search_answers_with_the_rendered_text_and_the_hits_as_structured_content(
    service: Service, mode: str
) -> None:
    assert service.indexer is not None
    service.indexer.index(A)
    result = run(call, build_server(service), {"query": "gateway timeout", "top_k": 2}, mode=mode)
    assert not result.is_error
    expected = service.search("gateway timeout", 2)
    assert text_of(result) == render_answer(expected)
    assert text_of(result).startswith(
        f"2 excerpts for 'gateway timeout' from the documentation at commit {A[:12]}"
    )
    structured = result.structured_content
    jsonschema.validate(structured, OUTPUT_SCHEMA)
    assert (structured["ref"], structured["query"], structured["note"]) == (
        A,
        "gateway timeout",
        None,
    )
    assert [h["path"] for h in structured["hits"]] == [h.path for h in expected.hits]
    assert set(structured["hits"][0]) == {
        "path",
        "heading",
        "start_line",
        "end_line",
        "score",
        "content",
        "workspace",
        "ref",
        "more",
        "cut",
        "repeated",
        "copies",
    }
    assert {(h["workspace"], h["ref"]) for h in structured["hits"]} == {(WORKSPACE, A)}


def test_top_k_defaults_to_5_and_a_whole_float_counts(sqlite_service: Service) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)
    server = build_server(sqlite_service)
    assert not run(call, server, {"query": "release"}).is_error
    result = run(call, server, {"query": "the", "top_k": 2.0})
    assert not result.is_error
    assert len(result.structured_content["hits"]) == 2


QUERY_BOUND = "query must be a non-empty string: the question to look up in the documentation"
TOP_K_BOUND = "top_k must be a whole number from 1 to 20"
PER_FILE_BOUND = "per_file must be a whole number from 1 to top_k"
MAX_TOKENS_BOUND = (
    "max_tokens must be a whole number from 1000 (one excerpt and its header) to 25000"
)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({}, QUERY_BOUND),
        ({"query": ""}, QUERY_BOUND),
        ({"query": "   \n\t"}, QUERY_BOUND),
        ({"query": None}, QUERY_BOUND),
        ({"query": 42}, QUERY_BOUND),
        ({"query": "owners", "top_k": 0}, f"{TOP_K_BOUND}; got 0. Ask again with top_k in that"),
        ({"query": "owners", "top_k": 21}, f"{TOP_K_BOUND}; got 21. Ask again"),
        ({"query": "owners", "top_k": -3}, f"{TOP_K_BOUND}; got -3."),
        ({"query": "owners", "top_k": 2.5}, f"{TOP_K_BOUND}; got 2.5"),
        ({"query": "owners", "top_k": "5"}, f"{TOP_K_BOUND}; got '5'"),
        ({"query": "owners", "top_k": True}, f"{TOP_K_BOUND}; got True"),
        ({"query": "owners", "top_k": None}, f"{TOP_K_BOUND}; got None"),
        ({"query": "owners", "top_k": 10**30}, f"{TOP_K_BOUND}; got {10**30}."),
        ({"query": "owners", "top_k": 1e300}, TOP_K_BOUND),
        ({"query": "owners", "top_k": [5]}, f"{TOP_K_BOUND}; got [5]"),
        ({"query": "owners", "per_file": 0}, f"{PER_FILE_BOUND} (5); got 0. Ask again with per_"),
        ({"query": "owners", "per_file": 21}, f"{PER_FILE_BOUND} (5); got 21."),
        ({"query": "owners", "top_k": 2, "per_file": 3}, f"{PER_FILE_BOUND} (2); got 3."),
        ({"query": "owners", "per_file": 1.5}, f"{PER_FILE_BOUND} (5); got 1.5"),
        ({"query": "owners", "per_file": "2"}, f"{PER_FILE_BOUND} (5); got '2'"),
        ({"query": "owners", "max_tokens": 999}, f"{MAX_TOKENS_BOUND}; got 999. Ask again"),
        ({"query": "owners", "max_tokens": 25_001}, f"{MAX_TOKENS_BOUND}; got 25001."),
        ({"query": "owners", "max_tokens": 1500.5}, f"{MAX_TOKENS_BOUND}; got 1500.5"),
        ({"query": "owners", "max_tokens": "2000"}, f"{MAX_TOKENS_BOUND}; got '2000'"),
    ],
)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_each_refused_argument_is_an_error_result_with_the_bound_and_the_next_call_works(
    sqlite_service: Service, arguments: dict[str, Any], said: str, mode: str
) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)

    async def scenario() -> tuple[CallToolResult, CallToolResult]:
        async with Client(build_server(sqlite_service), mode=mode) as connected:
            refused = await connected.call_tool("docs_search", arguments)
            fine = await connected.call_tool("docs_search", {"query": "owners", "top_k": 1})
            return refused, fine

    refused, fine = run(scenario)
    assert refused.is_error
    assert said in text_of(refused)
    assert "validation error" not in text_of(refused).lower()
    assert refused.structured_content is None
    assert not fine.is_error
    assert len(fine.structured_content["hits"]) == 1


def test_a_refusal_never_reaches_the_embedder(sqlite_service: Service) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)
    embedder = sqlite_service.embedder
    assert isinstance(embedder, FakeEmbedder)
    before = len(embedder.calls)
    assert run(call, build_server(sqlite_service), {"query": "x", "top_k": 0}).is_error
    assert len(embedder.calls) == before


def test_a_session_pinned_to_an_unindexed_commit_answers_from_current_with_a_note(
    service: Service,
) -> None:
    assert service.indexer is not None
    service.indexer.index(A)
    pinned = commit_id("never indexed")
    result = run(call, build_server(service, ref=pinned), {"query": "release"})
    assert not result.is_error
    note = (
        f"Note: this session is pinned to commit {pinned[:12]}, which has no indexed "
        f"documentation; these excerpts come from the current commit {A[:12]} instead"
    )
    assert text_of(result).startswith(note)
    assert result.structured_content["ref"] == A
    assert result.structured_content["note"].startswith(note)


def test_a_pinned_session_keeps_its_commit_after_a_sync_moves_current(service: Service) -> None:
    assert service.indexer is not None
    service.indexer.index(A)
    release = service.indexer.pin(A)
    service.indexer.index(B)  # A survives the prune: pinned
    pinned = run(call, build_server(service, ref=A), {"query": "release of the shop"})
    current = run(call, build_server(service), {"query": "release of the shop"})
    assert pinned.structured_content["ref"] == A and pinned.structured_content["note"] is None
    assert "alpha release" in text_of(pinned) and "beta" not in text_of(pinned)
    assert current.structured_content["ref"] == B
    assert "beta release" in text_of(current)

    async def description(ref: str | None) -> str:
        async with Client(build_server(service, ref=ref)) as connected:
            return (await connected.list_tools()).tools[0].description or ""

    assert f"at commit {A[:12]}, which this session is pinned to" in run(description, A)
    assert f"at commit {B[:12]}, the latest indexed" in run(description, None)
    release()


def test_an_empty_index_is_an_error_result_naming_the_command_that_indexes(
    service: Service,
) -> None:
    result = run(call, build_server(service), {"query": "who owns checkout?"})
    assert result.is_error
    assert text_of(result) == (
        f"the documentation of {WORKSPACE} is not indexed yet; index it with docshelf index "
        f"{WORKSPACE}, then ask again"
    )

    async def description() -> str:
        async with Client(build_server(service)) as connected:
            return (await connected.list_tools()).tools[0].description or ""

    assert "(nothing of it is indexed yet)" in run(description)


def test_the_none_embedder_searches_by_words_and_the_description_says_so(
    location: str, source: MemorySource
) -> None:
    with opened_service(location, source, embedder=None) as service:
        assert service.indexer is not None
        service.indexer.index(A)

        async def scenario() -> tuple[str, CallToolResult]:
            async with Client(build_server(service)) as connected:
                tool = (await connected.list_tools()).tools[0]
                result = await connected.call_tool("docs_search", {"query": "gateway timeout"})
                return tool.description or "", result

        description, result = run(scenario)
    assert "It matches words, not meaning" in description
    assert not result.is_error
    assert result.structured_content["hits"][0]["path"] == "docs/runbooks/payments.md"


class BrokenEmbedder(FakeEmbedder):
    def embed(self, texts: Any) -> Any:
        if texts == ["who owns checkout?"]:
            raise EmbeddingError("POST http://127.0.0.1:9/v1/embeddings: connection refused")
        return super().embed(texts)


class BrokenStore:
    """A real store whose full-text search fails as a lost database connection does."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search_text(self, *args: Any) -> Any:
        raise StoreError("the database at db:5432 closed the connection; check that it is up")


def test_an_embedding_failure_is_an_error_result_saying_what_to_do(
    sqlite_location: str, source: MemorySource
) -> None:
    with opened_service(sqlite_location, source, embedder=BrokenEmbedder()) as service:
        assert service.indexer is not None
        service.indexer.index(A)
        result = run(call, build_server(service), {"query": "who owns checkout?"})
        assert not run(call, build_server(service), {"query": "owners"}).is_error
    assert result.is_error
    assert text_of(result) == (
        "docs_search could not embed the query: POST http://127.0.0.1:9/v1/embeddings: "
        "connection refused. Try again in a minute; if it fails again, go on without the "
        "documentation and tell the user that docs_search is failing."
    )


def test_a_store_failure_is_an_error_result_saying_what_to_do(
    location: str, source: MemorySource
) -> None:
    with opened_service(location, source) as healthy:
        assert healthy.indexer is not None
        healthy.indexer.index(A)
    with opened_service(location, source) as opened:
        service = build_service(BrokenStore(opened.store), opened.embedder, WORKSPACE)
        result = run(call, build_server(service), {"query": "owners"})
    assert result.is_error
    assert text_of(result).startswith(
        "docs_search could not read the documentation index: the database at db:5432 closed "
        "the connection; check that it is up. Try again in a minute"
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_unknown_tool_is_a_protocol_error(sqlite_service: Service, mode: str) -> None:
    async def scenario() -> MCPError:
        async with Client(build_server(sqlite_service), mode=mode) as connected:
            try:
                await connected.call_tool("docs_grep", {"query": "owners"})
            except MCPError as e:
                return e
            raise AssertionError("an unknown tool was answered")

    error = run(scenario).error
    assert error.code == INVALID_PARAMS
    assert error.message == (
        "Unknown tool: 'docs_grep'; this server has the tools docs_search, docs_read, docs_outline"
    )


# -- HTTP: options and the guard ------------------------------------------------------------------


def test_http_options_refuse_a_remote_bind_without_a_token_a_short_token_and_odd_origins() -> None:
    with pytest.raises(ConfigError, match="without a token anyone there could read the docs"):
        check_http_options(HttpOptions(host="0.0.0.0"))
    with pytest.raises(ConfigError, match="at least 16"):
        check_http_options(HttpOptions(token="short"))
    for odd in ("ünïcode-token-long-enough", "a token with spaces in it", "tab\tin-the-token-here"):
        with pytest.raises(ConfigError, match="printable ASCII without spaces"):
            check_http_options(HttpOptions(token=odd))
    with pytest.raises(ConfigError, match="is not an origin"):
        check_http_options(HttpOptions(allow_origins=("docs.example.com",)))
    assert check_http_options(HttpOptions(host="0.0.0.0", token=TOKEN)).host == "0.0.0.0"
    assert check_http_options(HttpOptions(host="10.1.2.3", allow_remote=True)).allow_remote
    assert check_http_options(
        HttpOptions(allow_origins=("HTTPS://Docs.Example.com:443/",))
    ).allow_origins == ("https://docs.example.com",)
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "[::1]", "localhost", "0.0.0.0")] == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert normal_origin("http://[::1]:8765") == "http://[::1]:8765"
    assert normal_origin("http://localhost:80") == "http://localhost"
    assert normal_origin("null") is None
    assert normal_origin("http://host/path") is None


@contextmanager
def http_server(
    service: Service, *, ref: str | None = None, sync_interval: float | None = None, **options: Any
) -> Iterator[tuple[str, HttpApp]]:
    """docs_search (and the web page) on real HTTP: uvicorn in a thread, on a free port of
    127.0.0.1."""
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    checked = check_http_options(HttpOptions(port=port, **options))
    app = build_http_app(service, checked, ref=ref, sync_interval=sync_interval)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp", app
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_a_missing_or_wrong_token_is_refused_and_the_right_one_answers(
    sqlite_service: Service,
) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)
    with http_server(sqlite_service, token=TOKEN) as (url, _):
        missing = httpx.post(url, json=INITIALIZE, headers=ACCEPT)
        wrong = httpx.post(
            url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer not-the-token!!"}
        )
        basic = httpx.post(url, json=INITIALIZE, headers={**ACCEPT, "Authorization": TOKEN})
        for refused in (missing, wrong, basic):
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "Authorization: Bearer <token>" in refused.text

        async def scenario() -> CallToolResult:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as connected,
            ):
                return await connected.call_tool("docs_search", {"query": "owners"})

        answered = run(scenario)
    assert not answered.is_error
    assert answered.structured_content["ref"] == A


def test_a_foreign_origin_and_a_foreign_host_are_refused_and_this_machine_s_pages_are_not(
    sqlite_service: Service,
) -> None:
    with http_server(sqlite_service, allow_origins=("https://docs.example.com",)) as (url, _):
        port = url.split(":")[2].split("/")[0]

        def post(**headers: str) -> httpx.Response:
            return httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})

        foreign = post(Origin="http://evil.example")
        assert foreign.status_code == 403
        assert "--allow-origin" in foreign.text
        assert post(Origin=f"http://localhost:{int(port) + 1}").status_code == 403
        assert post(Origin="null").status_code == 403
        rebound = post(Host=f"evil.example:{port}")
        assert rebound.status_code == 421
        for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
            assert post(Origin=origin).status_code == 200, origin
        assert post(Origin="https://docs.example.com", Host="docs.example.com").status_code == 200
        assert post().status_code == 200  # no Origin: not a browser


def test_an_oversized_body_is_refused_with_413(sqlite_service: Service) -> None:
    with http_server(sqlite_service, token=TOKEN) as (url, _):
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (
            MAX_REQUEST_BODY_BYTES
        )
        headers = {**ACCEPT, "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        refused = httpx.post(url, content=body + b'"}', headers=headers)
        assert refused.status_code == 413

        def chunks() -> Iterator[bytes]:
            yield body
            yield b'"}'

        streamed = httpx.post(url, content=chunks(), headers=headers)
        assert streamed.status_code == 413


# -- HTTP: sessions and their pins ------------------------------------------------------------


async def ask(url: str, query: str, *, mode: str = "legacy", close: bool = True) -> CallToolResult:
    async with Client(streamable_http_client(url, terminate_on_close=close), mode=mode) as c:
        return await c.call_tool("docs_search", {"query": query})


def test_sessions_pinned_to_different_commits_keep_their_docs_while_a_sync_moves_current(
    service: Service,
) -> None:
    indexer = service.indexer
    assert indexer is not None
    indexer.index(A)
    query = "release of the shop"
    with http_server(service) as (url, app):

        async def scenario() -> dict[str, CallToolResult]:
            answers: dict[str, CallToolResult] = {}
            client_a = Client(streamable_http_client(f"{url}?ref={A}"), mode="legacy")
            client_b = Client(streamable_http_client(f"{url}?ref={B}"), mode="legacy")
            async with client_a as on_a:
                indexer.index(B)  # B becomes current; A survives the prune, pinned
                async with client_b as on_b:
                    answers["unpinned before"] = await ask(url, query)
                    assert await anyio.to_thread.run_sync(indexer.refresh, C) is not None
                    assert sorted(app.pins.pinned) == sorted([A, B])
                    assert service.store.pinned_refs(WORKSPACE) == {A, B}
                    answers["a"] = await on_a.call_tool("docs_search", {"query": query})
                    answers["b"] = await on_b.call_tool("docs_search", {"query": query})
                    answers["unpinned after"] = await ask(url, query)
                    answers["modern a"] = await ask(f"{url}?ref={A}", query, mode="auto")
                    listed = await on_a.list_tools()
                    assert f"commit {A[:12]}, which this session is pinned to" in (
                        listed.tools[0].description or ""
                    )
                assert service.store.pinned_refs(WORKSPACE) == {A}  # B's session ended
            return answers

        answers = run(scenario)
        # The sessionless (2026-07-28) client's pin is held until it idles out.
        assert app.pins.pinned == [A]
    assert service.store.pinned_refs(WORKSPACE) == set()  # released when the server stopped
    for name, ref, release in [
        ("a", A, "alpha"),
        ("modern a", A, "alpha"),
        ("b", B, "beta"),
        ("unpinned before", B, "beta"),
        ("unpinned after", C, "gamma"),
    ]:
        answer = answers[name]
        assert not answer.is_error, (name, text_of(answer))
        assert answer.structured_content["ref"] == ref, name
        assert answer.structured_content["note"] is None, name
        assert f"{release} release" in text_of(answer), name


def test_the_server_s_ref_answers_every_http_session_that_pins_none_of_its_own(
    sqlite_service: Service,
) -> None:
    indexer = sqlite_service.indexer
    assert indexer is not None
    indexer.index(A)
    release = indexer.pin(A)
    indexer.index(B)
    with http_server(sqlite_service, ref=A) as (url, _):
        default = run(ask, url, "release of the shop")
        own = run(ask, f"{url}?ref={B}", "release of the shop", mode="auto")
    release()
    assert default.structured_content["ref"] == A
    assert "alpha release" in text_of(default)
    assert own.structured_content["ref"] == B


def test_serve_on_stdio_releases_its_ref_pin_when_stdin_closes(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve() itself releases the pin of `ref` when the session ends, before its caller closes
    the service (which would release every pin of the indexer anyway)."""
    assert service.indexer is not None
    service.indexer.index(A)
    held: list[set[str]] = []
    real_pin = service.pin

    def pin(rev: str) -> tuple[str, Callable[[], None]]:
        pinned = real_pin(rev)
        held.append(service.store.pinned_refs(WORKSPACE))
        return pinned

    monkeypatch.setattr(service, "pin", pin)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(INITIALIZE).encode())))
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, write_through=True))
    serve(service, ref=A)
    for thread in threading.enumerate():  # the warm-up search, before the service closes
        if thread.name == "docshelf-warm-up":
            thread.join(60)
    assert held == [{A}]  # pinned, in the store, for the session
    assert json.loads(out.getvalue())["result"]["serverInfo"]["name"] == "docs"
    assert service.indexer.pinned() == []
    assert service.store.pinned_refs(WORKSPACE) == set()


def test_a_session_that_idles_out_releases_its_pin(service: Service) -> None:
    assert service.indexer is not None
    service.indexer.index(A)
    with http_server(service, session_idle_timeout=1.0) as (url, app):
        answer = run(partial_ask(f"{url}?ref={A}", close=False))
        # The session is open (not closed, not idle yet): its pin is held, in the store too.
        assert app.pins.pinned == [A]
        assert service.store.pinned_refs(WORKSPACE) == {A}
        assert answer.structured_content["ref"] == A
        answer = run(partial_ask(f"{url}?ref={A}", mode="auto"))
        assert answer.structured_content["ref"] == A
        deadline = time.monotonic() + 60
        while app.pins.pinned or service.store.pinned_refs(WORKSPACE):
            assert time.monotonic() < deadline, app.pins.pinned
            time.sleep(0.2)


def partial_ask(url: str, **options: Any) -> Callable[[], Awaitable[CallToolResult]]:
    async def asked() -> CallToolResult:
        return await ask(url, "owners", **options)

    return asked


def test_a_ref_that_names_no_commit_refuses_the_session_with_what_to_do(
    sqlite_service: Service,
) -> None:
    with http_server(sqlite_service) as (url, app):
        refused = httpx.post(f"{url}?ref=no-such-branch", json=INITIALIZE, headers=ACCEPT)
        assert refused.status_code == 400
        assert refused.text.startswith("cannot pin this session to no-such-branch: ")
        assert "Connect to /mcp?ref=REV with a commit, branch or tag" in refused.text
        assert app.pins.pinned == []


def test_listen_refuses_a_port_in_use_with_what_to_do() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(ConfigError, match="choose another --port"):
            listen("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_schemas_are_valid_json_schemas() -> None:
    jsonschema.Draft202012Validator.check_schema(INPUT_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(OUTPUT_SCHEMA)


# -- nothing repeated in a session --------------------------------------------------------------

SEARCH = {"query": "payment gateway timeout", "top_k": 1}


def repeats_of(results: list[CallToolResult]) -> list[tuple[bool, str]]:
    """Each answer's first hit: whether it came back as shown earlier, and its text."""
    return [
        (r.structured_content["hits"][0]["repeated"], r.structured_content["hits"][0]["content"])
        for r in results
    ]


def test_a_passage_shown_earlier_in_a_session_comes_back_as_its_citation_unless_asked_again(
    service: Service,
) -> None:
    # A session of the handshake protocol (a client of the protocol without sessions: below).
    mode = "legacy"
    assert service.indexer is not None
    service.indexer.index(A)
    server = build_server(service)

    async def session() -> list[CallToolResult]:
        async with Client(server, mode=mode) as connected:
            return [
                await connected.call_tool("docs_search", SEARCH),
                await connected.call_tool("docs_search", SEARCH),
                await connected.call_tool("docs_search", {**SEARCH, "repeat": True}),
                await connected.call_tool("docs_search", {**SEARCH, "repeat": "yes"}),
            ]

    first, again, asked, refused = run(session)
    (shown, text), (repeated, nothing), (whole, text_again) = repeats_of([first, again, asked])
    assert not shown and "raise the timeout to 30 seconds" in text
    assert repeated and nothing == ""
    assert "[shown earlier in this session; ask with repeat: true to see it again]" in text_of(
        again
    )
    assert "docs/runbooks/payments.md:" in text_of(again)  # the citation stays
    assert not whole and text_again == text
    assert refused.is_error and "repeat must be true or false; got 'yes'" in text_of(refused)
    # Another session was shown nothing yet.
    (other,) = repeats_of([run(call, server, SEARCH, mode=mode)])
    assert other == (False, text)

    async def sessionless() -> list[CallToolResult]:
        async with Client(server, mode="auto") as connected:
            return [await connected.call_tool("docs_search", SEARCH) for _ in range(2)]

    assert [r for r, _ in repeats_of(run(sessionless))] == [False, False]


def test_a_new_commit_s_passage_is_a_new_passage_for_the_session(
    sqlite_service: Service,
) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)
    server = build_server(sqlite_service)

    async def session() -> list[CallToolResult]:
        async with Client(server) as connected:
            before = await connected.call_tool("docs_search", SEARCH)
            assert sqlite_service.indexer is not None
            sqlite_service.indexer.index(B)  # a sync moves current to B
            return [before, await connected.call_tool("docs_search", SEARCH)]

    before, after = run(session)
    assert after.structured_content["ref"] == B
    assert repeats_of([before, after])[1][0] is False


def test_over_http_each_mcp_session_has_its_own_memory(sqlite_service: Service) -> None:
    assert sqlite_service.indexer is not None
    sqlite_service.indexer.index(A)
    with http_server(sqlite_service) as (url, _):

        async def session(mode: str) -> list[CallToolResult]:
            async with (
                httpx2.AsyncClient() as http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as connected,
            ):
                return [
                    await connected.call_tool("docs_search", SEARCH),
                    await connected.call_tool("docs_search", SEARCH),
                ]

        legacy = repeats_of(run(session, "legacy"))
        other = repeats_of(run(session, "legacy"))
        stateless = repeats_of(run(session, "auto"))
    assert [r for r, _ in legacy] == [False, True]  # one session: the second is a repeat
    assert [r for r, _ in other] == [False, True]  # a new session starts afresh
    # A client of the protocol without sessions: no call knows another's.
    assert [r for r, _ in stateless] == [False, False]


def test_a_session_remembers_a_passage_once_and_at_most_so_many() -> None:
    def answer(path: str) -> Answer:
        return Answer(WORKSPACE, A, "q", "text", None, [Hit(path, "H", 1, 5, 1.0, "text")])

    seen = Shown()
    for _ in range(3):  # asked again with repeat: held once
        seen.remember(answer("docs/a.md"))
    assert seen.hide_repeats(answer("docs/a.md")).hits[0].repeated
    for n in range(MAX_REMEMBERED_PASSAGES):
        seen.remember(answer(f"docs/{n}.md"))
    # The oldest passage went to keep the bound; the newest is still held.
    assert not seen.hide_repeats(answer("docs/a.md")).hits[0].repeated
    assert seen.hide_repeats(answer(f"docs/{MAX_REMEMBERED_PASSAGES - 1}.md")).hits[0].repeated
