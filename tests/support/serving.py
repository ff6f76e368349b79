"""`docshelf serve` in a subprocess, for the tests that talk to a real server: the shop repository
indexed without a model, the server started on a free port, and the messages that open a
session by hand."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.support.gitrepo import Repo, write_shop_docs
from tests.test_cli_index import DOCSHELF, docshelf

# Starting a server, or syncing a commit, on a busy two-core machine: generous, never tight.
START_TIMEOUT_SECONDS = 120.0

# What a handshake client sends first, and the notification that follows its answer.
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def shop_repo(tmp_path: Path) -> Repo:
    """The shop's docs (tests/support/gitrepo.py), committed once."""
    made = Repo(tmp_path / "shop")
    write_shop_docs(made)
    made.commit("docs")
    return made


def index_without_model(repo: Repo, store: Path) -> None:
    done = docshelf("index", str(repo.path), "--store", str(store), "--embedder", "none")
    assert done.returncode == 0, done.stderr


def indexed_shop(tmp_path: Path) -> tuple[Repo, Path]:
    """The shop repository, and a SQLite store holding its docs indexed with no model."""
    repo = shop_repo(tmp_path)
    store = tmp_path / "store.sqlite3"
    index_without_model(repo, store)
    return repo, store


def serve_args(repo: Repo, store: Path, *more: str) -> list[str]:
    return ["serve", str(repo.path), "--store", str(store), *more]


@contextmanager
def http_serve(
    args: list[str], log: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`docshelf serve --http --port 0 ...` in a subprocess; yields the URL of its /mcp on
    127.0.0.1 (whatever address it listens on) once it serves. Stops it with SIGTERM (as a
    service manager does) and checks that it stopped cleanly and never wrote to stdout."""
    with log.open("wb") as err:
        server = subprocess.Popen(
            [str(DOCSHELF), *args, "--http", "--port", "0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not (found := re.search(r"at http://\S+:(\d+)/mcp$", log.read_text(), re.M)):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield f"http://127.0.0.1:{found.group(1)}/mcp", server
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            out, _ = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            server.send_signal(signal.SIGUSR1)  # every thread's stack into the log
            time.sleep(2)
            server.kill()
            out, _ = server.communicate()
    assert server.returncode == 0, log.read_text()
    assert out == b""  # stdout is never written to


async def ask(url: str, arguments: dict[str, Any], *, token: str | None) -> CallToolResult:
    """One docs_search call on a new handshake session, with the token when one is given."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as connected,
    ):
        return await connected.call_tool("docs_search", arguments)
