"""Each face speaks its own language: the same refusals, made through the command line, the MCP
tools and the web API, name only that face's words for the arguments and commands (present.py);
and the newcomer's papercuts: a search never makes a store, and a store is searched the way it
was indexed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from docshelf.app import Service, open_service
from docshelf.config import Config
from docshelf.errors import ConfigError, term
from docshelf.mcp_server import build_server
from docshelf.present import CLI, MCP, WEB
from tests.support.gitrepo import Repo
from tests.test_cli_index import docshelf
from tests.test_cli_read import PAYMENTS, index, refused, shop
from tests.test_mcp_server import http_server, run, text_of
from tests.test_web import get

# Words only the tools say, only the command line says, only the web API says.
TOOL_WORDS = ("top_k", "start_line", "end_line", "docs_outline", "docs_read", "docs_search")
CLI_WORDS = ("-k ", "--workspace", "--path", "docshelf outline", "docshelf read", "PATH:")
WEB_WORDS = ("/api/", " k ", "start=", "end=")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store holding the shop's docs, indexed with the none embedder."""
    root = tmp_path_factory.mktemp("faces")
    location = str(root / "store.sqlite3")
    index(shop(root / "shop"), location)
    return location


@pytest.fixture
def service(store: str) -> Iterator[Service]:
    with open_service(Config(store=store)) as opened:
        yield opened


def foreign(text: str, *words: tuple[str, ...]) -> list[str]:
    return [word for group in words for word in group if word in text]


def test_every_face_has_a_word_for_every_term_and_says_a_message_in_it() -> None:
    error = ConfigError(f"{term('top_k')} must be a whole number; call {term('docs_outline')}")
    assert str(error) == "top_k must be a whole number; call docs_outline"
    assert error.said(CLI.words) == "-k must be a whole number; call docshelf outline"
    assert error.said(MCP.words) == "top_k must be a whole number; call docs_outline"
    assert error.said(WEB.words) == "k must be a whole number; call /api/outline"


def test_a_value_from_a_client_cannot_pass_for_a_term() -> None:
    # A term travels between control characters, which every quoted value has escaped.
    hostile = "\x1etop_k\x1f"
    error = ConfigError(f"no workspace {hostile!r}; name one with {term('workspace')}")
    assert error.said(CLI.words).endswith("name one with --workspace")
    assert "-k" not in error.said(CLI.words)


def test_the_command_line_refuses_in_its_own_words(store: str) -> None:
    texts = [
        refused("search", "timeout", "-k", "30", "--store", store),
        refused("search", "timeout", "--path", "nowhere/", "--store", store),
        refused("read", f"{PAYMENTS}:0", "--store", store),
        refused("read", f"{PAYMENTS}:4-2", "--store", store),
        refused("read", "docs/nope.md", "--store", store),
        refused("outline", "nowhere/", "--store", store),
        refused("search", "timeout", "--workspace", "other", "--store", store),
    ]
    assert "-k must be a whole number from 1 to 20; got 30" in texts[0]
    assert "docshelf outline" in texts[1] and "START must be" in texts[2]
    for text in texts:
        assert foreign(text, TOOL_WORDS, WEB_WORDS) == [], text


def test_the_tools_refuse_in_their_own_words(service: Service) -> None:
    async def scenario() -> list[str]:
        async with Client(build_server(service)) as connected:
            calls = [
                ("docs_search", {"query": "timeout", "top_k": 30}),
                ("docs_search", {"query": "timeout", "path": "nowhere/"}),
                ("docs_read", {"path": PAYMENTS, "start_line": 0}),
                ("docs_read", {"path": PAYMENTS, "start_line": 4, "end_line": 2}),
                ("docs_read", {"path": "docs/nope.md"}),
                ("docs_outline", {"path": "nowhere/"}),
            ]
            results = [await connected.call_tool(name, args) for name, args in calls]
        assert all(result.is_error for result in results)
        return [text_of(result) for result in results]

    texts = run(scenario)
    assert "top_k must be a whole number from 1 to 20; got 30" in texts[0]
    assert "Call docs_outline" in texts[4] and "start_line must be" in texts[2]
    for text in texts:
        assert foreign(text, CLI_WORDS, WEB_WORDS) == [], text


def test_the_web_api_refuses_in_its_own_words(service: Service) -> None:
    with http_server(service) as (url, _):
        base = url.removesuffix("/mcp")
        answers = [
            get(base, "/api/search", q="timeout", k="30"),
            get(base, "/api/search", q="timeout", path="nowhere/"),
            get(base, "/api/read", path=PAYMENTS, start="0"),
            get(base, "/api/read", path=PAYMENTS, start="4", end="2"),
            get(base, "/api/read", path="docs/nope.md"),
            get(base, "/api/outline", path="nowhere/"),
        ]
    assert [a.status_code for a in answers] == [400] * 6
    texts = [a.json()["error"] for a in answers]
    assert texts[0].startswith("k must be a whole number from 1 to 20; got 30")
    assert "end (2) must not be before start (4)" in texts[3]
    assert "/api/outline" in texts[4]
    for text in texts:
        assert foreign(text, TOOL_WORDS, CLI_WORDS) == [], text


# -- papercuts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["search", "read", "outline", "status"])
def test_a_store_that_is_not_there_is_refused_and_nothing_is_made(
    tmp_path: Path, command: str
) -> None:
    store = tmp_path / "typo.db"
    args = {"search": ["x"], "read": ["docs/a.md"], "outline": [], "status": []}[command]
    text = refused(command, *args, "--store", str(store))
    assert f"no docshelf store at {store}" in text and "docshelf index" in text
    assert list(tmp_path.iterdir()) == []


def test_a_store_indexed_without_a_model_is_searched_by_words_with_no_flag(store: str) -> None:
    done = docshelf("search", "gateway timeout", "--store", store, "--json")
    assert done.returncode == 0, done.stderr
    assert '"mode": "text"' in done.stdout and PAYMENTS in done.stdout


def test_the_none_embedder_searches_a_model_s_store_by_words(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "shop")
    repo.write("docs/runbook.md", "# Runbook\n\nRestart the payments worker on a timeout.\n")
    repo.commit("docs")
    store = str(tmp_path / "store.sqlite3")
    done = docshelf("index", str(repo.path), "--store", store)
    assert done.returncode == 0, done.stderr
    by_words = docshelf("search", "payments worker", "--store", store, "--embedder", "none")
    assert by_words.returncode == 0, by_words.stderr
    assert "docs/runbook.md" in by_words.stdout
