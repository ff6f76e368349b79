"""`docshelf serve` as an MCP client starts it: the installed console script in a subprocess, over
stdio and over HTTP, with the SDK's client and with an independent one, the MCP Inspector CLI."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from docshelf.stores import open_store
from tests.support.gitrepo import Repo
from tests.support.serving import (
    INITIALIZE,
    ask,
    http_serve,
    index_without_model,
    serve_args,
    shop_repo,
)
from tests.test_cli_index import DOCSHELF, docshelf

TOKEN = "s3cret-token-for-the-tests"
GATEWAY = {"query": "gateway"}

# The Inspector's version is pinned: later ones need a newer Node than the machines have.
INSPECTOR = ("npx", "-y", "@modelcontextprotocol/inspector@0.15.0", "--cli")

# npx downloads the Inspector on its first run (CI has the npm registry): minutes, not seconds.
INSPECTOR_TIMEOUT_SECONDS = 600

# Syncing a commit on a busy two-core machine: generous, never tight.
SYNC_TIMEOUT_SECONDS = 180.0


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return shop_repo(tmp_path)


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert block.type == "text"
    return block.text


# -- stdio ------------------------------------------------------------------------------------


def test_stdio_serves_the_real_model_s_answer_and_pins_with_ref(repo: Repo, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite3"
    first = repo.head()
    assert docshelf("index", str(repo.path), "--store", str(store)).returncode == 0
    with open_store(str(store), model_id=None, dim=None) as opened:  # keeps `first` unpruned
        pin = opened.add_pin(str(repo.path.resolve()), first, "test:1", 600)
    repo.write("docs/services/checkout.md", "# Checkout\n\n## Owners\n\nThe Storefront team.\n")
    second = repo.commit("new owners")
    assert docshelf("index", str(repo.path), "--store", str(store)).returncode == 0
    errlog = (tmp_path / "stderr.txt").open("w")
    env = {"HF_HUB_OFFLINE": "1", "PATH": os.environ["PATH"]}

    repeats: list[tuple[bool, bool]] = []

    async def session(*more: str) -> tuple[str, CallToolResult, CallToolResult]:
        params = StdioServerParameters(
            command=str(DOCSHELF), args=serve_args(repo, store, *more), env=env
        )
        async with Client(stdio_client(params, errlog=errlog)) as connected:
            tool, _, _ = (await connected.list_tools()).tools
            asked = {"query": "which team is responsible for checkout?", "top_k": 1}
            found = await connected.call_tool("docs_search", asked)
            hit = found.structured_content["hits"][0]
            read = await connected.call_tool("docs_read", {"path": hit["path"]})
            # The stdio client is one session: a passage it was shown comes back as a citation.
            for again in (asked, {**asked, "repeat": True}):
                answer = (await connected.call_tool("docs_search", again)).structured_content
                repeats.append((answer["hits"][0]["repeated"], answer["hits"][0]["content"] == ""))
            return tool.description or "", found, read

    description, current, current_read = anyio.run(session)
    assert repeats == [(True, True), (False, False)]
    pinned_description, pinned, pinned_read = anyio.run(session, "--ref", "HEAD~1")
    errlog.close()
    # docs_read gives each commit's own lines of the file the hit names, as git holds them.
    for commit, read in ((second, current_read), (first, pinned_read)):
        held = repo.git("show", f"{commit}:docs/services/checkout.md").splitlines()
        assert read.structured_content["ref"] == commit
        assert read.structured_content["text"].split("\n") == held
        assert read.structured_content["total_lines"] == len(held)
    assert current_read.structured_content["text"] != pinned_read.structured_content["text"]
    assert "matches by meaning and by words" in description
    assert current.structured_content["ref"] == second
    assert current.structured_content["hits"][0]["path"] == "docs/services/checkout.md"
    assert "Storefront" in text_of(current)
    assert f"at commit {first[:12]}, which this session is pinned to" in pinned_description
    assert pinned.structured_content["ref"] == first
    assert "Payments team" in text_of(pinned)
    logged = (tmp_path / "stderr.txt").read_text()
    assert f"docshelf: INFO pinned to {first[:12]} (HEAD~1)" in logged
    with open_store(str(store), model_id=None, dim=None) as opened:
        name = str(repo.path.resolve())
        assert opened.pinned_refs(name) == {first}  # this test's own pin, still held
        opened.remove_pin(pin)
        assert opened.pinned_refs(name) == set()  # so the server's pin was released


def test_stdio_exits_on_sigterm_and_releases_its_pin(repo: Repo, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite3"
    index_without_model(repo, store)
    args = serve_args(repo, store, "--embedder", "none", "--ref", "main")
    with subprocess.Popen(
        [str(DOCSHELF), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(INITIALIZE) + "\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["result"]["serverInfo"]["name"] == "docs"
        name = str(repo.path.resolve())
        with open_store(str(store), model_id=None, dim=None) as opened:
            assert opened.pinned_refs(name) == {repo.head()}
            server.send_signal(signal.SIGTERM)
            _, err = server.communicate(timeout=60)
            assert server.returncode == 0, err
            assert "stopping on SIGTERM" in err
            assert opened.pinned_refs(name) == set()


def test_http_only_options_without_http_and_a_remote_bind_without_token_are_refused(
    repo: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    usage = docshelf(*serve_args(repo, store, "--port", "9000"))
    assert usage.returncode == 2
    assert "--port is for --http" in usage.stderr
    remote = docshelf(*serve_args(repo, store, "--http", "--host", "0.0.0.0", "--embedder", "none"))
    assert remote.returncode == 1
    assert remote.stderr.startswith(
        "docshelf: error: 0.0.0.0 can be reached from other machines, and without a token"
    )
    assert "--allow-remote" in remote.stderr
    nothing = docshelf("serve", "--sync-interval", "5", "--store", str(store))
    assert nothing.returncode == 2
    assert "need SOURCE" in nothing.stderr
    page = docshelf(*serve_args(repo, store, "--open"))
    assert page.returncode == 2
    assert "--open is for --http" in page.stderr


# -- HTTP ----------------------------------------------------------------------------------------


def test_http_logs_the_page_s_url_and_open_hands_it_to_the_browser(
    repo: Repo, tmp_path: Path
) -> None:
    """--open opens the page through Python's webbrowser, which runs $BROWSER when it is set:
    here a script that writes down the URL it was given."""
    store = tmp_path / "store.sqlite3"
    index_without_model(repo, store)
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    browser.chmod(0o755)
    log = tmp_path / "serve.log"
    args = serve_args(repo, store, "--embedder", "none", "--open")
    with http_serve(args, log, env={"BROWSER": str(browser)}) as (url, _):
        page = url.removesuffix("mcp")
        deadline = time.monotonic() + 30
        while not opened.exists() or not opened.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert opened.read_text() == page
        assert f"the web page is at {page}" in log.read_text()
        assert "docshelf" in httpx.get(page).text


def test_http_stops_on_a_sigterm_that_lands_on_another_thread(repo: Repo, tmp_path: Path) -> None:
    """A process-directed signal may be delivered to any thread that does not block it (the
    kernel picks the main one only when it is free to take it). Sent here to the uvicorn
    thread itself: the server still logs it, stops and exits 0. SIGUSR1 before it dumps every
    thread's stack to the log and the server goes on answering."""
    store = tmp_path / "store.sqlite3"
    index_without_model(repo, store)
    log = tmp_path / "stderr.txt"
    with http_serve(serve_args(repo, store, "--embedder", "none"), log) as (url, server):
        server.send_signal(signal.SIGUSR1)  # a stack dump of every thread, and it goes on
        deadline = time.monotonic() + 30
        while "in _serve_http" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert "in asyncio_run" in log.read_text()  # uvicorn's thread too
        assert not anyio.run(partial(ask, url, GATEWAY, token=None)).is_error
        threads = sorted(int(t.name) for t in Path(f"/proc/{server.pid}/task").iterdir())
        others = [t for t in threads if t != server.pid]
        assert others  # uvicorn's thread at least
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.tgkill(server.pid, others[-1], signal.SIGTERM) == 0, ctypes.get_errno()
        server.wait(30)
    assert "stopping on SIGTERM" in log.read_text()


def test_http_with_a_token_pins_sessions_by_url_and_a_background_sync_moves_current(
    repo: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    first = repo.head()
    index_without_model(repo, store)
    args = serve_args(repo, store, "--embedder", "none", "--sync-interval", "1")
    log = tmp_path / "stderr.txt"
    with http_serve(args, log, env={"DOCSHELF_TOKEN": TOKEN}) as (url, _):
        refused = httpx.post(url, json={}, headers={"Accept": "application/json"})
        assert refused.status_code == 401
        before = anyio.run(partial(ask, url, {"query": "payment gateway timeout"}, token=TOKEN))
        assert before.structured_content["ref"] == first
        repo.write("docs/runbooks/payments.md", "# Payments runbook\n\nCall the gateway vendor.\n")
        second = repo.commit("new runbook")

        async def pinned_and_current() -> tuple[CallToolResult, CallToolResult]:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(
                    streamable_http_client(f"{url}?ref={first}", http_client=http), mode="legacy"
                ) as on_first,
            ):
                deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
                now = await ask(url, GATEWAY, token=TOKEN)
                while now.structured_content["ref"] != second:
                    assert time.monotonic() < deadline, log.read_text()
                    await anyio.sleep(0.5)
                    now = await ask(url, GATEWAY, token=TOKEN)
                return await on_first.call_tool("docs_search", {"query": "gateway"}), now

        pinned, current = anyio.run(pinned_and_current)
    assert pinned.structured_content["ref"] == first
    assert "raise the timeout to 30 seconds" in text_of(pinned)
    assert current.structured_content["ref"] == second
    assert "Call the gateway vendor" in text_of(current)
    logged = log.read_text()
    assert f"docshelf: INFO indexed {second[:12]}: 2 chunks" in logged
    status = json.loads(docshelf("status", "--store", str(store), "--json").stdout)
    assert status["workspaces"][0]["current"] == second
    assert status["workspaces"][0]["pinned"] == []


def test_a_server_that_syncs_embeds_the_new_commit_without_ever_loading_torch(
    repo: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    assert docshelf("index", str(repo.path), "--store", str(store)).returncode == 0
    # A first query leaves the model's ONNX export in the cache (once per machine).
    assert docshelf("search", "gateway", "--store", str(store)).returncode == 0
    args = serve_args(repo, store, "--sync-interval", "1")
    log = tmp_path / "stderr.txt"
    question = {"query": "who do we phone when the payment gateway fails?", "top_k": 1}
    with http_serve(args, log) as (url, server):
        assert anyio.run(partial(ask, url, question, token=None)).structured_content["ref"]
        repo.write(
            "docs/runbooks/escalation.md",
            "# Escalation\n\nWhen the payment gateway fails, phone the vendor's duty engineer.\n",
        )
        second = repo.commit("escalation runbook")
        deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
        while (now := anyio.run(partial(ask, url, question, token=None))).structured_content[
            "ref"
        ] != second:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        mapped = Path(f"/proc/{server.pid}/maps").read_text()
    assert "phone the vendor's duty engineer" in text_of(now)
    assert f"docshelf: INFO indexed {second[:12]}: " in log.read_text()
    assert "libtorch" not in mapped  # the sync's batch and the queries: ONNX Runtime only
    assert "onnxruntime" in mapped


# -- the MCP Inspector CLI, an independent client ----------------------------------------------


def inspector(*args: str) -> Any:
    done = subprocess.run(
        [*INSPECTOR, *args],
        capture_output=True,
        text=True,
        timeout=INSPECTOR_TIMEOUT_SECONDS,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "npm_config_yes": "true"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


PAYMENTS = "docs/runbooks/payments.md"


def inspector_call(target: tuple[str, ...], tool: str, *arguments: str) -> Any:
    """tools/call of `tool` with `--tool-arg` KEY=VALUE `arguments`. The Inspector sends a value
    as a number where the tool's schema says integer or number (start_line=1 arrives as 1, which
    the server takes; the string "1" it would refuse), else as the string given."""
    tool_args = [part for argument in arguments for part in ("--tool-arg", argument)]
    return inspector(*target, "--method", "tools/call", "--tool-name", tool, *tool_args)


def check_inspector_answers(*target: str, commit: str) -> None:
    """tools/list and each tool's answer (and refusal) through the Inspector, from `commit`."""
    listed = inspector(*target, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert list(tools) == ["docs_search", "docs_read", "docs_outline"]
    assert tools["docs_search"]["inputSchema"]["properties"]["top_k"]["maximum"] == 20
    read_schema = tools["docs_read"]["inputSchema"]
    assert read_schema["required"] == ["path"]
    assert read_schema["properties"]["start_line"]["type"] == "integer"
    assert set(read_schema["properties"]) == {"path", "start_line", "end_line"}
    assert set(tools["docs_outline"]["inputSchema"]["properties"]) == {"path"}
    for tool in tools.values():
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["inputSchema"]["additionalProperties"] is False
        assert "workspace" not in tool["inputSchema"]["properties"]  # one workspace served
    assert f"at commit {commit[:12]}" in tools["docs_read"]["description"]

    called = inspector_call(target, "docs_search", "query=payment gateway timeout", "top_k=1")
    assert called.get("isError") is not True, called
    assert called["content"][0]["text"].startswith("1 excerpt for 'payment gateway timeout'")
    assert called["structuredContent"]["hits"][0]["path"] == PAYMENTS
    assert called["structuredContent"]["ref"] == commit
    refused = inspector_call(target, "docs_search", "query=timeout", "top_k=21")
    assert refused["isError"] is True
    assert "top_k must be a whole number from 1 to 20; got 21" in refused["content"][0]["text"]
    one = inspector_call(target, "docs_search", "query=payments", "top_k=2", "per_file=1")
    assert one.get("isError") is not True, one
    hits = one["structuredContent"]["hits"]
    assert len({h["path"] for h in hits}) == len(hits) and all("more" in h for h in hits)
    wide = inspector_call(target, "docs_search", "query=timeout", "top_k=2", "per_file=3")
    assert wide["isError"] is True
    said = wide["content"][0]["text"]
    assert "per_file must be a whole number from 1 to top_k (2); got 3" in said

    read = inspector_call(target, "docs_read", f"path={PAYMENTS}", "start_line=1", "end_line=3")
    assert read.get("isError") is not True, read
    assert read["content"][0]["text"] == (
        f"{PAYMENTS}, lines 1-3 of 5, at commit {commit[:12]}\n"
        "1  # Payments runbook\n2  \n3  ## Timeout\n"
    )
    assert read["structuredContent"] == {
        "workspace": read["structuredContent"]["workspace"],
        "ref": commit,
        "path": PAYMENTS,
        "start_line": 1,
        "end_line": 3,
        "total_lines": 5,
        "text": "# Payments runbook\n\n## Timeout",
        "next_start_line": None,
        "note": None,
    }
    hostile = inspector_call(target, "docs_read", "path=../../etc/passwd", "start_line=1")
    assert hostile["isError"] is True
    (block,) = hostile["content"]
    assert block["text"] == (
        "path must be a path relative to the repository, as the hits show it "
        "(docs/runbooks/payments.md), without '..'; got '../../etc/passwd'"
    )
    assert "structuredContent" not in hostile

    outline = inspector_call(target, "docs_outline")
    assert outline.get("isError") is not True, outline
    assert outline["content"][0]["text"] == (
        f"The docs at commit {commit[:12]}: 2 files\n"
        "docs/runbooks/payments.md (5 lines)\n  1-5 Payments runbook\n    3-5 Timeout\n"
        "docs/services/checkout.md (5 lines)\n  1-5 Checkout\n    3-5 Owners\n"
    )
    structured = outline["structuredContent"]
    assert (structured["ref"], structured["total_files"], structured["narrower"]) == (commit, 2, [])
    assert [f["path"] for f in structured["files"]] == [PAYMENTS, "docs/services/checkout.md"]
    assert structured["files"][0]["headings"] == [
        {"depth": 1, "title": "Payments runbook", "start_line": 1, "end_line": 5},
        {"depth": 2, "title": "Timeout", "start_line": 3, "end_line": 5},
    ]


def test_the_mcp_inspector_lists_and_calls_the_three_tools_over_stdio(
    repo: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    index_without_model(repo, store)
    target = (str(DOCSHELF), *serve_args(repo, store, "--embedder", "none"))
    check_inspector_answers(*target, commit=repo.head())


def test_the_mcp_inspector_lists_and_calls_the_three_tools_over_http_and_pins_by_url(
    repo: Repo, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite3"
    first = repo.head()
    index_without_model(repo, store)
    with open_store(str(store), model_id=None, dim=None) as opened:  # keeps `first` unpruned
        opened.add_pin(str(repo.path.resolve()), first, "test:1", 600)
    repo.write("docs/services/checkout.md", "# Checkout\n\n## Owners\n\nThe Storefront team.\n")
    second = repo.commit("new owners")
    index_without_model(repo, store)
    args = serve_args(repo, store, "--embedder", "none")
    with http_serve(args, tmp_path / "stderr.txt") as (url, _):
        check_inspector_answers(url, "--transport", "http", commit=second)
        # A session of /mcp?ref= reads and searches the pinned commit.
        pinned = (f"{url}?ref={first}", "--transport", "http")
        read = inspector_call(pinned, "docs_read", "path=docs/services/checkout.md")
        held = repo.git("show", f"{first}:docs/services/checkout.md")
        assert (read["structuredContent"]["ref"], read["structuredContent"]["text"]) == (
            first,
            held,
        )
        assert read["content"][0]["text"].startswith(
            f"docs/services/checkout.md, lines 1-5 of 5, at commit {first[:12]}\n"
        )
        found = inspector_call(pinned, "docs_search", "query=owned by the Payments team")
        assert found["structuredContent"]["ref"] == first
        assert found["structuredContent"]["hits"][0]["path"] == "docs/services/checkout.md"


def test_the_mcp_inspector_sees_two_workspaces_served_and_asks_each(tmp_path: Path) -> None:
    shop = shop_repo(tmp_path)
    billing = Repo(tmp_path / "billing")
    billing.write("docs/billing.md", "# Billing\n\n## Invoices\n\nInvoices go out monthly.\n")
    billing.write(PAYMENTS, "# Payments\n\nBilling's own payment runbook.\n")
    billing.commit("docs")
    store = tmp_path / "store.sqlite3"
    index_without_model(shop, store)
    index_without_model(billing, store)
    target = (
        str(DOCSHELF),
        *("serve", str(shop.path), str(billing.path), "--store", str(store)),
        *("--embedder", "none"),
    )
    listed = inspector(*target, "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == [
        "docs_search",
        "docs_read",
        "docs_outline",
    ]
    for tool in listed["tools"]:
        workspace = tool["inputSchema"]["properties"]["workspace"]
        assert (workspace["type"], sorted(workspace["enum"])) == ("string", ["billing", "shop"])
        assert "workspace" not in tool["inputSchema"].get("required", [])
        assert (
            "billing (at commit" in tool["description"] and "shop (at commit" in tool["description"]
        )
    found = inspector_call(target, "docs_search", "query=payment runbook", "workspace=billing")
    assert found.get("isError") is not True, found
    hits = found["structuredContent"]["hits"]
    assert hits and {(h["workspace"], h["ref"]) for h in hits} == {("billing", billing.head())}
    assert found["structuredContent"]["ref"] == billing.head()
    read = inspector_call(target, "docs_read", f"path={PAYMENTS}", "workspace=shop")
    assert read.get("isError") is not True, read
    assert read["structuredContent"]["workspace"] == "shop"
    assert read["structuredContent"]["ref"] == shop.head()
    assert read["content"][0]["text"].startswith(f"{PAYMENTS} of workspace shop, lines 1-5 of 5")
    unknown = inspector_call(target, "docs_search", "query=payment", "workspace=nobody")
    assert unknown["isError"] is True
    assert "workspace must be one of " in unknown["content"][0]["text"]
