"""Security: every SQL statement takes its values as parameters (hostile strings on both real
stores, and a look at the stores' source), the bearer token appears in no log and no response,
and an HTTP server without a token binds only this machine's addresses unless told otherwise."""

from __future__ import annotations

import ast
import logging
import sqlite3
from functools import partial
from pathlib import Path

import anyio
import httpx
import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from docshelf.errors import StoreError
from docshelf.rows import ChunkRow
from docshelf.stores import SQLiteStore, open_store
from docshelf.stores.postgres import PostgresStore
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource, fake_vector
from tests.support.service import build_service
from tests.support.serving import ask, http_serve, indexed_shop, serve_args
from tests.test_cli_index import docshelf
from tests.test_mcp_server import WORKSPACE, A, docs_at, http_server, opened_service

STORES = Path(__file__).resolve().parents[1] / "src" / "docshelf" / "stores"

# SQL, FTS5 and tsquery syntax, and the placeholders of both drivers, as plain text.
HOSTILE = [
    "'; DROP TABLE chunks; --",
    "'; DROP TABLE docs_chunks; --",
    "x' OR '1'='1",
    '" OR ""="',
    "%s",
    "%(workspace)s",
    "$1",
    "?",
    ":name",
    "NEAR(checkout owners)",
    '"',
    "*",
    "-owners",
    "path: checkout",
    "content:owners heading:x",
    "owners & !checkout | (payments):*",
    "!!(",
    "\\",
    "owners\\' --",
]

Store = SQLiteStore | PostgresStore


def tables(store: Store) -> list[str]:
    """Every table, index and trigger of the store's database, by name."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall()
    else:
        with psycopg.connect(store.location) as pg:
            rows = pg.execute(
                "SELECT relname::text FROM pg_class WHERE relnamespace = 'public'::regnamespace "
                "ORDER BY relname"
            ).fetchall()
    return [r[0] for r in rows]


def row(text: str, chunk: int = 0) -> ChunkRow:
    return ChunkRow(
        text, chunk, text, f"{text} owners chunk", 1, 1, f"{text}-{chunk}", fake_vector(text)
    )


def test_hostile_workspaces_refs_and_queries_are_only_data(location: str) -> None:
    store = open_store(location, model_id=MODEL, dim=DIM)
    try:
        store.replace_doc_chunks(
            "ws", "r1", [row("Checkout owners are Payments", i) for i in range(3)]
        )
        store.set_current("ws", "r1")
        before = tables(store)
        searcher = build_service(store, FakeEmbedder(), "ws")
        for hostile in HOSTILE:
            store.replace_doc_chunks(hostile, hostile, [row(hostile)])
            store.set_current(hostile, hostile)
            assert store.current(hostile) == hostile
            assert store.has_chunks(hostile, hostile)
            assert store.search(hostile, hostile, fake_vector(hostile), 3)[0].path == hostile
            assert all(h.path == hostile for h in store.search_text(hostile, hostile, hostile, 5))
            # The workspace's one row says "owners": the words query finds exactly that row.
            assert [h.path for h in store.search_text(hostile, hostile, "owners", 5)] == [hostile]
            pin = store.add_pin(hostile, hostile, hostile, 60.0)
            assert store.pinned_refs(hostile) == {hostile}
            store.remove_pin(pin)
            # The query reaches both rankings of a real search of the other workspace.
            answer = searcher.search(f"owners {hostile}", 3)
            assert {h.path for h in answer.hits} == {"Checkout owners are Payments"}
            assert store.ref_counts("ws") == {"r1": 3}
            assert store.ref_counts(hostile) == {hostile: 1}
        assert set(store.workspaces()) == {"ws", *HOSTILE}
        for hostile in HOSTILE:
            assert store.prune(hostile, []) == 1
            assert store.ref_counts(hostile) == {}
        assert store.ref_counts("ws") == {"r1": 3}
        assert tables(store) == before
    finally:
        store.close()


def test_a_nul_in_a_name_is_data_on_sqlite_and_a_clean_refusal_on_postgresql(
    location: str,
) -> None:
    store = open_store(location, model_id=MODEL, dim=DIM)
    try:
        store.replace_doc_chunks("ws", "r1", [row("owners")])
        if isinstance(store, SQLiteStore):
            store.replace_doc_chunks("w\x00s", "r\x001", [row("nul")])
            assert store.has_chunks("w\x00s", "r\x001")
            assert not store.has_chunks("w", "r")
            assert store.prune("w\x00s", []) == 1
        else:
            with pytest.raises(StoreError, match="PostgreSQL text holds neither NUL"):
                store.replace_doc_chunks("w\x00s", "r\x001", [row("nul")])
            with pytest.raises(StoreError, match="NUL"):
                store.has_chunks("w\x00s", "r1")
        assert store.ref_counts("ws") == {"r1": 1}
        assert [h.path for h in store.search_text("ws", "r1", "\x00owners\x00", 3)] == ["owners"]
    finally:
        store.close()


# -- the stores' SQL, read from their source ---------------------------------------------------


def sql_built_from_values(source: str) -> list[str]:
    """Where a statement passed to execute/executemany is built by formatting a value into it:
    an f-string field that uses a parameter of the function (directly, or through names the
    function assigns), other than inside `len(...)` (a count of placeholders). `.format` and `%`
    on a statement are never allowed. Module constants and the placeholders are fine."""
    problems: list[str] = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef):
            continue
        params = {a.arg for a in [*func.args.args, *func.args.kwonlyargs]} - {"self"}
        local = {
            node.targets[0].id: node.value
            for node in ast.walk(func)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        }

        def tainted(
            expr: ast.AST,
            seen: frozenset[str] = frozenset(),
            params: set[str] = params,
            local: dict[str, ast.expr] = local,
        ) -> set[str]:
            if (
                isinstance(expr, ast.Call)
                and isinstance(expr.func, ast.Name)
                and expr.func.id == "len"
            ):
                return set()
            if isinstance(expr, ast.Name) and expr.id not in seen:
                if expr.id in params:
                    return {expr.id}
                if expr.id in local:
                    return tainted(local[expr.id], seen | {expr.id})
            found: set[str] = set()
            for child in ast.iter_child_nodes(expr):
                found |= tainted(child, seen)
            return found

        for call in ast.walk(func):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("execute", "executemany")
                and call.args
            ):
                continue
            sql = call.args[0]
            if isinstance(sql, ast.Name) and sql.id in local:
                sql = local[sql.id]
            where = f"{func.name}:{call.lineno}"
            for node in ast.walk(sql):
                is_format = isinstance(node, ast.Attribute) and node.attr == "format"
                if is_format or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
                    problems.append(f"{where}: {'.format' if is_format else '%'} on a statement")
                if isinstance(node, ast.FormattedValue) and (names := tainted(node.value)):
                    problems.append(f"{where}: formats {sorted(names)} into the SQL")
    return problems


def test_the_stores_format_no_value_into_sql() -> None:
    sources = sorted(STORES.glob("*.py"))
    assert {p.name for p in sources} >= {"sqlite.py", "postgres.py"}
    for path in sources:
        assert sql_built_from_values(path.read_text(encoding="utf-8")) == [], path.name


def test_the_sql_check_finds_values_formatted_into_sql() -> None:
    bad = """
def current(self, workspace: str, ids: list[int]) -> None:
    marks = ",".join("?" * len(ids))
    where = f"workspace = '{workspace}'"
    conn.execute(f"SELECT ref FROM current_ref WHERE {where}")
    conn.execute(f"SELECT * FROM chunks WHERE id IN ({marks})", ids)
    conn.execute("SELECT * FROM t WHERE a = '%s'" % workspace)
    conn.execute("SELECT * FROM t WHERE a = '{}'".format(workspace))
"""
    problems = sql_built_from_values(bad)
    assert len(problems) == 3, problems
    assert "formats ['workspace'] into the SQL" in problems[0]


# -- the token ------------------------------------------------------------------------------------

TOKEN = "tok-" + "7f3a9c2e" * 4  # distinctive: any copy of it in a log or a body is a leak


def test_the_token_appears_in_no_log_and_no_response_at_debug_level(
    sqlite_location: str, caplog: pytest.LogCaptureFixture
) -> None:
    source = MemorySource(WORKSPACE)
    source.add(A, docs_at("alpha"))
    caplog.set_level(logging.DEBUG)
    bodies: list[str] = []
    with opened_service(sqlite_location, source) as service:
        assert service.indexer is not None
        service.indexer.index(A)
        with http_server(service, token=TOKEN) as (url, _):
            accept = {"Accept": "application/json, text/event-stream"}
            for authorization in (
                None,
                f"Bearer {TOKEN[:-1]}x",
                f"Bearer {TOKEN}x",
                f"Basic {TOKEN}",
                TOKEN,
                f"Bearer  {TOKEN[::-1]}",
            ):
                headers = dict(accept)
                if authorization is not None:
                    headers["Authorization"] = authorization
                refused = httpx.post(
                    url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
                )
                assert refused.status_code == 401
                bodies += [refused.text, str(refused.headers)]
            right = {
                **accept,
                "Authorization": f"Bearer {TOKEN}",
                "Content-Type": "application/json",
            }
            for body in (b'{"jsonrpc": ', b"[]", b'{"jsonrpc": "2.0", "id": 2}'):
                answered = httpx.post(url, content=body, headers=right)
                assert answered.status_code == 400
                bodies += [answered.text, str(answered.headers)]

            async def ask() -> CallToolResult:
                headers = {"Authorization": f"Bearer {TOKEN}"}
                async with (
                    httpx2.AsyncClient(headers=headers) as http,
                    Client(streamable_http_client(url, http_client=http)) as connected,
                ):
                    return await connected.call_tool("docs_search", {"query": "owners", "k": 1})

            refused_call = anyio.run(ask)
    assert refused_call.is_error
    bodies.append(refused_call.model_dump_json())
    assert caplog.records, "nothing was logged at DEBUG"
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "refused" in logged or "docs_search" in logged
    assert TOKEN not in logged
    assert TOKEN[:12] not in logged
    for body in bodies:
        assert TOKEN not in body and TOKEN[:12] not in body


@pytest.fixture
def sqlite_location(tmp_path: Path) -> str:
    return str(tmp_path / "docshelf.sqlite3")


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Repo, Path]:
    return indexed_shop(tmp_path)


GATEWAY = {"query": "gateway", "top_k": 1}


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_real_server_never_logs_or_answers_its_token(
    indexed: tuple[Repo, Path], tmp_path: Path, how: str
) -> None:
    repo, store = indexed
    log = tmp_path / "stderr.txt"
    base = serve_args(repo, store, "--embedder", "none", "--host", "0.0.0.0")
    args, env = (
        ([*base, "--token", TOKEN], None) if how == "flag" else (base, {"DOCSHELF_TOKEN": TOKEN})
    )
    bodies: list[str] = []
    with http_serve(args, log, env) as (url, _):
        for authorization in (None, f"Bearer {TOKEN[:-1]}x", f"Bearer {TOKEN}{TOKEN}", TOKEN):
            headers = {"Accept": "application/json, text/event-stream"}
            if authorization is not None:
                headers["Authorization"] = authorization
            refused = httpx.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
            )
            assert refused.status_code == 401, refused.text
            bodies += [refused.text, str(refused.headers)]
        answer = anyio.run(partial(ask, url, GATEWAY, token=TOKEN))
        assert not answer.is_error
        bodies.append(answer.model_dump_json())
    logged = log.read_text()
    assert "serving docs_search" in logged
    assert TOKEN not in logged
    for body in bodies:
        assert TOKEN not in body
    short = docshelf(*base, "--http", "--token", TOKEN[:10])
    assert short.returncode == 1
    assert "the token is 10 characters long; use at least 16" in short.stderr
    assert TOKEN[:10] not in short.stderr + short.stdout


# -- binding other machines' addresses --------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "docs.example.com"])
def test_a_non_loopback_bind_without_a_token_is_refused_before_binding(
    tmp_path: Path, host: str
) -> None:
    store = tmp_path / "store.sqlite3"  # refused before the store or the source is opened
    refused = docshelf("serve", str(tmp_path), "--store", str(store), "--http", "--host", host)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"docshelf: error: {host} can be reached from other machines, and without a token anyone "
        "there could read the docs; set a token (--token or DOCSHELF_TOKEN), or pass "
        "--allow-remote if the network itself is trusted\n"
    )
    assert refused.stdout == ""


def test_all_addresses_are_served_with_a_token_or_with_allow_remote(
    indexed: tuple[Repo, Path], tmp_path: Path
) -> None:
    repo, store = indexed
    args = serve_args(repo, store, "--embedder", "none", "--host", "0.0.0.0")
    with http_serve([*args, "--token", TOKEN], tmp_path / "token.txt") as (url, _):
        assert httpx.post(url, json={}).status_code == 401
        assert not anyio.run(partial(ask, url, GATEWAY, token=TOKEN)).is_error
    assert "at http://0.0.0.0:" in (tmp_path / "token.txt").read_text()
    with http_serve([*args, "--allow-remote"], tmp_path / "remote.txt") as (url, _):
        answer = anyio.run(partial(ask, url, GATEWAY, token=None))
        assert not answer.is_error
        assert answer.structured_content["hits"][0]["path"] == "docs/runbooks/payments.md"
    assert "at http://0.0.0.0:" in (tmp_path / "remote.txt").read_text()
