"""Indexing cost: a full index against the model's own encode time, a no-op re-index, and a
commit that changes one file.

Run it from the repository root with

    .venv/bin/python bench/indexing.py                  # traefik, 2 interleaved rounds
    .venv/bin/python bench/indexing.py --repeats 3 --one-file-runs 5
    .venv/bin/python bench/indexing.py --int8           # and a full index with the int8 model

Options: `--corpus DIR` and `--docs ROOT` name another folder of docs and its docs root (default:
the shared traefik corpus, `../shared/data/corpora/traefik` beside the repository, root docs),
`--repeats N` the interleaved rounds of raw encode and full index, `--noop-runs N` and
`--cli-runs N` the timed no-op re-indexes in process and through the command line,
`--one-file-runs N` the one-file commits, `--profile FILE` one more full index under cProfile
(stats written to FILE, the costliest functions printed on stderr), `--int8` a third run in each
round: the full index with the int8 model (`--model all-MiniLM-L6-v2-int8`, made and warmed
before anything is timed), its chunks/s against the raw encode's, and its vectors' cosine to the
raw encode's float32 vectors. It takes about as long as
embedding the corpus 2 * repeats times: about 6 minutes for traefik on 2 cores.

Data: the corpus is copied into a temporary directory (the shared copy is never touched), made a
git repository and committed in one commit, with a fixed identity and no user or system git
configuration. docshelf reads it as `open_workspace(copy, docs=[ROOT])` does for
`docshelf index copy --docs ROOT`: from git's objects at that commit.

Method. LocalEmbedder (the packaged all-MiniLM-L6-v2, on the device it picks) is loaded and warmed
before anything is timed; its load is reported alone. Every figure below uses that one model
object in this process, so the raw encode and the indexer compete on equal terms.
- Raw encode: the exact texts the indexer embeds for the commit (embedding_input of every chunk
  that file_chunks cuts from each file read_docs returns), each distinct text once, as the indexer
  deduplicates them by content hash, passed to the model's `encode` in one call with
  LocalEmbedder's arguments (batch_size, normalize_embeddings, convert_to_numpy). Reading and
  chunking are not in this time: it is the floor the indexer's embedding cannot beat.
- Full index: a fresh SQLite store under /tmp (opened untimed, as the composition root opens it
  once), then `Indexer(store, embedder, workspace).index(commit)` timed end to end: git, chunking,
  hashing, the store's lookup of reusable vectors, embedding, writing and promoting. The progress
  callback stamps each phase. The set of texts the indexer embeds is checked to be the raw
  encode's, and the stored vectors to match the raw encode's.
- The two alternate, `--repeats` times (encode, index, encode, index, ...), because this machine's
  speed drifts; overhead % = (median index - median encode) / median encode * 100.
- No-op re-index of the indexed commit, with the embedder wrapped to count its calls (asserted to
  stay at zero): (a) the indexer that indexed it, again (settled in process: no store query but
  the chunk count); (b) a new Indexer on the same open store, as the sync hook of a restarted
  server would run it (the workspace lock, one EXISTS query, promote and prune); (c) a new store
  handle and a new Indexer; (d) `docshelf index COPY --docs ROOT --ref COMMIT --store FILE --json`
  as a subprocess, the whole process including Python's start-up and imports (its JSON must say
  already_indexed, embedded 0).
- One-file commit: a new paragraph is added at the end of one section of a mid-sized doc (the
  docs nearest the median size in turn, a section kept whole so exactly one chunk changes, which
  is checked), committed, and indexed by a new Indexer on the store holding the previous commit.
  Each run changes another file on top of the last. Reported: the chunks of the commit, those
  embedded and reused, embedder calls, the time, the speed-up against the median full index, and
  read_docs of that commit alone (median of READ_RUNS calls) for context.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from docshelf.chunking import embedding_input, title_input
from docshelf.config import EMBED_BATCH_SIZE, MAX_CHUNK_BYTES
from docshelf.embedders.local import INT8_MODEL, LocalEmbedder
from docshelf.indexer import Indexer, IndexResult, Progress, content_hash, file_chunks
from docshelf.rows import Vector
from docshelf.stores import SQLiteStore, open_store
from docshelf.workspace import DocFile, GitWorkspace, open_workspace
from report import GIT_ENV, cpu_model, markdown_table, version

# The shared corpora sit beside the repository: <parent of repo>/shared/data/corpora.
DEFAULT_CORPUS = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora" / "traefik"
)
DEFAULT_DOCS = "docs"

# The goals of the issue.
# Issue 16: a full index at least this many times the raw encode's chunks/s.
GOAL_ENCODE_SPEEDUP = 1.5
GOAL_OVERHEAD_PERCENT = 10.0
GOAL_NOOP_MS = 100.0
GOAL_SPEEDUP = 20.0

# Two rounds of encode and index: each round costs two embeddings of the corpus (3 minutes for
# traefik on 2 cores), and two show how far the machine drifts.
DEFAULT_REPEATS = 2
# A no-op takes milliseconds: 20 calls give a steady median.
DEFAULT_NOOP_RUNS = 20
# The command line costs a Python start-up each: 5 are enough for its median.
DEFAULT_CLI_RUNS = 5
# Three one-file commits, each on another file, for a median.
DEFAULT_ONE_FILE_RUNS = 3
# Calls of read_docs timed for the git read alone.
READ_RUNS = 10

# Texts embedded once, untimed, after the load: the first batches of a model are slower.
WARM_UP_TEXTS = 64

# The rows printed on stderr for --profile.
PROFILE_ROWS = 25

WORKSPACE = "bench"

# The paragraph a one-file commit adds (run number filled in, so each is new text).
NEW_PARAGRAPH = (
    "Benchmark note {n}: this paragraph was added by bench/indexing.py to measure the indexing "
    "of a commit that changes one file; it is not part of the original documentation."
)

MS = 1000.0
BYTES_PER_MB = 1_000_000


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the embedder, counted ------------------------------------------------------------------


@dataclass(slots=True)
class CountingEmbedder:
    """LocalEmbedder with a count of its calls, and the texts it was given."""

    inner: LocalEmbedder
    calls: int = 0
    texts: list[str] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def batch_chars(self) -> int:
        return self.inner.batch_chars

    @property
    def batch_text_chars(self) -> int:
        return self.inner.batch_text_chars

    # The indexer's own batch size, even on a GPU (bench/gpu.py measures the device's batches).
    batch_texts: ClassVar[int | None] = None

    def embed(self, texts: list[str]) -> Vector:
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.embed(texts)

    def embed_documents(self, texts: list[str]) -> Vector:
        """What the indexer calls (the local model's batches, in its precision)."""
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def reset(self) -> None:
        self.calls = 0
        self.texts = []


# -- the repository -------------------------------------------------------------------------


def git(work_tree: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(work_tree), *args], capture_output=True, check=True, env=GIT_ENV
    )
    return done.stdout.decode().strip()


def make_repository(corpus: Path, into: Path) -> tuple[Path, str]:
    """A writable copy of `corpus` committed as a new git repository; its work tree and commit."""
    work_tree = into / corpus.name
    # copyfile, not copy2: the shared corpus is read-only, and the copy must take new commits.
    shutil.copytree(corpus, work_tree, symlinks=True, copy_function=shutil.copyfile)
    for directory, _dirs, _files in os.walk(work_tree):
        os.chmod(directory, 0o755)
    git(work_tree, "init", "--quiet", "--initial-branch=main")
    git(work_tree, "add", "--all")
    git(work_tree, "commit", "--quiet", "-m", "corpus")
    return work_tree, git(work_tree, "rev-parse", "HEAD")


def embedded_texts(
    ws: GitWorkspace, commit: str, model_id: str
) -> tuple[list[str], list[str], int, int]:
    """The texts the indexer embeds for `commit` into an empty store: each distinct chunk input,
    and apart from them each distinct file title (title_input of the file's path and first
    heading), each sorted by length as it sorts them; and the commit's files and chunks."""
    docs = ws.read_docs(commit)
    chunks = [c for f in docs.files for c in file_chunks(f)]
    distinct: dict[str, str] = {}
    firsts: dict[str, str] = {}
    for chunk in chunks:
        text = embedding_input(chunk)
        distinct.setdefault(content_hash(model_id, text), text)
        firsts.setdefault(chunk.path, chunk.heading)
    titles: dict[str, str] = {}
    for path, heading in firsts.items():
        text = title_input(path, heading)
        titles.setdefault(content_hash(model_id, text), text)
    texts = sorted(distinct.values(), key=len)
    return texts, sorted(titles.values(), key=len), len(docs.files), len(chunks)


@dataclass(frozen=True, slots=True)
class Change:
    path: str
    line: int  # the new paragraph follows this line (1-based)
    commit: str


def commit_one_change(
    ws: GitWorkspace, work_tree: Path, parent: str, n: int, used: set[str]
) -> Change:
    """Add NEW_PARAGRAPH at the end of one section of a mid-sized doc not in `used`, commit it,
    and check that exactly one chunk's embedding input changed."""
    docs = ws.read_docs(parent)
    paragraph = NEW_PARAGRAPH.format(n=n)
    by_size = sorted(docs.files, key=lambda f: (len(f.text.encode()), f.path))
    median = len(by_size[len(by_size) // 2].text.encode())
    candidates = sorted(by_size, key=lambda f: (abs(len(f.text.encode()) - median), f.path))
    for file in candidates:
        if file.path in used or file.kind != "markdown":
            continue
        chunks = file_chunks(file)
        headings = [c.heading for c in chunks]
        # A section that is one chunk, with room for the paragraph, nearest the file's middle.
        fits = [
            c
            for c in chunks
            if headings.count(c.heading) == 1
            and len(c.content.encode()) + len(paragraph) + 2 < MAX_CHUNK_BYTES
        ]
        fits.sort(key=lambda c: (abs(c.index - len(chunks) // 2), c.index))
        old = {embedding_input(c) for c in chunks}
        for chunk in fits:
            lines = file.text.split("\n")
            edited = "\n".join([*lines[: chunk.end_line], "", paragraph, *lines[chunk.end_line :]])
            new = {embedding_input(c) for c in file_chunks(DocFile(file.path, edited, "markdown"))}
            if len(new - old) != 1 or len(old - new) != 1:
                continue
            (work_tree / file.path).write_text(edited, encoding="utf-8")
            git(work_tree, "commit", "--quiet", "-am", f"one-file change {n}: {file.path}")
            used.add(file.path)
            return Change(file.path, chunk.end_line, git(work_tree, "rev-parse", "HEAD"))
    raise SystemExit("no doc has a section where one new paragraph changes exactly one chunk")


# -- timing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Phases:
    """Progress callback: stamps when each phase of an index run is reported."""

    label: str
    started: float = field(default_factory=time.perf_counter)
    marks: list[tuple[Progress, float]] = field(default_factory=list)
    last_line: float = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.perf_counter()
        self.marks.append((p, now))
        if p.phase != "embedding" or p.embedded == p.to_embed or now - self.last_line > 15:
            self.last_line = now
            progress(
                f"{self.label}: {p.phase}, {p.files} files, {p.chunks} chunks, embedded "
                f"{p.embedded}/{p.to_embed}, reused {p.reused} ({now - self.started:.1f} s)"
            )

    def split(self, ended: float) -> dict[str, float]:
        """Seconds per phase: read+chunk+hash, lookup, embed, rows, write+promote."""
        stamps: dict[str, float] = {}
        for p, t in self.marks:
            stamps.setdefault(p.phase, t)
            if p.phase == "embedding":
                stamps["embedded"] = t
        reading = stamps["reading"]
        embedding = stamps.get("embedding", reading)
        embedded = stamps.get("embedded", embedding)
        writing = stamps["writing"]
        return {
            "read git, chunk, hash": reading - self.started,
            "look up stored vectors": embedding - reading,
            "embed": embedded - embedding,
            "build rows": writing - embedded,
            "write, promote, prune": ended - writing,
        }


def timed_index(indexer: Indexer, commit: str, label: str) -> tuple[float, IndexResult, Phases]:
    phases = Phases(label)
    phases.started = time.perf_counter()
    result = indexer.index(commit, phases)
    return time.perf_counter() - phases.started, result, phases


def raw_encode(model: Any, texts: list[str], batch_size: int) -> tuple[float, Vector]:
    started = time.perf_counter()
    # LocalEmbedder.embed's arguments, all texts in one call.
    out = model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return time.perf_counter() - started, np.ascontiguousarray(out, dtype=np.float32)


def median_ms(seconds: Sequence[float]) -> float:
    return statistics.median(seconds) * MS


@dataclass(frozen=True, slots=True)
class Noop:
    case: str
    seconds: list[float]
    calls: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class OneFile:
    change: Change
    seconds: float
    result: IndexResult
    calls: int
    read_s: float
    phases: dict[str, float]


def noop_runs(
    store: SQLiteStore,
    store_path: Path,
    settled: Indexer,
    embedder: CountingEmbedder,
    ws: GitWorkspace,
    commit: str,
    runs: int,
) -> list[Noop]:
    def check(result: IndexResult) -> None:
        if not result.already_indexed or result.embedded:
            raise SystemExit(f"a no-op re-index embedded {result.embedded} chunks")

    cases: list[Noop] = []
    embedder.reset()
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        check(settled.index(commit))
        seconds.append(time.perf_counter() - started)
    cases.append(Noop("(a) the same Indexer again", seconds, embedder.calls))

    embedder.reset()
    seconds = []
    for _ in range(runs):
        indexer = Indexer(store, embedder, ws)
        started = time.perf_counter()
        check(indexer.index(commit))
        seconds.append(time.perf_counter() - started)
        indexer.close()
    cases.append(Noop("(b) a new Indexer, same open store", seconds, embedder.calls))

    embedder.reset()
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        with open_store(str(store_path), model_id=embedder.model_id, dim=embedder.dim) as other:
            indexer = Indexer(other, embedder, ws)
            check(indexer.index(commit))
            indexer.close()
        seconds.append(time.perf_counter() - started)
    cases.append(Noop("(c) a new store handle and Indexer", seconds, embedder.calls))
    return cases


def cli_runs(work_tree: Path, docs: str, store_path: Path, commit: str, runs: int) -> Noop:
    """`docshelf index` as a user runs it, in a new process each time."""
    script = Path(sys.executable).with_name("docshelf")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "docshelf.cli"]
    command += ["index", str(work_tree), "--docs", docs, "--ref", commit, "--workspace", WORKSPACE]
    command += ["--store", str(store_path), "--json"]
    # The user's own DOCSHELF_* settings must not change which store or embedder is used.
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSHELF_")}
    seconds, inner = [], []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=False, env=env)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip()
            raise SystemExit(f"{shlex.join(command)} exited with {done.returncode}: {said}")
        answer = json.loads(done.stdout)
        if not answer["already_indexed"] or answer["embedded"]:
            raise SystemExit(f"docshelf index re-indexed {commit}: {answer}")
        inner.append(answer["seconds"])
    return Noop(
        "(d) `docshelf index ... --json`, a new process",
        seconds,
        0,
        f"its own `seconds` (the index call): median {median_ms(inner):.1f} ms",
    )


def profile_full_index(
    embedder: CountingEmbedder, ws: GitWorkspace, commit: str, store_path: Path, out: Path
) -> None:
    with open_store(str(store_path), model_id=embedder.model_id, dim=embedder.dim) as store:
        indexer = Indexer(store, embedder, ws)
        profiler = cProfile.Profile()
        profiler.enable()
        indexer.index(commit)
        profiler.disable()
        indexer.close()
    profiler.dump_stats(out)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(PROFILE_ROWS)
    print(text.getvalue(), file=sys.stderr)
    progress(f"profile of one full index written to {out}")


# -- report ---------------------------------------------------------------------------------


def overhead(index_s: float, encode_s: float) -> float:
    return (index_s - encode_s) / encode_s * 100


def verdict(ok: bool, text: str) -> str:
    return f"{'met' if ok else 'MISSED'}: {text}"


# -- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="%(default)s")
    parser.add_argument("--docs", default=DEFAULT_DOCS, help="docs root in it (%(default)s)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="%(default)s")
    parser.add_argument("--noop-runs", type=int, default=DEFAULT_NOOP_RUNS, help="%(default)s")
    parser.add_argument("--cli-runs", type=int, default=DEFAULT_CLI_RUNS, help="%(default)s")
    parser.add_argument(
        "--one-file-runs", type=int, default=DEFAULT_ONE_FILE_RUNS, help="%(default)s"
    )
    parser.add_argument("--profile", type=Path, help="cProfile one more full index into FILE")
    parser.add_argument("--int8", action="store_true", help="also index with the int8 model")
    args = parser.parse_args(argv)
    if min(args.repeats, args.noop_runs, args.cli_runs, args.one_file_runs) < 1:
        parser.error("every count must be at least 1")
    if not args.corpus.is_dir():
        parser.error(f"no corpus directory at {args.corpus}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = os.getloadavg()
    local = LocalEmbedder()
    embedder = CountingEmbedder(local)

    with tempfile.TemporaryDirectory(prefix="docshelf-bench-indexing-", dir="/tmp") as tmp_name:
        tmp = Path(tmp_name)
        work_tree, commit = make_repository(args.corpus, tmp)
        ws = open_workspace(
            str(work_tree), docs=[args.docs], name=WORKSPACE, mirrors_dir=tmp / "mirrors"
        )
        assert isinstance(ws, GitWorkspace)
        texts, titles, files, chunks = embedded_texts(ws, commit, local.model_id)
        # The raw encode embeds what the index embeds: the chunks and the files' titles.
        everything = sorted([*texts, *titles], key=len)
        position = {text: i for i, text in enumerate(everything)}
        size = sum(len(f.text.encode()) for f in ws.read_docs(commit).files)
        progress(
            f"{files} files, {chunks} chunks, {len(texts)} distinct texts and "
            f"{len(titles)} titles to embed"
        )

        started = time.perf_counter()
        local.embed(texts[:1])
        load_s = time.perf_counter() - started
        model = local._load()  # the very model object LocalEmbedder.embed calls
        local.embed(texts[-WARM_UP_TEXTS:])  # the raw encode's float32
        local.embed_documents(texts[-WARM_UP_TEXTS:])  # the indexer's precision, settled
        progress(f"model loaded in {load_s:.1f} s on {local.device}, warmed")
        int8 = LocalEmbedder(INT8_MODEL) if args.int8 else None
        if int8 is not None:
            int8.embed_documents(texts[-WARM_UP_TEXTS:])  # made once per machine, then loaded
        int8_s: list[float] = []
        int8_cosines: Vector | None = None

        encode_s: list[float] = []
        index_s: list[float] = []
        encode_cpu: list[float] = []
        index_cpu: list[float] = []
        phases: list[dict[str, float]] = []
        calls: list[int] = []
        vectors: Vector | None = None
        store_path = tmp / "store.sqlite3"
        last: tuple[SQLiteStore, Indexer] | None = None
        for r in range(args.repeats):
            progress(f"round {r + 1}/{args.repeats}: raw encode of {len(everything)} texts")
            cpu = time.process_time()
            seconds, encoded = raw_encode(model, everything, local.batch_size)
            vectors = encoded[[position[t] for t in texts]]  # the chunks', to check the store's
            encode_cpu.append(time.process_time() - cpu)
            encode_s.append(seconds)
            progress(
                f"round {r + 1}: raw encode {seconds:.1f} s ({len(everything) / seconds:.1f}/s)"
            )
            if last is not None:
                last[1].close()
                last[0].close()
                store_path.unlink()
            store = open_store(str(store_path), model_id=local.model_id, dim=local.dim)
            assert isinstance(store, SQLiteStore)
            indexer = Indexer(store, embedder, ws)
            last = (store, indexer)
            embedder.reset()
            cpu = time.process_time()
            seconds, result, stamps = timed_index(indexer, commit, f"round {r + 1} index")
            index_cpu.append(time.process_time() - cpu)
            ended = stamps.started + seconds
            index_s.append(seconds)
            phases.append(stamps.split(ended))
            calls.append(embedder.calls)
            if len(embedder.texts) != len(everything) or set(embedder.texts) != set(everything):
                raise SystemExit("the indexer embedded other texts than the raw encode")
            progress(
                f"round {r + 1}: index {seconds:.1f} s, overhead "
                f"{overhead(seconds, encode_s[-1]):+.1f}%; CPU {encode_cpu[-1]:.1f} s and "
                f"{index_cpu[-1]:.1f} s, load average {os.getloadavg()[0]:.2f}"
            )
            if int8 is not None:
                int8_path = tmp / f"int8-{r}.sqlite3"
                with open_store(str(int8_path), model_id=int8.model_id, dim=int8.dim) as quick:
                    indexer8 = Indexer(quick, int8, ws)
                    seconds, result, _ = timed_index(indexer8, commit, f"round {r + 1} int8")
                    indexer8.close()
                    assert result.embedded == len(texts)
                    int8_s.append(seconds)
                    found = quick.embeddings_for(
                        [content_hash(int8.model_id, t) for t in texts], int8.model_id
                    )
                    got = np.stack([found[content_hash(int8.model_id, t)] for t in texts])
                    int8_cosines = np.sum(got * vectors, axis=1)
                int8_path.unlink()
                progress(f"round {r + 1}: int8 index {seconds:.1f} s")
        assert last is not None and vectors is not None
        store, settled = last
        hashes = [content_hash(local.model_id, t) for t in texts]
        stored = store.embeddings_for(hashes, local.model_id)
        matrix = np.stack([stored[h] for h in hashes])
        drift = float(np.max(np.abs(matrix - vectors)))
        cosine = float(np.min(np.sum(matrix * vectors, axis=1)))

        progress(f"no-op re-index, {args.noop_runs} runs per case")
        noops = noop_runs(store, store_path, settled, embedder, ws, commit, args.noop_runs)
        progress(f"no-op through the command line, {args.cli_runs} runs")
        noops.append(cli_runs(work_tree, args.docs, store_path, commit, args.cli_runs))

        one_files: list[OneFile] = []
        used: set[str] = set()
        parent = commit
        for n in range(1, args.one_file_runs + 1):
            change = commit_one_change(ws, work_tree, parent, n, used)
            indexer = Indexer(store, embedder, ws)
            embedder.reset()
            seconds, result, stamps = timed_index(indexer, change.commit, f"one-file {n}")
            split = stamps.split(stamps.started + seconds)
            indexer.close()
            reads = []
            for _ in range(READ_RUNS):
                started = time.perf_counter()
                ws.read_docs(change.commit)
                reads.append(time.perf_counter() - started)
            one_files.append(
                OneFile(change, seconds, result, embedder.calls, statistics.median(reads), split)
            )
            parent = change.commit
        settled.close()
        store.close()

        if args.profile is not None:
            progress("one more full index, under cProfile")
            profile_full_index(embedder, ws, commit, tmp / "profile.sqlite3", args.profile)

    encode_med = statistics.median(encode_s)
    index_med = statistics.median(index_s)
    full_over = overhead(index_med, encode_med)
    header = [
        ("command", f"`{shlex.join(sys.orig_argv)}`"),
        ("machine", f"{os.cpu_count()} CPUs ({cpu_model()}), {platform.platform()}"),
        (
            "load average",
            "at the start "
            + ", ".join(f"{x:.2f}" for x in load_before)
            + "; at the end "
            + ", ".join(f"{x:.2f}" for x in os.getloadavg())
            + " (1, 5, 15 min; the benchmark alone makes about 2)",
        ),
        (
            "python",
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), sentence-transformers "
            f"{version('sentence-transformers')}, transformers {version('transformers')}, "
            f"numpy {np.__version__}, SQLite {sqlite3.sqlite_version}",
        ),
        (
            "corpus",
            f"{files} doc files, {size / BYTES_PER_MB:.2f} MB under {args.docs}/ of a one-commit "
            f"git copy of {args.corpus}: {chunks} chunks, {len(texts)} distinct embedding inputs "
            f"and {len(titles)} file titles (the raw encode and the index embed both)",
        ),
        (
            "model",
            f"{local.model_id} (packaged) on {local.device}, loaded in {load_s:.1f} s (not in any "
            f"figure below), warmed with {WARM_UP_TEXTS} texts; encode batch_size "
            f"{local.batch_size} in float32; the indexer's batches at most {EMBED_BATCH_SIZE} "
            f"texts and {local.batch_chars:,} characters per embed call, in {local.precision}",
        ),
    ]
    print()
    for key, value in header:
        print(f"- {key}: {value}")

    print()
    print("Full index against the raw encode of the same texts:")
    print()
    rows = [
        [
            f"round {i + 1}",
            f"{e:.1f}",
            f"{x:.1f}",
            f"{overhead(x, e):+.1f}",
            f"{ec:.1f}",
            f"{xc:.1f}",
            f"{overhead(xc, ec):+.1f}",
            f"{len(everything) / x:.1f}",
            str(c),
        ]
        for i, (e, x, ec, xc, c) in enumerate(
            zip(encode_s, index_s, encode_cpu, index_cpu, calls, strict=True)
        )
    ]
    encode_cpu_med = statistics.median(encode_cpu)
    index_cpu_med = statistics.median(index_cpu)
    rows.append(
        [
            "median",
            f"{encode_med:.1f}",
            f"{index_med:.1f}",
            f"{full_over:+.1f}",
            f"{encode_cpu_med:.1f}",
            f"{index_cpu_med:.1f}",
            f"{overhead(index_cpu_med, encode_cpu_med):+.1f}",
            f"{len(everything) / index_med:.1f}",
            str(int(statistics.median(calls))),
        ]
    )
    print(
        markdown_table(
            [
                "run",
                "raw encode s",
                "full index s",
                "overhead %",
                "raw encode CPU s",
                "full index CPU s",
                "CPU overhead %",
                "texts/s",
                "embed calls",
            ],
            rows,
        )
    )
    print()
    print(
        "s: wall-clock seconds; CPU s: this process's CPU time, all threads (torch uses every "
        "core, so on an idle machine it is about the wall time times the cores; much less "
        "means other processes took cores). overhead % = (index - encode) / encode * 100."
    )
    print()
    print(
        f"The stored vectors differ from the raw encode's by at most {drift:.1e} per component, "
        f"and their cosine to the raw encode's is at least {cosine:.6f} (the same texts, batched "
        f"differently, the index in {local.precision}, the raw encode in float32)."
    )
    if int8_s and int8_cosines is not None:
        int8_med = statistics.median(int8_s)
        print()
        print(
            f"The int8 model ({INT8_MODEL}), a full index in the same rounds: "
            + ", ".join(f"{x:.1f}" for x in int8_s)
            + f" s, median {int8_med:.1f} s, {len(everything) / int8_med:.1f} texts/s, "
            f"{encode_med / int8_med:.2f}x the raw encode's texts/s; its vectors' cosine to "
            f"the raw encode's: lowest {float(int8_cosines.min()):.4f}, median "
            f"{float(np.median(int8_cosines)):.4f}."
        )
    print()
    print("Where a full index spends its time (median of the rounds, per phase):")
    print()
    names = list(phases[0])
    rows = []
    for name in names:
        seconds = statistics.median(p[name] for p in phases)
        rows.append([name, f"{seconds:.2f}", f"{seconds / index_med * 100:.1f}"])
    print(markdown_table(["phase", "seconds", "% of the full index"], rows))

    print()
    print(f"No-op re-index of the indexed commit ({chunks} chunks):")
    print()
    rows = [
        [
            n.case,
            str(len(n.seconds)),
            f"{median_ms(n.seconds):.1f}",
            f"{min(n.seconds) * MS:.1f}",
            f"{max(n.seconds) * MS:.1f}",
            str(n.calls) if not n.note else "not counted (JSON: embedded 0)",
        ]
        for n in noops
    ]
    print(markdown_table(["case", "runs", "median ms", "min ms", "max ms", "embed calls"], rows))
    for n in noops:
        if n.note:
            print()
            print(f"{n.case}: Python start-up and imports included; {n.note}.")

    print()
    print("A commit changing one file, indexed on top of the previous commit:")
    print()
    rows = [
        [
            f"{o.change.path} (+1 paragraph after line {o.change.line})",
            str(o.result.chunks),
            str(o.result.embedded),
            str(o.result.reused),
            str(o.calls),
            f"{o.seconds * MS:.0f}",
            f"{o.read_s * MS:.1f}",
            f"{index_med / o.seconds:.0f}x",
        ]
        for o in one_files
    ]
    one_med = statistics.median(o.seconds for o in one_files)
    rows.append(
        ["median", "", "", "", "", f"{one_med * MS:.0f}", "", f"{index_med / one_med:.0f}x"]
    )
    print(
        markdown_table(
            [
                "changed file",
                "chunks",
                "embedded",
                "reused",
                "embed calls",
                "index ms",
                "read_docs ms",
                "speed-up vs full index",
            ],
            rows,
        )
    )
    print()
    print(
        "Phases of the one-file index (median ms): "
        + ", ".join(
            f"{name} {statistics.median(o.phases[name] for o in one_files) * MS:.0f}"
            for name in names
        )
        + "."
    )

    in_process = [n for n in noops if not n.note]
    worst = max(in_process, key=lambda n: statistics.median(n.seconds))
    cli = next(n for n in noops if n.note)
    print()
    for line in [
        verdict(
            encode_med / index_med >= GOAL_ENCODE_SPEEDUP,
            f"the full index makes {len(everything) / index_med:.1f} texts/s against the raw "
            f"encode's {len(everything) / encode_med:.1f}: {encode_med / index_med:.2f}x, with the "
            f"default settings (precision {local.precision}); goal >= {GOAL_ENCODE_SPEEDUP:g}x",
        ),
        verdict(
            full_over < GOAL_OVERHEAD_PERCENT,
            f"pipeline overhead {full_over:+.1f}% (full index {index_med:.1f} s against raw "
            f"encode {encode_med:.1f} s, medians); goal < {GOAL_OVERHEAD_PERCENT:g}%",
        ),
        verdict(
            median_ms(worst.seconds) < GOAL_NOOP_MS and all(n.calls == 0 for n in noops),
            f"no-op re-index in process at most {median_ms(worst.seconds):.1f} ms median "
            f"({worst.case}), zero embedder calls; goal < {GOAL_NOOP_MS:g} ms. Through the "
            f"command line, a new process each time: {median_ms(cli.seconds):.0f} ms",
        ),
        verdict(
            index_med / one_med >= GOAL_SPEEDUP,
            f"one-file commit {one_med * MS:.0f} ms median, {index_med / one_med:.0f}x faster "
            f"than the full index, embedding "
            + "/".join(str(o.result.embedded) for o in one_files)
            + f" chunk(s); goal >= {GOAL_SPEEDUP:g}x",
        ),
    ]:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
