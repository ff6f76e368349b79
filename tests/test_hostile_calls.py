"""Hostile docs_search calls: arguments no model should send, and messages no MCP client should
send, each answered with an error result or a protocol error, never a crash, and the session or
the server answers the next call. In process through the SDK's client (both protocol eras), on
both real stores, and against `docshelf serve` in a subprocess over stdio and over HTTP."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from docshelf.app import Service
from docshelf.mcp_server import INPUT_SCHEMA, MAX_REQUEST_BODY_BYTES, build_server
from docshelf.search import MAX_QUERY_CHARS
from tests.support.gitrepo import Repo
from tests.support.indexing import FakeEmbedder, MemorySource
from tests.support.serving import INITIALIZE, INITIALIZED, http_serve, indexed_shop, serve_args
from tests.test_cli_index import DOCSHELF
from tests.test_mcp_server import WORKSPACE, A, docs_at, opened_service, run, text_of

QUERY_BOUND = "query must be a non-empty string: the question to look up in the documentation"
TOP_K_BOUND = "top_k must be a whole number from 1 to 20"
LONG_BOUND = f"query must be at most {MAX_QUERY_CHARS} characters"
SURROGATE = "query must be valid Unicode text; character"
UNKNOWN = (
    "docs_search takes query (the question), top_k (how many excerpts, 1 to 20), per_file (at "
    "most so many excerpts of one file, 1 to top_k), max_tokens (the most tokens the answer may "
    "take, 1000 to 25000), path (a folder, file or glob of the docs) and repeat (true to see "
    "again what this session was shown) only"
)
MEGABYTE = 1024 * 1024

# How long the stdio server gets to answer all the lines of a test (a busy two-core machine).
STDIO_ANSWER_SECONDS = 120.0

# Each argument set is refused before the embedder or the store is asked anything.
REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"query": "x" * MEGABYTE}, f"{LONG_BOUND}; got {MEGABYTE}. Ask again with the question"),
    ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"{LONG_BOUND}; got {MAX_QUERY_CHARS + 1}."),
    ({"query": "\x00" * MEGABYTE}, QUERY_BOUND),
    ({"query": " \x00 \x00 "}, QUERY_BOUND),
    ({"query": "\ud800"}, f"{SURROGATE} 1 is an unpaired surrogate ('\\ud800')"),
    ({"query": "gateway \udfff timeout"}, f"{SURROGATE} 9 is an unpaired surrogate ('\\udfff')"),
    ({"query": "owners", "top_k": "5"}, f"{TOP_K_BOUND}; got '5'"),
    ({"query": "owners", "top_k": 5.5}, f"{TOP_K_BOUND}; got 5.5"),
    ({"query": "owners", "top_k": True}, f"{TOP_K_BOUND}; got True"),
    ({"query": "owners", "top_k": False}, f"{TOP_K_BOUND}; got False"),
    ({"query": "owners", "top_k": None}, f"{TOP_K_BOUND}; got None"),
    ({"query": "owners", "top_k": 10**100}, f"{TOP_K_BOUND}; got a number of more than 40 digits"),
    ({"query": "owners", "top_k": -(10**5000)}, f"{TOP_K_BOUND}; got a number of more than 40"),
    ({"query": "owners", "top_k": [10**5000]}, f"{TOP_K_BOUND}; got a list"),
    # The SDK's client sends these as null; a raw NaN is tested over HTTP below.
    ({"query": "owners", "top_k": float("inf")}, f"{TOP_K_BOUND}; got "),
    ({"query": "owners", "top_k": float("nan")}, f"{TOP_K_BOUND}; got "),
    ({"query": "owners", "top_k": {"n": 5}}, f"{TOP_K_BOUND}; got {{'n': 5}}"),
    ({"query": "owners", "k": 3}, f"unknown argument 'k': {UNKNOWN}. Ask again with those"),
    ({"question": "who owns checkout?"}, f"unknown argument 'question': {UNKNOWN}"),
    (
        {"query": "owners", **{f"x{i}": i for i in range(7)}},
        f"unknown arguments 'x0', 'x1', 'x2', 'x3', 'x4' and 2 more: {UNKNOWN}",
    ),
    # The SDK's client sends this name with U+FFFD for the surrogate.
    ({"query": "owners", "\ud800": 1}, f"': {UNKNOWN}"),
]


def test_the_input_schema_refuses_unknown_arguments_as_the_tool_does() -> None:
    assert INPUT_SCHEMA["additionalProperties"] is False
    assert set(INPUT_SCHEMA["properties"]) == {
        "query",
        "top_k",
        "per_file",
        "max_tokens",
        "path",
        "repeat",
    }


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """A service over a SQLite store with commit A indexed by the fake embedder."""
    source = MemorySource(WORKSPACE)
    source.add(A, docs_at("alpha"))
    with opened_service(str(tmp_path / "store.sqlite3"), source) as opened:
        assert opened.indexer is not None
        opened.indexer.index(A)
        yield opened


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_hostile_arguments_are_error_results_and_the_session_answers_the_next_call(
    service: Service, mode: str
) -> None:
    embedder = service.embedder
    assert isinstance(embedder, FakeEmbedder)

    async def scenario() -> list[tuple[CallToolResult, int, float, CallToolResult]]:
        answers = []
        async with Client(build_server(service), mode=mode) as connected:
            for arguments, _ in REFUSED:
                before = len(embedder.calls)
                started = time.perf_counter()
                refused = await connected.call_tool("docs_search", arguments)
                took = time.perf_counter() - started
                embedded = len(embedder.calls) - before
                fine = await connected.call_tool("docs_search", {"query": "owners", "top_k": 1})
                answers.append((refused, embedded, took, fine))
        return answers

    answers = run(scenario)
    for case, ((_, said), (refused, embedded, took, fine)) in enumerate(
        zip(REFUSED, answers, strict=True)
    ):
        assert refused.is_error, case
        assert said in text_of(refused), (case, text_of(refused))
        assert refused.structured_content is None, case
        assert embedded == 0, case  # refused before any embedding or store query
        assert took < 10.0, case  # no work on a megabyte: the in-process round trip only
        assert not fine.is_error, case
        assert len(fine.structured_content["hits"]) == 1, case


def test_a_query_at_the_bound_and_a_whole_float_top_k_are_answered(service: Service) -> None:
    longest = ("payment gateway timeout " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    server = build_server(service)

    async def scenario() -> tuple[CallToolResult, CallToolResult]:
        async with Client(server) as connected:
            at_bound = await connected.call_tool("docs_search", {"query": longest})
            padded = await connected.call_tool(
                "docs_search", {"query": f"  {longest.strip()}\n\n", "top_k": 5.0}
            )
            return at_bound, padded

    at_bound, padded = run(scenario)
    assert not at_bound.is_error, text_of(at_bound)
    assert at_bound.structured_content["hits"][0]["path"] == "docs/runbooks/payments.md"
    assert not padded.is_error, text_of(padded)


def test_nul_characters_separate_words_and_a_surrogate_is_refused_on_both_stores(
    location: str,
) -> None:
    source = MemorySource(WORKSPACE)
    source.add(A, docs_at("alpha"))
    with opened_service(location, source) as service:
        assert service.indexer is not None
        service.indexer.index(A)
        server = build_server(service)

        async def scenario() -> list[CallToolResult]:
            async with Client(server) as connected:
                return [
                    await connected.call_tool("docs_search", {"query": q})
                    for q in ("gateway\x00timeout\x00", "gateway timeout", "gateway \ud83d timeout")
                ]

        with_nul, plain, surrogate = run(scenario)
    assert not with_nul.is_error, text_of(with_nul)
    assert with_nul.structured_content["query"] == "gateway timeout"
    assert with_nul.structured_content["hits"] == plain.structured_content["hits"]
    assert text_of(with_nul) == text_of(plain)
    assert surrogate.is_error
    assert text_of(surrogate) == (
        "query must be valid Unicode text; character 9 is an unpaired surrogate ('\\ud83d'). "
        "Ask again with the query as plain text"
    )


# -- real servers in a subprocess ----------------------------------------------------------------


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Repo, Path]:
    return indexed_shop(tmp_path)


def tool_call(request_id: int, arguments: str, **params: Any) -> bytes:
    """A tools/call request for docs_search whose arguments are the JSON text given."""
    extra = "".join(f', "{k}": {json.dumps(v)}' for k, v in params.items())
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
        f'{{"name": "docs_search", "arguments": {arguments}{extra}}}}}'
    ).encode()


# Lines no MCP client should send: (the line, the id answered, the JSON-RPC error code).
UNREADABLE_LINES: list[tuple[bytes, int | None, int]] = [
    (b'{"jsonrpc": ', None, -32700),
    (b"not json at all", None, -32700),
    (b'[{"jsonrpc": "2.0", "id": 7, "method": "ping"}]', None, -32600),
    (b'{"jsonrpc": "1.0", "id": 8, "method": "ping"}', None, -32600),
    (b'{"jsonrpc": "2.0", "id": 9}', None, -32600),
    (tool_call(10, '{"query": "\\ud800 gateway"}'), 10, -32700),
    (tool_call(11, '{"query": "gateway", "top_k": 1' + "0" * 5000 + "}"), 11, -32700),
    # Too deep for Python's JSON reader too: no id can be read, so none is answered.
    (
        tool_call(12, '{"query": "gateway", "top_k": ' + "[" * 10_000 + "]" * 10_000 + "}"),
        None,
        -32700,
    ),
]


def read_lines(stream: IO[bytes], count: int) -> list[bytes]:
    """`count` lines of a subprocess's output, within STDIO_ANSWER_SECONDS. Read from the file
    descriptor itself: a buffered readline may take several lines at once, and select would
    then wait for more while the answers sit in the buffer."""
    fd = stream.fileno()
    pending = b""
    lines: list[bytes] = []
    deadline = time.monotonic() + STDIO_ANSWER_SECONDS
    while len(lines) < count:
        left = deadline - time.monotonic()
        assert left > 0, lines
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            data = os.read(fd, 1 << 16)
            assert data, lines  # the server ended early
            pending += data
            *complete, pending = pending.split(b"\n")
            lines += [line + b"\n" for line in complete]
    assert not pending.strip() and len(lines) == count, lines
    return lines


def test_stdio_answers_every_unreadable_line_and_hostile_call_and_goes_on(
    indexed: tuple[Repo, Path], tmp_path: Path
) -> None:
    repo, store = indexed
    errlog = tmp_path / "stderr.txt"
    with (
        errlog.open("wb") as err,
        subprocess.Popen(
            [str(DOCSHELF), *serve_args(repo, store, "--embedder", "none")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        ) as server,
    ):
        assert server.stdin is not None and server.stdout is not None
        lines = [json.dumps(INITIALIZE).encode(), json.dumps(INITIALIZED).encode()]
        lines += [line for line, _, _ in UNREADABLE_LINES]
        lines += [
            tool_call(20, json.dumps({"query": "x" * MEGABYTE})),
            tool_call(21, '{"query": "gateway", "k": 3}'),
            tool_call(22, '"not an object"'),
            tool_call(23, '{"query": "gateway", "top_k": 1}'),
        ]
        server.stdin.write(b"\n".join(lines) + b"\n")
        server.stdin.flush()
        # Every line but the notification is answered; at EOF the server stops, so the answers
        # are read before stdin closes.
        answers = [json.loads(line) for line in read_lines(server.stdout, len(lines) - 1)]
        server.communicate(timeout=60)
    assert server.returncode == 0, errlog.read_text()
    assert answers[0]["id"] == 1 and "result" in answers[0]
    unreadable = answers[1 : 1 + len(UNREADABLE_LINES)]
    for (line, request_id, code), answer in zip(UNREADABLE_LINES, unreadable, strict=True):
        assert answer["id"] == request_id, line[:60]
        assert answer["error"]["code"] == code, line[:60]
    assert unreadable[0]["error"]["message"].startswith("Parse error: ")
    assert "Send each message as one line of JSON" in unreadable[0]["error"]["message"]
    assert "batches are not supported" in unreadable[2]["error"]["message"]
    by_id = {a["id"]: a for a in answers[1 + len(UNREADABLE_LINES) :]}
    assert sorted(by_id) == [20, 21, 22, 23]
    assert by_id[20]["result"]["isError"] is True
    assert by_id[20]["result"]["content"][0]["text"].startswith(f"{LONG_BOUND}; got {MEGABYTE}")
    assert by_id[21]["result"]["isError"] is True
    assert "unknown argument 'k'" in by_id[21]["result"]["content"][0]["text"]
    assert by_id[22]["error"]["code"] == -32602
    assert by_id[23]["result"].get("isError") is not True
    assert by_id[23]["result"]["structuredContent"]["hits"][0]["path"] == (
        "docs/runbooks/payments.md"
    )
    assert "Traceback" not in errlog.read_text()


def rpc_answer(response: httpx.Response) -> Any:
    """The JSON-RPC message of a response: a JSON body, or the data of its one SSE event."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    (data,) = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
    return json.loads(data)


# Bodies no MCP client should post to a session: (body, status, JSON-RPC error code).
MALFORMED_BODIES: list[tuple[bytes, int, int]] = [
    (b'{"jsonrpc": ', 400, -32700),
    (b"", 400, -32700),
    (b'[{"jsonrpc": "2.0", "id": 7, "method": "ping"}]', 400, -32602),
    (b'{"jsonrpc": "1.0", "id": 8, "method": "ping"}', 400, -32602),
    (b'{"jsonrpc": "2.0", "id": 9}', 400, -32602),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 5}', 400, -32602),
    (tool_call(10, '{"query": "\\ud800 gateway"}'), 400, -32700),
    (tool_call(11, '{"query": "gateway", "top_k": 1' + "0" * 5000 + "}"), 400, -32700),
    (
        tool_call(12, '{"query": "gateway", "top_k": ' + "[" * 10_000 + "]" * 10_000 + "}"),
        400,
        -32700,
    ),
    (tool_call(13, '"not an object"'), 200, -32602),
    (b'{"jsonrpc": "2.0", "id": 14, "method": "tools/frobnicate"}', 200, -32601),
    (tool_call(15, '{"query": "gateway"}', name="docs_grep"), 200, -32602),
]

MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


def test_http_answers_malformed_messages_and_hostile_calls_and_goes_on(
    indexed: tuple[Repo, Path], tmp_path: Path
) -> None:
    repo, store = indexed
    log = tmp_path / "stderr.txt"
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with http_serve(serve_args(repo, store, "--embedder", "none"), log) as (url, _):
        opened = httpx.post(url, json=INITIALIZE, headers=accept)
        assert opened.status_code == 200
        session = {
            **accept,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18",
        }
        assert httpx.post(url, json=INITIALIZED, headers=session).status_code == 202
        for body, status, code in MALFORMED_BODIES:
            answered = httpx.post(url, content=body, headers=session)
            assert answered.status_code == status, (body[:60], answered.text[:200])
            assert rpc_answer(answered)["error"]["code"] == code, body[:60]
        oversized = tool_call(16, json.dumps({"query": "x" * MAX_REQUEST_BODY_BYTES}))
        assert httpx.post(url, content=oversized, headers=session).status_code == 413
        plain = {**session, "Content-Type": "text/plain"}
        assert httpx.post(url, content=tool_call(17, "{}"), headers=plain).status_code in (400, 415)
        megabyte_query = tool_call(18, json.dumps({"query": "x" * 1_000_000}))
        refused = rpc_answer(httpx.post(url, content=megabyte_query, headers=session))
        assert refused["result"]["isError"] is True
        assert refused["result"]["content"][0]["text"].startswith(f"{LONG_BOUND}; got 1000000")
        # The same session still answers.
        fine = rpc_answer(
            httpx.post(url, content=tool_call(19, '{"query": "gateway"}'), headers=session)
        )
        assert fine["id"] == 19 and fine["result"].get("isError") is not True

        # A 2026-07-28 request carries its own envelope; Python's JSON reader takes a surrogate.
        modern = {**accept, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        modern["Mcp-Name"] = "docs_search"
        for arguments, said in [
            ('{"query": "\\ud800 gateway"}', f"{SURROGATE} 1 is an unpaired surrogate"),
            ('{"query": "gateway", "top_k": NaN}', f"{TOP_K_BOUND}; got nan"),
            ('{"query": "gateway", "top_k": 5.5}', f"{TOP_K_BOUND}; got 5.5"),
            ('{"query": "gateway", "k": 3}', "unknown argument 'k'"),
            (json.dumps({"query": "x" * 1_000_000}), f"{LONG_BOUND}; got 1000000"),
        ]:
            answered = httpx.post(
                url, content=tool_call(30, arguments, _meta=MODERN_META), headers=modern
            )
            assert answered.status_code == 200, answered.text[:300]
            result = rpc_answer(answered)["result"]
            assert result["isError"] is True, arguments[:60]
            assert said in result["content"][0]["text"], arguments[:60]
        for body in (b'{"jsonrpc": ', b"[]", b'{"jsonrpc": "2.0", "id": 31}'):
            assert httpx.post(url, content=body, headers=modern).status_code == 400

        async def ask() -> CallToolResult:
            async with Client(streamable_http_client(url)) as connected:
                return await connected.call_tool("docs_search", {"query": "gateway", "top_k": 1})

        answer = anyio.run(ask)
    assert not answer.is_error
    assert answer.structured_content["hits"][0]["path"] == "docs/runbooks/payments.md"
    assert "Traceback" not in log.read_text()
