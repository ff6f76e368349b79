"""`docshelf index`, `search`, `prune` and `status` run as a user runs them: the installed console
script in a subprocess, on real git repositories and real stores (and the real model end to end)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.config import MAX_DOC_BYTES
from docshelf.stores import open_store
from tests.support.gitrepo import Repo, write_shop_docs

DOCSHELF = Path(sys.executable).with_name("docshelf")


def docshelf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DOCSHELF), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = Repo(tmp_path / "shop")
    write_shop_docs(made)
    made.write(
        "docs/glossary.txt", "SKU: a stock keeping unit.\n\nPSP: payment service provider.\n"
    )
    made.symlink("docs/secrets.md", "/etc/passwd")
    made.commit("docs")
    return made


def test_index_json_reports_the_commit_the_files_the_skips_and_the_counts(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    args = ("index", str(repo.path), "--store", store, "--embedder", "none", "--json")
    first = docshelf(*args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["workspace"] == str(repo.path.resolve())
    assert report["ref"] == repo.head()
    assert report["files"] == 3
    assert report["skipped"] == [
        {"path": "docs/secrets.md", "reason": "symbolic link, not followed"}
    ]
    assert report["chunks"] == 3
    assert (report["embedded"], report["reused"], report["already_indexed"]) == (0, 0, False)
    assert report["seconds"] >= 0
    again = json.loads(docshelf(*args).stdout)
    assert again["already_indexed"] and again["files"] is None and again["chunks"] == 3


def test_index_prints_a_summary_and_status_shows_the_current_ref(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    done = docshelf("index", str(repo.path), "--store", store, "--embedder", "none")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"indexed {repo.head()[:12]} of {repo.path.resolve()}: 3 files")
    assert "docs/secrets.md: symbolic link, not followed" in done.stdout
    assert done.stderr == ""  # no progress line when stderr is not a terminal
    status = docshelf("status", "--store", store)
    assert f"* {repo.head()}  3 chunks" in status.stdout
    assert "  skipped 1:\n    docs/secrets.md: symbolic link, not followed\n" in status.stdout
    (ws,) = json.loads(docshelf("status", "--store", store, "--json").stdout)["workspaces"]
    assert ws["skipped"] == [{"path": "docs/secrets.md", "reason": "symbolic link, not followed"}]


def test_an_unknown_revision_is_one_line_on_stderr_and_exit_status_1(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    done = docshelf("index", str(repo.path), "--ref", "no-such-branch", "--store", store)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("docshelf: error: ")
    assert "no-such-branch" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_prune_keeps_current_and_pinned_refs_and_status_shows_the_pins(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    first = repo.head()
    base = ("--store", store, "--embedder", "none")
    assert docshelf("index", str(repo.path), *base).returncode == 0
    name = str(repo.path.resolve())
    with open_store(store, model_id="none", dim=0) as opened:
        pin = opened.add_pin(name, first, "test:1", 600)
    repo.write("docs/new.md", "# New\n\nA new page.\n")
    second = repo.commit("new page")
    assert docshelf("index", str(repo.path), *base).returncode == 0
    status = json.loads(docshelf("status", "--store", store, "--json").stdout)
    (ws,) = status["workspaces"]
    assert (ws["current"], ws["pinned"], set(ws["refs"])) == (second, [first], {first, second})
    text = docshelf("status", "--store", store).stdout
    assert f"  {first}  3 chunks, pinned" in text
    assert f"  pin on {first[:12]} by test:1, lease ends in " in text
    assert [(p["ref"], p["holder"]) for p in ws["pins"]] == [(first, "test:1")]
    assert ws["indexed_at"] is not None and [s["path"] for s in ws["skipped"]] == [
        "docs/secrets.md"
    ]
    assert f"  indexed {ws['indexed_at']}" in text
    kept = json.loads(docshelf("prune", "--store", store, "--json").stdout)
    assert kept == [{"workspace": name, "current": second, "pinned": [first], "removed": 0}]
    with open_store(store, model_id="none", dim=0) as opened:
        opened.remove_pin(pin)
    pruned = docshelf("prune", "--store", store)
    assert pruned.stdout == f"workspace {name}: removed 1 ref, kept {second[:12]}\n"
    assert set(
        json.loads(docshelf("status", "--store", store, "--json").stdout)["workspaces"][0]["refs"]
    ) == {second}


def test_search_by_text_answers_from_the_current_ref(repo: Repo, tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite3")
    docshelf("index", str(repo.path), "--store", store, "--embedder", "none")
    done = docshelf("search", "gateway timeout", "--store", store, "--embedder", "none", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["ref"], answer["query"], answer["mode"], answer["note"]) == (
        repo.head(),
        "gateway timeout",
        "text",
        None,
    )
    hits = answer["hits"]
    assert hits[0]["path"] == "docs/runbooks/payments.md"
    assert set(hits[0]) == {
        *("path", "heading", "start_line", "end_line", "score", "content"),
        *("workspace", "ref", "more", "cut", "repeated", "copies"),
    }
    assert (hits[0]["workspace"], hits[0]["ref"]) == (answer["workspace"], repo.head())


def test_the_real_model_indexes_a_repository_and_finds_the_passage_by_meaning(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    indexed = docshelf("index", str(repo.path), "--store", store, "--json", "--progress", "json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == 3
    # With --progress json, stderr carries the progress events, one JSON object a line.
    events = [json.loads(line) for line in indexed.stderr.splitlines()]
    assert [e["phase"] for e in events] == ["reading", "embedding", "embedding", "writing", "done"]
    assert all(e["event"] == "progress" and e["files"] == 3 for e in events)
    assert (events[2]["embedded"], events[2]["to_embed"], events[-1]["chunks"]) == (3, 3, 3)
    question = "which team is responsible for checkout?"
    done = docshelf("search", question, "--store", store, "-k", "2", "--mode", "vector")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"2 excerpts for {question!r} from the documentation at commit {repo.head()[:12]}"
    )
    assert lines[2].startswith("[1] docs/services/checkout.md:")
    assert lines[2].endswith("(Checkout > Owners)")


def test_the_int8_model_indexes_and_answers_and_its_store_is_its_own(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    int8 = ("--model", "all-MiniLM-L6-v2-int8")
    indexed = docshelf("index", str(repo.path), "--store", store, *int8, "--json")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == 3
    with open_store(store, model_id=None, dim=None) as opened:
        assert opened.model_id == "docshelf/all-MiniLM-L6-v2-int8"
    question = "which team is responsible for checkout?"
    done = docshelf("search", question, "--store", store, *int8, "-k", "1", "--mode", "vector")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2].startswith("[1] docs/services/checkout.md:")
    # The float model's queries are not compared with the int8 model's vectors.
    refused = docshelf("search", question, "--store", store)
    assert refused.returncode != 0
    assert "configure docshelf/all-MiniLM-L6-v2-int8 again" in refused.stderr
    mixed = docshelf("index", str(repo.path), "--store", store, "--precision", "float32", *int8)
    assert mixed.returncode != 0 and "always runs in int8" in mixed.stderr


def test_reindexing_an_indexed_commit_never_imports_torch(repo: Repo, tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite3")
    assert docshelf("index", str(repo.path), "--store", store).returncode == 0
    code = (
        "import sys\n"
        "from docshelf.cli import main\n"
        f"sys.argv = ['docshelf', 'index', {str(repo.path)!r}, '--store', {store!r}, '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('torch', 'sentence_transformers') if m in sys.modules], "
        "file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert json.loads(done.stdout)["already_indexed"], done.stderr
    assert done.stderr.strip().endswith("[]"), done.stderr


def test_docshelf_chunk_shows_exactly_the_chunks_docshelf_index_stores(
    tmp_path: Path, shared_data: Path
) -> None:
    # A real documentation tree (FastAPI's, Markdown and one .txt), committed to a repository
    # with a symbolic link and a file over the size limit beside it.
    repo = Repo(tmp_path / "fastapi")
    shutil.copytree(shared_data / "corpora" / "fastapi", repo.path / "docs")
    repo.symlink("docs/secrets.md", "/etc/passwd")
    repo.write("docs/dump.md", "x" * (MAX_DOC_BYTES + 1))
    repo.commit("docs")
    store = tmp_path / "store.sqlite3"
    indexed = docshelf("index", str(repo.path), "--store", str(store), "--embedder", "none")
    assert indexed.returncode == 0, indexed.stderr
    with sqlite3.connect(store) as db:
        stored = db.execute(
            "SELECT path, chunk, heading, content, start_line, end_line FROM chunks "
            "ORDER BY path, chunk"
        ).fetchall()
    assert len({path for path, *_ in stored}) == 156
    assert any(path.endswith(".txt") for path, *_ in stored)

    shown = docshelf("chunk", str(repo.path / "docs"), "--json")
    assert shown.returncode == 0, shown.stderr
    assert "skipped secrets.md: symbolic link, not followed" in shown.stderr
    assert "skipped dump.md: 1048577 bytes, over the 1048576-byte limit" in shown.stderr
    rows = []
    for r in json.loads(shown.stdout):
        if "chunk_index" in r:  # a paragraph chunk: its text, and its lines from the table
            rows.append((f"docs/{r['path']}", r["chunk_index"], "", r["text"]))
        else:
            rows.append((f"docs/{r['path']}", r["index"], r["heading"], r["content"]))
    assert sorted(rows) == [row[:4] for row in stored]

    table = docshelf("chunk", str(repo.path / "docs"))
    assert table.returncode == 0, table.stderr
    listed = []
    for line in table.stdout.splitlines()[1:-2]:
        cells = line.split()
        first, _, last = cells[-2].partition("-")
        listed.append((f"docs/{cells[0]}", int(cells[1]), int(first), int(last or first)))
    assert sorted(listed) == [(p, c, start, end) for p, c, _h, _t, start, end in stored]


def test_the_docs_found_are_named_and_globs_given_once_are_kept_for_later_syncs(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    base = ("--store", store, "--embedder", "none")
    found = docshelf("index", str(repo.path), *base)
    assert found.returncode == 0, found.stderr
    assert "docs: docs\n" in found.stdout
    # A glob given once replaces the selection: the same commit is indexed again.
    narrowed = json.loads(
        docshelf("index", str(repo.path), *base, "--exclude", "runbooks/", "--json").stdout
    )
    assert not narrowed["already_indexed"]
    assert (narrowed["roots"], narrowed["files"], narrowed["excluded"]) == (["docs"], 2, 1)
    # Given nothing, the next index and serve --sync-interval use the stored selection.
    again = json.loads(docshelf("index", str(repo.path), *base, "--json").stdout)
    assert again["already_indexed"] and again["roots"] == ["docs"]
    repo.write("docs/runbooks/deploy.md", "# Deploy\n\nShip it on Tuesdays.\n")
    repo.write("docs/faq.md", "# FAQ\n\nAsk the Payments team.\n")
    repo.commit("more docs")
    later = json.loads(docshelf("index", str(repo.path), *base, "--json").stdout)
    assert (later["files"], later["excluded"]) == (3, 2)
    with sqlite3.connect(store) as raw:
        stored = raw.execute("SELECT DISTINCT path FROM chunks WHERE ref = ?", (repo.head(),))
        assert {path for (path,) in stored} == {
            "docs/faq.md",
            "docs/glossary.txt",
            "docs/services/checkout.md",
        }
    text = docshelf("index", str(repo.path), *base, "--include", "**/*.txt", "--docs", "docs")
    # Four Markdown pages and the link named secrets.md: left out before anything is read.
    assert "left out by --include/--exclude: 5 files" in text.stdout


def test_a_changed_selection_reindexes_the_commit_and_reuses_every_vector(
    repo: Repo, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.sqlite3")
    base = ("--store", store, "--json")
    first = json.loads(docshelf("index", str(repo.path), *base).stdout)
    assert first["embedded"] == first["chunks"] == 3
    fewer = json.loads(docshelf("index", str(repo.path), *base, "--exclude", "*.txt").stdout)
    assert (fewer["chunks"], fewer["embedded"], fewer["reused"]) == (2, 0, 2)
    back = json.loads(docshelf("index", str(repo.path), *base, "--docs", "docs").stdout)
    # The glossary's vector went with the ref that dropped it; the other two are reused.
    assert (back["chunks"], back["embedded"], back["reused"]) == (3, 1, 2)


@pytest.mark.parametrize(
    ("pages", "roots"),
    [
        ({"content/guide/setup.md": "# Setup\n\nRun the installer.\n"}, ["content"]),
        (
            {
                "docs/src/content/docs/setup.mdx": "import X from './x'\n\n# Setup\n\nRun it.\n",
                "docs/src/content/docs/api.rst": "API\n===\n\nCall it.\n",
            },
            ["docs"],
        ),
    ],
)
def test_index_with_no_docs_finds_docs_in_content_or_a_docs_package(
    tmp_path: Path, pages: dict[str, str], roots: list[str]
) -> None:
    repo = Repo(tmp_path / "site")
    repo.write("README.md", "# Site\n")
    repo.write("package.json", "{}\n")
    for path, text in pages.items():
        repo.write(path, text)
    repo.commit("site")
    store = str(tmp_path / "store.sqlite3")
    done = docshelf("index", str(repo.path), "--store", store, "--embedder", "none", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["roots"], report["files"]) == (roots, len(pages))
    with sqlite3.connect(store) as raw:
        stored = {p for (p,) in raw.execute("SELECT DISTINCT path FROM chunks")}
    assert stored == set(pages)


def test_a_directory_indexed_with_docs_named_keeps_them_when_indexed_with_none(
    tmp_path: Path,
) -> None:
    root = tmp_path / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "setup.md").write_text("# Setup\n\nRun the installer.\n")
    (root / "notes.md").write_text("# Notes\n\nNot part of the guides.\n")
    store = str(tmp_path / "store.sqlite3")
    base = ("--store", store, "--embedder", "none", "--json")
    named = json.loads(docshelf("index", str(root), "--docs", "guides", *base).stdout)
    assert (named["roots"], named["files"]) == (["guides"], 1)
    plain = docshelf("index", str(root), *base)
    assert plain.returncode == 0, plain.stderr
    report = json.loads(plain.stdout)
    # The same docs read again: the same ref, already indexed.
    assert (report["roots"], report["ref"]) == (["guides"], named["ref"])
    assert report["already_indexed"] and report["files"] is None
    with sqlite3.connect(store) as raw:
        stored = raw.execute("SELECT DISTINCT path FROM chunks WHERE ref = ?", (report["ref"],))
        assert {path for (path,) in stored} == {"guides/setup.md"}
    again = json.loads(docshelf("index", str(root), *base).stdout)
    assert again["already_indexed"] and again["roots"] == ["guides"]


def test_an_edit_outside_the_docs_a_directory_was_indexed_with_leaves_its_ref_as_it_was(
    tmp_path: Path,
) -> None:
    root = tmp_path / "handbook"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "setup.md").write_text("# Setup\n\nRun the installer.\n")
    (root / "notes.md").write_text("# Notes\n\nNot part of the guides.\n")
    store = str(tmp_path / "store.sqlite3")
    base = ("--store", store, "--embedder", "none", "--json")
    named = json.loads(docshelf("index", str(root), "--docs", "guides", *base).stdout)
    (root / "notes.md").write_text("# Notes\n\nEdited, still not part of the guides.\n")
    (root / "drafts").mkdir()
    (root / "drafts" / "plan.md").write_text("# Plan\n\nA new page outside the guides.\n")
    plain = docshelf("index", str(root), *base)
    assert plain.returncode == 0, plain.stderr
    report = json.loads(plain.stdout)
    assert report["ref"] == named["ref"] and report["already_indexed"]
    # An edit under guides/ is a new ref, read with the stored docs.
    (root / "guides" / "setup.md").write_text("# Setup\n\nRun the new installer.\n")
    edited = json.loads(docshelf("index", str(root), *base).stdout)
    assert edited["ref"] != named["ref"] and not edited["already_indexed"]
    assert (edited["roots"], edited["files"]) == (["guides"], 1)
