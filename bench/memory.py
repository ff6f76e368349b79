"""Peak memory of `docshelf index` at three corpus sizes: does it grow with the corpus?

Run it from the repository root with

    .venv/bin/python bench/memory.py                            # 2,000, 20,000 and 200,000 chunks
    .venv/bin/python bench/memory.py --sizes 2000,20000         # the first two only
    .venv/bin/python bench/memory.py --sizes 20000 --precision float32
    .venv/bin/python bench/memory.py --sizes 20000 --model all-MiniLM-L6-v2-int8

Data: the shared Markdown (the AWS guides of aws-docs-qa, then the traefik, fastapi and
rust-book corpora, each file in path order) written into a folder of its own under /tmp, copy
after copy, until the folder holds at least SIZE chunks as docshelf's chunker cuts them; the
last copy stops at the file that reaches SIZE. Copy 0 is the files unchanged, under
`copy-0/<corpus>/<path>`. In copy k > 0 every line of prose (not a heading, a table row, a list
item, an indented line or a line inside a code fence) has its words rotated by k places, so
every chunk of every copy is a text of its own that the model really embeds (its path differs
too, and the path is part of the embedding input).

Method: for each size, `docshelf index FOLDER --store NEW.sqlite3 --progress json --workspace
bench` runs as a subprocess (the installed console script, the packaged model, default settings
unless `--precision` or `--model` is given). This script reads the child's VmRSS from /proc every
SAMPLE_SECONDS and pairs each sample with the last progress event, and takes the peak from the
kernel's count for the child (ru_maxrss of wait4). Reported: the chunks, those embedded, the
seconds and chunks/s of the whole command, the peak, and the RSS when a quarter, half, three
quarters and all of the chunks were embedded, to show whether it grows as it goes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from docshelf.chunking import chunk_file, kind_of
from report import cpu_model, markdown_table

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
SOURCES = [
    ("aws", DATA / "eval" / "aws-docs-qa" / "docs"),
    ("traefik", DATA / "corpora" / "traefik"),
    ("fastapi", DATA / "corpora" / "fastapi"),
    ("rust-book", DATA / "corpora" / "rust-book"),
]
DEFAULT_SIZES = (2_000, 20_000, 200_000)
SAMPLE_SECONDS = 0.5
MIB = 1024 * 1024
# Issue 16: a peak under this many MiB at every size.
GOAL_PEAK_MIB = 1024
FENCES = ("```", "~~~")


def source_files() -> list[tuple[str, str]]:
    """Every Markdown file of SOURCES, as (corpus/path, text), in a fixed order."""
    files: list[tuple[str, str]] = []
    for name, root in SOURCES:
        for path in sorted(root.rglob("*")):
            if path.is_file() and kind_of(path.name) is not None:
                text = path.read_text(encoding="utf-8", errors="replace")
                files.append((f"{name}/{path.relative_to(root).as_posix()}", text))
    return files


def varied(text: str, k: int) -> str:
    """The text with the words of every prose line rotated by k places (k = 0: unchanged)."""
    if k == 0:
        return text
    lines = []
    fenced = False
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(FENCES):
            fenced = not fenced
        words = line.split()
        prose = (
            not fenced
            and len(words) > 1
            and line == stripped
            and not stripped.startswith(("#", "|", "-", "*", "+", ">", "<", "[", "!", "="))
            and not stripped[0].isdigit()
        )
        if prose:
            shift = k % len(words)
            lines.append(" ".join(words[shift:] + words[:shift]))
        else:
            lines.append(line)
    return "\n".join(lines)


def chunk_count(path: str, text: str) -> int:
    kind = kind_of(path)
    return 0 if kind is None else len(chunk_file(path, text, kind))


def build_corpus(files: Sequence[tuple[str, str]], size: int, into: Path) -> tuple[int, int]:
    """Write copies of `files` under `into` until they hold at least `size` chunks; returns
    (files written, chunks)."""
    written = chunks = 0
    k = 0
    while chunks < size:
        for path, text in files:
            out = varied(text, k)
            target = into / f"copy-{k}" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(out, encoding="utf-8")
            written += 1
            chunks += chunk_count(path, out)
            if chunks >= size:
                break
        k += 1
    return written, chunks


@dataclass(slots=True)
class Sampled:
    """The child's RSS over time, each sample with the chunks embedded at that moment."""

    samples: list[tuple[float, int, int, str]] = field(default_factory=list)
    # (seconds, embedded, KiB, phase)
    phase: str = "starting"
    embedded: int = 0
    to_embed: int = 0
    last: dict[str, object] = field(default_factory=dict)


def rss_kib(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def events(stream: Iterator[str], sampled: Sampled) -> None:
    for line in stream:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "phase" in event:
            sampled.last = event
            sampled.phase = str(event["phase"])
            sampled.embedded = int(event.get("embedded", 0))
            sampled.to_embed = int(event.get("to_embed", 0))


@dataclass(frozen=True, slots=True)
class Run:
    size: int
    files: int
    chunks: int
    embedded: int
    seconds: float
    peak_mib: float
    at_quarters: list[float | None]
    by_phase: dict[str, float]  # the largest sample of each phase, MiB


def index_once(
    folder: Path, store: Path, precision: str | None, model: str | None
) -> tuple[float, int, Sampled]:
    """`docshelf index` of `folder` into a new `store`: (seconds, the kernel's peak RSS in KiB,
    the samples)."""
    command = [
        str(Path(sys.executable).parent / "docshelf"),
        "index",
        str(folder),
        "--store",
        str(store),
        "--workspace",
        "bench",
        "--progress",
        "json",
        "--json",
    ]
    if precision is not None:
        command += ["--precision", precision]
    if model is not None:
        command += ["--model", model]
    sampled = Sampled()
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None and child.stdout is not None
    reader = threading.Thread(target=events, args=(child.stderr, sampled), daemon=True)
    reader.start()
    while True:
        # wait4 reaps the child with its own resource usage: ru_maxrss is its peak, in KiB.
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        kib = rss_kib(child.pid)
        if kib is not None:
            sampled.samples.append(
                (time.perf_counter() - started, sampled.embedded, kib, sampled.phase)
            )
        time.sleep(SAMPLE_SECONDS)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    out = child.stdout.read()
    reader.join(timeout=10)
    if child.returncode != 0:
        raise SystemExit(f"docshelf index failed ({child.returncode}): {sampled.last} {out}")
    return seconds, usage.ru_maxrss, sampled


def quarters(sampled: Sampled) -> list[float | None]:
    """The RSS (MiB) at the first sample with a quarter, half, three quarters and all of the
    chunks embedded."""
    marks: list[float | None] = []
    for q in (0.25, 0.5, 0.75, 1.0):
        want = q * sampled.to_embed
        at = next((kib for _, e, kib, _ in sampled.samples if e >= want and e > 0), None)
        marks.append(None if at is None else at / 1024)
    return marks


def by_phase(sampled: Sampled) -> dict[str, float]:
    """The largest RSS sample (MiB) of each phase of the run, in the order they came."""
    peaks: dict[str, float] = {}
    for _, _, kib, phase in sampled.samples:
        peaks[phase] = max(peaks.get(phase, 0.0), kib / 1024)
    return peaks


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        default=",".join(str(s) for s in DEFAULT_SIZES),
        help="chunk counts, comma-separated (default: %(default)s)",
    )
    parser.add_argument(
        "--precision",
        choices=["auto", "float32", "bfloat16", "float16"],
        help="passed to docshelf index (default: its own default)",
    )
    parser.add_argument("--model", help="passed to docshelf index (default: the packaged model)")
    parser.add_argument("--keep", type=Path, help="keep the corpora and stores in this folder")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    files = source_files()
    runs: list[Run] = []
    base = args.keep or Path(tempfile.mkdtemp(prefix="docshelf-bench-memory-", dir="/tmp"))
    started_all = time.perf_counter()
    try:
        for size in sizes:
            folder = base / f"corpus-{size}"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            written, chunks = build_corpus(files, size, folder)
            print(
                f"[{time.strftime('%H:%M:%S')}] {size}: {written} files, {chunks} chunks",
                file=sys.stderr,
                flush=True,
            )
            store = base / f"store-{size}.sqlite3"
            store.unlink(missing_ok=True)
            seconds, peak_kib, sampled = index_once(folder, store, args.precision, args.model)
            run = Run(
                size,
                written,
                chunks,
                sampled.embedded,
                seconds,
                peak_kib / 1024,
                quarters(sampled),
                by_phase(sampled),
            )
            runs.append(run)
            print(
                f"[{time.strftime('%H:%M:%S')}] {size}: {seconds:.0f} s, peak "
                f"{run.peak_mib:.0f} MiB, at quarters {run.at_quarters}",
                file=sys.stderr,
                flush=True,
            )
            if args.keep is None:
                shutil.rmtree(folder)
                store.unlink()
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    print(f"- command: `{shlex.join(sys.orig_argv)}`")
    print(f"- machine: {os.cpu_count()} CPUs ({cpu_model()})")
    print(f"- precision: {args.precision or 'the default (auto)'}")
    print(f"- model: {args.model or 'the default (the packaged all-MiniLM-L6-v2)'}")
    print(f"- whole run: {time.perf_counter() - started_all:.0f} s")
    print()
    rows = []
    for r in runs:
        marks = [("" if m is None else f"{m:.0f}") for m in r.at_quarters]
        rows.append(
            [
                f"{r.size:,}",
                str(r.files),
                f"{r.chunks:,}",
                f"{r.embedded:,}",
                f"{r.seconds:.0f}",
                f"{r.embedded / r.seconds:.1f}",
                f"{r.peak_mib:.0f}",
                *marks,
            ]
        )
    print(
        markdown_table(
            [
                "size",
                "files",
                "chunks",
                "embedded",
                "seconds",
                "chunks/s",
                "peak MiB",
                "RSS at 1/4",
                "at 1/2",
                "at 3/4",
                "at the end",
            ],
            rows,
        )
    )
    print()
    print(
        "The largest RSS sample of each phase (MiB; samples every "
        f"{SAMPLE_SECONDS:g} s, so a short peak can fall between two):"
    )
    print()
    phases = ["starting", "reading", "embedding", "writing", "done"]
    print(
        markdown_table(
            ["size", *phases],
            [
                [
                    f"{r.size:,}",
                    *(f"{r.by_phase[p]:.0f}" if p in r.by_phase else "" for p in phases),
                ]
                for r in runs
            ],
        )
    )
    print()
    worst = max(r.peak_mib for r in runs)
    ok = worst < GOAL_PEAK_MIB
    print(
        f"- {'met' if ok else 'NOT met'}: the largest peak is {worst:.0f} MiB; goal under "
        f"{GOAL_PEAK_MIB} MiB at every size"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
