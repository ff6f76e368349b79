"""The first query of a new process: `docshelf search` from its start to its answer, with the
query embedded from the ONNX cache (no torch) against the same command made to load torch first.

Run it from the repository root with

    .venv/bin/python bench/query_start.py              # 5 runs of each, interleaved
    .venv/bin/python bench/query_start.py --runs 9

Data: a docs tree of three small Markdown files written to a temporary directory, indexed once
into a SQLite store there with the packaged model (untimed). The ONNX export of the model is made
before anything is timed, into a cache directory of the bench's own (so the machine's cache is
neither used nor touched).

Method. Each run is a fresh interpreter that runs docshelf's command line (`docshelf.cli.main`) for
`docshelf search "who is responsible for checkout?" -k 1`, the two kinds alternating:
- from the cache: the command as installed;
- torch first: the same, with `LocalEmbedder._cached` replaced by one that finds nothing, so the
  query loads torch and sentence-transformers, as every `docshelf search` did before the cache
  held what a query needs without them.
Both must print the same answer. The time is the wall clock from the start of the process to its
exit; the memory is the process's peak resident set (`wait4`'s ru_maxrss).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

QUESTION = "who is responsible for checkout?"

DOCS = {
    "runbooks/payments.md": "# Payments runbook\n\n## Timeouts\n\nWhen the card processor takes "
    "longer than thirty seconds to answer, the checkout page gives up.\n",
    "teams/ownership.md": "# Who owns what\n\n## Checkout\n\nThe Storefront team owns the "
    "checkout service; its channel is #storefront.\n",
    "garden.md": "# Gardening notes\n\nTomatoes need full sun and deep watering.\n",
}

# The driver of one run: docshelf's command line, optionally with the cached query path off.
DRIVER = """
import sys
from docshelf.embedders.local import LocalEmbedder
from docshelf.cli import main
if sys.argv.pop(1) == "torch":
    LocalEmbedder._cached = lambda self: None
sys.argv[0] = "docshelf"
main()
"""


def run_once(kind: str, args: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Seconds from start to exit, peak RSS in MiB, and what the command printed."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", DRIVER, kind, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdout is not None
    out = child.stdout.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"the {kind} run failed with exit code {child.returncode}: {out}")
    return seconds, usage.ru_maxrss // 1024, out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind (%(default)s)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="docshelf-query-start-") as tmp:
        root = Path(tmp)
        for name, text in DOCS.items():
            (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "docs" / name).write_text(text)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")},
            "HF_HUB_OFFLINE": "1",
            "XDG_CACHE_HOME": str(root / "cache"),
        }
        store = str(root / "store.sqlite3")
        common = ["--store", store, "--workspace", "bench"]
        print("indexing and exporting the model (untimed) ...", file=sys.stderr)
        docshelf = Path(sys.executable).with_name("docshelf")
        indexed = subprocess.run(
            [str(docshelf), "index", str(root / "docs"), *common, "--mirror-dir", str(root / "m")],
            check=False,
            env=env,
            capture_output=True,
            text=True,
        )
        if indexed.returncode != 0:
            raise SystemExit(f"docshelf index failed: {indexed.stderr}")
        search = ["search", QUESTION, "-k", "1", *common]
        run_once("torch", search, env)  # writes the export and what a query needs beside it
        results: dict[str, list[tuple[float, int]]] = {"cache": [], "torch": []}
        answers = set()
        for i in range(options.runs):
            for kind in ("cache", "torch") if i % 2 == 0 else ("torch", "cache"):
                seconds, rss, out = run_once(kind, search, env)
                results[kind].append((seconds, rss))
                answers.add(out)
                print(f"  {kind}: {seconds:.2f} s, {rss} MiB", file=sys.stderr)
        if len(answers) != 1 or "teams/ownership.md" not in answers.pop():
            raise SystemExit("the two kinds did not give the same, right answer")
    command = " ".join(["bench/query_start.py", *(argv or sys.argv[1:])])
    print(f"command: .venv/bin/python {command}")
    python = platform.python_version()
    print(f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {python}")
    print()
    print("| the query embedded | runs | median s | min s | max s | peak RSS MiB (median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for kind, label in (("cache", "from the ONNX cache"), ("torch", "after loading torch")):
        seconds = [s for s, _ in results[kind]]
        rss = statistics.median(r for _, r in results[kind])
        print(
            f"| {label} | {len(seconds)} | {statistics.median(seconds):.2f} | "
            f"{min(seconds):.2f} | {max(seconds):.2f} | {rss:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
