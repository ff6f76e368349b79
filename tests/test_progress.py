"""`docshelf index`'s progress: the bar on a terminal (rate and time left) and the JSON events of
--json, on a clock the tests move, and the bar of the real command on a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from docshelf.chunking import embedding_input
from docshelf.indexer import Indexer, Progress, file_chunks
from docshelf.progress import (
    PROGRESS_BAR_WIDTH,
    PROGRESS_EVENT_SECONDS,
    ProgressBar,
    ProgressEvents,
    clock_text,
)
from docshelf.stores import open_store
from docshelf.workspace import DocFile
from tests.support.gitrepo import Repo, write_shop_docs
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource
from tests.test_cli_index import DOCSHELF


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def embedding(done: int, *, to_embed: int = 1000, reused: int = 0) -> Progress:
    return Progress("embedding", 40, to_embed + reused, done, to_embed, reused)


def test_the_bar_shows_files_chunks_and_once_a_batch_is_done_the_rate_and_time_left() -> None:
    clock, written = Clock(), []
    bar = ProgressBar(written.append, clock)
    bar.update(Progress("reading", files=40, chunks=1200))
    bar.update(embedding(0, reused=200))
    clock.now += 8.0  # the model loads during the first batch: not counted in the rate
    bar.update(embedding(100, reused=200))
    clock.now += 10.0
    bar.update(embedding(300, reused=200))  # 200 chunks in 10 s: 20/s, 700 left: 35 s
    bar.finish()
    lines = [w.lstrip("\r").rstrip() for w in written]
    assert (
        lines[0]
        == f"reading   [{'-' * PROGRESS_BAR_WIDTH}] 40 files, 0/1200 chunks (0 embedded, 0 reused)"
    )
    assert "chunks/s" not in lines[2]  # one batch done: no pace yet
    assert lines[3].endswith("500/1200 chunks (300 embedded, 200 reused), 20.0 chunks/s, 35 s left")
    assert lines[3].startswith("embedding [##########--------------]")
    assert written[-1] == "\n"
    # Each redraw pads over the longer line before it.
    assert all(len(w) - 1 >= len(lines[i - 1]) for i, w in enumerate(written[1:-1], 1))


def test_the_time_left_counts_the_work_left_not_the_chunks_left() -> None:
    # Short texts come first: 100 chunks of 100 characters in 10 s, and 100 chunks of 1,200
    # characters left. By chunks that is 10 s; by work (120,000 characters at 1,000/s), 120 s.
    clock, written = Clock(), []
    bar = ProgressBar(written.append, clock)

    def report(done: int, work_done: int) -> Progress:
        return Progress("embedding", 40, 400, done, 300, 100, work_done, 140_000)

    bar.update(report(0, 0))
    bar.update(report(100, 10_000))
    clock.now += 10.0
    bar.update(report(200, 20_000))
    assert written[-1].rstrip().endswith("10.0 chunks/s, 2 min 00 s left")


def test_the_indexer_reports_its_work_in_characters_capped_at_the_window(tmp_path: Path) -> None:
    class Capped(FakeEmbedder):
        batch_text_chars = 50

    source = MemorySource()
    ref = source.add("r1", {"a.md": "# A\n\nshort", "b.md": "# B\n\n" + "long words " * 40})
    reports: list[Progress] = []
    with open_store(str(tmp_path / "s.sqlite3"), model_id=MODEL, dim=DIM) as store:
        indexer = Indexer(store, Capped(), source)
        indexer.index(ref, reports.append)
        indexer.close()
    embedding_reports = [p for p in reports if p.phase == "embedding"]
    short = len(embedding_input(file_chunks(DocFile("a.md", "# A\n\nshort", "markdown"))[0]))
    assert embedding_reports[0].work_total == short + 50
    assert embedding_reports[-1].work_done == short + 50


def test_the_bar_is_redrawn_at_most_every_tenth_of_a_second_but_every_phase_shows() -> None:
    clock, written = Clock(), []
    bar = ProgressBar(written.append, clock)
    bar.update(embedding(0))
    for done in range(10, 990, 10):  # 98 batches in no time: none redrawn
        bar.update(embedding(done))
    clock.now += 0.2
    bar.update(embedding(990))  # past the tenth of a second: redrawn
    bar.update(embedding(1000))  # the last batch always shows
    bar.update(Progress("writing", 40, 1000, 1000, 1000))
    assert len(written) == 4  # the first, the one the clock allowed, the last, writing
    assert "990/1000" in written[1]
    assert "1000/1000" in written[-2]
    assert written[-1].lstrip("\r").startswith("writing")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.2, "0 s"), (42.4, "42 s"), (59.6, "1 min 00 s"), (185, "3 min 05 s"), (3725, "1 h 02 min")],
)
def test_the_time_left_reads_as_a_person_says_it(seconds: float, text: str) -> None:
    assert clock_text(seconds) == text


def test_json_events_are_one_object_a_line_at_most_every_second_while_embedding() -> None:
    clock, written = Clock(), []
    events = ProgressEvents(written.append, clock)
    events.update(Progress("reading", files=40, chunks=1000))
    events.update(embedding(0))
    clock.now += 5.0
    events.update(embedding(100))
    for done in range(200, 1000, 100):  # 0.25 s apart: one in four is written
        clock.now += PROGRESS_EVENT_SECONDS / 4
        events.update(embedding(done))
    events.update(embedding(1000))
    events.update(Progress("writing", 40, 1000, 1000, 1000))
    events.update(Progress("done", 40, 1000, 1000, 1000))
    assert all(w.endswith("\n") and w.count("\n") == 1 for w in written)
    got = [json.loads(w) for w in written]
    assert [(e["phase"], e["embedded"]) for e in got] == [
        ("reading", 0),
        ("embedding", 0),
        ("embedding", 100),
        ("embedding", 500),
        ("embedding", 900),
        ("embedding", 1000),
        ("writing", 1000),
        ("done", 1000),
    ]
    assert got[0] == {
        "event": "progress",
        "phase": "reading",
        "files": 40,
        "chunks": 1000,
        "embedded": 0,
        "to_embed": 0,
        "reused": 0,
        "chunks_per_second": None,
        "seconds_left": None,
    }
    assert got[2]["chunks_per_second"] is None  # the first batch only starts the clock
    assert (got[3]["chunks_per_second"], got[3]["seconds_left"]) == (400.0, 1.2)  # 400 in 1 s
    assert got[-1]["seconds_left"] is None


def on_terminal(command: list[str]) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """Run `command` with stderr on a pseudo-terminal; what it drew there."""
    main, terminal = pty.openpty()
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
            timeout=120,
            check=False,
        )
        os.close(terminal)
        drawn = b""
        while True:
            try:
                part = os.read(main, 4096)
            except OSError:  # the terminal's other end is closed: all is read
                break
            if not part:
                break
            drawn += part
    finally:
        os.close(main)
    return done, drawn.decode().replace("\r\n", "\n")


def test_the_real_command_draws_the_bar_on_a_terminal_unless_told_otherwise(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "shop")
    write_shop_docs(repo)
    repo.commit("docs")

    def index(store: str, *more: str) -> list[str]:
        return [str(DOCSHELF), "index", str(repo.path), "--store", str(tmp_path / store), *more]

    done, drawn = on_terminal(index("a.sqlite3", "--embedder", "none"))
    assert done.returncode == 0
    assert done.stdout.decode().startswith("indexed ")  # the summary stays on stdout
    redraws = drawn.split("\r")
    assert redraws[0] == ""
    assert redraws[1].startswith("reading   [------------------------] 2 files, 0/2 chunks")
    assert redraws[-1].startswith("done      [########################] 2 files, 2/2 chunks")
    assert redraws[-1].endswith("\n")

    quiet, drawn = on_terminal(index("b.sqlite3", "--embedder", "none", "--progress", "none"))
    assert quiet.returncode == 0 and drawn == ""
    piped = subprocess.run(
        index("c.sqlite3", "--embedder", "none", "--progress", "bar", "--json"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert piped.returncode == 0 and json.loads(piped.stdout)["chunks"] == 2
    err = piped.stderr.decode()  # not as text: universal newlines would turn each \r into \n
    assert err.startswith("\rreading   [")
    assert err.endswith("\n") and "\rdone      [####" in err
