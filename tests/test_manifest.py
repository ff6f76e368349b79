"""A manifest of repositories: what it may say (unknown keys and wrong types refused by name,
relative paths relative to the file), and `docshelf index --manifest` on real git repositories
and a real store: every workspace indexed with one embedder, a failure reported and the rest
carried on, a summary, exit status 1 when one failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docshelf import app
from docshelf.app.manifest import index_manifest
from docshelf.config import Config
from docshelf.errors import ConfigError
from docshelf.stores import open_store
from docshelf.workspace.manifest import ManifestEntry, read_manifest
from tests.support.gitrepo import Repo
from tests.support.indexing import DIM, MODEL, FakeEmbedder
from tests.test_cli_index import docshelf


def manifest(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "org" / "manifest.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def repo(path: Path, title: str) -> Repo:
    made = Repo(path)
    made.write("docs/runbook.md", f"# {title} runbook\n\nRotate the {title} key every 90 days.\n")
    made.commit(title)
    return made


# -- what a manifest may say ------------------------------------------------------------------


def test_a_manifest_lists_workspaces_with_paths_relative_to_its_folder(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        """
[[workspace]]
source = "../payments"
name = "payments"
ref = "main"
docs = ["docs"]
include = ["**/*.md"]
exclude = ["**/i18n/**"]

[[workspace]]
source = "https://user:secret@git.example.com/shop/checkout.git"

[[workspace]]
source = "git@github.com:shop/search.git"

[[workspace]]
source = "~/src/billing"
""",
    )
    entries = read_manifest(path)
    assert entries[0] == ManifestEntry(
        str(tmp_path / "payments"), "payments", "main", ("docs",), ("**/*.md",), ("**/i18n/**",)
    )
    assert [e.source for e in entries[1:]] == [
        "https://user:secret@git.example.com/shop/checkout.git",
        "git@github.com:shop/search.git",
        "~/src/billing",
    ]
    assert entries[1].label == "https://git.example.com/shop/checkout.git"  # no secret shown
    assert entries[1].docs is None and entries[1].include == ()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[workspace]]\nsource = "a"\ndoc = ["docs"]\n', r"workspace 1: unknown key 'doc'; the"),
        ('[[workspace]]\nsource = "a"\n[settings]\nx = 1\n', r"unknown key 'settings'"),
        ('[[workspace]]\nname = "a"\n', r"workspace 1: source must be a path or a clone URL"),
        ('[[workspace]]\nsource = "  "\n', r"source must be a path or a clone URL"),
        ('[[workspace]]\nsource = "a"\ndocs = "docs"\n', r"docs must be a list of non-empty"),
        ('[[workspace]]\nsource = "a"\nexclude = [1]\n', r"exclude must be a list of non-empty"),
        ('[[workspace]]\nsource = "a"\nname = 7\n', r"name must be a non-empty string; got 7"),
        ('[[workspace]]\nsource = "a"\nref = ""\n', r"ref must be a non-empty string"),
        ("workspace = 3\n", r"lists no workspace; add \[\[workspace\]\] entries"),
        ("", r"lists no workspace"),
        ("[[workspace]\nsource = 1\n", r"is not valid TOML: .*line 1"),
        (
            '[[workspace]]\nsource = "a"\nname = "x"\n[[workspace]]\nsource = "b"\nname = "x"\n',
            r"workspace 2 \(x\): the same workspace as workspace 1",
        ),
        (
            '[[workspace]]\nsource = "a"\n[[workspace]]\nsource = "./a"\n',
            r"workspace 2 \(.*/org/a\): the same workspace as workspace 1",
        ),
    ],
)
def test_a_manifest_that_says_something_docshelf_does_not_know_is_refused_by_name(
    tmp_path: Path, text: str, said: str
) -> None:
    path = manifest(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"manifest {path}.*{said}"):
        read_manifest(path)


def test_a_manifest_that_is_not_there_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file; give the path of a TOML manifest"):
        read_manifest(tmp_path / "none.toml")


# -- indexing a manifest ----------------------------------------------------------------------


def test_every_workspace_is_indexed_with_one_embedder_and_a_failure_is_one_outcome(
    tmp_path: Path, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo(tmp_path / "payments", "payments")
    repo(tmp_path / "checkout", "checkout")
    made: list[FakeEmbedder] = []

    def one_embedder(config: Config, *, serving: bool = False) -> FakeEmbedder:
        made.append(FakeEmbedder())
        return made[-1]

    monkeypatch.setattr(app, "configured_embedder", one_embedder)
    store = location  # a SQLite file, then a PostgreSQL database
    entries = [
        ManifestEntry(str(tmp_path / "payments"), "payments"),
        ManifestEntry(str(tmp_path / "missing"), "missing"),
        ManifestEntry(str(tmp_path / "checkout"), "checkout", "main"),
    ]
    seen: list[str] = []
    outcomes = index_manifest(
        Config(store=store, mirror_dir=str(tmp_path / "mirrors")),
        entries,
        jobs=2,
        report=lambda o: seen.append(o.entry.label),
    )
    assert seen == ["payments", "missing", "checkout"]  # in the manifest's order
    assert len(made) == 1  # one model for every workspace
    assert [o.result is not None for o in outcomes] == [True, False, True]
    assert outcomes[1].error is not None and "no such file or directory" in outcomes[1].error
    assert len(made[0].texts) == 2  # one chunk of each repository
    with open_store(store, model_id=MODEL, dim=DIM) as opened:
        assert opened.workspaces() == ["checkout", "payments"]
        for name in ("checkout", "payments"):
            assert opened.current(name) is not None
            assert opened.ref_counts(name) == {opened.current(name): 1}


def test_index_manifest_prints_each_workspace_and_a_summary_and_fails_when_one_failed(
    tmp_path: Path,
) -> None:
    repo(tmp_path / "repos" / "payments", "payments")
    repo(tmp_path / "repos" / "checkout", "checkout")
    path = manifest(
        tmp_path,
        """
[[workspace]]
source = "../repos/payments"
name = "payments"

[[workspace]]
source = "../repos/missing"
name = "missing"

[[workspace]]
source = "../repos/checkout"
docs = ["docs"]
""",
    )
    store = str(tmp_path / "org.sqlite3")
    done = docshelf("index", "--manifest", str(path), "--store", store, "--embedder", "none")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("indexed ") and lines[0].split(" of ")[1].startswith("payments:")
    assert lines[2].startswith("failed: missing: ") and "no such file or directory" in lines[2]
    assert f"of {tmp_path / 'repos' / 'checkout'}: 1 file, 1 chunk" in lines[3]
    assert lines[-1] == "manifest: 3 workspaces: 2 indexed, 0 already indexed, 1 failed (missing)"
    again = docshelf(
        "index", "--manifest", str(path), "--store", store, "--embedder", "none", "--json"
    )
    assert again.returncode == 1
    data = json.loads(again.stdout)
    assert data["failed"] == 1
    assert [w["name"] for w in data["workspaces"]] == ["payments", "missing", None]
    assert data["workspaces"][0]["result"]["already_indexed"] is True
    assert data["workspaces"][1]["result"] is None and data["workspaces"][1]["error"]
    found = docshelf("search", "rotate the key", "--store", store, "--workspace", "payments")
    assert found.returncode == 0 and "docs/runbook.md:1-3" in found.stdout


def test_index_manifest_with_the_options_of_one_workspace_is_refused(tmp_path: Path) -> None:
    path = manifest(tmp_path, '[[workspace]]\nsource = "a"\n')
    for extra in (["somewhere"], ["--ref", "main"], ["--docs", "docs"], ["--workspace", "x"]):
        done = docshelf("index", "--manifest", str(path), *extra, "--embedder", "none")
        assert done.returncode == 2
        assert "--manifest lists the workspaces and their options" in done.stderr
    bad = manifest(tmp_path, '[[workspace]]\nsource = "a"\nrefs = "main"\n')
    done = docshelf("index", "--manifest", str(bad), "--embedder", "none")
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        "workspace 1: unknown key 'refs'; the keys are source, name, ref, docs, include, exclude"
    )
