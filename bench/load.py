"""docs_search under load while the server syncs: concurrent MCP sessions over streamable HTTP
against `docshelf serve --http --sync-interval`, on SQLite and on PostgreSQL, while new commits
land in the repository and the server's background sync indexes and promotes them.

Run it from the repository root with

    .venv/bin/python bench/load.py                  # 32 sessions, 60 s, both stores
    .venv/bin/python bench/load.py --sessions 8 --seconds 20 --store sqlite

Data: a git repository (tests/support/load.py) of 8 Markdown pages (4 sections each) whose
every section holds the word releasemarkerN in release N; release 0 is committed before the
server starts, and a new release every `--commit-every` seconds during the run. A commit changes
every chunk, so each sync of one embeds the whole release.

Method: `docshelf serve REPO --http --port 0 --sync-interval S` (the installed console script,
the packaged all-MiniLM-L6-v2) on a fresh store: a SQLite file, or a new database of a PostgreSQL
16 with pgvector started from the `pgserver` package (data under /tmp). Once the server answers
from release 0 (its first sync indexed it), `--sessions` clients (the SDK's streamable HTTP
client; half of them handshake sessions, half 2026-07-28 sessionless requests) each call
docs_search (top_k 5, hybrid, ten fixed questions in turn) one call after another for
`--seconds`. Each call is timed on the client, from the request to the parsed result.

Checks, after the run: no call fails (transport error or error result); every answer names one
commit, the same in its text and its structured content, with no note, and holds 5 excerpts that
all carry that commit's marker and no other. The table counts the calls, the failures and the
wrong answers, the releases committed and the distinct commits answered from.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pgserver
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.load import Load, ReleaseRepo, percentile_ms, problem, serve, wait_for_ref

from report import cpu_model, markdown_table

DEFAULT_SESSIONS = 32
DEFAULT_SECONDS = 60.0

# A release every 10 s gives about five promotions in a minute's run, each indexed under load.
DEFAULT_COMMIT_EVERY = 10.0

# The shortest interval `docshelf serve` accepts: each commit is picked up within a second.
DEFAULT_SYNC_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class Outcome:
    store: str
    load: Load
    releases: dict[str, int]
    problems: list[str]
    errors_logged: int


def run_store(name: str, location: str, tmp: Path, args: argparse.Namespace) -> Outcome:
    repo = ReleaseRepo(tmp / f"repo-{name}")
    first = repo.release()
    sync = ("--sync-interval", str(args.sync_interval))
    with serve(repo.path, location, tmp / f"serve-{name}.log", *sync) as server:
        anyio.run(wait_for_ref, server.url, first)
        load = Load(server.url, args.sessions)

        async def until(load: Load) -> None:
            end = time.monotonic() + args.seconds
            next_commit = time.monotonic() + args.commit_every
            while (now := time.monotonic()) < end:
                if now >= next_commit:
                    await anyio.to_thread.run_sync(repo.release)
                    next_commit += args.commit_every
                await anyio.sleep(0.05)

        print(f"{name}: {args.sessions} sessions for {args.seconds:.0f} s ...", file=sys.stderr)
        anyio.run(load.run, until)
        logged = server.logged()
    problems = [why for a in load.answers if (why := problem(a, repo.releases)) is not None]
    errors = sum(1 for line in logged.splitlines() if " ERROR " in line or "Traceback" in line)
    return Outcome(name, load, dict(repo.releases), problems, errors)


def postgres_location(data: Path) -> tuple[str, pgserver.PostgresServer]:
    # Not under the run's temporary directory: as root, pgserver runs PostgreSQL as its own
    # user, which must own the data directory and reach it.
    server = pgserver.get_server(data, cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute("CREATE DATABASE docshelf_load")
    return server.get_uri("docshelf_load"), server


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    parser.add_argument("--store", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--commit-every", type=float, default=DEFAULT_COMMIT_EVERY)
    parser.add_argument("--sync-interval", type=float, default=DEFAULT_SYNC_INTERVAL)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    stores = ["sqlite", "postgresql"] if args.store == "both" else [args.store]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="docshelf-load-bench-", dir="/tmp") as tmp_name:
        tmp = Path(tmp_name)
        for name in stores:
            if name == "sqlite":
                outcomes.append(run_store(name, str(tmp / "store.sqlite3"), tmp, args))
                continue
            data = Path(tempfile.mkdtemp(prefix="docshelf-load-pg-", dir="/tmp"))
            try:
                location, pg = postgres_location(data)
                try:
                    outcomes.append(run_store(name, location, tmp, args))
                finally:
                    pg.cleanup()
            finally:
                shutil.rmtree(data, ignore_errors=True)
    command = " ".join(["bench/load.py", *map(shlex.quote, sys.argv[1:])])
    print(f"command: .venv/bin/python {command}")
    print(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    print(
        f"load: {args.sessions} sessions for {args.seconds:.0f} s, a release every "
        f"{args.commit_every:.0f} s, --sync-interval {args.sync_interval:g}, top_k 5, "
        "the packaged all-MiniLM-L6-v2"
    )
    print()
    rows = []
    for o in outcomes:
        seconds = [a.seconds for a in o.load.answers]
        failed = sum(1 for a in o.load.answers if a.failure is not None)
        rows.append(
            [
                o.store,
                str(len(seconds)),
                f"{len(seconds) / args.seconds:.0f}",
                f"{percentile_ms(seconds, 0.5):.0f}",
                f"{percentile_ms(seconds, 0.99):.0f}",
                str(failed),
                str(len(o.problems) - failed),
                str(len(o.releases)),
                str(len(o.load.refs())),
                str(o.errors_logged),
            ]
        )
    columns = [
        "store",
        "calls",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "failed",
        "wrong",
        "releases",
        "commits seen",
        "server errors",
    ]
    print(markdown_table(columns, rows))
    print()
    bad = 0
    for o in outcomes:
        bad += len(o.problems) + o.errors_logged
        verdict = "every answer whole, from one commit" if not o.problems else "FAILED"
        print(f"- {o.store}: {verdict}")
        for why in sorted(set(o.problems))[:5]:
            print(f"  - {why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
