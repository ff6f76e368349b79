"""The commands through the installed console script, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from docshelf.rows import ChunkRow
from docshelf.stores import SQLiteStore
from docshelf.stores.postgres import PostgresStore

DOCSHELF = Path(sys.executable).with_name("docshelf")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DOCSHELF), *args], check=False, capture_output=True, text=True, cwd=cwd, timeout=60
    )


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "services").mkdir(parents=True)
    (root / "services" / "checkout.md").write_text(
        "# Checkout\n\nOwned by team Payments.\n\n## Runbook\n\n```bash\n# restart it\n```\n"
    )
    (root / "notes.txt").write_text("First note.\n\nSecond note.\n")
    (root / "image.png").write_bytes(b"\x89PNG")
    return root


def test_help_lists_the_chunk_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "chunk" in result.stdout


def test_chunk_json_gives_markdown_and_paragraph_chunks_with_their_keys(docs: Path) -> None:
    result = run("chunk", str(docs), "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    markdown = [r for r in rows if r["path"] == "services/checkout.md"]
    assert [r["heading"] for r in markdown] == ["Checkout", "Checkout > Runbook"]
    assert set(markdown[0]) == {"path", "index", "heading", "content", "start_line", "end_line"}
    assert markdown[1]["content"].endswith("# restart it\n```")
    (notes,) = [r for r in rows if r["path"] == "notes.txt"]
    assert set(notes) == {"path", "chunk_index", "text", "char_start", "char_end", "tokens"}
    assert notes["text"] == "First note.\n\nSecond note."


def test_paragraph_chunker_can_be_chosen_for_markdown(docs: Path) -> None:
    result = run(
        "chunk", str(docs / "services" / "checkout.md"), "--chunker", "paragraph", "--json"
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert all("chunk_index" in r for r in rows)
    assert rows[0]["path"] == str(docs / "services" / "checkout.md")


def test_table_shows_path_index_heading_lines_and_bytes(docs: Path) -> None:
    result = run("chunk", "docs", cwd=docs.parent)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["PATH", "#", "HEADING", "LINES", "BYTES"]
    assert lines[1].split() == ["notes.txt", "0", "1-3", "25"]
    assert lines[2].split() == ["services/checkout.md", "0", "Checkout", "1-3", "35"]
    assert lines[3].split() == [
        "services/checkout.md",
        "1",
        "Checkout",
        ">",
        "Runbook",
        "5-9",
        "36",
    ]
    assert lines[-1] == "3 chunks from 2 files, 96 bytes in all, largest chunk 36 bytes"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d / "missing.md", "missing.md: no such file or directory"),
        (lambda d: d / "empty", "no documentation files"),
        (lambda d: d / "latin1.md", "latin1.md: not UTF-8 text (invalid byte at offset 5)"),
    ],
)
def test_bad_input_gives_one_line_naming_the_file_and_a_non_zero_exit(
    tmp_path: Path, setup: Callable[[Path], Path], message: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.html").write_text("not docs")
    (tmp_path / "latin1.md").write_bytes("# Caf\xe9 menu\n".encode("latin-1"))
    path = setup(tmp_path)
    result = run("chunk", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("docshelf: error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_table_lines_of_text_chunks_count_in_the_normalised_file(tmp_path: Path) -> None:
    (tmp_path / "crlf.txt").write_bytes(b"a\r\n\r\nb\r\n\r\nc\r\n")
    (tmp_path / "cr.txt").write_bytes(b"a\r\rb\r\rc\r")
    for name in ("crlf.txt", "cr.txt"):
        result = run("chunk", str(tmp_path / name), "--chunker", "paragraph")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[1].split()[-2] == "1-5", result.stdout


def test_a_file_name_that_is_not_utf8_is_refused_by_name(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# ok\n\nfine\n")
    with open(os.path.join(os.fsencode(docs), b"caf\xe9.md"), "wb") as f:
        f.write(b"# Caf\xc3\xa9\n\nmenu\n")
    for extra in ([], ["--json"]):
        result = run("chunk", str(docs), *extra)
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1, result.stderr
        assert "caf\\udce9.md: the file name is not UTF-8" in result.stderr


def test_a_file_name_with_a_control_character_is_refused_by_name(tmp_path: Path) -> None:
    # A newline in a name would let a file forge lines of the listing.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# ok\n\nfine\n")
    (docs / "evil.md\nforged.md").write_text("# Evil\n\nforged\n")
    for target in (docs, docs / "evil.md\nforged.md"):
        result = run("chunk", str(target))
        assert result.returncode == 1
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1, result.stderr
        assert "evil.md\\nforged.md: the file name has a control character" in result.stderr


def test_a_path_the_system_refuses_is_one_line(tmp_path: Path) -> None:
    result = run("chunk", str(tmp_path / ("a" * 300)))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert "cannot be read (File name too long)" in result.stderr


def test_a_bad_file_inside_a_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# ok\n\nfine\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.md").write_bytes(b"\xff\xfe# x\n")
    result = run("chunk", str(tmp_path))
    assert result.returncode == 1
    assert "bad.md: not UTF-8 text" in result.stderr


def test_symlinks_below_a_directory_are_never_followed(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "real.md").write_text("# Real\n\ncontent\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "passwords.md").write_text("# Secret\n\nhunter2\n")
    (docs / "link.md").symlink_to(outside / "passwords.md")
    (docs / "linkdir").symlink_to(outside, target_is_directory=True)
    rows = json.loads(run("chunk", str(docs), "--json").stdout)
    assert [r["path"] for r in rows] == ["real.md"]


def test_unknown_chunker_is_a_usage_error() -> None:
    result = run("chunk", "x.md", "--chunker", "words")
    assert result.returncode == 2
    assert "Invalid value for '--chunker'" in result.stderr


def test_help_and_chunk_never_import_torch(docs: Path) -> None:
    code = (
        "import sys\n"
        "from docshelf.cli import main\n"
        f"sys.argv = ['docshelf', 'chunk', {str(docs)!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'numpy') if m in sys.modules]\n"
        "print(heavy, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "[]"


def test_output_into_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    # Far more than a pipe holds (64 KiB on Linux), so the writer meets the closed pipe.
    for page in range(100):
        sections = "".join(f"## Step {s}\n\nRestart the gateway.\n\n" for s in range(40))
        (tmp_path / f"page{page}.md").write_text(f"# Page {page}\n\n{sections}")
    for extra in ([], ["--json"]):
        full = run("chunk", str(tmp_path), *extra)
        assert len(full.stdout.encode()) > 2 * 64 * 1024
        shell = f"{DOCSHELF} chunk {tmp_path} {' '.join(extra)} | head -c 1 >/dev/null"
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", shell], check=False, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        # A reader gone before the first write: every write is refused at once.
        read, write = os.pipe()
        os.close(read)
        try:
            gone = subprocess.run(
                [str(DOCSHELF), "chunk", str(tmp_path), *extra],
                stdout=write,
                stderr=subprocess.PIPE,
                check=False,
                text=True,
                timeout=60,
            )
        finally:
            os.close(write)
        assert gone.returncode == 0, gone.stderr
        assert gone.stderr == ""


def test_embed_prints_one_unit_vector_per_text_and_names_the_model() -> None:
    result = run("embed", "Who owns Checkout?", "payment timeout")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [len(r) for r in rows] == [384, 384]
    assert sum(x * x for x in rows[0]) == pytest.approx(1.0, abs=1e-3)
    assert "sentence-transformers/all-MiniLM-L6-v2: 384 dimensions, 2 texts" in result.stderr


def test_embed_with_options_of_another_embedder_is_one_line_error() -> None:
    result = run("embed", "x", "--base-url", "http://127.0.0.1:9/v1")
    assert result.returncode == 1
    assert result.stderr.startswith("docshelf: error: --base-url and --dimensions")
    assert "Traceback" not in result.stderr
    refused = run("embed", "x", "--embedder", "none")
    assert refused.returncode == 2
    assert "makes no vectors" in refused.stderr


def test_status_of_a_store_that_does_not_exist_says_to_index(tmp_path: Path) -> None:
    result = run("status", "--store", str(tmp_path / "missing.sqlite3"))
    assert result.returncode == 1
    assert "nothing is indexed there yet" in result.stderr
    assert "DOCSHELF_STORE" in result.stderr
    assert not (tmp_path / "missing.sqlite3").exists()


def test_status_shows_the_model_the_current_ref_and_chunks_per_ref(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    row = ChunkRow("docs/a.md", 0, "A", "text", 1, 2, "h", np.ones(4, dtype=np.float32) / 2)
    with SQLiteStore.open(path, model_id="tiny-model", dim=4) as store:
        store.replace_doc_chunks("repo", "a" * 40, [row, row])
        store.replace_doc_chunks("repo", "b" * 40, [row])
        store.set_current("repo", "b" * 40)
    table = run("status", "--store", str(path))
    assert table.returncode == 0, table.stderr
    assert "model: tiny-model (4 dimensions)" in table.stdout
    assert f"workspace repo: current {'b' * 40}" in table.stdout
    assert f"* {'b' * 40}  1 chunks" in table.stdout
    as_json = subprocess.run(
        [str(DOCSHELF), "status", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DOCSHELF_STORE": str(path)},
    )
    assert json.loads(as_json.stdout) == {
        "store": str(path),
        "model": "tiny-model",
        "dim": 4,
        "workspaces": [
            {
                "workspace": "repo",
                "current": "b" * 40,
                "pinned": [],
                "refs": {"a" * 40: 2, "b" * 40: 1},
                "indexed_at": None,  # written by the indexer, not by these raw rows
                "pins": [],
                "skipped": None,
            }
        ],
    }


def test_status_never_imports_torch(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    SQLiteStore.open(path, model_id="m", dim=4).close()
    code = (
        "import sys\n"
        "from docshelf.cli import main\n"
        f"sys.argv = ['docshelf', 'status', '--store', {str(path)!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "print([m for m in ('torch', 'sentence_transformers') if m in sys.modules], "
        "file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stderr.strip().endswith("[]"), result.stderr


def test_status_reads_a_postgresql_store_from_the_environment(postgres_url: str) -> None:
    with PostgresStore.open(postgres_url, model_id="tiny-model", dim=4) as store:
        row = ChunkRow("docs/a.md", 0, "A", "text", 1, 2, "h", np.ones(4, dtype=np.float32) / 2)
        store.replace_doc_chunks("repo", "c" * 40, [row])
        store.set_current("repo", "c" * 40)
    result = subprocess.run(
        [str(DOCSHELF), "status", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "DOCSHELF_STORE": postgres_url},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["model"], report["dim"]) == ("tiny-model", 4)
    assert report["workspaces"] == [
        {
            "workspace": "repo",
            "current": "c" * 40,
            "pinned": [],
            "refs": {"c" * 40: 1},
            "indexed_at": None,
            "pins": [],
            "skipped": None,
        }
    ]


def test_chunk_cuts_each_format_by_its_own_titles_and_a_django_txt_as_rst(tmp_path: Path) -> None:
    root = tmp_path / "formats"
    root.mkdir()
    (root / "guide.rst").write_text(
        ":orphan:\n\nGuide\n=====\n\nIntro text.\n\nInstall\n-------\n\nRun pip.\n"
    )
    (root / "manual.adoc").write_text(
        "= Manual\n:toc: left\n\nPreamble text.\n\n== Usage\n\n// a comment\nUse it.\n"
    )
    (root / "page.mdx").write_text(
        "import {Tabs} from './tabs.js'\n\n# Page\n\n<Tabs>\n## Setup\n\nDo this {props.x}.\n"
        "</Tabs>\n"
    )
    (root / "topic.txt").write_text(
        "======\nTopics\n======\n\nSome words.\n\nViews\n=====\n\nMore.\n"
    )
    (root / "plain.txt").write_text("Just a note.\n\nAnother one.\n")
    result = run("chunk", str(root), "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    headings = {(r["path"], r.get("heading")) for r in rows}
    assert headings == {
        ("guide.rst", "Guide"),
        ("guide.rst", "Guide > Install"),
        ("manual.adoc", "Manual"),
        ("manual.adoc", "Manual > Usage"),
        # "Page" holds only its <Tabs> tag, which is markup: no chunk, as remark-mdx reads it
        ("page.mdx", "Page > Setup"),
        ("plain.txt", None),
        ("topic.txt", "Topics"),
        ("topic.txt", "Topics > Views"),
    }
    contents = "\n".join(r.get("content", "") for r in rows)
    for hidden in (":orphan:", ":toc:", "// a comment", "import {Tabs}", "{props.x}"):
        assert hidden not in contents
    forced = json.loads(
        run("chunk", str(root / "topic.txt"), "--chunker", "paragraph", "--json").stdout
    )
    assert all("chunk_index" in r for r in forced)
