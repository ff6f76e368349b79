"""The memory of a server that syncs: `docshelf serve --sync-interval` answering searches while it
indexes a new commit, with the packaged model and with the int8 model.

Run it from the repository root with

    .venv/bin/python bench/serve_sync.py                     # traefik, 30 files changed
    .venv/bin/python bench/serve_sync.py --changed 100 --models default

Options: `--corpus DIR` another folder of docs (default: the shared traefik corpus), `--changed N`
how many of its files the second commit changes, `--models` which models (`default`, `int8`, or
both, comma-separated; default both).

Data: the corpus is copied into a temporary directory, made a git repository and committed (commit
A). For commit B, the first `--changed` files (in path order) have the words of every prose line
rotated by one place (bench/memory.py's `varied`), so their chunks are texts of their own that
the sync must embed; the other files' chunks are reused.

Method, for each model: a fresh SQLite store; `docshelf index COPY --model M` (commit A, in its
own process); one `docshelf search` (so the model's ONNX export is in the cache, as it is on any
machine after its first query); then `docshelf serve COPY --http --sync-interval 1 --model M`.
One MCP session over HTTP asks WARM_UP searches, then the VmRSS of the server is read (before);
commit B is made, and searches go on, one after the other, until an answer comes from commit B
(the sync's time is from the commit to that answer). The server's VmRSS is sampled every
SAMPLE_SECONDS meanwhile; VmHWM (its peak over its whole life) is read at the end, with VmRSS
after AFTER searches more, and whether torch's library was ever mapped into the server.
Goal (issue 16): a server that also syncs stays under 600 MiB.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory import varied
from report import cpu_model, markdown_table
from serve import free_port, wait_for_port
from serve import server_memory as memory

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "corpora" / "traefik"
DOCSHELF = Path(sys.executable).with_name("docshelf")
MODELS = {"default": None, "int8": "all-MiniLM-L6-v2-int8"}
QUESTIONS = [
    "how do I configure a router rule",
    "what does the rate limit middleware do",
    "where are TLS certificates stored",
    "how to enable the dashboard",
    "which providers does traefik support",
]
WARM_UP = 20
AFTER = 20
SAMPLE_SECONDS = 0.2
SYNC_TIMEOUT_SECONDS = 1800
GOAL_MIB = 600


@dataclass(frozen=True, slots=True)
class Outcome:
    model: str
    chunks_changed: int
    before_mib: float
    peak_sampled_mib: float
    hwm_mib: float
    after_mib: float
    sync_seconds: float
    searches: int
    torch_mapped: bool


def git(tree: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def docshelf(*args: str) -> str:
    done = subprocess.run(
        [str(DOCSHELF), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if done.returncode != 0:
        raise SystemExit(f"docshelf {shlex.join(args)} failed: {done.stderr}")
    return done.stdout


def change_files(tree: Path, count: int) -> list[Path]:
    files = sorted(p for p in tree.rglob("*.md") if ".git" not in p.parts)[:count]
    for path in files:
        path.write_text(varied(path.read_text(encoding="utf-8"), 1), encoding="utf-8")
    return files


def run_model(label: str, model: str | None, corpus: Path, changed: int, tmp: Path) -> Outcome:
    tree = tmp / f"repo-{label}"
    shutil.copytree(corpus, tree)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "A")
    store = str(tmp / f"store-{label}.sqlite3")
    options = [] if model is None else ["--model", model]
    print(f"[{time.strftime('%H:%M:%S')}] {label}: indexing commit A", file=sys.stderr)
    docshelf("index", str(tree), "--store", store, "--progress", "none", *options)
    docshelf("search", "router", "--store", store, *options)
    port = free_port()
    log = (tmp / f"serve-{label}.log").open("wb")
    command = [str(DOCSHELF), "serve", str(tree), "--store", store, "--http", "--port"]
    server = subprocess.Popen(
        [*command, str(port), "--sync-interval", "1", *options],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                samples.append(memory(server.pid)[0])
            except (OSError, KeyError):
                return
            time.sleep(SAMPLE_SECONDS)

    try:
        wait_for_port(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        found: dict[str, Any] = {}

        async def session() -> None:
            async with Client(streamable_http_client(url)) as client:

                async def ref_of(i: int) -> str:
                    query = {"query": QUESTIONS[i % len(QUESTIONS)], "top_k": 5}
                    result = await client.call_tool("docs_search", query)
                    if result.is_error:
                        raise SystemExit(f"docs_search failed: {result.content}")
                    return str(result.structured_content["ref"])

                for i in range(WARM_UP):
                    await ref_of(i)
                found["before"] = memory(server.pid)[0]
                files = change_files(tree, changed)
                git(tree, "add", "-A")
                git(tree, "commit", "-q", "-m", "B")
                commit = git(tree, "rev-parse", "HEAD")
                found["files"] = len(files)
                threading.Thread(target=sample, daemon=True).start()
                started = time.monotonic()
                searches = 0
                while await ref_of(searches) != commit:
                    searches += 1
                    if time.monotonic() - started > SYNC_TIMEOUT_SECONDS:
                        raise SystemExit("the server did not sync commit B in time")
                found["sync"] = time.monotonic() - started
                found["searches"] = searches
                for i in range(AFTER):
                    await ref_of(i)
                stop.set()
                found["after"], found["hwm"] = memory(server.pid)
                maps = Path(f"/proc/{server.pid}/maps").read_text()
                found["torch"] = "libtorch" in maps

        anyio.run(session)
    finally:
        stop.set()
        server.terminate()
        server.wait(60)
        log.close()
    text = (tmp / f"serve-{label}.log").read_text(errors="replace")
    indexed = [line for line in text.splitlines() if "indexed" in line]
    chunks = 0
    if indexed:
        # "docshelf: INFO indexed COMMIT: N chunks (E embedded, R reused) ..."
        words = indexed[-1].split("(", 1)[-1].split()
        chunks = int(words[0]) if words and words[0].isdigit() else 0
    return Outcome(
        label,
        chunks,
        found["before"],
        max(samples, default=0.0),
        found["hwm"],
        found["after"],
        found["sync"],
        found["searches"],
        found["torch"],
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="%(default)s")
    parser.add_argument("--changed", type=int, default=30, help="files changed (%(default)s)")
    parser.add_argument("--models", default="default,int8", help="%(default)s")
    args = parser.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    if not args.models or any(m not in MODELS for m in args.models):
        parser.error(f"--models: give {', '.join(MODELS)}, comma-separated")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-serve-sync-", dir="/tmp") as name:
        for label in args.models:
            outcomes.append(run_model(label, MODELS[label], args.corpus, args.changed, Path(name)))
    print(f"- command: `{shlex.join(sys.orig_argv)}`")
    print(f"- machine: {os.cpu_count()} CPUs ({cpu_model()})")
    print(f"- corpus: {args.corpus}, {args.changed} files changed in commit B")
    print(f"- whole run: {time.perf_counter() - started:.0f} s")
    print()
    rows = [
        [
            o.model,
            str(o.chunks_changed),
            f"{o.before_mib:.0f}",
            f"{o.peak_sampled_mib:.0f}",
            f"{o.hwm_mib:.0f}",
            f"{o.after_mib:.0f}",
            f"{o.sync_seconds:.1f}",
            str(o.searches),
            "yes" if o.torch_mapped else "no",
        ]
        for o in outcomes
    ]
    columns = [
        "model",
        "chunks embedded",
        "RSS before MiB",
        "largest sample MiB",
        "peak (VmHWM) MiB",
        "RSS after MiB",
        "sync s",
        "searches meanwhile",
        "torch loaded",
    ]
    print(markdown_table(columns, rows))
    print()
    worst = max(o.hwm_mib for o in outcomes)
    verdict = "met" if worst < GOAL_MIB else "not met"
    print(f"- {verdict}: the highest peak is {worst:.0f} MiB; goal under {GOAL_MIB} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
