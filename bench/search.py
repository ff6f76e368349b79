"""Search latency and recall: the SQLite and PostgreSQL stores on real chunk embeddings.

Run it from the repository root with

    .venv/bin/python bench/search.py    # both stores at 10k and 100k chunks, 300 queries
    .venv/bin/python bench/search.py --sizes 10000 --stores sqlite --queries 100

Options: `--sizes N ...` sets the chunk counts, `--stores sqlite postgresql` the stores,
`--queries N` how many queries of each kind, `--repeats N` how many timed rounds of them,
`--ef-search N ...` the hnsw.ef_search values whose recall is measured on PostgreSQL,
`--corpora DIR` another folder of Markdown, `--questions DIR` other evaluation sets, `--cache DIR`
where the embeddings are kept.

Data: every `.md` file of the shared corpora (`../shared/data/corpora` beside the repository:
traefik, fastapi, rust-book) is cut with split_markdown, and embedding_input(chunk) of each chunk
is embedded with LocalEmbedder (the packaged all-MiniLM-L6-v2). That takes minutes on 2 cores,
so the vectors are cached under ~/.cache/docshelf-bench, keyed by the model and a hash of the
texts, and reused. A size above the corpus's chunk count is reached by copies: copy 0 of a chunk
is the chunk itself; copy c > 0 has the chunk's vector plus Gaussian noise (NOISE_SIGMA per
dimension), normalised again, and the chunk's content with a marker line, under the path
`bench-copy-<c>/<path>`. All rows are in one workspace and one ref: no second ref shares the table.

Queries: `--queries` phrases of 2 to 5 consecutive words of the corpus's section titles (seeded),
each used as it is for `search_text` and, embedded with the same model, for `search` (k = 10).
They are short questions, unlike any stored chunk, as an agent's queries are. For contrast, the
PostgreSQL recall is also measured with as many real questions of the shared evaluation sets
(`../shared/data/eval/*/queries.jsonl`, about other documentation; `--questions DIR`), and with
as many chunk queries: a random real chunk's vector plus the copies' noise, which look like the
stored vectors.

Method: per store and size, a fresh store (a SQLite file under /tmp; a new database on a PostgreSQL
16 + pgvector server started here from the `pgserver` package, data under /tmp, stopped and removed
at the end) is built with open_store and one replace_doc_chunks of all rows, timed together. On
PostgreSQL that includes the HNSW index, built row by row as the rows are copied in. The first
search is timed alone (SQLite loads the ref's matrix then). On PostgreSQL, whose autovacuum is
turned off here so that statistics come only from the store itself (replace_doc_chunks ends with
ANALYZE), the search plan and FRESH_QUERIES searches are then measured right after the build,
ANALYZE is run once more and timed, and the plan is shown again. After a warm-up pass over WARM_UP
queries, each query is timed alone with time.perf_counter, over `--repeats` rounds of all queries
(search first, then search_text), and p50/p99 are taken over every timed call. recall@10 compares
the first round's hits with the exact top 10 of numpy over the same vectors. On PostgreSQL the store
is then opened once per `--ef-search` value and every query is run once more, for the recall and the
p50 at that value.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from platformdirs import user_cache_dir

from docshelf.chunking import Chunk, embedding_input, split_markdown
from docshelf.chunking.markdown import HEADING_SEPARATOR
from docshelf.config import DEFAULT_EF_SEARCH
from docshelf.embedders.local import LocalEmbedder
from docshelf.rows import ChunkRow, StoredHit
from docshelf.stores import open_store
from report import cpu_model, markdown_table, version

# The shared corpora sit beside the repository: <parent of repo>/shared/data/corpora.
DEFAULT_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora"
# Real questions of the shared evaluation sets (eval/*/queries.jsonl), about other documentation:
# held-out questions, phrased as people ask them.
DEFAULT_QUESTIONS = DEFAULT_CORPORA.parent / "eval"

# ~/.cache/docshelf-bench on Linux (XDG_CACHE_HOME is honoured).
DEFAULT_CACHE = Path(user_cache_dir("docshelf-bench", appauthor=False))

# The store sizes of the issue: a large team's docs, and ten times that.
DEFAULT_SIZES = (10_000, 100_000)
STORES = ("sqlite", "postgresql")

# 300 queries give a stable p50 and a p99 set by the three slowest calls of each round.
DEFAULT_QUERIES = 300
# Three rounds: this machine's speed drifts, and 900 calls of each kind show it less than 300.
DEFAULT_REPEATS = 3
# Untimed queries before the timed rounds: caches, the pool's connections, the planner.
WARM_UP = 30
# Queries timed on PostgreSQL right after the build: enough for a median, few
# enough that a plan without the HNSW index (a sort of the whole ref) does not take minutes.
FRESH_QUERIES = 20

# pgvector's default (40), docshelf's DEFAULT_EF_SEARCH, and other lists up to pgvector's limit
# (1000), to find the value that reaches GOAL_RECALL.
DEFAULT_EF_VALUES = tuple(sorted({40, 100, DEFAULT_EF_SEARCH, 200, 400, 800, 1000}))

# What the agent asks for: the ten best chunks.
K = 10

# The goal of the issue: a vector query at 100k chunks under 5 ms at the median on both stores,
# and recall@10 of at least 0.95 on PostgreSQL.
GOAL_P50_MS = 5.0
GOAL_RECALL = 0.95

# Per-dimension noise of a copy. A unit vector of 384 dimensions plus noise of this sigma has
# cosine 1 / sqrt(1 + 384 * sigma^2) = 0.93 to the original; two copies of one chunk, 0.87. Close
# enough that copies crowd around their chunk as near-duplicate docs do, far enough that the top 10
# is not ten ties.
NOISE_SIGMA = 0.02

# Everything random here (copies, queries) comes from this seed, so runs are comparable.
SEED = 20_240_611

WORKSPACE = "bench"
REF = "main"

# Query phrases: 2 to 5 consecutive words of one section title, with at least one word of
# MIN_KEY_WORD letters or more, so a phrase is not only "to the".
PHRASE_WORDS = (2, 5)
MIN_KEY_WORD = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")

# Chunks embedded per call: sorted by length first, so each batch pads little, and a progress
# line per call shows the embedding is moving.
EMBED_CALL = 512

# Exact search multiplies this many queries at a time by the whole matrix (memory stays small).
EXACT_BATCH = 32

MS = 1000.0
BYTES_PER_MB = 1_000_000


@dataclass(frozen=True, slots=True)
class Corpus:
    chunks: list[Chunk]
    vectors: NDArray[np.float32]  # one L2-normalised row per chunk
    files: int
    bytes: int
    cache: str  # where the vectors came from


@dataclass(frozen=True, slots=True)
class Data:
    """The rows of one size, their vectors, and the row each (path, chunk) names."""

    rows: list[ChunkRow]
    vectors: NDArray[np.float32]
    index_of: dict[tuple[str, int], int]
    copy_cosine: float  # mean cosine of a copy (c > 0) to its chunk; nan when there is none


@dataclass(frozen=True, slots=True)
class Result:
    store: str
    size: int
    build_s: float
    first_search_ms: float
    search_ms: tuple[float, float]  # p50, p99
    text_ms: tuple[float, float]
    text_empty: int  # text queries that found nothing
    recall: float


@dataclass(frozen=True, slots=True)
class Fresh:
    """PostgreSQL right after the build, before the planner has statistics; then ANALYZE."""

    size: int
    plan_before: str
    p50_before_ms: float
    analyze_s: float
    plan_after: str
    index: str  # the HNSW index's name and size


@dataclass(frozen=True, slots=True)
class EfResult:
    size: int
    ef_search: int
    recall: float
    worst: float  # the lowest recall of any one query
    question_recall: float  # with the eval sets' questions instead of the phrases
    chunk_recall: float  # with chunk queries (a real chunk's vector plus noise) instead
    p50_ms: float


# -- data ----------------------------------------------------------------------------------


def load_chunks(corpora: Path) -> tuple[list[Chunk], int, int]:
    """The chunks of every `.md` file under `corpora`, in path order; and files and bytes read."""
    chunks: list[Chunk] = []
    files = size = 0
    for path in sorted(corpora.rglob("*.md")):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        files += 1
        size += len(raw)
        chunks.extend(split_markdown(path.relative_to(corpora).as_posix(), raw.decode("utf-8")))
    return chunks, files, size


def cached_embeddings(
    texts: Sequence[str], embedder: LocalEmbedder, cache_dir: Path, kind: str
) -> tuple[NDArray[np.float32], str]:
    """The embedding of each text, from `cache_dir` when this model embedded these texts before.

    Returns the vectors and a line saying where they came from.
    """
    digest = hashlib.sha256(embedder.model_id.encode())
    for text in texts:
        digest.update(b"\0" + text.encode("utf-8", "surrogatepass"))
    path = cache_dir / f"{kind}-{digest.hexdigest()[:16]}.npz"
    if path.is_file():
        with np.load(path) as cached:
            vectors = np.ascontiguousarray(cached["vectors"], dtype=np.float32)
        if vectors.shape == (len(texts), embedder.dim):
            return vectors, f"cached in {path}"
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.empty((len(texts), embedder.dim), dtype=np.float32)
    start = time.perf_counter()
    for first in range(0, len(order), EMBED_CALL):
        part = order[first : first + EMBED_CALL]
        vectors[part] = embedder.embed([texts[i] for i in part])
        done = first + len(part)
        rate = done / (time.perf_counter() - start)
        progress(f"embedded {done}/{len(texts)} {kind} texts ({rate:.0f}/s)")
    seconds = time.perf_counter() - start
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, vectors=vectors)
    partial.replace(path)
    return vectors, f"embedded in {seconds:.0f} s, now cached in {path}"


def load_corpus(corpora: Path, embedder: LocalEmbedder, cache_dir: Path) -> Corpus:
    chunks, files, size = load_chunks(corpora)
    vectors, source = cached_embeddings(
        [embedding_input(c) for c in chunks], embedder, cache_dir, "corpora"
    )
    return Corpus(chunks, vectors, files, size, source)


def query_phrases(chunks: Sequence[Chunk], count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct phrases of 2-5 consecutive words of a section title.

    Raises:
        SystemExit: the corpus's titles do not give that many phrases.
    """
    titles = sorted(
        {
            words
            for c in chunks
            if len(words := tuple(_WORD.findall(c.heading.split(HEADING_SEPARATOR)[-1])))
            >= PHRASE_WORDS[0]
        }
    )
    low, high = PHRASE_WORDS
    phrases: dict[str, None] = {}
    attempts = 0
    while len(phrases) < count and attempts < count * 100:
        attempts += 1
        words = titles[int(rng.integers(len(titles)))]
        n = int(rng.integers(low, min(high, len(words)) + 1))
        at = int(rng.integers(len(words) - n + 1))
        phrase = words[at : at + n]
        if any(len(w) >= MIN_KEY_WORD for w in phrase):
            phrases[" ".join(phrase).lower()] = None
    if len(phrases) < count:
        raise SystemExit(f"the corpus's titles give only {len(phrases)} distinct query phrases")
    return list(phrases)


def replicate(corpus: Corpus, size: int, rng: np.random.Generator) -> Data:
    """`size` rows: the corpus's chunks in a seeded order, then noisy copies of them (see top)."""
    real = len(corpus.chunks)
    dim = corpus.vectors.shape[1]
    order = rng.permutation(real)
    originals = np.resize(order, size)  # row i copies chunk originals[i]
    vectors = corpus.vectors[originals]  # a new array, noise goes in place
    copies = size - min(size, real)
    if copies:
        noise = rng.normal(0.0, NOISE_SIGMA, size=(copies, dim)).astype(np.float32)
        vectors[real:] += noise
        vectors[real:] /= np.linalg.norm(vectors[real:], axis=1, keepdims=True)
        cosine = float(np.mean(np.sum(vectors[real:] * corpus.vectors[originals[real:]], axis=1)))
    else:
        cosine = float("nan")
    rows: list[ChunkRow] = []
    index_of: dict[tuple[str, int], int] = {}
    for i, chunk_at in enumerate(originals.tolist()):
        chunk = corpus.chunks[chunk_at]
        copy = i // real
        path = f"bench-copy-{copy}/{chunk.path}" if copy else chunk.path
        content = f"{chunk.content}\n\n<!-- bench copy {copy} -->" if copy else chunk.content
        index_of[(path, chunk.index)] = i
        rows.append(
            ChunkRow(
                path=path,
                chunk=chunk.index,
                heading=chunk.heading,
                content=content,
                start_line=chunk.start_line,
                end_line=chunk.end_line,
                content_hash=hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest(),
                embedding=vectors[i],
            )
        )
    return Data(rows, vectors, index_of, cosine)


def chunk_queries(corpus: Corpus, count: int, rng: np.random.Generator) -> NDArray[np.float32]:
    """Vectors like the stored ones: `count` real chunks' vectors plus NOISE_SIGMA noise."""
    picked = rng.choice(len(corpus.chunks), size=count, replace=count > len(corpus.chunks))
    vectors = corpus.vectors[picked]
    vectors += rng.normal(0.0, NOISE_SIGMA, size=vectors.shape).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def eval_questions(folder: Path, count: int, rng: np.random.Generator) -> list[str]:
    """`count` questions (or all there are) of the evaluation sets under `folder`, seeded.

    Raises:
        SystemExit: there are none.
    """
    texts = sorted(
        {
            str(json.loads(line)["text"])
            for path in folder.glob("*/queries.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        }
    )
    if not texts:
        raise SystemExit(f"no questions in {folder}/*/queries.jsonl; give --questions DIR")
    picked = rng.choice(len(texts), size=min(count, len(texts)), replace=False)
    return [texts[i] for i in sorted(picked.tolist())]


def exact_top(vectors: NDArray[np.float32], queries: NDArray[np.float32]) -> list[set[int]]:
    """The rows of the exact top K of each query by cosine (the vectors are normalised)."""
    tops: list[set[int]] = []
    for first in range(0, len(queries), EXACT_BATCH):
        scores = queries[first : first + EXACT_BATCH] @ vectors.T
        best = np.argpartition(-scores, K - 1, axis=1)[:, :K]
        tops.extend({int(i) for i in row} for row in best)
    return tops


def recalls(
    hits: Sequence[Sequence[StoredHit]], exact: Sequence[set[int]], data: Data
) -> list[float]:
    return [
        len({data.index_of[(h.path, h.chunk)] for h in found} & want) / K
        for found, want in zip(hits, exact, strict=True)
    ]


# -- stores --------------------------------------------------------------------------------


@dataclass
class Postgres:
    """The benchmark's own PostgreSQL server, and a new database per size."""

    server: Any  # pgserver.PostgresServer
    data_dir: Path

    def new_database(self, name: str) -> str:
        import psycopg  # noqa: PLC0415 (only with --stores postgresql)

        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        return str(self.server.get_uri(name))


@contextmanager
def postgres_server() -> Iterator[Postgres]:
    """PostgreSQL from pgserver, its data under /tmp (as root, pgserver runs the server as its
    own user, which cannot enter /root); stopped and removed when the block ends."""
    import pgserver  # noqa: PLC0415 (only with --stores postgresql)
    import psycopg  # noqa: PLC0415

    data_dir = Path(tempfile.mkdtemp(prefix="docshelf-bench-pg-", dir="/tmp"))
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    try:
        # Statistics change only when the benchmark runs ANALYZE: autovacuum would analyze the
        # new table at some moment within a minute of the build, in the middle of a measurement.
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET autovacuum = off")
            conn.execute("SELECT pg_reload_conf()")
        yield Postgres(server, data_dir)
    finally:
        server.cleanup()
        shutil.rmtree(data_dir, ignore_errors=True)


def postgres_facts(url: str) -> dict[str, str]:
    """The server's version and the settings that bear on these numbers."""
    import psycopg  # noqa: PLC0415

    with psycopg.connect(url, autocommit=True) as conn:
        facts = {
            "server": str(_one(conn, "SHOW server_version")),
            "pgvector": str(
                _one(conn, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            ),
        }
        for setting in SETTINGS:
            facts[setting] = str(_one(conn, f"SHOW {setting}"))
    return facts


# Server settings printed with the results.
SETTINGS = ("shared_buffers", "work_mem", "maintenance_work_mem", "autovacuum")


def hnsw_index(url: str) -> str:
    """The HNSW index of the distinct vectors (docs_vectors), with its size; 'MISSING' when
    there is none."""
    import psycopg  # noqa: PLC0415

    with psycopg.connect(url, autocommit=True) as conn:
        index = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE i.indrelid = 'docs_vectors'::regclass AND a.amname = 'hnsw'"
        ).fetchone()
    if index is None:
        return "MISSING"
    name, size = index
    return f"{name} ({size / BYTES_PER_MB:.0f} MB)"


def search_plan(url: str, vector: NDArray[np.float32]) -> str:
    """How PostgreSQL runs the store's vector search now: the scan of EXPLAIN's plan."""
    import psycopg  # noqa: PLC0415
    from pgvector.psycopg import register_vector  # noqa: PLC0415

    from docshelf.stores.postgres_many import WALK_SQL, scope_params  # noqa: PLC0415

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(DEFAULT_EF_SEARCH),))
        plan = [
            line
            for (line,) in conn.execute(
                "EXPLAIN " + WALK_SQL,
                {
                    **scope_params([(WORKSPACE, REF, None)]),
                    "vector": vector,
                    "k": K,
                    "ef": DEFAULT_EF_SEARCH,
                },
            )
        ]
    scans = [line.strip().removeprefix("->").strip() for line in plan if "Scan" in line]
    scan = " then ".join(re.sub(r"\s*\(cost=.*", "", line) for line in scans) or "no scan"
    return scan + (", then Sort" if any("Sort" in line for line in plan) else "")


def settle_postgres(
    url: str, search: Callable[[Any], Any], vectors: Sequence[NDArray[np.float32]]
) -> tuple[str, float, float, str]:
    """The plan and p50 of a search right after the build, the seconds of ANALYZE, and the plan
    after it."""
    import psycopg  # noqa: PLC0415

    plan_before = search_plan(url, vectors[0])
    seconds, _ = timed(search, vectors[:FRESH_QUERIES])
    with psycopg.connect(url, autocommit=True) as conn:
        start = time.perf_counter()
        conn.execute("ANALYZE docs_chunks")
        analyze_s = time.perf_counter() - start
    return plan_before, percentiles_ms(seconds)[0], analyze_s, search_plan(url, vectors[0])


def _one(conn: Any, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


# -- timing --------------------------------------------------------------------------------


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed(call: Callable[[Any], Any], items: Sequence[Any]) -> tuple[list[float], list[Any]]:
    """Seconds of each call, and what each returned."""
    seconds: list[float] = []
    results: list[Any] = []
    for item in items:
        start = time.perf_counter()
        result = call(item)
        seconds.append(time.perf_counter() - start)
        results.append(result)
    return seconds, results


def percentiles_ms(seconds: Sequence[float]) -> tuple[float, float]:
    p50, p99 = np.percentile(np.asarray(seconds) * MS, [50, 99])
    return float(p50), float(p99)


def measure(
    store_kind: str,
    location: str,
    data: Data,
    phrases: Sequence[str],
    query_vectors: NDArray[np.float32],
    exact: Sequence[set[int]],
    repeats: int,
    dim: int,
    model_id: str,
) -> tuple[Result, Fresh | None]:
    size = len(data.rows)
    fresh: Fresh | None = None
    progress(f"{store_kind} {size}: building")
    start = time.perf_counter()
    store = open_store(location, model_id=model_id, dim=dim)
    try:
        store.replace_doc_chunks(WORKSPACE, REF, data.rows)
        build_s = time.perf_counter() - start
        progress(f"{store_kind} {size}: built in {build_s:.1f} s; searching")

        search = functools.partial(store.search, WORKSPACE, REF, k=K)
        search_text = functools.partial(store.search_text, WORKSPACE, REF, k=K)
        vectors = list(query_vectors)
        first_s, _ = timed(search, vectors[:1])
        if store_kind == "postgresql":
            before, p50_before, analyze_s, after = settle_postgres(location, search, vectors)
            fresh = Fresh(size, before, p50_before, analyze_s, after, hnsw_index(location))
            progress(f"{store_kind} {size}: {fresh}")
        timed(search, vectors[:WARM_UP])
        timed(search_text, phrases[:WARM_UP])
        search_s: list[float] = []
        text_s: list[float] = []
        hits: list[Any] = []
        texts: list[Any] = []
        for round_index in range(repeats):
            seconds, found = timed(search, vectors)
            search_s += seconds
            seconds, found_text = timed(search_text, phrases)
            text_s += seconds
            if round_index == 0:
                hits, texts = found, found_text
    finally:
        store.close()
    result = Result(
        store=store_kind,
        size=size,
        build_s=build_s,
        first_search_ms=first_s[0] * MS,
        search_ms=percentiles_ms(search_s),
        text_ms=percentiles_ms(text_s),
        text_empty=sum(1 for found in texts if not found),
        recall=float(np.mean(recalls(hits, exact, data))),
    )
    return result, fresh


def measure_ef(
    url: str,
    ef_values: Sequence[int],
    data: Data,
    query_vectors: NDArray[np.float32],
    exact: Sequence[set[int]],
    others: Sequence[tuple[NDArray[np.float32], Sequence[set[int]]]],
) -> list[EfResult]:
    """Recall and p50 of the phrases per ef_search value, and the recall of each other query set
    (questions, chunk queries) with their exact top 10s."""
    results = []
    vectors = list(query_vectors)
    for ef in ef_values:
        store = open_store(url, model_id=None, dim=None, ef_search=ef)
        try:
            search = functools.partial(store.search, WORKSPACE, REF, k=K)
            timed(search, vectors[:WARM_UP])
            seconds, hits = timed(search, vectors)
            other_hits = [timed(search, list(vectors))[1] for vectors, _ in others]
        finally:
            store.close()
        per_query = recalls(hits, exact, data)
        results.append(
            EfResult(
                size=len(data.rows),
                ef_search=ef,
                recall=float(np.mean(per_query)),
                worst=float(np.min(per_query)),
                question_recall=float(np.mean(recalls(other_hits[0], others[0][1], data))),
                chunk_recall=float(np.mean(recalls(other_hits[1], others[1][1], data))),
                p50_ms=percentiles_ms(seconds)[0],
            )
        )
    return results


# -- report --------------------------------------------------------------------------------

COLUMNS = (
    "store",
    "chunks",
    "build s",
    "search p50 ms",
    "search p99 ms",
    "search_text p50 ms",
    "search_text p99 ms",
    "recall@10",
    "first search ms",
)
EF_COLUMNS = (
    "store",
    "chunks",
    "ef_search",
    "recall@10",
    "worst query",
    "recall@10 questions",
    "recall@10 chunk queries",
    "search p50 ms",
)
FRESH_COLUMNS = (
    "store",
    "chunks",
    "search plan right after the build",
    "search p50 ms right after the build",
    "another ANALYZE s",
    "search plan after it",
    "HNSW index",
)


def result_row(r: Result) -> list[str]:
    return [
        r.store,
        str(r.size),
        f"{r.build_s:.1f}",
        f"{r.search_ms[0]:.2f}",
        f"{r.search_ms[1]:.2f}",
        f"{r.text_ms[0]:.2f}",
        f"{r.text_ms[1]:.2f}",
        f"{r.recall:.3f}",
        f"{r.first_search_ms:.1f}",
    ]


def ef_row(r: EfResult) -> list[str]:
    label = f"{r.ef_search} (default)" if r.ef_search == DEFAULT_EF_SEARCH else str(r.ef_search)
    return [
        "postgresql",
        str(r.size),
        label,
        f"{r.recall:.3f}",
        f"{r.worst:.1f}",
        f"{r.question_recall:.3f}",
        f"{r.chunk_recall:.3f}",
        f"{r.p50_ms:.2f}",
    ]


def fresh_row(f: Fresh) -> list[str]:
    return [
        "postgresql",
        str(f.size),
        f.plan_before,
        f"{f.p50_before_ms:.2f}",
        f"{f.analyze_s:.2f}",
        f.plan_after,
        f.index,
    ]


def verdicts(results: Sequence[Result], ef_results: Sequence[EfResult]) -> list[str]:
    """One line per goal of the issue that these sizes can answer."""
    lines = []
    largest = max(r.size for r in results)
    for r in results:
        if r.size != largest:
            continue
        ok = r.search_ms[0] < GOAL_P50_MS
        lines.append(
            f"{r.store} at {r.size} chunks: search p50 {r.search_ms[0]:.2f} ms "
            f"{'meets' if ok else 'MISSES'} the goal of < {GOAL_P50_MS:g} ms"
        )
    for size in sorted({r.size for r in ef_results}):
        at_size = [r for r in ef_results if r.size == size]
        default = next((r for r in at_size if r.ef_search == DEFAULT_EF_SEARCH), None)
        enough = [r.ef_search for r in at_size if r.recall >= GOAL_RECALL]
        if default is not None:
            ok = default.recall >= GOAL_RECALL
            lines.append(
                f"postgresql at {size} chunks: recall@10 {default.recall:.3f} at the default "
                f"ef_search {DEFAULT_EF_SEARCH} {'meets' if ok else 'MISSES'} the goal of "
                f">= {GOAL_RECALL}"
                + (
                    ""
                    if ok
                    else f"; ef_search {min(enough)} reaches it"
                    if enough
                    else "; no measured ef_search reaches it"
                )
            )
    return lines


# -- main ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(DEFAULT_SIZES),
        help="chunk counts to measure (default: %(default)s)",
    )
    parser.add_argument(
        "--stores",
        nargs="+",
        choices=STORES,
        default=list(STORES),
        help="stores to measure (default: %(default)s)",
    )
    parser.add_argument(
        "--queries",
        type=int,
        default=DEFAULT_QUERIES,
        help="queries of each kind (default: %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help="timed rounds over all queries (default: %(default)s)",
    )
    parser.add_argument(
        "--ef-search",
        type=int,
        nargs="*",
        default=list(DEFAULT_EF_VALUES),
        help="hnsw.ef_search values whose recall is measured on PostgreSQL (default: %(default)s)",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=DEFAULT_CORPORA,
        help="directory whose .md files (recursively) are the data (default: %(default)s)",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=DEFAULT_QUESTIONS,
        help="directory of evaluation sets, */queries.jsonl (default: %(default)s)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="directory of the cached embeddings (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if min(args.sizes) < K:
        parser.error(f"every size must be at least {K}")
    if args.queries < 1 or args.repeats < 1:
        parser.error("--queries and --repeats must be at least 1")
    if not args.corpora.is_dir():
        parser.error(f"no corpora directory at {args.corpora}")
    args.sizes = sorted(dict.fromkeys(args.sizes))
    args.stores = list(dict.fromkeys(args.stores))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    embedder = LocalEmbedder()
    corpus = load_corpus(args.corpora, embedder, args.cache)
    if not corpus.chunks:
        print(f"no chunks in the .md files under {args.corpora}", file=sys.stderr)
        return 1
    phrases = query_phrases(corpus.chunks, args.queries, np.random.default_rng(SEED))
    query_vectors, query_source = cached_embeddings(phrases, embedder, args.cache, "queries")
    chunk_vectors = chunk_queries(corpus, args.queries, np.random.default_rng([SEED, 1]))
    questions = eval_questions(args.questions, args.queries, np.random.default_rng([SEED, 2]))
    question_vectors, _ = cached_embeddings(questions, embedder, args.cache, "questions")

    results: list[Result] = []
    ef_results: list[EfResult] = []
    fresh: list[Fresh] = []
    facts: dict[str, str] = {}
    cosines: dict[int, float] = {}
    with ExitStack() as stack:
        sqlite_dir = Path(tempfile.mkdtemp(prefix="docshelf-bench-sqlite-", dir="/tmp"))
        stack.callback(shutil.rmtree, sqlite_dir, ignore_errors=True)
        postgres = stack.enter_context(postgres_server()) if "postgresql" in args.stores else None
        for size in args.sizes:
            data = replicate(corpus, size, np.random.default_rng([SEED, size]))
            cosines[size] = data.copy_cosine
            exact = exact_top(data.vectors, query_vectors)
            others = (
                [
                    (question_vectors, exact_top(data.vectors, question_vectors)),
                    (chunk_vectors, exact_top(data.vectors, chunk_vectors)),
                ]
                if postgres is not None
                else []
            )
            for store_kind in args.stores:
                if store_kind == "sqlite":
                    location = str(sqlite_dir / f"search-{size}.sqlite3")
                else:
                    assert postgres is not None
                    location = postgres.new_database(f"docshelf_bench_{size}")
                result, settled = measure(
                    store_kind,
                    location,
                    data,
                    phrases,
                    query_vectors,
                    exact,
                    args.repeats,
                    embedder.dim,
                    embedder.model_id,
                )
                results.append(result)
                progress(f"{store_kind} {size}: {result_row(result)}")
                if settled is not None:
                    fresh.append(settled)
                    facts = postgres_facts(location)
                    ef_results += measure_ef(
                        location,
                        args.ef_search,
                        data,
                        query_vectors,
                        exact,
                        others,
                    )
            del data, exact, others

    header = [
        ("command", f"`{shlex.join(sys.orig_argv)}`"),
        ("machine", f"{os.cpu_count()} CPUs ({cpu_model()}), {platform.platform()}"),
        ("python", f"{platform.python_version()}, numpy {np.__version__}"),
        (
            "corpus",
            f"{corpus.files} .md files, {corpus.bytes / BYTES_PER_MB:.2f} MB under "
            f"{args.corpora}: {len(corpus.chunks)} chunks (split_markdown), embedded with "
            f"{embedder.model_id} ({embedder.dim} dimensions), {corpus.cache}",
        ),
        (
            "rows",
            f"one workspace, one ref; the {len(corpus.chunks)} real chunks, then copies with "
            f"Gaussian noise sigma {NOISE_SIGMA} per dimension (mean cosine of a copy to its "
            "chunk: "
            + ", ".join(
                f"none at {s}" if math.isnan(c) else f"{c:.3f} at {s}" for s, c in cosines.items()
            )
            + ")",
        ),
        (
            "queries",
            f"{len(phrases)} phrases of 2-5 words of section titles (seed {SEED}), e.g. "
            + ", ".join(f'"{p}"' for p in phrases[:3])
            + f"; the same phrases embedded for search ({query_source}); for the recall table "
            f"also {len(questions)} eval questions and {len(chunk_vectors)} chunk queries",
        ),
        (
            "timing",
            f"k={K}; {WARM_UP} warm-up queries, then {args.repeats} rounds of all queries, each "
            f"call timed alone; p50/p99 over the {args.repeats * len(phrases)} calls of each kind",
        ),
        ("sqlite", f"SQLite {sqlite3.sqlite_version}, file under /tmp"),
    ]
    if facts:
        header.append(
            (
                "postgresql",
                f"PostgreSQL {facts['server']} from pgserver {version('pgserver')}, pgvector "
                f"{facts['pgvector']}, psycopg {version('psycopg')}, a database per size, "
                "data under /tmp; "
                + ", ".join(f"{name} {facts[name]}" for name in SETTINGS)
                + f"; searched at ef_search {DEFAULT_EF_SEARCH} (DEFAULT_EF_SEARCH)",
            )
        )
    print()
    for key, value in header:
        print(f"- {key}: {value}")
    print()
    print(markdown_table(COLUMNS, [result_row(r) for r in results]))
    print()
    print(
        "build s: open_store + replace_doc_chunks of all rows (PostgreSQL: with the HNSW index). "
        "first search ms: the first search after the build (SQLite loads the matrix then). "
        "recall@10: share of numpy's exact top 10 found, mean over the queries."
    )
    empty = {(r.store, r.size): r.text_empty for r in results if r.text_empty}
    if empty:
        print(
            "search_text found nothing for "
            + ", ".join(f"{n} queries on {s} at {size}" for (s, size), n in empty.items())
            + "."
        )
    if fresh:
        print()
        print(markdown_table(FRESH_COLUMNS, [fresh_row(f) for f in fresh]))
        print()
        print(
            "PostgreSQL right after the build: autovacuum is off here, so the only statistics "
            "are those of the ANALYZE that replace_doc_chunks runs; p50 over the first "
            f"{FRESH_QUERIES} queries. Then ANALYZE once more, timed, and the plan again."
        )
    if ef_results:
        print()
        print(markdown_table(EF_COLUMNS, [ef_row(r) for r in ef_results]))
        print()
        print(
            "One untimed warm-up and one timed pass over all queries per value; worst query: the "
            "lowest recall@10 of any one query. recall@10 questions: the same measure with "
            f"{len(questions)} real questions of {args.questions}/*/queries.jsonl (about other "
            "documentation) instead of the phrases. recall@10 chunk queries: with "
            f"{len(chunk_vectors)} queries that look like stored chunks (a random real chunk's "
            f"vector plus noise of sigma {NOISE_SIGMA}, normalised)."
        )
    print()
    for line in verdicts(results, ef_results):
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
