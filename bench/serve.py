"""End-to-end latency of the MCP tools docs_search, docs_read and docs_outline through `docshelf
serve`, over stdio and over HTTP, and the server's resident memory.

Run it from the repository root with

    .venv/bin/python bench/serve.py                 # 20k chunks, 200 calls per tool and transport
    .venv/bin/python bench/serve.py --chunks 20000 --calls 500 --transports http
    .venv/bin/python bench/serve.py --tools read,outline --transports http
    .venv/bin/python bench/serve.py --corpus aws --store sqlite postgresql --transports stdio
    .venv/bin/python bench/serve.py --corpus aws --tools search --baseline c57edad

Data: the chunks of the shared corpora (`../shared/data/corpora`), embedded with the packaged
all-MiniLM-L6-v2 and cached exactly as bench/search.py does (the same cache, so a run after
bench/search.py embeds nothing), replicated with small noise up to `--chunks` rows (copy c > 0 of
a chunk under the path `bench-copy-<c>/<path>`), written with one replace_doc_chunks into a fresh
SQLite store and made current. The same call writes the store's file texts: every path a chunk
row names gets the text of its corpus file (the copies' paths the text of the file they copy, so
each distinct text is stored once), as the indexer writes them (`FileRow`: sha256 of the UTF-8
text, its lines as the hits count them).

With `--corpus aws` the data is real instead: the AWS guides of the aws-docs-qa set (2,809 files,
19,347 chunks) as bench/retrieval.py indexed them into its kept SQLite store (run it first; this
script copies that store, so its rows, vectors and file texts are those of a real `docshelf
index`), and the searches are the set's 50 questions, cycled. `--store postgresql` serves the same
rows from PostgreSQL (a server started here from pgserver, as the tests do, its data under /tmp):
they are written with one replace_doc_chunks, as the indexer writes them.

Method: for each store and transport, `docshelf serve` (the installed console script) is started
as an MCP client starts it, on that store, with the packaged model: over stdio by the SDK's
stdio client, over HTTP with `--http` on a free loopback port and the SDK's streamable HTTP
client. One session then runs each kind of call of `--tools` in turn: WARM_UP_CALLS untimed
calls (the first search loads the model), then `--calls` calls, each timed alone on the
client, from the request to the parsed result (the server's work and the transport), and p50/p99
over those calls. The kinds, each list of arguments drawn with a fixed seed:

- search: docs_search, top_k 5, the default hybrid ranking, queries of 2 to 5 words of the
  corpus's section titles: the query's embedding on the CPU, both rankings, fusion, rendering.
- read, from the start: docs_read of a file drawn from the store's files, without lines (its
  first 200 lines or 16,000 bytes, as the tool bounds an answer).
- read, a hit's range: docs_read of the start_line..end_line of a chunk row drawn among those
  that do not start a file (a hit-sized range in the middle of a file, as an agent reads around
  a hit).
- outline, all docs: docs_outline without path (every indexed file listed, the outline cut at
  the bound, with the folders to narrow it by).
- outline, a folder: docs_outline of a folder drawn from the folders of the store's files (every
  folder equally likely, so mostly small leaf folders, sometimes a whole corpus copy).

With `--baseline REV` (SQLite only), each transport is also served by REV's code (a git worktree
of REV, imported with PYTHONPATH=<worktree>/src) before this tree's, on a copy of the same store
with the columns of the migrations REV does not know dropped: the two side by side in one run.
This tree's docs_search calls ask with `repeat: true` (its sessions show a passage once, and the
calls cycle through their queries); a baseline that has no `repeat` is asked without it.

Every answer must not be an error; "answer bytes" is the mean UTF-8 size of its text. The
server's resident memory (VmRSS) and its peak (VmHWM) are read from /proc after all the calls of
a transport.

The goal of the search issue: docs_search's p50 under 25 ms, the query's embedding on the CPU
included.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shlex
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
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
from docshelf.indexer import file_rows
from docshelf.rows import ChunkRow, FileRow
from docshelf.stores import open_store
from docshelf.stores.common import blob_vector
from docshelf.workspace import DocFile
from report import postgres_server, serve_pid, server_memory, worktree

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

# How many argument lists of each kind are drawn (the calls cycle through them).
DRAWS = 1000

TOOLS = ("search", "read", "outline")

WORKSPACE = "bench"
REF = "0" * 40
SEED = 20_261_130

# Arguments of one call of a tool.
Arguments = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of call: the tool, what the rows call it, and the argument lists drawn."""

    tool: str
    name: str
    arguments: list[Arguments]


@dataclass(frozen=True, slots=True)
class Workload:
    kinds: list[Kind]
    real_chunks: int
    files: int  # paths with a file text in the store
    texts: int  # distinct texts among them


@dataclass(frozen=True, slots=True)
class Timing:
    kind: Kind
    seconds: list[float]
    answer_bytes: list[int]


def corpus_texts(corpora: Path, paths: set[str]) -> dict[str, str]:
    """The text of each corpus file that `paths` name, read as bench/search.py reads it."""
    return {path: (corpora / path).read_bytes().decode("utf-8") for path in sorted(paths)}


def folders_of(paths: Sequence[str]) -> list[str]:
    """Every folder that holds one of `paths`, with its trailing slash, in order."""
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: n + 1]) + "/" for n in range(len(parts)))
    return sorted(folders)


def build_store(location: str, chunks: int, cache: Path, tools: Sequence[str]) -> Workload:
    """A store of `chunks` rows of real embeddings and the texts of their files, made current;
    and the arguments of each kind of call."""
    embedder = LocalEmbedder()
    corpora = search_bench.DEFAULT_CORPORA
    corpus = search_bench.load_corpus(corpora, embedder, cache)
    rng = np.random.default_rng(SEED)
    data = search_bench.replicate(corpus, chunks, rng)
    originals = {c.path for c in corpus.chunks}
    texts = corpus_texts(corpora, originals)
    paths = sorted({row.path for row in data.rows})
    docs = [
        DocFile(p, texts[p.split("/", 1)[1] if p.startswith("bench-copy-") else p], "markdown")
        for p in paths
    ]
    files = file_rows(docs)
    with open_store(location, model_id=embedder.model_id, dim=embedder.dim) as store:
        store.replace_doc_chunks(WORKSPACE, REF, data.rows, files)
        store.set_current(WORKSPACE, REF)
    kinds: list[Kind] = []
    if "search" in tools:
        queries = search_bench.query_phrases(corpus.chunks, DRAWS, rng)
        kinds.append(Kind("docs_search", "search", [{"query": q, "top_k": 5} for q in queries]))
    if "read" in tools:
        starts = rng.choice(len(paths), size=DRAWS)
        kinds.append(
            Kind("docs_read", "read, from the start", [{"path": paths[i]} for i in starts])
        )
        middle = [row for row in data.rows if row.start_line > 1]
        picked = [middle[i] for i in rng.choice(len(middle), size=DRAWS)]
        kinds.append(
            Kind(
                "docs_read",
                "read, a hit's range",
                [
                    {"path": r.path, "start_line": r.start_line, "end_line": r.end_line}
                    for r in picked
                ],
            )
        )
    if "outline" in tools:
        kinds.append(Kind("docs_outline", "outline, all docs", [{}]))
        folders = folders_of(paths)
        drawn = rng.choice(len(folders), size=DRAWS)
        kinds.append(
            Kind("docs_outline", "outline, a folder", [{"path": folders[i]} for i in drawn])
        )
    return Workload(kinds, len(corpus.chunks), len(files), len({f.text_hash for f in files}))


# The real corpus: bench/retrieval.py's kept store of the AWS guides, and the set's questions.
EVAL = REPO.parent / "shared" / "data" / "eval" / "aws-docs-qa"
AWS_STORE = "retrieval-aws-docs-qa.sqlite3"
AWS_WORKSPACE = "eval-aws-docs-qa"


def aws_rows(source: Path) -> tuple[str, list[ChunkRow], list[FileRow]]:
    """The current ref of the AWS workspace in bench/retrieval.py's store: its ref, its chunk
    rows (with their vectors) and its files, read back as the indexer wrote them."""
    with open_store(str(source), model_id=None, dim=None) as store:
        ref = store.current(AWS_WORKSPACE)
        if ref is None:
            raise SystemExit(f"{source} holds no {AWS_WORKSPACE}: run bench/retrieval.py first")
        conn = store._connect()
        rows = [
            ChunkRow(p, c, h, t, s, e, ch, np.frombuffer(v, dtype="<f4").copy())
            for p, c, h, t, s, e, ch, v in conn.execute(
                "SELECT path, chunk, heading, content, start_line, end_line, content_hash, "
                "embedding FROM chunks WHERE workspace = ? AND ref = ? ORDER BY id",
                (AWS_WORKSPACE, ref),
            )
        ]
        docs = [
            DocFile(p, store.file_text(AWS_WORKSPACE, ref, p) or "", "markdown")
            for p in sorted(
                {r.path for r in rows} | {f.path for f in store.files(AWS_WORKSPACE, ref)}
            )
        ]
        titles = {
            str(p): (str(h), blob_vector(b))
            for p, h, b in conn.execute(
                "SELECT path, title_hash, title_embedding FROM ref_files WHERE workspace = ? "
                "AND ref = ? AND title_embedding IS NOT NULL",
                (AWS_WORKSPACE, ref),
            )
        }
    return ref, rows, list(file_rows(docs, titles))


def aws_questions() -> list[str]:
    import json  # noqa: PLC0415

    lines = (EVAL / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def build_aws(location: str, cache: Path, tools: Sequence[str]) -> Workload:
    """The real AWS corpus written to the store at `location`, made current; the arguments."""
    ref, rows, files = aws_rows(cache / AWS_STORE)
    embedder = LocalEmbedder()
    with open_store(location, model_id=embedder.model_id, dim=embedder.dim) as store:
        store.replace_doc_chunks(WORKSPACE, ref, rows, files)
        store.set_current(WORKSPACE, ref)
    kinds: list[Kind] = []
    if "search" in tools:
        kinds.append(
            Kind(
                "docs_search",
                "search, AWS questions",
                [{"query": q, "top_k": 5} for q in aws_questions()],
            )
        )
    rng = np.random.default_rng(SEED)
    paths = sorted({r.path for r in rows})
    if "read" in tools:
        starts = rng.choice(len(paths), size=DRAWS)
        kinds.append(
            Kind("docs_read", "read, from the start", [{"path": paths[i]} for i in starts])
        )
    if "outline" in tools:
        folders = folders_of(paths)
        drawn = rng.choice(len(folders), size=DRAWS)
        kinds.append(
            Kind("docs_outline", "outline, a folder", [{"path": folders[i]} for i in drawn])
        )
    return Workload(kinds, len(rows), len(files), len({f.text_hash for f in files}))


def serve_args(store: str, *more: str) -> list[str]:
    return ["serve", "--store", store, "--workspace", WORKSPACE, *more]


@dataclass(frozen=True, slots=True)
class Server:
    """How to start a `docshelf serve`: this tree's, or a baseline's (`src`, a worktree's),
    and whether its docs_search calls ask with repeat: true (a session of this tree's shows a
    passage once; the calls cycle through their queries, so each asks to see them again)."""

    name: str
    src: Path | None = None

    def command(self, args: Sequence[str]) -> tuple[str, list[str], dict[str, str]]:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        env.pop("PYTHONPATH", None)
        if self.src is None:
            return str(DOCSHELF), list(args), env
        env["PYTHONPATH"] = str(self.src)
        code = "import sys; from docshelf.cli import main; sys.exit(main())"
        return sys.executable, ["-c", code, *args], env

    def kinds(self, kinds: Sequence[Kind]) -> list[Kind]:
        if self.src is not None:
            return list(kinds)
        return [
            Kind(k.tool, k.name, [{**a, "repeat": True} for a in k.arguments])
            if k.tool == "docs_search"
            else k
            for k in kinds
        ]


CURRENT = Server("this tree")


def undo_titles(path: Path) -> None:
    """The SQLite store at `path` made one a docshelf before migration 0010 opens: the titles'
    columns dropped (a baseline's copy of the store this tree wrote)."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DROP INDEX IF EXISTS ref_files_by_title_hash")
        conn.execute("ALTER TABLE ref_files DROP COLUMN title_embedding")
        conn.execute("ALTER TABLE ref_files DROP COLUMN title_hash")
        conn.execute("DELETE FROM schema_migrations WHERE version >= 10")


def answer_size(result: Any) -> int:
    return sum(len(c.text.encode("utf-8")) for c in result.content if c.type == "text")


async def timed_calls(
    call: Callable[[str, Arguments], Awaitable[Any]], kind: Kind, calls: int
) -> Timing:
    """WARM_UP_CALLS untimed calls of `kind`, then `calls` timed ones, cycling through its
    argument lists."""
    arguments = kind.arguments
    for i in range(WARM_UP_CALLS):
        await call(kind.tool, arguments[i % len(arguments)])
    seconds: list[float] = []
    sizes: list[int] = []
    for i in range(calls):
        args = arguments[(WARM_UP_CALLS + i) % len(arguments)]
        started = time.perf_counter()
        result = await call(kind.tool, args)
        seconds.append(time.perf_counter() - started)
        if result.is_error:
            raise SystemExit(f"{kind.tool} {args} failed: {result.content}")
        sizes.append(answer_size(result))
    return Timing(kind, seconds, sizes)


async def all_kinds(client: Any, kinds: Sequence[Kind], calls: int) -> list[Timing]:
    async def call(tool: str, arguments: Arguments) -> Any:
        return await client.call_tool(tool, arguments)

    timings = []
    for kind in kinds:
        print(f"  {kind.name}: {calls} calls ...", file=sys.stderr)
        timings.append(await timed_calls(call, kind, calls))
    return timings


def run_stdio(
    store: str, kinds: Sequence[Kind], calls: int, server: Server = CURRENT
) -> tuple[list[Timing], tuple[float, float]]:
    command, args, env = server.command(serve_args(store))
    params = StdioServerParameters(command=command, args=args, env=env)
    kinds = server.kinds(kinds)
    found: dict[str, tuple[float, float]] = {}

    async def session() -> list[Timing]:
        async with Client(stdio_client(params, errlog=sys.stderr)) as client:
            timings = await all_kinds(client, kinds, calls)
            found["memory"] = server_memory(serve_pid())
            return timings

    timings = anyio.run(session)
    return timings, found["memory"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, server: subprocess.Popen[Any]) -> None:
    """Return once `docshelf serve --http` accepts connections on `port`."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("docshelf serve --http did not start") from None
            time.sleep(0.2)


def run_http(
    store: str, kinds: Sequence[Kind], calls: int, started: Server = CURRENT
) -> tuple[list[Timing], tuple[float, float]]:
    port = free_port()
    command, args, env = started.command(serve_args(store, "--http", "--port", str(port)))
    kinds = started.kinds(kinds)
    server = subprocess.Popen([command, *args], env=env)
    try:
        wait_for_port(port, server)

        async def session() -> list[Timing]:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url)) as client:
                return await all_kinds(client, kinds, calls)

        timings = anyio.run(session)
        return timings, server_memory(server.pid)
    finally:
        server.terminate()
        server.wait(30)


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def tool_list(value: str) -> list[str]:
    tools = [t.strip() for t in value.split(",") if t.strip()]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown or not tools:
        raise argparse.ArgumentTypeError(
            f"--tools takes a comma-separated list of {', '.join(TOOLS)}; got {value!r}"
        )
    return tools


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS)
    parser.add_argument("--calls", type=int, default=DEFAULT_CALLS)
    parser.add_argument(
        "--transports", nargs="+", choices=("stdio", "http"), default=["stdio", "http"]
    )
    parser.add_argument(
        "--tools",
        type=tool_list,
        default=list(TOOLS),
        help="which tools to time, comma-separated (default: search,read,outline)",
    )
    parser.add_argument("--cache", type=Path, default=search_bench.DEFAULT_CACHE)
    parser.add_argument(
        "--corpus",
        choices=("replicated", "aws"),
        default="replicated",
        help="replicated: --chunks rows from the shared corpora (default); aws: the real AWS "
        "guides of bench/retrieval.py's store, with the set's questions",
    )
    parser.add_argument(
        "--store",
        nargs="+",
        choices=("sqlite", "postgresql"),
        default=["sqlite"],
        help="the stores to serve from (postgresql: a server started here from pgserver)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve each transport from REV's code (a git worktree), before this tree's, "
        "on a copy of the same SQLite store made as REV reads it (the columns of later "
        "migrations dropped): side by side in one run",
    )
    args = parser.parse_args(argv)
    if args.baseline and args.store != ["sqlite"]:
        parser.error("--baseline serves SQLite only: give --store sqlite")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory(prefix="docshelf-serve-bench-") as tmp:
        for kind in args.store:
            with contextlib.ExitStack() as stack:
                if kind == "sqlite":
                    location = str(Path(tmp) / "store.sqlite3")
                else:
                    server = stack.enter_context(postgres_server())
                    location = str(server.get_uri())
                print(f"building the {kind} store ...", file=sys.stderr)
                if args.corpus == "aws":
                    workload = build_aws(location, args.cache, args.tools)
                else:
                    workload = build_store(location, args.chunks, args.cache, args.tools)
                servers = [CURRENT]
                if args.baseline:
                    base = stack.enter_context(
                        worktree(REPO, args.baseline, Path(tmp) / "baseline")
                    )
                    servers.insert(0, Server(f"baseline {args.baseline}", base / "src"))
                    copy = Path(tmp) / "baseline.sqlite3"
                    shutil.copyfile(location, copy)
                    undo_titles(copy)
                for transport in args.transports:
                    for served in servers:
                        print(f"{kind}, {transport}, {served.name}:", file=sys.stderr)
                        store = location if served.src is None else str(copy)
                        run = run_stdio if transport == "stdio" else run_http
                        timings, memory = run(store, workload.kinds, args.calls, served)
                        label = f"{kind}, {transport}" + (
                            f", {served.name}" if args.baseline else ""
                        )
                        results.append((label, timings, memory))
    command = " ".join(["bench/serve.py", *map(shlex.quote, sys.argv[1:])])
    print(f"command: .venv/bin/python {command}")
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}"
    )
    end = os.getloadavg()
    print(
        "load average: at the start "
        + ", ".join(f"{x:.2f}" for x in load)
        + "; at the end "
        + ", ".join(f"{x:.2f}" for x in end)
        + " (1, 5, 15 min)"
    )
    if args.corpus == "aws":
        print(
            f"data: the AWS guides as bench/retrieval.py indexed them, {workload.real_chunks} "
            f"chunks, one ref; {workload.files} file texts; the set's questions, top_k 5"
        )
    else:
        print(
            f"data: {args.chunks} chunks ({workload.real_chunks} real chunks and noisy copies), "
            f"one ref; {workload.files} file texts ({workload.texts} distinct)"
        )
    for transport, timings, (rss, hwm) in results:
        print()
        print(f"{transport}: server RSS {rss:.0f} MiB, peak {hwm:.0f} MiB after all its calls")
        print()
        print("| tool | calls | p50 ms | p99 ms | mean ms | answer bytes |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for t in timings:
            print(
                f"| {t.kind.name} | {len(t.seconds)} | {percentile_ms(t.seconds, 0.5):.1f} | "
                f"{percentile_ms(t.seconds, 0.99):.1f} | {1000 * statistics.fmean(t.seconds):.1f} "
                f"| {statistics.fmean(t.answer_bytes):.0f} |"
            )
    print()
    for transport, timings, _ in results:
        for t in timings:
            if t.kind.tool == "docs_search":
                p50 = percentile_ms(t.seconds, 0.5)
                verdict = "met" if p50 < GOAL_P50_MS else "missed"
                print(
                    f"- {transport}: docs_search p50 {p50:.1f} ms, goal under "
                    f"{GOAL_P50_MS:.0f} ms: {verdict}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
