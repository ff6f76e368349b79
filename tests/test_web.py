"""The web page's JSON API and files on a real HTTP server over both stores: the same answers as
the MCP tools, every parameter checked, the guard of /mcp in front (Host, Origin, token, body
size) and the security headers on every response. The page itself runs in a browser in
tests/test_web_page.py."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from docshelf.app import Service, index_source, open_service
from docshelf.app.status import PinState, SyncState
from docshelf.config import Config
from docshelf.web import CONTENT_SECURITY_POLICY, STATIC_FILES
from docshelf.workspace import Skipped
from tests.support.indexing import MemorySource
from tests.test_agent_tools import call, config_for, pin_in_store, shop, two_repos
from tests.test_mcp_server import (
    INITIALIZE,
    TOKEN,
    WORKSPACE,
    A,
    docs_at,
    http_server,
    opened_service,
)

ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def indexed(location: str, tmp_path: Path) -> Iterator[tuple[Service, Any, Config]]:
    """The shop repository (with a symlink among its docs) indexed without a model, and a
    service over it that has the source."""
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    repo.symlink("docs/link.md", "../README.md")
    repo.write("docs/danger.md", "# Danger\n\nA doc with <script>alert(1)</script> in it.\n")
    repo.commit("a symlink and a doc with markup")
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as service:
        yield service, repo, config


@pytest.fixture
def served(indexed: tuple[Service, Any, Config]) -> Iterator[tuple[str, Service, Any]]:
    service, repo, _ = indexed
    with http_server(service) as (url, _):
        yield url.removesuffix("/mcp"), service, repo


def get(base: str, endpoint: str, /, **params: Any) -> httpx.Response:
    return httpx.get(base + endpoint, params=params, timeout=30)


def test_a_search_answers_as_docs_search_does_with_the_same_hits_in_the_same_order(
    served: tuple[str, Service, Any],
) -> None:
    base, service, repo = served
    answer = get(base, "/api/search", q="payment gateway timeout", k=3)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    tool = call(service, "docs_search", {"query": "payment gateway timeout", "top_k": 3})
    assert data["hits"] == tool.structured_content["hits"]
    assert data["ref"] == repo.head()
    assert data["mode"] == "text"
    first = data["hits"][0]
    # Its Timeout section (3-5) and the one after it (7-9) both match: one excerpt over 3-9.
    assert (first["path"], first["start_line"], first["end_line"]) == (
        "docs/runbooks/payments.md",
        3,
        9,
    )
    assert first["heading"] == "Payments runbook > Timeout"
    assert first["ref"] == repo.head()
    narrowed = get(base, "/api/search", q="timeout", path="docs/services/**").json()
    assert {h["path"] for h in narrowed["hits"]} <= {"docs/services/checkout.md"}


def test_with_a_model_the_hybrid_ranking_is_docs_search_s_too(location: str) -> None:
    source = MemorySource(WORKSPACE)
    source.add(A, docs_at("alpha"))
    with opened_service(location, source) as service:
        assert service.indexer is not None
        service.indexer.index(A)
        with http_server(service) as (url, _):
            base = url.removesuffix("/mcp")
            for query in ("who owns checkout", "payment gateway timeout", "release"):
                data = get(base, "/api/search", q=query, k=3).json()
                tool = call(service, "docs_search", {"query": query, "top_k": 3})
                assert data["mode"] == "hybrid"
                assert data["hits"] == tool.structured_content["hits"], query
                assert data["ref"] == A


def test_a_skipped_name_that_is_not_utf8_or_holds_a_control_is_listed_escaped(
    location: str,
) -> None:
    source = MemorySource(WORKSPACE)
    odd = [
        Skipped("docs/caf\udce9.md", "name is not UTF-8"),
        Skipped("docs/bell\x07\x00.md", "name holds a control character"),
    ]
    source.add(A, docs_at("alpha"), odd)
    with opened_service(location, source) as service:
        assert service.indexer is not None
        service.indexer.index(A)
        with http_server(service) as (url, _):
            status = get(url.removesuffix("/mcp"), "/api/status")
    assert status.status_code == 200, status.text
    assert status.json()["workspaces"][0]["skipped"] == [
        {"path": "docs/caf\\udce9.md", "reason": "name is not UTF-8"},
        {"path": "docs/bell\\x07\\x00.md", "reason": "name holds a control character"},
    ]


def test_read_and_outline_answer_as_docs_read_and_docs_outline_do(
    served: tuple[str, Service, Any],
) -> None:
    base, service, _ = served
    read = get(base, "/api/read", path="docs/runbooks/payments.md", start=3, end=5).json()
    tool = call(
        service, "docs_read", {"path": "docs/runbooks/payments.md", "start_line": 3, "end_line": 5}
    )
    assert read == tool.structured_content
    assert read["text"].startswith("## Timeout")
    outline = get(base, "/api/outline").json()
    assert outline == call(service, "docs_outline", {}).structured_content
    assert [f["path"] for f in outline["files"]] == [
        "docs/danger.md",
        "docs/runbooks/payments.md",
        "docs/services/checkout.md",
    ]
    one = get(base, "/api/outline", path="docs/services/checkout.md").json()
    assert [h["title"] for h in one["files"][0]["headings"]] == ["Checkout", "Owners"]


def test_a_file_whose_name_holds_glob_characters_is_outlined_alone_as_the_page_asks(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    repo.write("docs/[slug].md", "# Slug page\n\n## Routing\n\nDynamic routes.\n")
    repo.write("docs/s.md", "# S\n\nA file the unescaped glob docs/[slug].md would match.\n")
    repo.commit("names with glob characters")
    index_source(config, str(repo.path))
    with open_service(config, source=str(repo.path)) as service, http_server(service) as (url, _):
        base = url.removesuffix("/mcp")
        # app.js escapes [, * and ? of a file's own path as [[], [*] and [?].
        escaped = get(base, "/api/outline", path="docs/[[]slug].md").json()
        plain = get(base, "/api/outline", path="docs/[slug].md").json()
        read = get(base, "/api/read", path="docs/[slug].md").json()
    assert [f["path"] for f in escaped["files"]] == ["docs/[slug].md"]
    assert [h["title"] for h in escaped["files"][0]["headings"]] == ["Slug page", "Routing"]
    assert "docs/s.md" in [f["path"] for f in plain["files"]]  # why the page escapes
    assert read["text"].startswith("# Slug page")


def test_the_status_shows_commit_indexing_time_pins_skipped_files_and_the_last_sync(
    indexed: tuple[Service, Any, Config], location: str
) -> None:
    service, repo, _ = indexed
    first = repo.head()
    started = time.time()
    pin_in_store(location, service.workspace, first)
    repo.write("docs/services/checkout.md", "# Checkout\n\n## Owners\n\nStorefront owns it.\n")
    second = repo.commit("new owners")
    service.sync()
    with http_server(service, ref=first) as (url, _):
        status = get(url.removesuffix("/mcp"), "/api/status").json()
    (ws,) = status["workspaces"]
    assert ws["workspace"] == service.labels[0] == str(repo.path.resolve())
    assert ws["current"] == second
    assert ws["server_pin"] == first
    indexed_at = datetime.fromisoformat(ws["indexed_at"]).timestamp()
    assert started - 2 < indexed_at < time.time() + 2  # the second commit, indexed by the sync
    assert {r["ref"] for r in ws["refs"]} == {first, second}
    assert [(p["ref"], p["holder"]) for p in ws["pins"]] == [(first, "test:1")]
    assert ws["pins"][0]["expires_at"] > time.time() + 3000
    assert ws["skipped"] == [{"path": "docs/link.md", "reason": "symbolic link, not followed"}]
    assert ws["last_sync"]["outcome"] == "indexed"
    assert ws["last_sync"]["ref"] == second
    assert ws["last_sync"]["error"] is None
    assert ws["syncs"] is False  # this server was not given --sync-interval
    assert status["model"] == "none" and status["text_only"] is True
    assert status["top_k"] == {"min": 1, "max": 20, "default": 5}


def test_a_failed_sync_is_shown_with_its_reason(indexed: tuple[Service, Any, Config]) -> None:
    service, repo, _ = indexed
    before = service.current()
    shutil.rmtree(repo.path / ".git")  # the repository is gone: the next sync fails
    service.sync()
    with http_server(service, sync_interval=60.0) as (url, _):
        status = get(url.removesuffix("/mcp"), "/api/status").json()
    (ws,) = status["workspaces"]
    assert ws["syncs"] is True
    assert status["sync_interval"] == 60.0
    assert ws["last_sync"]["outcome"] == "failed"
    assert ws["last_sync"]["error"].startswith(f"syncing {service.labels[0]}: ")
    assert ws["current"] == before  # the indexed commit keeps serving


def test_unknown_repeated_and_malformed_parameters_are_refused_naming_what_is_taken(
    served: tuple[str, Service, Any],
) -> None:
    base, _, _ = served
    unknown = get(base, "/api/search", q="timeout", top_k=3)
    assert unknown.status_code == 400
    assert unknown.json()["error"] == (
        "unknown parameter 'top_k': /api/search takes q, k, per_file, max_tokens, path, workspace"
    )
    twice = httpx.get(base + "/api/search?q=a&q=b")
    assert twice.status_code == 400 and "given twice" in twice.json()["error"]
    for k in ("three", "-1", "٣"):
        refused = get(base, "/api/search", q="timeout", k=k)
        assert refused.status_code == 400 and "whole number" in refused.json()["error"], k
    too_many = get(base, "/api/search", q="timeout", k=99)
    assert too_many.status_code == 400 and "20" in too_many.json()["error"]
    for per_file in ("0", "21"):
        refused = get(base, "/api/search", q="timeout", k=3, per_file=per_file)
        assert refused.status_code == 400
        assert refused.json()["error"].startswith(
            f"per_file must be a whole number from 1 to k (3); got {per_file}. Ask again"
        )
    for per_file in ("1.5", "two"):
        refused = get(base, "/api/search", q="timeout", per_file=per_file)
        assert refused.status_code == 400
        assert (
            refused.json()["error"]
            == f"parameter per_file must be a whole number; got {per_file!r}"
        )
    one = get(base, "/api/search", q="payments timeout", k=3, per_file=1).json()["hits"]
    assert len({h["path"] for h in one}) == len(one)
    for budget in ("999", "25001"):
        refused = get(base, "/api/search", q="timeout", max_tokens=budget)
        assert refused.status_code == 400
        assert refused.json()["error"].startswith("max_tokens must be a whole number from 1000")
    fitted = get(base, "/api/search", q="payments timeout", max_tokens=1000).json()
    assert fitted["max_tokens"] == 1000 and fitted["left_out"] >= 0
    empty = get(base, "/api/search", q="   ")
    assert empty.status_code == 400
    huge = get(base, "/api/search", q="x" * 5000)
    assert huge.status_code == 400 and "at most 4096" in huge.json()["error"]
    assert get(base, "/api/status", verbose=1).status_code == 400
    assert httpx.post(base + "/api/search?q=timeout").status_code == 405


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "docs/../../../etc/passwd",
        "docs/link.md",  # a skipped symlink: never indexed, so never read
        "README.md",
        "docs/runbooks/payments.md\x00.md",
        "C:\\Windows\\win.ini",
    ],
)
def test_a_path_that_was_not_indexed_reaches_nothing(
    served: tuple[str, Service, Any], path: str
) -> None:
    base, _, _ = served
    answer = get(base, "/api/read", path=path)
    assert answer.status_code == 400, answer.text
    assert "root:" not in answer.text
    assert get(base, "/api/outline", path=path).status_code == 400


def test_an_unknown_workspace_is_refused(served: tuple[str, Service, Any]) -> None:
    base, service, _ = served
    answer = get(base, "/api/search", q="timeout", workspace="/etc")
    assert answer.status_code == 400
    assert f"workspace must be one of {service.labels[0]}" in answer.json()["error"]
    assert get(base, "/api/search", q="timeout", workspace=service.labels[0]).status_code == 200


def test_the_page_and_its_files_are_served_from_the_package_and_nothing_else(
    served: tuple[str, Service, Any],
) -> None:
    base, _, _ = served
    page = httpx.get(base + "/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script src="/static/app.js" defer></script>' in page.text
    assert "<script>" not in page.text  # no inline script: the policy allows none
    for name, media in STATIC_FILES.items():
        asset = httpx.get(f"{base}/static/{name}")
        assert asset.status_code == 200 and asset.headers["content-type"] == media
    for missing in ("/static/../__init__.py", "/static/index.htm", "/static/", "/static/a/b.js"):
        assert httpx.get(base + missing).status_code == 404, missing
    # Nothing the page loads comes from another host: no URL names one.
    for name in ("", "static/app.css", "static/app.js", "static/icon.svg"):
        text = httpx.get(f"{base}/{name}").text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert not re.search(r"https?:|(src|href)=[\"']//|url\(|@import", text), name


def test_every_response_carries_the_security_headers(served: tuple[str, Service, Any]) -> None:
    base, _, _ = served
    responses = [
        httpx.get(base + "/"),
        httpx.get(base + "/static/app.js"),
        get(base, "/api/search", q="timeout"),
        get(base, "/api/read", path="nope.md"),
        httpx.get(base + "/nothing-here"),
        httpx.post(base + "/mcp", json=INITIALIZE, headers=ACCEPT),
    ]
    for response in responses:
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    policy = dict(part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";"))
    assert policy["script-src"] == "'self'" and policy["connect-src"] == "'self'"
    assert policy["default-src"] == "'none'" and "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert get(base, "/api/search", q="timeout").headers["cache-control"] == "no-store"


def test_with_a_token_the_api_needs_it_and_the_page_does_not(
    indexed: tuple[Service, Any, Config],
) -> None:
    service, _, _ = indexed
    with http_server(service, token=TOKEN) as (url, _):
        base = url.removesuffix("/mcp")
        assert httpx.get(base + "/").status_code == 200
        assert httpx.get(base + "/static/app.js").status_code == 200
        for path in ("/api/status", "/api/search?q=timeout", "/api/read?path=docs/danger.md"):
            refused = httpx.get(base + path)
            assert refused.status_code == 401, path
            assert "Authorization: Bearer" in refused.text
            wrong = httpx.get(base + path, headers={"Authorization": "Bearer wrong-token-wrong"})
            assert wrong.status_code == 401
            right = httpx.get(base + path, headers={"Authorization": f"Bearer {TOKEN}"})
            assert right.status_code == 200, path
        # No cookie is ever set: a cross-site request carries nothing that could act.
        assert "set-cookie" not in httpx.get(base + "/").headers
        assert "set-cookie" not in right.headers


def test_a_foreign_origin_or_host_and_a_declared_large_body_are_refused(
    served: tuple[str, Service, Any],
) -> None:
    base, _, _ = served
    port = base.rsplit(":", 1)[1]
    search = base + "/api/search?q=timeout"
    assert httpx.get(search, headers={"Origin": "http://evil.example"}).status_code == 403
    assert httpx.get(search, headers={"Host": f"evil.example:{port}"}).status_code == 421
    assert httpx.get(base + "/", headers={"Host": f"evil.example:{port}"}).status_code == 421
    assert httpx.get(search, headers={"Origin": f"http://localhost:{port}"}).status_code == 200
    body = httpx.request("GET", search, content=b"x" * (1024 * 1024 + 1))
    assert body.status_code == 413


def test_a_docs_text_is_returned_as_data_never_as_markup(served: tuple[str, Service, Any]) -> None:
    base, _, _ = served
    answer = get(base, "/api/read", path="docs/danger.md")
    assert answer.headers["content-type"] == "application/json"
    assert json.loads(answer.text)["text"].endswith("<script>alert(1)</script> in it.")


def test_two_workspaces_are_searched_together_or_one_at_a_time(
    location: str, tmp_path: Path
) -> None:
    config = config_for(location, tmp_path)
    one, other = two_repos(tmp_path, config)
    with (
        open_service(config, sources=[str(one.path), str(other.path)]) as service,
        http_server(service) as (url, _),
    ):
        base = url.removesuffix("/mcp")
        together = get(base, "/api/search", q="payment timeout").json()
        apart = get(base, "/api/search", q="payment timeout", workspace="billing").json()
        status = get(base, "/api/status").json()
        overview = get(base, "/api/outline").json()
        read = get(base, "/api/read", path="docs/invoices.md").json()
        ambiguous = get(base, "/api/read", path="docs/services/checkout.md")
    assert {h["workspace"] for h in together["hits"]} == {"shop", "billing"}
    assert together["refs"] == {"shop": one.head(), "billing": other.head()}
    assert {h["workspace"] for h in apart["hits"]} == {"billing"}
    assert status["several"] is True
    assert [w["workspace"] for w in status["workspaces"]] == ["shop", "billing"]
    assert overview["overview"] is True
    assert [w["workspace"] for w in overview["workspaces"]] == ["shop", "billing"]
    assert read["workspace"] == "billing"
    assert ambiguous.status_code == 400 and "name one as workspace" in ambiguous.json()["error"]


def test_nothing_indexed_yet_is_a_404_that_says_how_to_index(location: str, tmp_path: Path) -> None:
    config = config_for(location, tmp_path)
    repo = shop(tmp_path)
    with open_service(config, source=str(repo.path)) as service, http_server(service) as (url, _):
        base = url.removesuffix("/mcp")
        answer = get(base, "/api/search", q="timeout")
        status = get(base, "/api/status").json()
    assert answer.status_code == 404
    assert "docshelf index" in answer.json()["error"]
    assert status["workspaces"][0]["current"] is None


def documented(endpoint: str) -> dict[str, Any]:
    """The example answer docs/web-api.md gives for `endpoint`."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "web-api.md").read_text()
    section = page.split(f"## `GET /api/{endpoint}`", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```json\n(.*?)```", section, re.S)
    assert found is not None, endpoint
    example: dict[str, Any] = json.loads(found.group(1))
    return example


def test_the_api_doc_s_examples_have_the_fields_the_api_answers(
    served: tuple[str, Service, Any],
) -> None:
    base, _, _ = served
    search = get(base, "/api/search", q="payment gateway timeout").json()
    assert search.keys() == documented("search").keys()
    assert search["hits"][0].keys() == documented("search")["hits"][0].keys()
    read = get(base, "/api/read", path="docs/runbooks/payments.md").json()
    assert read.keys() == documented("read").keys()
    outline = get(base, "/api/outline", path="docs/services/checkout.md").json()
    example = documented("outline")
    assert outline.keys() == example.keys()
    assert outline["files"][0]["headings"][0].keys() == example["files"][0]["headings"][0].keys()
    status = get(base, "/api/status").json()
    example = documented("status")
    assert status.keys() == example.keys()
    assert status["workspaces"][0].keys() == example["workspaces"][0].keys()
    # The nested records are the status's own: each documented with every field it has.
    assert set(example["workspaces"][0]["last_sync"]) == {f.name for f in fields(SyncState)}
    assert set(example["workspaces"][0]["pins"][0]) == {f.name for f in fields(PinState)}
