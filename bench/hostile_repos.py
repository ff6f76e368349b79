"""Hostile repositories at full size: a 1 GiB file, 100k tiny files and a doc 200 directories deep,
in a git repository and in a plain directory, read and indexed the way `docshelf index` does.

Run it from the repository root with

    .venv/bin/python bench/hostile_repos.py                 # every case, both kinds
    .venv/bin/python bench/hostile_repos.py --files 20000   # fewer tiny files
    .venv/bin/python bench/hostile_repos.py --markdown      # the table as Markdown

Options: `--files N` tiny files (default 100,000), `--big-bytes N` the big file's size (default
1 GiB), `--depth N` directory levels (default 200), `--kinds git,directory`.

Data, built under /tmp before anything is timed and removed after each case:
- 1 GiB file: `docs/huge.md` of that many bytes beside one good doc. In a plain directory it is
  sparse (no disk blocks); in git it is a real 1 GiB blob of zeros, streamed into the object
  store by `git fast-import` (which stores a blob over its big-file threshold without holding it).
- tiny files: `docs/tiny/NNNNNN.md`, all in one directory, each a heading and a line.
- deep: `docs/` then `--depth` directories of 43-character names then `bottom.md`, past PATH_MAX
  (written one directory descriptor at a time; committed with fast-import, no work tree).

Method: each case is measured in a fresh Python process, so its peak RSS is its own: it opens the
workspace as the CLI does (`open_workspace(ROOT, docs=["docs"])`), syncs, and indexes the ref with
the real Indexer into a new SQLite store, the embedder the tests' deterministic fake
(tests/support/indexing.py: a vector from a hash of the text, no model). `seconds` is open, sync and
index together. `peak RSS` is that process's VmHWM (imports alone in brackets),
`git RSS` the largest of the processes it started (git; Linux counts each from its fork, so it is
never below the Python process's size at that moment). Then the store is checked: every good
file has its chunks (`outcome` says how many files were indexed, or what is missing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The fake embedder lives with the tests, one folder up from here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.indexing import DIM, MODEL, FakeEmbedder

from docshelf.indexer import Indexer
from docshelf.stores import open_store
from docshelf.workspace import open_workspace
from report import GIT_ENV, markdown_table

DEFAULT_FILES = 100_000
GIB = 1024**3
DEFAULT_BIG_BYTES = GIB
DEFAULT_DEPTH = 200
KINDS = ("git", "directory")
# Directory names of this length put a 200-level path past PATH_MAX (4096 bytes).
DEEP_NAME = "n" * 40
# The big blob is streamed to git in pieces of this size.
STREAM_PIECE = 1024 * 1024
KIB = 1024
MIB = 1024 * 1024
GOOD = "# Good\n\nThe one doc beside the hostile ones.\n"


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    size: str
    files: dict[str, bytes]  # what is written or committed besides the big file
    big_bytes: int = 0  # the size of docs/huge.md, when there is one
    good: int = 0  # how many files must be indexed


def cases(files: int, big_bytes: int, depth: int) -> list[Case]:
    deep = "/".join(["docs", *(f"{DEEP_NAME}{i:03d}" for i in range(depth)), "bottom.md"])
    tiny = {f"docs/tiny/{i:06d}.md": f"# Tiny {i}\n\nfile {i}\n".encode() for i in range(files)}
    tiny_bytes = sum(len(data) for data in tiny.values())
    big = [
        Case(
            f"{big_bytes // GIB} GiB file" if big_bytes % GIB == 0 else f"{big_bytes:,}-byte file",
            f"{big_bytes:,} bytes",
            {"docs/ok.md": GOOD.encode()},
            big_bytes=big_bytes,
            good=1,
        ),
    ]
    many = [Case(f"{files:,} tiny files", f"{tiny_bytes:,} bytes", tiny, good=files)]
    nested = [
        Case(
            f"{depth} nested directories",
            f"{len(deep.encode()):,}-byte path",
            {"docs/ok.md": GOOD.encode(), deep: b"# Bottom\n\nvery deep\n"},
            good=2,
        ),
    ]
    return big + (many if files else []) + nested


def build_git(root: Path, case: Case) -> None:
    subprocess.run(
        ["git", "init", "--quiet", "--initial-branch=main", str(root)], check=True, env=GIT_ENV
    )
    with subprocess.Popen(
        # Level 1 compression: the blob is only data to skip, and level 6 takes a minute a GiB.
        ["git", "-C", str(root), "-c", "pack.compression=1", "fast-import", "--quiet"],
        stdin=subprocess.PIPE,
        env=GIT_ENV,
    ) as importer:
        assert importer.stdin is not None
        write = importer.stdin.write
        write(b"commit refs/heads/main\ncommitter bench <bench@docshelf.invalid> 0 +0000\n")
        write(b"data 5\ncases\n")
        for path, data in case.files.items():
            write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        if case.big_bytes:
            write(b"M 100644 inline docs/huge.md\ndata %d\n" % case.big_bytes)
            zeros = bytes(STREAM_PIECE)
            left = case.big_bytes
            while left:
                write(zeros[: min(left, STREAM_PIECE)])
                left -= min(left, STREAM_PIECE)
            write(b"\n")
        importer.stdin.close()
    if importer.returncode != 0:
        raise SystemExit(f"git fast-import failed with status {importer.returncode}")


def build_directory(root: Path, case: Case) -> None:
    """Write the case one directory descriptor at a time: a deep path is past PATH_MAX."""
    root.mkdir()
    opened = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY)}

    def parent(path: str) -> tuple[int, str]:
        folder, _, name = path.rpartition("/")
        if folder not in opened:
            above, part = parent(folder)
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=above)
            opened[folder] = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=above)
        return opened[folder], name

    try:
        for path, data in case.files.items():
            fd = _create(*parent(path))
            os.write(fd, data)
            os.close(fd)
        if case.big_bytes:
            fd = _create(*parent("docs/huge.md"))
            os.ftruncate(fd, case.big_bytes)  # sparse
            os.close(fd)
    finally:
        for fd in opened.values():
            os.close(fd)


def _create(folder: int, name: str) -> int:
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=folder)


def measure(root: str, good: int) -> dict[str, Any]:
    """Open, sync and index the workspace at `root` (in this fresh process); check the store."""
    before = _peak_kib()
    store_dir = Path(tempfile.mkdtemp(prefix="docshelf-hostile-store-", dir="/tmp"))
    try:
        started = time.perf_counter()
        ws = open_workspace(root, docs=["docs"], mirrors_dir=store_dir / "mirrors")
        with open_store(str(store_dir / "store.db"), model_id=MODEL, dim=DIM) as store:
            indexer = Indexer(store, FakeEmbedder(), ws)
            result = indexer.index(ws.sync())
            indexer.close()
        seconds = time.perf_counter() - started
        with sqlite3.connect(store_dir / "store.db") as conn:
            paths, rows = conn.execute(
                "SELECT count(DISTINCT path), count(*) FROM chunks WHERE ref = ?", (result.ref,)
            ).fetchone()
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)
    if paths == good and result.files == good and rows == result.chunks:
        outcome = f"ok: {paths:,} files, {rows:,} chunks indexed"
    else:
        outcome = f"FAILED: {paths:,} of {good:,} files in the store, {rows:,} chunks"
    return {
        "outcome": outcome,
        "ok": outcome.startswith("ok"),
        "skipped": dict(Counter(s.reason for s in result.skipped)),
        "seconds": seconds,
        "peak_kib": _peak_kib(),
        "imports_kib": before,
        "git_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }


def _peak_kib() -> int:
    """This process's peak resident set: VmHWM, which exec resets (ru_maxrss keeps the size of
    the process this one was forked from)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _timed(build: Callable[[Path, Case], None], root: Path, case: Case) -> float:
    started = time.perf_counter()
    build(root, case)
    return time.perf_counter() - started


def run_case(kind: str, case: Case) -> tuple[float, dict[str, Any]]:
    """Build the case under /tmp, measure it in a fresh process, remove it."""
    work = Path(tempfile.mkdtemp(prefix="docshelf-hostile-", dir="/tmp"))
    try:
        root = work / kind
        setup = _timed(build_git if kind == "git" else build_directory, root, case)
        done = subprocess.run(
            [sys.executable, __file__, "--measure", str(root), str(case.good)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            return setup, {"outcome": f"FAILED: {done.stderr.strip()[-300:]}", "ok": False}
        return setup, json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--big-bytes", type=int, default=DEFAULT_BIG_BYTES)
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--measure", nargs=2, metavar=("ROOT", "GOOD"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]))))
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or any(k not in KINDS for k in kinds):
        parser.error(f"--kinds takes {', '.join(KINDS)}")

    columns = (
        "case",
        "kind",
        "size",
        "outcome",
        "skipped (reason: count)",
        "seconds",
        "peak RSS MiB (imports)",
        "git RSS MiB",
        "setup s",
    )
    rows: list[tuple[str, ...]] = []
    failed = False
    for case in cases(args.files, args.big_bytes, args.depth):
        for kind in kinds:
            setup, got = run_case(kind, case)
            failed = failed or not got["ok"]
            rows.append(tuple(_cells(case, kind, setup, got)))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)

    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; setup is not in seconds")
    if args.markdown:
        print(markdown_table(columns, rows))
    else:
        widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
        for row in [columns, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return 1 if failed else 0


def _cells(case: Case, kind: str, setup: float, got: dict[str, Any]) -> Iterator[str]:
    yield from (case.name, kind, case.size, got["outcome"])
    if "seconds" not in got:
        yield from ("", "", "", "", f"{setup:.1f}")
        return
    skipped = "; ".join(f"{reason}: {n}" for reason, n in sorted(got["skipped"].items()))
    yield skipped or "none"
    yield f"{got['seconds']:.2f}"
    yield f"{got['peak_kib'] / KIB:.0f} ({got['imports_kib'] / KIB:.0f})"
    yield f"{got['git_kib'] / KIB:.0f}"
    yield f"{setup:.1f}"


if __name__ == "__main__":
    sys.exit(main())
