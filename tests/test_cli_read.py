"""`docshelf read`, `docshelf outline` and `docshelf search --path` run as a user runs them: the
installed console script in a subprocess, on real git repositories indexed without a model into
a real SQLite store (and PostgreSQL once), answering from the store's copy of each file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docshelf.stores import open_store
from tests.support.gitrepo import Repo, write_shop_docs
from tests.test_cli_index import docshelf

PAYMENTS = "docs/runbooks/payments.md"
DEPLOY = (
    "# Deploy\n\n## Before\n\nCheck the dashboards.\n\n## Rollback\n\n"
    "Run the rollback job; the payments worker restarts.\n"
)
LONG = "# Long page\n" + "".join(f"Line {n}.\n" for n in range(2, 301))
BILLING = "# Billing\n\n## Invoices\n\nInvoices go out monthly.\n"


def shop(path: Path) -> Repo:
    """The shop's two pages (tests/support/gitrepo.py), a runbook with sections and a page of
    300 lines, committed once."""
    repo = Repo(path)
    write_shop_docs(repo)
    repo.write("docs/runbooks/deploy.md", DEPLOY)
    repo.write("docs/long.md", LONG)
    repo.commit("docs")
    return repo


def index(repo: Repo, store: str) -> None:
    done = docshelf("index", str(repo.path), "--store", store, "--embedder", "none")
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str]:
    """The shop repository and a SQLite store holding its docs, shared by the tests that only
    read."""
    root = tmp_path_factory.mktemp("read")
    repo = shop(root / "shop")
    store = str(root / "store.sqlite3")
    index(repo, store)
    return repo, store


def ok(*args: str) -> str:
    done = docshelf(*args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def as_json(*args: str) -> Any:
    return json.loads(ok(*args, "--json"))


def refused(*args: str, code: int = 1) -> str:
    """The one-line error of a refused command (never a traceback, nothing on stdout)."""
    done = docshelf(*args)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    return done.stderr


# -- read ----------------------------------------------------------------------------------------


def test_read_prints_a_file_s_numbered_lines_whole_from_a_line_or_a_range(
    indexed: tuple[Repo, str],
) -> None:
    repo, store = indexed
    head = repo.head()[:12]
    assert ok("read", PAYMENTS, "--store", store) == (
        f"{PAYMENTS}, lines 1-5 of 5, at commit {head}\n"
        "1  # Payments runbook\n"
        "2  \n"
        "3  ## Timeout\n"
        "4  \n"
        "5  When the payment gateway times out, raise the timeout to 30 seconds and restart the "
        "worker.\n"
    )
    assert ok("read", f"{PAYMENTS}:3-4", "--store", store) == (
        f"{PAYMENTS}, lines 3-4 of 5, at commit {head}\n3  ## Timeout\n4  \n"
    )
    from_three = ok("read", f"{PAYMENTS}:3", "--store", store)
    assert from_three.startswith(f"{PAYMENTS}, lines 3-5 of 5, at commit {head}\n3  ## Timeout\n")
    assert from_three.endswith("restart the worker.\n")
    assert ok("read", f"./{PAYMENTS}:5-9", "--store", store).startswith(
        f"{PAYMENTS}, lines 5-5 of 5"  # a leading ./ is taken off; an end past the file stops
    )
    # A long file stops at 200 lines and says where to read on.
    long = ok("read", "docs/long.md", "--store", store).split("\n")
    assert long[0] == f"docs/long.md, lines 1-200 of 300, at commit {head}"
    assert long[1] == "  1  # Long page" and long[200] == "200  Line 200."
    assert long[-3:] == [
        "",
        "[cut at 200 lines; the file goes on: read on with docshelf read docs/long.md:201]",
        "",
    ]


def test_read_json_has_the_lines_the_commit_and_where_to_read_on(
    indexed: tuple[Repo, str],
) -> None:
    repo, store = indexed
    assert as_json("read", f"{PAYMENTS}:3-4", "--store", store) == {
        "workspace": str(repo.path.resolve()),
        "ref": repo.head(),
        "path": PAYMENTS,
        "start_line": 3,
        "end_line": 4,
        "total_lines": 5,
        "text": "## Timeout\n",
        "next_start_line": None,
        "note": None,
    }
    first = as_json("read", "docs/long.md", "--store", store)
    assert (first["start_line"], first["end_line"], first["next_start_line"]) == (1, 200, 201)
    rest = as_json("read", "docs/long.md:201", "--store", store)
    assert (rest["start_line"], rest["end_line"], rest["next_start_line"]) == (201, 300, None)
    assert first["text"] + "\n" + rest["text"] + "\n" == LONG


def test_read_ref_gives_an_older_indexed_commit_s_lines(tmp_path: Path) -> None:
    repo = shop(tmp_path / "shop")
    store = str(tmp_path / "store.sqlite3")
    first = repo.head()
    index(repo, store)
    with open_store(store, model_id=None, dim=None) as opened:  # keeps `first` unpruned
        opened.add_pin(str(repo.path.resolve()), first, "test:1", 600)
    repo.write(PAYMENTS, "# Payments runbook\n\nCall the gateway vendor.\n")
    second = repo.commit("new runbook")
    index(repo, store)
    now = as_json("read", PAYMENTS, "--store", store)
    assert (now["ref"], now["text"]) == (second, "# Payments runbook\n\nCall the gateway vendor.")
    held = repo.git("show", f"{first}:{PAYMENTS}")
    for rev in (first, "HEAD~1", "main~1"):
        old = as_json("read", PAYMENTS, "--ref", rev, "--store", store)
        assert (old["ref"], old["text"], old["total_lines"]) == (first, held, 5)
    shown = ok("read", f"{PAYMENTS}:3-3", "--ref", "HEAD~1", "--store", store)
    assert shown == f"{PAYMENTS}, lines 3-3 of 5, at commit {first[:12]}\n3  ## Timeout\n"
    unknown = refused("read", PAYMENTS, "--ref", "no-such-branch", "--store", store)
    assert unknown.startswith("docshelf: error: ") and "no-such-branch" in unknown


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "../../etc/passwd",
            "PATH must be a path relative to the repository, as the hits show "
            "it (docs/runbooks/payments.md), without '..'; got '../../etc/passwd'",
        ),
        ("docs/../../../etc/passwd:1-3", "without '..'"),
        ("/etc/passwd", "not an absolute path; got '/etc/passwd'"),
        ("~/.ssh/id_rsa", "not an absolute path"),
        ("docs/secret\x1b[2J.md", "it holds a NUL or control character"),
        ("docs/runbooks/payment.md", "'docs/runbooks/payment.md' is not an indexed doc of "),
        ("README.md", "Only the indexed docs can be read; the closest are: "),
        # The command line names the parts of PATH:START-END, not the tools' arguments.
        (f"{PAYMENTS}:9", f"START must be from 1 to 5: {PAYMENTS} has 5 lines"),
        (f"{PAYMENTS}:4-2", "END (2) must not be before START (4)"),
        (f"{PAYMENTS}:0", "START must be a whole number from 1 to 1048577; got 0"),
        (f"{PAYMENTS}:1-99999999", "END must be a whole number from 1 to 1048577"),
    ],
)
def test_read_refuses_a_hostile_path_or_line_with_the_rule(
    indexed: tuple[Repo, str], spec: str, message: str
) -> None:
    _, store = indexed
    err = refused("read", spec, "--store", store)
    assert err.startswith("docshelf: error: "), err
    assert message in err, err
    assert err.count("\n") == 1 and "\x1b" not in err and "root:" not in err


# -- outline -------------------------------------------------------------------------------------


def test_outline_shows_the_files_with_their_headings_all_or_under_a_folder(
    indexed: tuple[Repo, str],
) -> None:
    repo, store = indexed
    head = repo.head()[:12]
    assert ok("outline", "--store", store) == (
        f"The docs at commit {head}: 4 files\n"
        "docs/long.md (300 lines)\n"
        "  1-300 Long page\n"
        "docs/runbooks/deploy.md (9 lines)\n"
        "  1-9 Deploy\n"
        "    3-6 Before\n"
        "    7-9 Rollback\n"
        "docs/runbooks/payments.md (5 lines)\n"
        "  1-5 Payments runbook\n"
        "    3-5 Timeout\n"
        "docs/services/checkout.md (5 lines)\n"
        "  1-5 Checkout\n"
        "    3-5 Owners\n"
    )
    runbooks = ok("outline", "docs/runbooks/", "--store", store)
    assert runbooks.startswith(f"The docs under docs/runbooks/ at commit {head}: 2 files\n")
    assert "docs/runbooks/deploy.md (9 lines)" in runbooks and PAYMENTS in runbooks
    assert "docs/long.md" not in runbooks and "checkout" not in runbooks
    one = ok("outline", "**/deploy.md", "--store", store)
    assert one == (
        f"The docs under **/deploy.md at commit {head}: 1 file\n"
        "docs/runbooks/deploy.md (9 lines)\n  1-9 Deploy\n    3-6 Before\n    7-9 Rollback\n"
    )


def test_outline_json_has_each_file_s_headings_and_lines(indexed: tuple[Repo, str]) -> None:
    repo, store = indexed
    outline = as_json("outline", "docs/runbooks", "--store", store)
    assert outline == {
        "workspace": str(repo.path.resolve()),
        "ref": repo.head(),
        "path": "docs/runbooks",
        "total_files": 2,
        "files": [
            {
                "path": "docs/runbooks/deploy.md",
                "lines": 9,
                "headings": [
                    {"depth": 1, "title": "Deploy", "start_line": 1, "end_line": 9},
                    {"depth": 2, "title": "Before", "start_line": 3, "end_line": 6},
                    {"depth": 2, "title": "Rollback", "start_line": 7, "end_line": 9},
                ],
            },
            {
                "path": PAYMENTS,
                "lines": 5,
                "headings": [
                    {"depth": 1, "title": "Payments runbook", "start_line": 1, "end_line": 5},
                    {"depth": 2, "title": "Timeout", "start_line": 3, "end_line": 5},
                ],
            },
        ],
        "narrower": [],
        "note": None,
        "cut": False,
    }
    # Each heading's lines are the ones `read` gives for them.
    rollback = outline["files"][0]["headings"][2]
    lines = as_json("read", f"docs/runbooks/deploy.md:{rollback['start_line']}-9", "--store", store)
    assert lines["text"] == "## Rollback\n\nRun the rollback job; the payments worker restarts."


def test_outline_of_a_path_that_holds_nothing_names_the_folders_that_do(
    indexed: tuple[Repo, str],
) -> None:
    _, store = indexed
    err = refused("outline", "guides/", "--store", store)
    assert err.startswith("docshelf: error: no indexed doc of "), err
    assert "is under or matches 'guides/'. Its docs are in docs/ (4 files)" in err
    assert "without '..'" in refused("outline", "docs/../..", "--store", store)
    assert "is not closed" in refused("outline", "docs/[x", "--store", store)


# -- two workspaces in one store -----------------------------------------------------------------


def test_with_two_workspaces_outline_shows_both_and_read_finds_the_one_holding_the_path(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "store.sqlite3")
    repo = shop(tmp_path / "shop")
    billing = Repo(tmp_path / "billing")
    billing.write("docs/billing.md", BILLING)
    billing.write(PAYMENTS, "# Payments\n\nBilling's own runbook.\n")
    billing.commit("docs")
    index(repo, store)
    index(billing, store)
    both = ok("outline", "--store", store)
    assert both == (
        "2 workspaces; name one as --workspace to see its docs:\n\n"
        f"billing at commit {billing.head()[:12]}: 2 files\n  docs/ (2 files)\n\n"
        f"shop at commit {repo.head()[:12]}: 4 files\n  docs/ (4 files)\n"
    )
    assert as_json("outline", "--store", store) == {
        "workspaces": [
            {
                "workspace": "billing",
                "ref": billing.head(),
                "files": 2,
                "folders": [{"path": "docs/", "files": 2}],
            },
            {
                "workspace": "shop",
                "ref": repo.head(),
                "files": 4,
                "folders": [{"path": "docs/", "files": 4}],
            },
        ],
        "total_workspaces": 2,
        "page": 1,
        "pages": 1,
    }
    # A path in one workspace's docs is read from it; one in both needs --workspace.
    assert ok("read", "docs/billing.md:1-1", "--store", store) == (
        f"docs/billing.md of workspace billing, lines 1-1 of 5, at commit "
        f"{billing.head()[:12]}\n1  # Billing\n"
    )
    err = refused("read", PAYMENTS, "--store", store)
    assert f"'{PAYMENTS}' is in the docs of billing, shop; name one as --workspace" in err
    for name in ("shop", str(repo.path.resolve())):  # the shown name or the store's
        mine = as_json("read", PAYMENTS, "--workspace", name, "--store", store)
        assert (mine["ref"], mine["total_lines"]) == (repo.head(), 5)
        found = as_json(
            "search", "timeout", "--workspace", name, "--store", store, "--embedder", "none"
        )
        assert {h["path"] for h in found["hits"]} == {PAYMENTS}
    outline = as_json("outline", "--workspace", str(repo.path.resolve()), "--store", store)
    assert outline["total_files"] == 4 and outline["ref"] == repo.head()
    theirs = as_json("read", PAYMENTS, "--workspace", "billing", "--store", store)
    assert theirs["text"] == "# Payments\n\nBilling's own runbook."
    unknown = refused("read", PAYMENTS, "--workspace", "nobody", "--store", store)
    assert "no workspace nobody in the store" in unknown


def test_outline_workspace_takes_the_shown_name_as_read_does(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite3")
    repo = shop(tmp_path / "shop")
    billing = Repo(tmp_path / "billing")
    billing.write("docs/billing.md", BILLING)
    billing.commit("docs")
    index(repo, store)
    index(billing, store)
    assert as_json("outline", "--workspace", "shop", "--store", store)["total_files"] == 4


# -- search --path -------------------------------------------------------------------------------


def test_search_path_keeps_only_the_files_under_that_folder(indexed: tuple[Repo, str]) -> None:
    _, store = indexed
    search = ("search", "payments", "--store", store, "--embedder", "none")
    everywhere = {h["path"] for h in as_json(*search)["hits"]}
    assert "docs/services/checkout.md" in everywhere and PAYMENTS in everywhere
    runbooks = as_json(*search, "--path", "docs/runbooks/")
    assert {h["path"] for h in runbooks["hits"]} == {PAYMENTS, "docs/runbooks/deploy.md"}
    glob = as_json(*search, "--path", "**/payments.md")
    assert {h["path"] for h in glob["hits"]} == {PAYMENTS}
    text = ok(*search, "--path", "docs/services")
    assert "[1] docs/services/checkout.md:" in text and "runbooks" not in text


def test_search_path_that_matches_nothing_names_the_folders_that_exist(
    indexed: tuple[Repo, str],
) -> None:
    _, store = indexed
    search = ("search", "payments", "--store", store, "--embedder", "none")
    err = refused(*search, "--path", "docs/nothere/")
    assert err.startswith("docshelf: error: no indexed doc of "), err
    assert "is under or matches 'docs/nothere/'. Its docs are in docs/ (4 files)" in err
    assert "not an absolute path" in refused(*search, "--path", "/docs/")


def test_search_per_file_bounds_the_excerpts_of_one_file_and_refuses_in_the_cli_s_words(
    indexed: tuple[Repo, str],
) -> None:
    _, store = indexed
    search = ("search", "payments worker", "--store", store, "--embedder", "none", "-k", "3")
    one = as_json(*search, "--per-file", "1")["hits"]
    assert len({h["path"] for h in one}) == len(one)  # one excerpt of each file
    assert all(isinstance(h["more"], int) for h in one)
    bound = "--per-file must be a whole number from 1 to -k (3)"
    assert f"{bound}; got 0. Ask again with --per-file in that range" in refused(
        *search, "--per-file", "0"
    )
    assert f"{bound}; got 21" in refused(*search, "--per-file", "21")
    for wrong in ("1.5", "two"):
        assert "is not a valid integer" in refused(*search, "--per-file", wrong, code=2)


# -- serve -----------------------------------------------------------------------------------------


def test_serve_with_two_sources_refuses_the_options_of_one(tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite3")
    for one in (["--docs", "docs"], ["--workspace", "shop"], ["--include", "**/*.md"]):
        err = refused(
            "serve", str(tmp_path / "a"), str(tmp_path / "b"), *one, "--store", store, code=2
        )
        assert err.startswith("Usage: docshelf serve"), err
        assert (
            "Error: --docs, --include, --exclude and --workspace name the docs of one SOURCE; "
            "index each source with its own, then serve them together"
        ) in err


# -- PostgreSQL ------------------------------------------------------------------------------------


def test_read_and_outline_answer_the_same_from_postgresql(
    indexed: tuple[Repo, str], postgres_url: str
) -> None:
    repo, sqlite_store = indexed
    index(repo, postgres_url)
    for args in (
        ("read", PAYMENTS),
        ("read", "docs/long.md:150"),
        ("outline",),
        ("outline", "docs/runbooks/"),
    ):
        assert as_json(*args, "--store", postgres_url) == as_json(*args, "--store", sqlite_store)
    assert ok("read", f"{PAYMENTS}:3-3", "--store", postgres_url) == (
        f"{PAYMENTS}, lines 3-3 of 5, at commit {repo.head()[:12]}\n3  ## Timeout\n"
    )
    err = refused("read", "../x", "--store", postgres_url)
    assert "without '..'" in err
