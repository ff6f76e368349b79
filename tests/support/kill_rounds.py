"""SIGKILL of a real `docshelf index` at random points of its run, shared by tests/test_faults.py
(a few rounds per store) and bench/kill.py (many).

A git repository has two commits of the same size and no chunk in common, A and B. The store
starts with A current; each round indexes the other commit with the real command line, its
embeddings from a real OpenAI-compatible HTTP endpoint on 127.0.0.1 (tests/embedders/
openai_server.py serving tests.support.indexing's deterministic vectors, so the model costs
nothing), and
kills the process with SIGKILL at a point drawn from a seeded random generator:

- in embedding: when the endpoint receives batch b (uniform over the batches), plus a delay
  uniform over one batch's time;
- in writing: after the last batch is answered, a delay uniform over WRITE_WINDOW_SPAN times
  what the calibration run took from there to making its ref current (the write of the rows,
  then the switch), so most kills land in the write and a few after it;
- mid-write (asked for by name, never drawn): inside the one transaction that writes the ref's
  rows, seen open at the kill. From the last batch's answer on, the run is frozen every
  STEP_SECONDS and the store looked at, and the kill comes at the k-th look that finds that
  transaction open, k drawn from MID_WRITE_LOOKS: fewer than the looks a write stays open (one
  that ends first is run again, killed at its first look), and mostly more than a write that
  commits its rows as it goes needs to show some. Every look checks that none of the ref's rows
  is committed, so such a write is killed there, and fails the round.

Every kill freezes the process (SIGSTOP) first and looks at the store while nothing in it can
move, then SIGKILL lands exactly there: the round records whether the transaction that writes the
killed ref's rows was open (SQLite: the run holds the database's write lock and none of the ref's
rows is committed; PostgreSQL: its session holds a write lock on the chunks table and none of
the rows is committed; a statement the server is still running is let finish first, so a COMMIT
already sent is seen through).

After each kill, and after each clean run, the keyword statistics agree with the chunk rows
(tests/support/text_stats.py: PostgreSQL's per-ref lists and totals, SQLite's FTS5 index).

After each kill the store must open; the killed ref must hold all of its rows or none; the current
ref must be the previous one (whole, and a search through docs_search's Service must answer from
it) unless the run had made the new one current before the kill, which a kill inside the write
cannot have; and the next run of the command must index the killed commit cleanly, which makes it
current for the next round.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docshelf.embedders.openai_http import OpenAIEmbedder
from docshelf.errors import StoreError
from docshelf.stores import open_store
from tests.embedders.openai_server import EmbeddingsServer, Reply
from tests.support.gitrepo import Repo
from tests.support.indexing import MODEL, FakeEmbedder, section_doc
from tests.support.service import build_service
from tests.support.text_stats import check_text_statistics

DOCSHELF = Path(sys.executable).with_name("docshelf")

# Chunks per file of the two commits.
CHUNKS_PER_FILE = 10

# Seconds the endpoint takes per batch, so that the embedding phase lasts long enough to land
# kills in it (a batch of 64 of these vectors is computed in a few milliseconds).
BATCH_SECONDS = 0.02

# The two commits' words: each chunk holds its commit's word, so a search shows which answered.
WORDS = {"A": "alpha", "B": "bravo"}

# Seconds a run may take before the rounds give up on it.
RUN_TIMEOUT_SECONDS = 300.0

# How often the killer looks at the endpoint's requests.
POLL_SECONDS = 0.001

# The phases a kill is drawn from when none is asked for (bench/kill.py's rounds).
PHASES = ("embedding", "writing")

# A kill inside the open transaction that writes the ref's rows.
MID_WRITE = "mid-write"

# Kills in writing are drawn over this many times the calibration run's write (from the last
# batch's answer to the new ref becoming current), so that a few land after it.
WRITE_WINDOW_SPAN = 1.25

# Seconds a mid-write kill lets the run go between two looks at the store, by store. The run is
# frozen during a look, so it advances by about this much of its own time from one to the next
# (on PostgreSQL the server goes on with what it was sent: the COPY of 500 rows, which builds the
# HNSW index as it goes, takes it most of a second).
STEP_SECONDS = {"sqlite": 0.0001, "postgresql": 0.005}

# A mid-write kill comes at a look drawn from these (by store) of those that find the write open.
# On a busy two-core machine a write of 500 rows stayed open for 14 to 240 looks on SQLite, whose
# client does the work, and for 100 to 160 on PostgreSQL, whose server does; one broken to commit
# row by row showed committed rows within 6 looks on SQLite (mostly) and 2 on PostgreSQL. A write
# that ends before the drawn look is checked like any kill, and the round is run again, killed at
# the first look that finds the write open.
MID_WRITE_LOOKS = {"sqlite": (6, 12), "postgresql": (2, 50)}

# Seconds a look at PostgreSQL waits, the run frozen, for the server to finish a statement the
# client had sent (a COPY waits for the client instead, and counts as open).
SETTLE_SECONDS = 10.0


@dataclass(frozen=True)
class KillPoint:
    phase: str  # "embedding", "writing" or "mid-write"
    batch: int  # embedding: the batch whose arrival starts the delay
    delay: float  # seconds after that moment (mid-write: the first look at the store)
    looks: int = 0  # mid-write: the look, of those that find the write open, that kills


@dataclass(frozen=True)
class Round:
    store: str  # "sqlite" or "postgresql"
    number: int
    target: str  # "A" or "B": the commit whose run was killed
    point: KillPoint
    killed_at: float  # seconds after the process started
    in_write: bool  # the transaction that writes the killed ref's rows was open at the kill
    outcome: str  # "none", "all, not current" or "all, current"
    next_run_seconds: float


class KillRounds:
    """The repository, the endpoint and the store of one series of rounds."""

    def __init__(self, workdir: Path, location: str, store_kind: str, chunks: int) -> None:
        self.location = location
        self.store_kind = store_kind
        files = max(chunks // CHUNKS_PER_FILE, 1)
        self.chunks = files * CHUNKS_PER_FILE
        self.repo = Repo(workdir / "repo")
        self.commits: dict[str, str] = {}
        for name, word in WORDS.items():
            for path in list((self.repo.path / "docs").glob("*.md")):
                path.unlink()
            for i in range(files):
                self.repo.write(
                    f"docs/{word}{i}.md",
                    section_doc(f"{word.title()} page {i}", CHUNKS_PER_FILE, f"{word} words"),
                )
            self.commits[name] = self.repo.commit(f"commit {name}")
        self.workspace = str(self.repo.path.resolve())
        self.endpoint = EmbeddingsServer(FakeEmbedder()).start()  # type: ignore[arg-type]
        self.endpoint.fallback = Reply(delay=BATCH_SECONDS)
        self.current = "A"
        self.batches = 0
        self.write_seconds = 0.0

    def close(self) -> None:
        self.endpoint.stop()

    def command(self, target: str) -> list[str]:
        return [
            str(DOCSHELF),
            "index",
            str(self.repo.path),
            "--ref",
            self.commits[target],
            "--store",
            self.location,
            "--embedder",
            "openai",
            "--base-url",
            self.endpoint.base_url,
            "--model",
            MODEL,
            "--json",
        ]

    def _start(self, target: str) -> tuple[subprocess.Popen[str], int, float]:
        seen = len(self.endpoint.seen)
        process = subprocess.Popen(
            self.command(target),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        return process, seen, time.monotonic()

    def calibrate(self) -> None:
        """Index A with the command, uninterrupted: the batches of a run, and the time from the
        last batch's answer to the moment A became current (writing and making current)."""
        process, seen, _ = self._start("A")
        last = None
        total = None
        became_current = None
        store = None
        try:
            while process.poll() is None:
                now = time.monotonic()
                count = len(self.endpoint.seen) - seen
                if count != total:
                    total, last = count, now
                if store is None:
                    with contextlib.suppress(StoreError):  # not created yet
                        store = open_store(self.location, model_id=None, dim=None)
                elif became_current is None and store.current(self.workspace) is not None:
                    became_current = now
                time.sleep(POLL_SECONDS)
        finally:
            if store is not None:
                store.close()
        out, err = process.communicate()
        assert process.returncode == 0, err
        done = json.loads(out)
        assert done["chunks"] == self.chunks and done["embedded"] == self.chunks, done
        # The first request is the probe that learns the width.
        self.batches = len(self.endpoint.seen) - seen - 1
        assert last is not None and became_current is not None and self.batches >= 1
        self.write_seconds = max(became_current - last - BATCH_SECONDS, BATCH_SECONDS)
        self.current = "A"

    def draw(self, rng: random.Random, phase: str | None = None) -> KillPoint:
        phase = phase or rng.choice(PHASES)
        if phase == "embedding":
            return KillPoint(phase, rng.randint(1, self.batches), rng.uniform(0, BATCH_SECONDS))
        if phase == MID_WRITE:
            looks = rng.randint(*MID_WRITE_LOOKS[self.store_kind])
            return KillPoint(phase, self.batches, BATCH_SECONDS, looks)
        assert phase == "writing", phase
        window = self.write_seconds * WRITE_WINDOW_SPAN
        return KillPoint(phase, self.batches, BATCH_SECONDS + rng.uniform(0, window))

    def run_round(self, number: int, point: KillPoint) -> Round:
        done = self._run_round(number, point)
        if point.phase == MID_WRITE and not done.in_write and point.looks > 1:
            # The write ended before the drawn look (a run faster than most): the round is run
            # again, killed at the first look that finds the write open.
            done = self._run_round(number, dataclasses.replace(point, looks=1))
        return done

    def _run_round(self, number: int, point: KillPoint) -> Round:
        previous = self.current
        target = "B" if previous == "A" else "A"
        process, seen, started = self._start(target)
        # The probe, then the batches: batch b is request b + 1 of this run.
        while len(self.endpoint.seen) - seen < point.batch + 1:
            if process.poll() is not None:
                _, err = process.communicate()
                raise AssertionError(f"round {number}: the run ended before the kill: {err}")
            assert time.monotonic() - started < RUN_TIMEOUT_SECONDS
            time.sleep(POLL_SECONDS)
        time.sleep(point.delay)
        with _WriteProbe(self, self.commits[target]) as probe:
            looks_open = 0
            while True:
                frozen = _freeze(process)
                killed_at = time.monotonic() - started
                state = probe.look() if frozen else "over"
                if point.phase != MID_WRITE or state == "over":
                    break
                looks_open += state == "open"
                if looks_open == point.looks:
                    break
                os.kill(process.pid, signal.SIGCONT)
                assert time.monotonic() - started < RUN_TIMEOUT_SECONDS
                time.sleep(STEP_SECONDS[self.store_kind])
            process.send_signal(signal.SIGKILL)
            process.communicate()
        in_write = state == "open"
        outcome = self.check_after_kill(number, previous, target, in_write=in_write)
        ran = time.monotonic()
        self.index_cleanly(number, target)
        return Round(
            store=self.store_kind,
            number=number,
            target=target,
            point=point,
            killed_at=killed_at,
            in_write=in_write,
            outcome=outcome,
            next_run_seconds=time.monotonic() - ran,
        )

    def check_after_kill(
        self, number: int, previous: str, target: str, *, in_write: bool = False
    ) -> str:
        where = f"round {number} ({self.store_kind})"
        old, new = self.commits[previous], self.commits[target]
        with open_store(self.location, model_id=None, dim=None) as store:
            check_text_statistics(self.location)
            counts = store.ref_counts(self.workspace)
            current = store.current(self.workspace)
            killed = counts.get(new, 0)
            assert killed in (0, self.chunks), f"{where}: the killed ref holds {killed} rows"
            assert current in (old, new), f"{where}: current is {current}"
            if in_write:  # making it current is a later transaction
                assert current == old, f"{where}: killed in the write, yet current is {current}"
            if current == old:
                assert counts.get(old) == self.chunks, f"{where}: the previous ref: {counts}"
                self.assert_answers_from(store, previous, where)
                return "none" if killed == 0 else "all, not current"
            assert killed == self.chunks
            self.assert_answers_from(store, target, where)
            return "all, current"

    def assert_answers_from(self, store: object, name: str, where: str) -> None:
        word = WORDS[name]
        with OpenAIEmbedder(self.endpoint.base_url, MODEL) as embedder:
            service = build_service(store, embedder, self.workspace)
            answer = service.search(f"{word} words paragraph 3", 5)
        assert answer.ref == self.commits[name], f"{where}: answered from {answer.ref}"
        assert len(answer.hits) == 5, f"{where}: {len(answer.hits)} hits"
        assert all(word in hit.content for hit in answer.hits), f"{where}: {answer.hits}"

    def index_cleanly(self, number: int, target: str) -> None:
        done = subprocess.run(
            self.command(target),
            capture_output=True,
            text=True,
            check=False,
            timeout=RUN_TIMEOUT_SECONDS,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        where = f"round {number} ({self.store_kind})"
        assert done.returncode == 0, f"{where}: the next run failed: {done.stderr}"
        result = json.loads(done.stdout)
        assert result["ref"] == self.commits[target] and result["chunks"] == self.chunks, result
        with open_store(self.location, model_id=None, dim=None) as store:
            check_text_statistics(self.location)
            assert store.current(self.workspace) == self.commits[target], where
            assert store.ref_counts(self.workspace) == {self.commits[target]: self.chunks}, where
            self.assert_answers_from(store, target, where)
        self.current = target


def _freeze(process: subprocess.Popen[str]) -> bool:
    """Stop every thread of the run (SIGSTOP) and wait until all are stopped; False when the run
    had ended. The child is not reaped: Popen still collects its status."""
    os.kill(process.pid, signal.SIGSTOP)
    seen = os.waitid(os.P_PID, process.pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
    return seen is not None and seen.si_code == os.CLD_STOPPED


class _WriteProbe:
    """Looks at the store, the run frozen, for the transaction that writes `ref`'s rows: "before"
    (not open yet), "open" (open, and none of the rows is committed) or "over" (rows of the ref
    are committed: all of them, or, from a broken write, some, which the check after the kill
    tells)."""

    def __init__(self, series: KillRounds, ref: str) -> None:
        self._series = series
        self._ref = ref
        self._sqlite: sqlite3.Connection | None = None
        self._pg: Any = None  # a psycopg connection: bench/kill.py runs without the extra

    def __enter__(self) -> _WriteProbe:
        return self

    def __exit__(self, *_: object) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        if self._pg is not None:
            self._pg.close()

    def look(self) -> str:
        if self._series.store_kind == "sqlite":
            return self._look_sqlite()
        return self._look_postgres()

    def _look_sqlite(self) -> str:
        if self._sqlite is None:
            path = Path(self._series.location).expanduser()
            self._sqlite = sqlite3.connect(path, timeout=0, isolation_level=None)
        conn = self._sqlite
        try:
            (committed,) = conn.execute(
                "SELECT count(*) FROM chunks WHERE workspace = ? AND ref = ?",
                (self._series.workspace, self._ref),
            ).fetchone()
            if committed:
                return "over"
            try:  # after the last batch, the run's one write transaction before its rows are in
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:  # busy: the frozen run holds the write lock
                return "open"
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError:  # busy reading (the WAL being reset): look again later
            pass
        return "before"

    def _look_postgres(self) -> str:
        if self._pg is None:
            import psycopg  # noqa: PLC0415 (only on PostgreSQL)

            self._pg = psycopg.connect(self._series.location, autocommit=True)
        conn = self._pg
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            # The sessions writing the chunks table (the run's, from its DELETE to its COMMIT),
            # and what each does: a COPY waits for the frozen client's rows; any other statement
            # the server is running, a COMMIT among them, is let finish first.
            writers = conn.execute(
                "SELECT a.state, a.query FROM pg_locks l "
                "JOIN pg_class c ON c.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE c.relname = 'docs_chunks' AND l.mode = 'RowExclusiveLock' AND l.granted "
                "AND l.pid <> pg_backend_pid() "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchall()
            running = [q for state, q in writers if state == "active" and not _is_copy(q)]
            if not running:
                break
            assert time.monotonic() < deadline, f"the server kept running {running}"
            time.sleep(0.001)
        (committed,) = conn.execute(
            "SELECT count(*) FROM docs_chunks WHERE workspace = %s AND ref = %s",
            (self._series.workspace, self._ref),
        ).fetchone()
        if committed:
            return "over"
        return "open" if writers else "before"


def _is_copy(query: str) -> bool:
    return query.lstrip().upper().startswith("COPY")


def run_rounds(
    workdir: Path,
    location: str,
    store_kind: str,
    *,
    chunks: int,
    rounds: int,
    rng: random.Random,
    phases: list[str] | None = None,
    report: Callable[[Round], None] | None = None,
) -> list[Round]:
    """Calibrate, then kill `rounds` runs at points drawn from `rng` (phase by phase from
    `phases` when given); every check is an assertion."""
    series = KillRounds(workdir, location, store_kind, chunks)
    try:
        series.calibrate()
        done = []
        for number in range(1, rounds + 1):
            phase = phases[(number - 1) % len(phases)] if phases else None
            result = series.run_round(number, series.draw(rng, phase))
            if report is not None:
                report(result)
            done.append(result)
        return done
    finally:
        series.close()
