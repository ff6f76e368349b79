"""SIGKILL of a real `docshelf index` at random points of a large index, on each store: the
store opens afterwards, the previous ref serves, the killed ref has all of its rows or none, and
the next run indexes it cleanly.

Run it from the repository root with

    .venv/bin/python bench/kill.py                          # 20 rounds on each store
    .venv/bin/python bench/kill.py --rounds 50 --store sqlite --chunks 5000 --seed 1234

Options: `--rounds N` kills per store (default 20), `--store sqlite|postgresql|both` (default
both), `--chunks N` the size of each of the two commits (default 3000), `--seed N` the random
generator's seed (default: a new one, printed; give it again to draw the same kill points).

Data: a git repository made here with two commits of `--chunks` chunks each and no chunk in
common; files of 10 one-paragraph sections. Embeddings come from a real OpenAI-compatible HTTP
endpoint on 127.0.0.1 (tests/embedders/openai_server.py) serving deterministic 16-dimensional
vectors, with BATCH_SECONDS per request of 64 texts; `docshelf index` reaches it with
`--embedder openai --base-url`. The SQLite store is a file under /tmp; PostgreSQL 16 + pgvector
comes from `pgserver`, its data under /tmp, stopped and removed at the end.

Method (tests/support/kill_rounds.py, which the test suite runs for a few rounds): one uninterrupted
calibration run per store counts the run's batches and times its write (from the last batch's
answer to the moment its ref is current, watched from this process). Each round starts `docshelf
index` for the commit that is not current and kills it with SIGKILL at a drawn point: half the
rounds (drawn) in embedding, at the arrival of a uniformly drawn batch plus up to one batch's
time; the rest in writing, uniformly over 1.25 times the calibrated write. Then, in this
process: the store opens; the killed ref holds 0 or all of its rows; the current ref is the
previous one, whole, and a search through the Searcher that docs_search uses answers from it
with its words (or, when the kill came after the run made the new ref current, the new one,
whole); and the next `docshelf index` of the killed
commit succeeds, holds exactly that ref, and answers from it. Any failed check stops the run
with an assertion naming the round. Outcomes: "none" (the killed ref left nothing), "all, not
current" (written, killed before it became current), "all, current" (killed after).
"""

from __future__ import annotations

import argparse
import platform
import random
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.kill_rounds import BATCH_SECONDS, Round, run_rounds

from report import cpu_model, markdown_table, version

DEFAULT_ROUNDS = 20
DEFAULT_CHUNKS = 3000


@contextmanager
def postgres_database() -> Iterator[str]:
    import pgserver  # noqa: PLC0415 (only with --store postgresql)
    import psycopg  # noqa: PLC0415

    data_dir = Path(tempfile.mkdtemp(prefix="docshelf-bench-kill-pg-", dir="/tmp"))
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE docshelf_kill")
        yield str(server.get_uri("docshelf_kill"))
    finally:
        server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)


@contextmanager
def store_location(kind: str, workdir: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield str(workdir / "docshelf.sqlite3")
    else:
        with postgres_database() as url:
            yield url


def row(result: Round) -> list[str]:
    return [
        f"{result.store} {result.number}",
        result.target,
        result.point.phase,
        str(result.point.batch),
        f"{result.point.delay * 1000:.0f}",
        f"{result.killed_at:.3f}",
        result.outcome,
        f"{result.next_run_seconds:.2f}",
    ]


COLUMNS = [
    "round",
    "killed",
    "phase",
    "batch",
    "delay ms",
    "killed at s",
    "outcome",
    "next run s",
]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--store", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    kinds = ["sqlite", "postgresql"] if args.store == "both" else [args.store]
    print(
        f"bench/kill.py --rounds {args.rounds} --store {args.store} --chunks {args.chunks} "
        f"--seed {seed}"
    )
    print(
        f"{cpu_model()}, Python {platform.python_version()}, docshelf {version('docshelf')}, "
        f"pgserver {version('pgserver')}; endpoint {BATCH_SECONDS * 1000:.0f} ms per batch"
    )
    rng = random.Random(seed)
    results: list[Round] = []
    started = time.monotonic()
    for kind in kinds:
        workdir = Path(tempfile.mkdtemp(prefix=f"docshelf-bench-kill-{kind}-", dir="/tmp"))
        try:
            with store_location(kind, workdir) as location:
                results += run_rounds(
                    workdir,
                    location,
                    kind,
                    chunks=args.chunks,
                    rounds=args.rounds,
                    rng=rng,
                    report=lambda r: print(f"  {' | '.join(row(r))}", flush=True),
                )
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(markdown_table(COLUMNS, [row(r) for r in results]))
    print()
    summary = Counter((r.store, r.point.phase, r.outcome) for r in results)
    print(
        markdown_table(
            ["store, phase, outcome", "rounds"],
            [[", ".join(key), str(n)] for key, n in sorted(summary.items())],
        )
    )
    print()
    print(
        f"{len(results)} rounds, every check passed, in {time.monotonic() - started:.0f} s "
        f"(seed {seed})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
