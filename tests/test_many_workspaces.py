"""A store of many workspaces served at once (120 here, past one page and past the schema's
enum): docs_outline without a path pages through them, the tools' descriptions and schemas stay
bounded, and a search over all of them ranks them together; through the Service, a real MCP
client, the command line and the web API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
from mcp import Client

from docshelf import app
from docshelf.app import OVERVIEW_PAGE, WorkspacesPage
from docshelf.config import NO_MODEL_DIM, NO_MODEL_ID, Config
from docshelf.errors import ConfigError
from docshelf.mcp_server import build_server
from docshelf.mcp_server.schemas import ENUM_WORKSPACES, OUTPUT_SCHEMA
from docshelf.mcp_server.tool import DESCRIBED_WORKSPACES
from docshelf.present import CLI, render_outline
from docshelf.reading import DocsOutline
from docshelf.rows import ChunkRow, FileRow
from docshelf.stores import open_store
from tests.test_cli_index import docshelf
from tests.test_mcp_server import http_server

TEAMS = 120


def team_doc(team: int) -> str:
    return (
        f"# Team {team:03d} runbook\n\nTeam {team:03d} rotates its signing key every {team} days.\n"
    )


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store (no model: words only) of TEAMS workspaces, each one file at one commit."""
    path = str(tmp_path_factory.mktemp("org") / "org.sqlite3")
    with open_store(path, model_id=NO_MODEL_ID, dim=NO_MODEL_DIM) as store:
        for team in range(TEAMS):
            name, ref, text = f"team{team:03d}", f"{team:040x}", team_doc(team)
            row = ChunkRow(
                "docs/runbook.md", 0, f"Team {team:03d} runbook", text, 1, 3, f"h{team}", None
            )
            files = [FileRow("docs/runbook.md", text, f"t{team}", 3)]
            if team == 7:  # a file no other workspace has
                files.append(FileRow("docs/only/seven.md", "Only team 7.\n", "seven", 1))
            store.replace_doc_chunks(name, ref, [row], files)
            store.set_current(name, ref)
    return path


@pytest.fixture
def service(org: str) -> Iterator[app.Service]:
    with app.open_service(Config(store=org, embedder="none")) as opened:
        yield opened


def test_the_overview_of_many_workspaces_comes_a_page_at_a_time(service: app.Service) -> None:
    first = service.outline()
    assert isinstance(first, WorkspacesPage)
    assert (first.page, first.pages, first.total, len(first.views)) == (1, 3, TEAMS, OVERVIEW_PAGE)
    last = service.outline(page=3)
    assert isinstance(last, WorkspacesPage)
    assert [v.workspace for v in last.views] == [f"team{t:03d}" for t in range(100, TEAMS)]
    assert all(v.files == 1 and v.ref is not None for v in last.views)
    text = render_outline(first, CLI)
    assert text.startswith(
        f"{TEAMS} workspaces, 1-50 shown (page 1 of 3); name one as --workspace to see its "
        "docs, or ask for --page 2 for more:\n"
    )
    assert "ask for" not in render_outline(last, CLI).splitlines()[0]
    for page, said in (
        (4, "got 4"),
        (0, "got 0"),
        ("2", "got '2'"),
        (True, "got True"),
        (1.5, "got 1.5"),
    ):
        with pytest.raises(ConfigError, match=f"page must be a whole number from 1 to 3; {said}"):
            service.outline(page=page)


def test_a_path_named_without_its_workspace_is_found_in_a_few_reads_of_the_store(
    service: app.Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    store = service.reads
    for name in ("current", "currents", "indexed_refs", "has_chunks", "has_files", "files"):
        real = getattr(store, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            reads.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    real_files_refs = store.files_refs

    def files_refs(refs: Any, prefix: str = "") -> Any:
        reads.append(f"files_refs {len(refs)} {prefix}")
        return real_files_refs(refs, prefix)

    monkeypatch.setattr(store, "files_refs", files_refs)
    reading = service.read("docs/only/seven.md")
    assert (reading.workspace, reading.lines) == ("team007", ["Only team 7."])
    # The holder is found in three reads over all 120 workspaces; then the file of the one.
    assert reads[:3] == ["currents", "indexed_refs", f"files_refs {TEAMS} docs/only/seven.md"]
    assert len(reads) < 10, reads
    reads.clear()
    outline = service.outline("docs/only/")
    assert isinstance(outline, DocsOutline) and outline.workspace == "team007"
    assert reads[2] == f"files_refs {TEAMS} docs/only/"
    reads.clear()
    outline = service.outline("**/seven.md")  # a glob: every file of every workspace, at once
    assert isinstance(outline, DocsOutline) and outline.workspace == "team007"
    assert reads[2] == f"files_refs {TEAMS} "
    # A path every workspace holds: the message names 20 of them and counts the rest.
    with pytest.raises(ConfigError) as several:
        service.read("docs/runbook.md")
    message = str(several.value)
    assert "team000, team001" in message and f"and {TEAMS - 20} more" in message
    assert "team119" not in message
    with pytest.raises(ConfigError, match="not an indexed doc of any served workspace"):
        service.read("docs/nowhere.md")


def test_a_search_of_every_workspace_ranks_them_together(service: app.Service) -> None:
    answer = service.search("team 042 signing key", 5)
    assert answer.hits[0].workspace == "team042"
    assert len({h.workspace for h in answer.hits}) == 5


def test_the_tools_stay_bounded_and_docs_outline_pages_through_a_real_client(
    service: app.Service,
) -> None:
    async def session() -> tuple[Any, Any, Any]:
        async with Client(build_server(service)) as connected:
            tools = {t.name: t for t in (await connected.list_tools()).tools}
            second = await connected.call_tool("docs_outline", {"page": 2})
            refused = await connected.call_tool("docs_outline", {"page": 9})
            return tools, second, refused

    tools, second, refused = anyio.run(session)
    search = tools["docs_search"]
    assert search.description is not None
    assert f"and {TEAMS - DESCRIBED_WORKSPACES} more (docs_outline without a path" in (
        search.description
    )
    assert len(search.description) < 4000  # ten workspaces named, not 120
    workspace = search.input_schema["properties"]["workspace"]
    assert TEAMS > ENUM_WORKSPACES and "enum" not in workspace
    assert f"One of the {TEAMS} served" in workspace["description"]
    assert "page" in tools["docs_outline"].input_schema["properties"]
    assert "page" not in search.input_schema["properties"]
    data = second.structured_content
    assert (data["page"], data["pages"], data["total_workspaces"]) == (2, 3, TEAMS)
    assert [w["workspace"] for w in data["workspaces"]][:2] == ["team050", "team051"]
    assert refused.is_error
    assert "page must be a whole number from 1 to 3; got 9" in refused.content[0].text
    with pytest.raises(ConfigError, match=r"one of team000, .*, team019 and 100 more; got 'x'"):
        service.search("key", 3, workspace="x")


def test_the_command_line_and_the_web_api_page_through_the_workspaces(
    org: str, service: app.Service
) -> None:
    done = docshelf("outline", "--store", org, "--page", "3", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["page"], len(data["workspaces"])) == (3, TEAMS - 2 * OVERVIEW_PAGE)
    beyond = docshelf("outline", "--store", org, "--page", "4")
    assert beyond.returncode == 1
    assert "--page must be a whole number from 1 to 3; got 4" in beyond.stderr
    with http_server(service) as (url, _):
        base = url.removesuffix("/mcp")
        got = httpx.get(f"{base}/api/outline", params={"page": "2"}).json()
        assert (got["overview"], got["page"], len(got["workspaces"])) == (True, 2, OVERVIEW_PAGE)
        bad = httpx.get(f"{base}/api/outline", params={"page": "0"})
        assert bad.status_code == 400 and "page must be a whole number" in bad.text


def test_status_summarises_many_workspaces_and_shows_one_or_all_when_asked(org: str) -> None:
    summary = docshelf("status", "--store", org)
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.splitlines()[2:] == [
        f"{TEAMS} workspaces: {TEAMS} indexed, 0 not indexed yet; {TEAMS} refs, {TEAMS} chunks; "
        "0 live pins",
        "docshelf status --workspace NAME shows one workspace, --all every one, --json all of it",
    ]
    one = docshelf("status", "--store", org, "--workspace", "team007")
    assert one.stdout.splitlines()[2] == f"workspace team007: current {7:040x}"
    assert len(one.stdout.splitlines()) == 5
    every = docshelf("status", "--store", org, "--all")
    assert sum(line.startswith("workspace team") for line in every.stdout.splitlines()) == TEAMS
    unknown = docshelf("status", "--store", org, "--workspace", "nobody")
    assert unknown.returncode == 1 and "no workspace nobody in the store" in unknown.stderr
    assert unknown.stderr.rstrip().endswith("team019 and 100 more")  # twenty named, not 120


def test_a_passage_many_workspaces_share_is_one_excerpt_naming_the_others(location: str) -> None:
    vendored = "# Key rotation\n\nRotate the payments key every 90 days with the vault CLI.\n"
    names = ["shop", "billing", "checkout", "ops"]
    with open_store(location, model_id=NO_MODEL_ID, dim=NO_MODEL_DIM) as store:
        for n, name in enumerate(names):
            own = f"# {name}\n\nThe {name} team deploys the payments service on Tuesdays.\n"
            rows = [
                ChunkRow("vendor/keys.md", 0, "Key rotation", vendored.strip(), 1, 3, "v", None),
                ChunkRow("docs/own.md", 0, name, own.strip(), 1, 3, f"own-{name}", None),
            ]
            files = [
                FileRow("vendor/keys.md", vendored, "v", 3),
                FileRow("docs/own.md", own, name, 3),
            ]
            store.replace_doc_chunks(name, f"{n:040x}", rows, files)
            store.set_current(name, f"{n:040x}")
    with app.open_service(Config(store=location, embedder="none")) as service:
        answer = service.search("rotate the payments key", 5)
        vendored_hits = [h for h in answer.hits if h.path == "vendor/keys.md"]
        assert len(vendored_hits) == 1 and answer.hits[0] is vendored_hits[0]
        first = vendored_hits[0]
        assert first.workspace == "billing"  # ties ranked by workspace
        assert [(c.workspace, c.path, c.start_line, c.end_line) for c in first.copies] == [
            ("checkout", "vendor/keys.md", 1, 3),
            ("ops", "vendor/keys.md", 1, 3),
            ("shop", "vendor/keys.md", 1, 3),
        ]
        # Each workspace's own page is an excerpt of its own: four places for them.
        assert sorted(h.workspace for h in answer.hits if h.path == "docs/own.md") == sorted(names)

        async def session() -> Any:
            async with Client(build_server(service)) as connected:
                return await connected.call_tool(
                    "docs_search", {"query": "rotate the payments key"}
                )

        result = anyio.run(session)
    jsonschema.validate(result.structured_content, OUTPUT_SCHEMA)
    assert result.structured_content["hits"][0]["copies"][0]["workspace"] == "checkout"
    assert (
        "[the same text is also in checkout: vendor/keys.md:1-3; ops: vendor/keys.md:1-3; "
        "shop: vendor/keys.md:1-3]"
    ) in result.content[0].text
