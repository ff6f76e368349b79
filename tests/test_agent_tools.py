"""docs_read, docs_outline and docs_search's path and workspace, through the real MCP SDK client, on
real git repositories indexed into both real stores (no model: the tools read the store's copy of
each file, and text ranking is enough to find the hits)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from docshelf.app import Service, index_source, open_service
from docshelf.config import READ_MAX_BYTES, READ_MAX_LINES, Config
from docshelf.mcp_server import (
    OUTLINE_OUTPUT_SCHEMA,
    OUTPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
    build_server,
)
from docshelf.paths import MAX_PATH_BYTES
from docshelf.stores import is_postgres_url, open_store
from tests.support.gitrepo import Repo
from tests.support.serving import INITIALIZE, http_serve

ACCEPT = {"Accept": "application/json, text/event-stream"}

# Syncing a commit on a busy two-core machine: generous, never tight.
SYNC_TIMEOUT_SECONDS = 180.0

CHECKOUT_V1 = "# Checkout\n\n## Owners\n\nCheckout is owned by the Payments team.\n"
CHECKOUT_V2 = "# Checkout\n\nIntro line.\n\n## Owners\n\nCheckout is owned by Storefront.\n"
RUNBOOK = (
    "# Payments runbook\r\n\r\n## Timeout\r\n\r\nWhen the payment gateway times out, raise the "
    "timeout to 30 seconds.\r\n\r\n## Escalation\r\n\r\nPage the payments team. Ünïcode ✓\r\n"
)


def run(scenario: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
    return anyio.run(partial(scenario, *args, **kwargs))


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert block.type == "text"
    return block.text


async def calls(service: Service, asked: list[tuple[str, dict[str, Any]]], **server: Any) -> Any:
    async with Client(build_server(service, **server)) as connected:
        return [await connected.call_tool(name, arguments) for name, arguments in asked]


def call(service: Service, name: str, arguments: dict[str, Any], **server: Any) -> CallToolResult:
    (result,) = run(calls, service, [(name, arguments)], **server)
    assert isinstance(result, CallToolResult)
    return result


def config_for(location: str, tmp_path: Path) -> Config:
    return Config(store=location, embedder="none", mirror_dir=str(tmp_path / "mirrors"))


def shop(tmp_path: Path, name: str = "shop") -> Repo:
    repo = Repo(tmp_path / name)
    repo.write("docs/services/checkout.md", CHECKOUT_V1)
    repo.write("docs/runbooks/payments.md", RUNBOOK)
    repo.commit("docs")
    return repo


def pin_in_store(location: str, workspace: str, ref: str) -> None:
    with open_store(location, model_id=None, dim=None) as store:
        store.add_pin(workspace, ref, "test:1", 3600)


@pytest.fixture
def two_commits(location: str, tmp_path: Path) -> Iterator[tuple[Repo, str, str, Config]]:
    """The shop at two indexed commits, the first pinned in the store (so kept), the second
    current; checkout.md differs between them."""
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    first = repo.head()
    index_source(config, str(repo.path))
    pin_in_store(location, str(repo.path.resolve()), first)
    repo.write("docs/services/checkout.md", CHECKOUT_V2)
    second = repo.commit("new owners")
    index_source(config, str(repo.path))
    yield repo, first, second, config


def test_docs_read_gives_each_commit_s_own_lines_exactly_as_git_holds_them(
    two_commits: tuple[Repo, str, str, Config],
) -> None:
    repo, first, second, config = two_commits
    with open_service(config, source=str(repo.path)) as service:
        current = call(service, "docs_read", {"path": "docs/services/checkout.md"})
        pinned = call(service, "docs_read", {"path": "docs/services/checkout.md"}, ref=first)
        runbook = call(service, "docs_read", {"path": "docs/runbooks/payments.md"}, ref=first)
    for result, commit, text in ((current, second, CHECKOUT_V2), (pinned, first, CHECKOUT_V1)):
        assert not result.is_error, text_of(result)
        jsonschema.validate(result.structured_content, READ_OUTPUT_SCHEMA)
        held = repo.git("show", f"{commit}:docs/services/checkout.md")
        assert result.structured_content["text"] == held == text.rstrip("\n")
        assert result.structured_content["ref"] == commit
        lines = text.splitlines()
        assert result.structured_content["total_lines"] == len(lines)
        assert text_of(result).startswith(
            f"docs/services/checkout.md, lines 1-{len(lines)} of {len(lines)}, at commit "
            f"{commit[:12]}\n1  # Checkout\n"
        )
        assert result.structured_content["next_start_line"] is None
    # CRLF lines are the file's lines without their line ends, numbered as the hits are.
    assert runbook.structured_content["text"].split("\n") == RUNBOOK.split("\r\n")[:-1]
    assert "✓" in runbook.structured_content["text"]


def test_a_read_range_is_the_hit_s_lines_and_a_long_file_is_read_on_at_a_line(
    location: str, tmp_path: Path
) -> None:
    repo = shop(tmp_path)
    long_lines = [f"Line {i} of the long runbook, about restarts." for i in range(1, 451)]
    repo.write("docs/long.md", "# Long\n\n" + "\n".join(long_lines) + "\n")
    repo.commit("long")
    config = config_for(location, tmp_path)
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as service:
        found = call(service, "docs_search", {"query": "gateway timeout", "top_k": 1})
        hit = found.structured_content["hits"][0]
        around = call(
            service,
            "docs_read",
            {"path": hit["path"], "start_line": hit["start_line"], "end_line": hit["end_line"]},
        )
        first = call(service, "docs_read", {"path": "docs/long.md"})
        rest = call(
            service, "docs_read", {"path": "docs/long.md", "start_line": READ_MAX_LINES + 1}
        )
        whole = call(
            service, "docs_read", {"path": "docs/long.md", "start_line": 1, "end_line": 452}
        )
    # A hit's lines, read back, are the hit's text.
    assert around.structured_content["text"] == hit["content"]
    assert (around.structured_content["start_line"], around.structured_content["end_line"]) == (
        hit["start_line"],
        hit["end_line"],
    )
    read = first.structured_content
    assert (read["start_line"], read["end_line"], read["total_lines"]) == (1, READ_MAX_LINES, 452)
    assert read["next_start_line"] == READ_MAX_LINES + 1
    assert f"read on with start_line={READ_MAX_LINES + 1}" in text_of(first)
    assert len(read["text"].encode()) <= READ_MAX_BYTES
    assert rest.structured_content["start_line"] == READ_MAX_LINES + 1
    assert rest.structured_content["text"].split("\n")[0] == long_lines[READ_MAX_LINES - 2]
    # A range longer than one answer is cut at a line, never clamped silently.
    assert whole.structured_content["end_line"] == READ_MAX_LINES
    assert whole.structured_content["next_start_line"] == READ_MAX_LINES + 1


def test_reads_outlines_and_narrow_searches_answer_from_the_store_after_the_repository_is_gone(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as beside:
        asked = [
            ("docs_read", {"path": "docs/services/checkout.md", "start_line": 3}),
            ("docs_outline", {}),
            ("docs_outline", {"path": "docs/runbooks/"}),
            ("docs_search", {"query": "timeout", "path": "docs/runbooks/"}),
        ]
        before = run(calls, beside, asked)
    shutil.rmtree(repo.path)
    with open_service(config) as replica:  # the store only, as an HTTP replica has it
        after = run(calls, replica, asked)
    for was, now in zip(before, after, strict=True):
        assert not now.is_error, text_of(now)
        assert text_of(now) == text_of(was)
        assert now.structured_content == was.structured_content
    outline = after[1].structured_content
    jsonschema.validate(outline, OUTLINE_OUTPUT_SCHEMA)
    assert [f["path"] for f in outline["files"]] == [
        "docs/runbooks/payments.md",
        "docs/services/checkout.md",
    ]
    assert outline["files"][0]["headings"] == [
        {"depth": 1, "title": "Payments runbook", "start_line": 1, "end_line": 9},
        {"depth": 2, "title": "Timeout", "start_line": 3, "end_line": 6},
        {"depth": 2, "title": "Escalation", "start_line": 7, "end_line": 9},
    ]
    assert "\n    3-6 Timeout\n" in text_of(after[1])
    assert [f["path"] for f in after[2].structured_content["files"]] == [
        "docs/runbooks/payments.md"
    ]


def test_only_indexed_docs_can_be_read_and_every_hostile_path_is_refused_naming_real_ones(
    location: str, tmp_path: Path
) -> None:
    repo = shop(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nthe password is hunter2\n")
    repo.symlink("docs/linked.md", str(secret))
    repo.write("docs/huge.md", "# Huge\n\n" + "hunter2 " * 140_000)
    repo.write("docs/latin1.md", b"# Caf\xe9\n\nhunter2\n")
    repo.write("README.md", "# Shop\n\nhunter2 at the top of the tree\n")
    repo.write("src/app.py", "PASSWORD = 'hunter2'\n")
    repo.commit("hostile")
    config = config_for(location, tmp_path)
    result = index_source(config, str(repo.path))
    assert {s.path for s in result.skipped} >= {"docs/linked.md", "docs/huge.md", "docs/latin1.md"}
    hostile = [
        "docs/linked.md",  # a symlink, skipped
        "docs/huge.md",  # over 1 MiB, skipped
        "docs/latin1.md",  # not UTF-8, skipped
        "README.md",  # outside the docs root
        "src/app.py",
        "../secret.md",
        "docs/../README.md",
        str(secret),  # absolute
        "/etc/passwd",
        "docs/\x00services/checkout.md",
        "docs/" + "a" * MAX_PATH_BYTES,
        "docs/services/",  # a folder
        "",
        7,
        None,
    ]
    with open_service(config, source=str(repo.path)) as service:
        answers = run(calls, service, [("docs_read", {"path": path}) for path in hostile])
        outlined = run(
            calls,
            service,
            [("docs_outline", {"path": path}) for path in ("../", "/etc", "nowhere/", "\x00")],
        )
    for path, answer in zip(hostile, answers, strict=True):
        text = text_of(answer)
        assert answer.is_error, (path, text)
        assert "hunter2" not in text and "root:" not in text, path
        assert answer.structured_content is None
    for path in ("docs/linked.md", "docs/huge.md", "docs/latin1.md", "README.md", "src/app.py"):
        text = text_of(answers[hostile.index(path)])
        assert "is not an indexed doc of" in text, text
        assert "docs/services/checkout.md" in text or "docs/runbooks/payments.md" in text
    assert "without '..'" in text_of(answers[hostile.index("../secret.md")])
    assert "not an absolute path" in text_of(answers[hostile.index("/etc/passwd")])
    assert "NUL or control character" in text_of(answers[hostile.index(hostile[9])])
    assert f"at most {MAX_PATH_BYTES} bytes" in text_of(answers[hostile.index(hostile[10])])
    assert "must be a path relative to the repository" in text_of(answers[-1])
    for answer in outlined:
        assert answer.is_error
    assert "Its docs are in docs/ (2 files)" in text_of(outlined[2])


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"path": "docs/services/checkout.md", "start_line": 0}, "from 1 to 1048577; got 0"),
        ({"path": "docs/services/checkout.md", "start_line": -3}, "got -3"),
        ({"path": "docs/services/checkout.md", "start_line": 1.5}, "got 1.5"),
        ({"path": "docs/services/checkout.md", "start_line": "2"}, "got '2'"),
        ({"path": "docs/services/checkout.md", "start_line": True}, "got True"),
        ({"path": "docs/services/checkout.md", "end_line": 10**60}, "more than 40 digits"),
        ({"path": "docs/services/checkout.md", "start_line": 9}, "has 5 lines"),
        ({"path": "docs/services/checkout.md", "start_line": 4, "end_line": 2}, "not be before"),
        ({"path": "docs/services/checkout.md", "lines": "1-3"}, "unknown argument 'lines'"),
        ({"path": "docs/services/checkout.md", "workspace": "shop"}, "unknown argument"),
        ({}, "path must be a path relative to the repository"),
    ],
)
def test_each_docs_read_argument_is_refused_with_its_bound_never_clamped(
    tmp_path: Path, arguments: dict[str, Any], said: str
) -> None:
    config = config_for(str(tmp_path / "store.sqlite3"), tmp_path)
    repo = shop(tmp_path)
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as service:
        answer = call(service, "docs_read", arguments)
        fine = call(service, "docs_read", {"path": "docs/services/checkout.md", "start_line": 2.0})
    assert answer.is_error
    assert said in text_of(answer), text_of(answer)
    assert not fine.is_error and fine.structured_content["start_line"] == 2


def test_a_path_filter_ranks_its_files_among_themselves_and_returns_what_they_hold(
    location: str, tmp_path: Path
) -> None:
    repo = shop(tmp_path)
    for i in range(30):  # timeouts everywhere else, worded to outrank the runbook
        repo.write(f"docs/notes/n{i}.md", f"# Timeout note {i}\n\ntimeout timeout timeout {i}\n")
    repo.commit("notes")
    config = config_for(location, tmp_path)
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as service:
        everywhere, narrow, glob, nothing = run(
            calls,
            service,
            [
                ("docs_search", {"query": "timeout", "top_k": 20}),
                ("docs_search", {"query": "timeout", "top_k": 5, "path": "docs/runbooks/"}),
                ("docs_search", {"query": "timeout", "top_k": 5, "path": "**/payments.md"}),
                ("docs_search", {"query": "timeout", "path": "docs/runbook"}),
            ],
        )
    assert all(h["path"].startswith("docs/notes/") for h in everywhere.structured_content["hits"])
    for answer in (narrow, glob):
        jsonschema.validate(answer.structured_content, OUTPUT_SCHEMA)
        hits = answer.structured_content["hits"]
        # The runbook's sections are all of the subset's passages, ranked among themselves.
        assert [h["path"] for h in hits] == ["docs/runbooks/payments.md"] * len(hits)
        assert 1 <= len(hits) < 5
        assert hits[0]["heading"] == "Payments runbook > Timeout"
    assert nothing.is_error
    assert "no indexed doc of" in text_of(nothing) and "docs/ (32 files)" in text_of(nothing)


def two_repos(tmp_path: Path, config: Config) -> tuple[Repo, Repo]:
    one = shop(tmp_path / "a")
    other = Repo(tmp_path / "b" / "billing")
    other.write("docs/invoices.md", "# Invoices\n\nA payment timeout on invoices is 60 seconds.\n")
    other.write("docs/services/checkout.md", "# Checkout billing\n\nBilling owns refunds.\n")
    other.commit("billing docs")
    for repo in (one, other):
        index_source(config, str(repo.path))
    return one, other


def test_two_workspaces_in_one_server_are_searched_together_and_apart(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    one, other = two_repos(tmp_path, config)
    with open_service(config, sources=[str(one.path), str(other.path)]) as service:
        assert service.labels == ["shop", "billing"]

        async def scenario() -> Any:
            async with Client(build_server(service)) as connected:
                tools = (await connected.list_tools()).tools
                together = await connected.call_tool("docs_search", {"query": "payment timeout"})
                apart = await connected.call_tool(
                    "docs_search", {"query": "payment timeout", "workspace": "billing"}
                )
                unknown = await connected.call_tool(
                    "docs_search", {"query": "timeout", "workspace": "nope"}
                )
                overview = await connected.call_tool("docs_outline", {})
                ambiguous = await connected.call_tool(
                    "docs_read", {"path": "docs/services/checkout.md"}
                )
                unique = await connected.call_tool("docs_read", {"path": "docs/invoices.md"})
                named = await connected.call_tool(
                    "docs_read", {"path": "docs/services/checkout.md", "workspace": "billing"}
                )
                return tools, together, apart, unknown, overview, ambiguous, unique, named

        tools, together, apart, unknown, overview, ambiguous, unique, named = run(scenario)
    for tool in tools:
        assert tool.input_schema["properties"]["workspace"]["enum"] == ["shop", "billing"]
        assert tool.input_schema["additionalProperties"] is False
    assert "the repositories shop (at commit" in (tools[0].description or "")
    hits = together.structured_content["hits"]
    jsonschema.validate(together.structured_content, OUTPUT_SCHEMA)
    assert {h["workspace"] for h in hits} == {"shop", "billing"}
    assert together.structured_content["ref"] is None
    assert together.structured_content["refs"] == {"shop": one.head(), "billing": other.head()}
    assert {h["ref"] for h in hits if h["workspace"] == "billing"} == {other.head()}
    assert "billing: docs/invoices.md:1-3" in text_of(together)
    assert {h["workspace"] for h in apart.structured_content["hits"]} == {"billing"}
    assert apart.structured_content["ref"] == other.head()
    assert unknown.is_error and "workspace must be one of shop, billing" in text_of(unknown)
    views = overview.structured_content["workspaces"]
    assert [(v["workspace"], v["ref"], v["files"]) for v in views] == [
        ("shop", one.head(), 2),
        ("billing", other.head(), 2),
    ]
    assert (
        ambiguous.is_error
        and "is in the docs of shop, billing; name one as workspace" in text_of(ambiguous)
    )
    assert unique.structured_content["workspace"] == "billing"
    assert "docs/invoices.md of workspace billing, lines 1-3 of 3" in text_of(unique)
    assert named.structured_content["text"].startswith("# Checkout billing")


def test_two_workspaces_are_pinned_separately_and_a_bare_ref_needs_one_workspace(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    one, other = two_repos(tmp_path, config)
    first = one.head()
    one.write("docs/services/checkout.md", CHECKOUT_V2)
    one.commit("new owners")
    with open_service(config, sources=[str(one.path), str(other.path)]) as service:
        pins, release = service.pin_all([f"shop={first}"])
        assert pins == {"shop": first}
        service.sync("shop")  # indexes the new commit; the pin keeps the first
        try:
            pinned = call(
                service,
                "docs_read",
                {"path": "docs/services/checkout.md", "workspace": "shop"},
                ref=pins,
            )
            current = call(
                service, "docs_read", {"path": "docs/services/checkout.md", "workspace": "shop"}
            )
            billing = call(service, "docs_read", {"path": "docs/invoices.md"}, ref=pins)
            with pytest.raises(Exception, match="must name its workspace as NAME=REV"):
                service.pin_all([first])
            with pytest.raises(Exception, match="pinned twice"):
                service.pin_all([f"shop={first}", f"shop={first}"])
        finally:
            release()
    assert pinned.structured_content["text"] == CHECKOUT_V1.rstrip("\n")
    assert pinned.structured_content["ref"] == first
    assert current.structured_content["text"] == CHECKOUT_V2.rstrip("\n")
    assert billing.structured_content["ref"] == other.head()


def test_an_old_ref_without_file_texts_says_so_and_docshelf_index_fills_them_in(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    index_source(config, str(repo.path))
    forget_file_texts(location)  # as a ref indexed before the store kept them
    with open_service(config) as service:
        refused = call(service, "docs_read", {"path": "docs/services/checkout.md"})
        searched = call(service, "docs_search", {"query": "timeout"})
    assert refused.is_error
    assert "was indexed before docshelf kept the text of each file" in text_of(refused)
    assert f"run docshelf index {repo.path.resolve()}" in text_of(refused)
    assert not searched.is_error  # searches keep working meanwhile
    again = index_source(config, str(repo.path))
    assert not again.already_indexed
    with open_service(config) as service:
        read = call(service, "docs_read", {"path": "docs/services/checkout.md"})
    assert read.structured_content["text"] == CHECKOUT_V1.rstrip("\n")


def forget_file_texts(location: str) -> None:
    if is_postgres_url(location):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("DELETE FROM docs_ref_files")
            conn.execute("DELETE FROM docs_file_texts")
        return
    local = sqlite3.connect(location)
    with local:
        local.execute("DELETE FROM ref_files")
        local.execute("DELETE FROM file_texts")
    local.close()


def test_the_outline_of_many_files_is_cut_within_its_bounds_and_names_narrower_paths(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "big")
    for part in ("guides", "reference", "runbooks"):
        for i in range(60):
            page = f"# Page {i}\n\n## Part A\n\nx\n\n## Part B\n\ny\n"
            repo.write(f"docs/{part}/p{i:02}.md", page)
    repo.commit("many")
    config = config_for(str(tmp_path / "store.sqlite3"), tmp_path)
    index_source(config, str(repo.path))
    with open_service(config) as service:
        cut = call(service, "docs_outline", {})
        narrower = call(service, "docs_outline", {"path": "docs/runbooks/p0*.md"})
    text = text_of(cut)
    assert len(text.splitlines()) <= READ_MAX_LINES + 4
    assert len(text.encode()) <= READ_MAX_BYTES + 400
    outline = cut.structured_content
    assert outline["total_files"] == 180 and 0 < len(outline["files"]) < 180
    assert {n["path"] for n in outline["narrower"]} == {
        "docs/guides/",
        "docs/reference/",
        "docs/runbooks/",
    }
    assert "see less at once with path=docs/guides/ (60 files)" in text
    assert narrower.structured_content["total_files"] == 10
    assert len(narrower.structured_content["files"]) == 10
    assert narrower.structured_content["narrower"] == []


def test_docshelf_serve_http_with_two_sources_pins_each_workspace_from_the_url(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    one, other = two_repos(tmp_path, config)
    first = one.head()
    pin_in_store(location, str(one.path.resolve()), first)  # kept by this pin once not current
    one.write("docs/services/checkout.md", CHECKOUT_V2)
    one.commit("new owners")
    index_source(config, str(one.path))  # current moves on; the sessions pin the first
    args = [
        *("serve", str(one.path), str(other.path), "--store", location, "--embedder", "none"),
        *("--sync-interval", "1"),
    ]
    asked = {"path": "docs/services/checkout.md", "workspace": "shop"}

    async def read(url: str, mode: str, arguments: dict[str, Any] = asked) -> CallToolResult:
        async with (
            httpx2.AsyncClient() as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as connected,
        ):
            return await connected.call_tool("docs_read", arguments)

    with http_serve(args, tmp_path / "stderr.txt") as (url, _):
        pinned = {
            mode: run(read, f"{url}?ref=shop={first}&ref=billing=HEAD", mode)
            for mode in ("legacy", "auto")
        }
        current = run(read, url, "legacy")
        bare = httpx.post(f"{url}?ref={first}", json=INITIALIZE, headers=ACCEPT)
        unknown = httpx.post(f"{url}?ref=nope={first}", json=INITIALIZE, headers=ACCEPT)
        # The background sync indexes each workspace's new commits: here the second one's.
        other.write("docs/invoices.md", "# Invoices\n\nInvoices are now sent weekly.\n")
        synced = other.commit("weekly")
        billing = {"path": "docs/invoices.md", "workspace": "billing"}
        deadline = time.monotonic() + SYNC_TIMEOUT_SECONDS
        while (latest := run(read, url, "legacy", billing)).structured_content["ref"] != synced:
            assert time.monotonic() < deadline, (tmp_path / "stderr.txt").read_text()
            time.sleep(0.5)
    for answer in pinned.values():
        assert answer.structured_content["ref"] == first
        assert answer.structured_content["text"] == CHECKOUT_V1.rstrip("\n")
    assert current.structured_content["text"] == CHECKOUT_V2.rstrip("\n")
    assert bare.status_code == 400
    assert "must name its workspace as NAME=REV" in bare.text
    assert unknown.status_code == 400
    assert latest.structured_content["text"].endswith("Invoices are now sent weekly.")
