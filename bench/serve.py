"""End-to-end latency of docs_search through `docshelf serve`, over stdio and over HTTP, and the
server's resident memory.

Run it from the repository root with

    .venv/bin/python bench/serve.py                 # 20k chunks, 200 calls per transport
    .venv/bin/python bench/serve.py --chunks 20000 --calls 500 --transports http

Data: the chunks of the shared corpora (`../shared/data/corpora`), embedded with the packaged
all-MiniLM-L6-v2 and cached exactly as bench/search.py does (the same cache, so a run after
bench/search.py embeds nothing), replicated with small noise up to `--chunks` rows, written with
one replace_doc_chunks into a fresh SQLite store and made current.

Method: for each transport, `docshelf serve` (the installed console script) is started as an MCP
client starts it, on that store, with the packaged model: over stdio by the SDK's stdio client,
over HTTP with `--http` on a free loopback port and the SDK's streamable HTTP client. After
WARM_UP_CALLS untimed calls (the first loads the model), each of `--calls` docs_search calls
(top_k 5, the default hybrid ranking, queries of 2 to 5 words of the corpus's section titles,
seeded) is timed alone on the client, from the request to the parsed result: the query's
embedding on the CPU, both rankings, fusion and rendering, and the transport. p50/p99 are over
those calls. The server's resident memory (VmRSS) and its peak (VmHWM) are read from /proc after
the calls.

The goal of the issue: p50 under 25 ms, the query's embedding on the CPU included.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search as search_bench
from docshelf.embedders import LocalEmbedder
from docshelf.stores import open_store

REPO = Path(__file__).resolve().parents[1]
DOCSHELF = Path(sys.executable).with_name("docshelf")

# The size: a large handbook's worth of chunks.
DEFAULT_CHUNKS = 20_000

# 200 calls give a stable p50 and a p99 set by the two slowest calls.
DEFAULT_CALLS = 200

# Untimed calls first: the first loads the model (seconds), the next few warm the caches.
WARM_UP_CALLS = 5

# The goal of the issue.
GOAL_P50_MS = 25.0

# How long a server may take to start listening (it imports the SDK, not the model).
START_TIMEOUT_SECONDS = 60.0

WORKSPACE = "bench"
REF = "0" * 40
SEED = 20_261_130


def build_store(path: Path, chunks: int, cache: Path) -> tuple[list[str], int]:
    """A store of `chunks` rows of real embeddings made current; and the query phrases."""
    embedder = LocalEmbedder()
    corpus = search_bench.load_corpus(search_bench.DEFAULT_CORPORA, embedder, cache)
    rng = np.random.default_rng(SEED)
    data = search_bench.replicate(corpus, chunks, rng)
    with open_store(str(path), model_id=embedder.model_id, dim=embedder.dim) as store:
        store.replace_doc_chunks(WORKSPACE, REF, data.rows)
        store.set_current(WORKSPACE, REF)
    return search_bench.query_phrases(corpus.chunks, 1000, rng), len(corpus.chunks)


def serve_args(store: Path, *more: str) -> list[str]:
    return ["serve", "--store", str(store), "--workspace", WORKSPACE, *more]


def server_memory(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def serve_pid() -> int:
    """The `docshelf serve` process this process started (the stdio client starts it)."""
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
    raise SystemExit("the docshelf serve process was not found")


async def timed_calls(
    call: Callable[[str], Awaitable[Any]], queries: Sequence[str], calls: int
) -> list[float]:
    for query in queries[:WARM_UP_CALLS]:
        await call(query)
    seconds = []
    for i in range(calls):
        query = queries[(WARM_UP_CALLS + i) % len(queries)]
        started = time.perf_counter()
        result = await call(query)
        seconds.append(time.perf_counter() - started)
        if result.is_error:
            raise SystemExit(f"docs_search failed: {result.content}")
    return seconds


def run_stdio(store: Path, queries: Sequence[str], calls: int) -> tuple[list[float], int]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    params = StdioServerParameters(command=str(DOCSHELF), args=serve_args(store), env=env)
    found: dict[str, Any] = {}

    async def session() -> list[float]:
        async with Client(stdio_client(params, errlog=sys.stderr)) as client:

            async def call(query: str) -> Any:
                return await client.call_tool("docs_search", {"query": query, "top_k": 5})

            seconds = await timed_calls(call, queries, calls)
            found["memory"] = server_memory(serve_pid())
            return seconds

    seconds = anyio.run(session)
    return seconds, found["memory"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_http(store: Path, queries: Sequence[str], calls: int) -> tuple[list[float], Any]:
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(
        [str(DOCSHELF), *serve_args(store, "--http", "--port", str(port))], env=env
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("docshelf serve --http did not start") from None
                time.sleep(0.2)

        async def session() -> list[float]:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url)) as client:

                async def call(query: str) -> Any:
                    return await client.call_tool("docs_search", {"query": query, "top_k": 5})

                return await timed_calls(call, queries, calls)

        seconds = anyio.run(session)
        return seconds, server_memory(server.pid)
    finally:
        server.terminate()
        server.wait(30)


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS)
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument(
        "--transports", nargs="+", choices=("stdio", "http"), default=["stdio", "http"]
    )
    parser.add_argument("--cache", type=Path, default=search_bench.DEFAULT_CACHE)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="docshelf-serve-bench-") as tmp:
        store = Path(tmp) / "store.sqlite3"
        print(f"building a store of {args.chunks} chunks ...", file=sys.stderr)
        queries, real = build_store(store, args.chunks, args.cache)
        rows = []
        for transport in args.transports:
            print(f"{transport}: {args.calls} calls ...", file=sys.stderr)
            run = run_stdio if transport == "stdio" else run_http
            seconds, (rss, hwm) = run(store, queries, args.calls)
            rows.append(
                (
                    transport,
                    percentile_ms(seconds, 0.5),
                    percentile_ms(seconds, 0.99),
                    1000 * statistics.fmean(seconds),
                    rss,
                    hwm,
                )
            )
    command = " ".join(["bench/serve.py", *map(shlex.quote, sys.argv[1:])])
    print(f"command: .venv/bin/python {command}")
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}"
    )
    print(f"store: SQLite, {args.chunks} chunks ({real} real chunks and noisy copies), one ref")
    print()
    print("| transport | calls | p50 ms | p99 ms | mean ms | server RSS MiB | server peak MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for transport, p50, p99, mean, rss, hwm in rows:
        print(
            f"| {transport} | {args.calls} | {p50:.1f} | {p99:.1f} | {mean:.1f} | {rss:.0f} | "
            f"{hwm:.0f} |"
        )
    print()
    for transport, p50, *_ in rows:
        verdict = "met" if p50 < GOAL_P50_MS else "missed"
        print(f"- {transport}: p50 {p50:.1f} ms, goal under {GOAL_P50_MS:.0f} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
