"""What the benchmarks share: Markdown tables, the machine's facts, how they commit, and a
PostgreSQL server of their own."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

# Benchmark commits: a fixed identity, and none of the user's or the system's git settings.
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@docshelf.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@docshelf.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    # The first column is a name; every other one holds a number and is right-aligned.
    align = ["---", *("---:" for _ in columns[1:])]
    widths = [max(len(r[i]) for r in [columns, align, *rows]) for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    return "\n".join(line(r) for r in [columns, align, *rows])


def print_table(columns: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool) -> None:
    """Print a table: as Markdown (for BENCHMARKS.md), or as aligned plain columns."""
    if markdown:
        print(markdown_table(columns, rows) + "\n")
        return
    widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
    for r in [columns, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


@contextmanager
def postgres_server() -> Iterator[Any]:
    """PostgreSQL from pgserver as tests/conftest.py starts it: data under /tmp, stopped and
    removed when the block ends."""
    import pgserver  # noqa: PLC0415 (only for the PostgreSQL runs)

    data = Path(tempfile.mkdtemp(prefix="docshelf-bench-pg-", dir="/tmp"))
    server = pgserver.get_server(data, cleanup_mode="stop")  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def worktree(repo: Path, rev: str, dest: Path) -> Iterator[Path]:
    """A git worktree of `rev` of `repo` at `dest` (its `src` runs the code of `rev`), removed on
    leaving: a benchmark's baseline column, measured in the same run as the working tree's."""
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", "--quiet", str(dest), rev],
        check=True,
    )
    try:
        yield dest
    finally:
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "remove", "--force", str(dest)], check=False
        )


def worker_result(script: str, argument: str, src: Path | None) -> dict[str, Any]:
    """Run `script --worker ARGUMENT` in a fresh interpreter that imports docshelf from `src`
    (a baseline worktree's) or, when None, as installed; the JSON object its stdout ends with.
    Its stderr (progress, errors) passes through."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, script, "--worker", argument],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} --worker {argument} failed (exit {done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def server_memory(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def serve_pid() -> int:
    """The `docshelf serve` process this process started (a stdio client starts it as a child);
    RuntimeError when there is none."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and b"serve" in cmdline:
            return int(entry.name)
    raise RuntimeError("the docshelf serve process was not found among this process's children")
