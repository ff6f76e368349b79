"""What the benchmarks share: Markdown tables, the machine's facts, and how they commit."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

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
