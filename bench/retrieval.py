"""Retrieval quality: file Hit@5, MRR@10 and span recall@5 of docshelf's search on the shared
evaluation sets, for hybrid, vector-only and text-only ranking, against plain BM25 over whole
files.

Run it from the repository root with

    .venv/bin/python bench/retrieval.py                        # every set, both stores
    .venv/bin/python bench/retrieval.py --sweep                # and the sweep of the ranking
    .venv/bin/python bench/retrieval.py --hnsw                 # and exact against HNSW search
    .venv/bin/python bench/retrieval.py --sets aws-docs-qa --store sqlite   # one set, one store
    .venv/bin/python bench/retrieval.py --model all-MiniLM-L6-v2-int8        # the int8 model

Options: `--eval DIR` another folder of evaluation sets (default: `../shared/data/eval` beside the
repository), `--sets NAME ...` which of them, `--cache DIR` where the SQLite stores are kept
(default ~/.cache/docshelf-bench), `--store STORE ...` which stores (default `sqlite postgresql`;
`postgresql` starts a PostgreSQL server here from pgserver, as the tests do, with a new database
per set, data under /tmp, removed at the end; a `postgresql://` URL uses that database),
`--sweep` also prints the ranking sweep (on SQLite), `--hnsw` also measures hybrid ranking on
PostgreSQL with exact vector search against HNSW at several ef_search values, `--model NAME` the
local model (default: the packaged all-MiniLM-L6-v2; its SQLite stores are then
`retrieval-<set>-<model>.sqlite3`). Documents are embedded as `docshelf index` embeds them
(`embed_documents`, in the precision `--precision auto` picks on this machine), queries as
`docshelf search` embeds them. The first run
embeds every corpus (aws-docs-qa: 19,347 chunks, 23 minutes on 2 cores shared with other work);
later runs re-embed nothing. The SQLite store is always indexed first: the PostgreSQL store takes
its vectors from it (StoredVectors: the same model and input give the same vector), so only
what it lacks is embedded.

Data: each set's corpus folder (aws-docs-qa/docs, anthropic-docs-qa/pages, chroma-chunking with
its corpora/ folder as the docs root) is read as a plain directory (DirectoryWorkspace, the way
`docshelf index DIR` reads a directory outside git), so the indexed paths are the paths the qrels
name: `FILE` of a corpus-id `FILE#anchor` is the file. It is indexed with the packaged model
(LocalEmbedder, all-MiniLM-L6-v2) through the real Indexer into a SQLite store kept at
`<cache>/retrieval-<set>.sqlite3`, workspace `eval-<set>`, and into the PostgreSQL database of
the run. The index is incremental: a re-run finds the ref indexed and embeds nothing; a changed
corpus re-embeds only what changed. Files the workspace skips (over MAX_DOC_BYTES, 1 MiB, or
unreadable) are listed; none is, in these sets.

Method: every query of the set is asked through `Searcher(store, embedder).rank(query, workspace,
ref, 10, mode)` for mode hybrid (the default), vector and text: the ranking, candidate depth and
distinct-passage step of `docshelf search` (neighbouring excerpts of a file joined), with the
constants in src/docshelf/search.py, and no bound per file (bench/answers.py measures
per_file). The query embeddings are computed once per query (a caching wrapper around the
embedder) and shared by the modes and the sweep. From the 10 excerpts:
- file Hit@5: 1 when any of the first 5 excerpts is from a file the qrels name, else 0;
- MRR@10: 1 / the rank of the first excerpt (of 10) from such a file, 0 when none is;
- span recall@5 (sets with spans.jsonl): the share of the query's gold spans that some of the
  first 5 excerpts overlaps by at least one character. An excerpt's character range in the file
  is found from its path and lines: the chunker counts lines in the text after CRLF and lone CR
  became LF and a leading byte order mark was dropped, front matter included (it is not a chunk,
  but its lines count), so the excerpt's start line is located in that prepared text, its stored
  content is searched from there (the piece of a line longer than the chunk budget is a slice of
  that line, so the line alone would be too wide) and must lie within its end line, which the
  script asserts for every excerpt; the prepared offsets are then mapped back to offsets of the
  file's text as indexed (its bytes decoded as UTF-8, no newline translated), which is what the
  gold spans count. The map is the identity unless a file has CR line ends or a byte order mark;
  the script reports how many do (none, in these sets).
Each figure is the mean over the set's queries (span recall: over the queries that have spans).

Reference, "BM25 whole files": Okapi BM25 written here (no library), k1 = 1.2, b = 0.75, idf =
ln(1 + (N - n + 0.5) / (n + 0.5)), over the same files the workspace read, each file one document;
tokens are the runs of letters and digits (Unicode-aware: the pattern [^ non-word _]+) of the
lower-cased text, no stemming, no stop words. Hit@5 and MRR@10 are over its ranked files. It
returns whole files, not excerpts, so its span recall would only say whether the span's file was
found; the table shows n/a.

Sweep (`--sweep`): the vector and text candidates of every query are fetched once at depth
SWEEP_DEPTH, and each configuration is replayed on them (`replay`: what Searcher.rank does, with
search.py's own fuse, fuse_scores and distinct; a prefix of a deeper list is what the store
returns at a smaller depth, and the script checks that the replay of the default configuration
gives exactly the excerpts of the search). Configurations: reciprocal rank fusion and z-score
fusion over a grid of weights and depths, min-max scaling instead of z-scores, file evidence
(each chunk boosted by its file's best fused score; files ranked by their chunks' summed fused
score as a third reciprocal-rank list), a per-file decay that spreads the excerpts over more
files, and bm25's column weights for path, heading and content (the text candidates fetched
again with the SQLite store's bm25() weights set for the trial and restored after). "wins"
counts the comparisons with the vector, text and BM25-whole-files rows that the configuration
wins strictly.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import re
import shlex
import sqlite3
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from platformdirs import user_cache_dir

from docshelf import search as ranking
from docshelf.chunking.text import prepare, text_lines
from docshelf.embedders.local import LocalEmbedder
from docshelf.indexer import Indexer, IndexResult, Progress, content_hash
from docshelf.rows import StoredHit, Vector
from docshelf.search import Fusion, Hit, Mode, Searcher
from docshelf.stores import SQLiteStore, bm25, open_store
from docshelf.stores.bm25 import RefLists
from docshelf.stores.common import query_vector
from docshelf.stores.postgres import PostgresStore
from docshelf.stores.postgres_many import EXACT_SQL, scope_params
from docshelf.stores.terms import BM25_WEIGHTS, ChunkTerms, query_terms
from docshelf.workspace import DirectoryWorkspace, Docs, Selection
from report import cpu_model, markdown_table, postgres_server, version

# The shared evaluation sets sit beside the repository: <parent of repo>/shared/data/eval.
DEFAULT_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "eval"
# ~/.cache/docshelf-bench on Linux (XDG_CACHE_HOME is honoured), as bench/search.py.
DEFAULT_CACHE = Path(user_cache_dir("docshelf-bench", appauthor=False))


@dataclass(frozen=True, slots=True)
class EvalSet:
    """One evaluation set: where its corpus is, relative to the set's folder, and the docs
    root in it, chosen so that the indexed paths are the qrels' paths."""

    name: str
    folder: str
    root: str


SETS = (
    EvalSet("aws-docs-qa", "docs", "."),
    EvalSet("anthropic-docs-qa", "pages", "."),
    EvalSet("chroma-chunking", ".", "corpora"),
)

# The metrics: what the model reads first (5 excerpts, the default top_k) and how high
# the first right file ranks among the 10 excerpts of a longer answer.
HIT_K = 5
MRR_K = 10
SPAN_K = 5

# Okapi BM25's usual constants (Robertson et al.; Lucene's defaults).
BM25_K1 = 1.2
BM25_B = 0.75

# Candidates fetched per ranking for the sweep: deeper than any depth it tries.
SWEEP_DEPTH = 400

MS = 1000.0

# Progress lines on stderr during a long embedding, at most this often.
PROGRESS_SECONDS = 20.0

_TOKEN = re.compile(r"[^\W_]+")

ROWS: tuple[tuple[str, Mode | None], ...] = (
    ("hybrid (default)", "hybrid"),
    ("vector only", "vector"),
    ("text only", "text"),
    ("BM25 whole files", None),
)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the evaluation sets ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start: int
    end: int


@dataclass(slots=True)
class Questions:
    """A set's queries, the files judged relevant for each, and its gold spans (if any)."""

    queries: list[tuple[str, str]]
    relevant: dict[str, set[str]]
    spans: dict[str, list[Span]] = field(default_factory=dict)

    @property
    def has_spans(self) -> bool:
        return bool(self.spans)


def load_questions(folder: Path) -> Questions:
    queries = []
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                queries.append((str(row["_id"]), str(row["text"])))
    relevant: dict[str, set[str]] = {}
    with (folder / "qrels.tsv").open(encoding="utf-8") as lines:
        for n, line in enumerate(lines):
            query_id, corpus_id, score = line.rstrip("\n").split("\t")
            if n == 0 and query_id == "query-id":
                continue
            if float(score) > 0:
                relevant.setdefault(query_id, set()).add(corpus_id.partition("#")[0])
    spans: dict[str, list[Span]] = {}
    span_file = folder / "spans.jsonl"
    if span_file.exists():
        with span_file.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    row = json.loads(line)
                    spans.setdefault(str(row["query_id"]), []).append(
                        Span(str(row["doc"]), int(row["start"]), int(row["end"]))
                    )
    missing = [q for q, _ in queries if q not in relevant]
    if missing:
        raise SystemExit(f"{folder}: {len(missing)} queries have no relevant file in qrels.tsv")
    return Questions(queries, relevant, spans)


# -- the index -------------------------------------------------------------------------------


@dataclass(slots=True)
class CachingEmbedder:
    """The embedder, with each query's vector computed once for all modes and configurations."""

    inner: LocalEmbedder
    vectors: dict[str, Vector] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> Vector:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            for text, vector in zip(missing, self.inner.embed(missing), strict=True):
                self.vectors[text] = vector
        return np.stack([self.vectors[t] for t in texts])


@dataclass(slots=True)
class StoredVectors:
    """The model for indexing a set into PostgreSQL: each input's vector is taken from the
    set's SQLite store when it holds it (same model, same input, so the same vector), and only
    the others are embedded."""

    inner: LocalEmbedder
    store: SQLiteStore
    workspace: str
    embedded: int = 0

    # Batches of the indexer's own batch size, each through `embed`.
    batch_chars: ClassVar[int | None] = None
    batch_text_chars: ClassVar[int | None] = None
    batch_texts: ClassVar[int | None] = None

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> Vector:
        hashes = [content_hash(self.model_id, t) for t in texts]
        found = self.store.embeddings_for(hashes, self.model_id)
        found.update(self.store.title_embeddings_for(hashes, self.model_id))  # files' titles
        missing = [t for t, h in zip(texts, hashes, strict=True) if h not in found]
        if missing:
            self.embedded += len(missing)
            for text, vector in zip(missing, self.inner.embed(missing), strict=True):
                found[content_hash(self.model_id, text)] = vector
        return np.stack([found[h] for h in hashes])

    def embed_documents(self, texts: list[str]) -> Vector:
        return self.embed(texts)


Store = SQLiteStore | PostgresStore


@dataclass(slots=True)
class Indexed:
    store: Store
    workspace: str
    ref: str
    docs: Docs
    result: IndexResult
    size: int
    embedded_anew: int | None = None  # of the inputs taken from the SQLite store, if so


class Stamps:
    """Progress callback of the indexer: a line now and then."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.phase == "done" or now - self.last > PROGRESS_SECONDS:
            self.last = now
            progress(
                f"{self.name}: {p.phase}, {p.files} files, {p.chunks} chunks, embedded "
                f"{p.embedded}/{p.to_embed}, reused {p.reused}"
            )


def index_set(
    eval_dir: Path,
    spec: EvalSet,
    location: str,
    embedder: LocalEmbedder | StoredVectors,
) -> Indexed:
    """The set's corpus indexed (incrementally) into the store at `location`."""
    workspace = f"eval-{spec.name}"
    path = (eval_dir / spec.name / spec.folder).resolve()
    ws = DirectoryWorkspace(path, name=workspace, selection=Selection(docs=(spec.root,)))
    ref = ws.sync()
    store = open_store(location, model_id=embedder.model_id, dim=embedder.dim)
    indexer = Indexer(store, embedder, ws)
    try:
        result = indexer.index(ref, Stamps(f"{spec.name} ({store_kind(location)})"))
    finally:
        indexer.close()
    docs = ws.read_docs(ref)
    size = sum(len(f.text.encode("utf-8", "surrogatepass")) for f in docs.files)
    return Indexed(store, workspace, ref, docs, result, size)


def store_kind(location: str) -> str:
    return "PostgreSQL" if location.startswith(("postgresql://", "postgres://")) else "SQLite"


class ExactVectors:
    """A PostgreSQL store whose vector search is exact (every row of the ref compared with the
    query, no HNSW index): the reference the HNSW searches are measured against."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def search(
        self,
        workspace: str,
        ref: str,
        vector: Vector,
        k: int,
        paths: Sequence[str] | None = None,
    ) -> list[StoredHit]:
        s = self._store
        query = query_vector(vector, location=s.location, model_id=s.model_id, dim=s.dim)
        params = {**scope_params([(workspace, ref, paths)]), "vector": query, "k": k}
        with s._connection() as conn:
            rows = conn.execute(EXACT_SQL, params).fetchall()
        return [StoredHit.from_columns(row[1:7], row[7]) for row in rows]


# -- excerpts as character ranges ------------------------------------------------------------


class SourceText:
    """A file's text as read without newline translation (what the gold spans count), and the
    text the chunker counted lines in, with the map from one's offsets to the other's."""

    def __init__(self, original: str) -> None:
        self.prepared = prepare(original)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.prepared)]
        self._to_original: list[int] | None = None
        if self.prepared != original:
            self._to_original = _offset_map(original)
            assert len(self._to_original) == len(self.prepared) + 1

    def line_start(self, line: int) -> int:
        return self.line_starts[line - 1]

    def line_end(self, line: int) -> int:
        """One past the last character of `line` (before its newline)."""
        if line < len(self.line_starts):
            return self.line_starts[line] - 1
        return len(self.prepared)

    def excerpt_range(self, hit: Hit) -> tuple[int, int]:
        """The [start, end) character range of an excerpt in the original file."""
        start = self.prepared.find(hit.content, self.line_start(hit.start_line))
        end = start + len(hit.content)
        if start < 0 or end > self.line_end(hit.end_line):
            # A chunk shows the page's visible text (markup taken out, a fence for a code
            # block): what it covers is its lines.
            start, end = self.line_start(hit.start_line), self.line_end(hit.end_line)
        return self.original(start), self.original(end)

    def original(self, offset: int) -> int:
        return offset if self._to_original is None else self._to_original[offset]


def _offset_map(original: str) -> list[int]:
    """For each character of prepare(original), and its end, the offset in `original`: CRLF
    became one LF (at the CR's offset), a lone CR an LF, a leading byte order mark dropped."""
    out = []
    i = 1 if original.startswith("\ufeff") else 0
    while i < len(original):
        out.append(i)
        i += 2 if original.startswith("\r\n", i) else 1
    out.append(len(original))
    return out


# -- metrics ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scores:
    hit: float
    mrr: float
    span: float | None

    def beats(self, other: Scores) -> bool:
        """Strictly better on every metric both have."""
        pairs = [(self.hit, other.hit), (self.mrr, other.mrr)]
        if self.span is not None and other.span is not None:
            pairs.append((self.span, other.span))
        return all(a > b for a, b in pairs)


def file_metrics(paths: Sequence[str], relevant: set[str]) -> tuple[float, float]:
    """Hit@HIT_K and reciprocal rank within MRR_K of one ranked list of (excerpt) paths."""
    hit = float(any(p in relevant for p in paths[:HIT_K]))
    rr = next((1.0 / r for r, p in enumerate(paths[:MRR_K], start=1) if p in relevant), 0.0)
    return hit, rr


class Judge:
    """Scores ranked excerpts against one set's questions."""

    def __init__(self, questions: Questions, docs: Docs) -> None:
        self.questions = questions
        # The text each file was indexed from: its bytes decoded, no newline translated.
        self.texts = {f.path: f.text for f in docs.files}
        self._sources: dict[str, SourceText] = {}
        unknown = {p for r in questions.relevant.values() for p in r} - self.texts.keys()
        unknown |= {s.path for spans in questions.spans.values() for s in spans} - self.texts.keys()
        if unknown:
            raise SystemExit(f"qrels or spans name files that were not indexed: {sorted(unknown)}")
        for spans in questions.spans.values():
            for span in spans:
                if not 0 <= span.start < span.end <= len(self.texts[span.path]):
                    raise SystemExit(f"a gold span lies outside {span.path}: {span}")

    def source(self, path: str) -> SourceText:
        if path not in self._sources:
            self._sources[path] = SourceText(self.texts[path])
        return self._sources[path]

    def span_recall(self, query_id: str, hits: Sequence[Hit]) -> float | None:
        spans = self.questions.spans.get(query_id)
        if not spans:
            return None
        ranges = [(h.path, *self.source(h.path).excerpt_range(h)) for h in hits[:SPAN_K]]
        found = sum(
            any(p == s.path and a < s.end and s.start < b for p, a, b in ranges) for s in spans
        )
        return found / len(spans)

    def score(self, answers: Mapping[str, Sequence[Hit]]) -> Scores:
        """Mean metrics over the set's queries; `answers` holds the excerpts of each query."""
        hits, rrs, spans = [], [], []
        for query_id, _ in self.questions.queries:
            excerpts = answers[query_id]
            hit, rr = file_metrics([h.path for h in excerpts], self.questions.relevant[query_id])
            hits.append(hit)
            rrs.append(rr)
            recall = self.span_recall(query_id, excerpts)
            if recall is not None:
                spans.append(recall)
        return Scores(
            statistics.fmean(hits),
            statistics.fmean(rrs),
            statistics.fmean(spans) if spans else None,
        )

    def score_files(self, ranked: Mapping[str, Sequence[str]]) -> Scores:
        hits, rrs = [], []
        for query_id, _ in self.questions.queries:
            hit, rr = file_metrics(ranked[query_id], self.questions.relevant[query_id])
            hits.append(hit)
            rrs.append(rr)
        return Scores(statistics.fmean(hits), statistics.fmean(rrs), None)


# -- the reference: BM25 over whole files ----------------------------------------------------


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class WholeFileBM25:
    """Okapi BM25 with each file one document."""

    def __init__(self, docs: Docs) -> None:
        self.paths = [f.path for f in docs.files]
        self.counts = [Counter(tokens(f.text)) for f in docs.files]
        self.lengths = np.array([sum(c.values()) for c in self.counts], dtype=np.float64)
        self.average = float(self.lengths.mean())
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(self.paths)
        self.idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    def rank(self, query: str, k: int) -> list[str]:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * self.lengths / self.average)
        scores = np.zeros(len(self.paths))
        for term in dict.fromkeys(tokens(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            tf = np.array([c.get(term, 0) for c in self.counts], dtype=np.float64)
            scores += idf * tf * (BM25_K1 + 1) / (tf + norm)
        order = sorted(range(len(self.paths)), key=lambda i: (-scores[i], self.paths[i]))
        return [self.paths[i] for i in order[:k] if scores[i] > 0]


# -- the sweep -------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidates:
    """Each query's vector and text candidates at SWEEP_DEPTH, best first, its embedding, and
    the stored title vectors of its candidates' files (by workspace and path, as
    search.title_prior takes them)."""

    vector: dict[str, list[StoredHit]]
    text: dict[str, list[StoredHit]]
    queries: dict[str, Vector]
    titles: dict[str, dict[tuple[str, str], Vector]]


def fetch_candidates(
    indexed: Indexed, embedder: CachingEmbedder, questions: Questions
) -> Candidates:
    vector, text, queries, titles = {}, {}, {}, {}
    for query_id, query in questions.queries:
        q = embedder.embed([query])[0]
        queries[query_id] = q
        vector[query_id] = indexed.store.search(indexed.workspace, indexed.ref, q, SWEEP_DEPTH)
        text[query_id] = indexed.store.search_text(
            indexed.workspace, indexed.ref, query, SWEEP_DEPTH
        )
        titles[query_id] = candidate_titles(indexed, [*vector[query_id], *text[query_id]])
    return Candidates(vector, text, queries, titles)


def candidate_titles(indexed: Indexed, found: Sequence[StoredHit]) -> dict[tuple[str, str], Vector]:
    """The stored title vectors of the files of `found`, as Searcher.rank reads them."""
    stored = indexed.store.file_titles(indexed.workspace, indexed.ref, {h.path for h in found})
    return {(h.workspace, h.path): stored[h.path] for h in found if h.path in stored}


Ranked = list[tuple[StoredHit, float]]
# A variation on hybrid ranking beyond what Fusion holds: the fused list, rewritten.
Rewrite = Callable[[Ranked], Ranked]


def _same_passages(a: Sequence[Hit], b: Sequence[Hit]) -> bool:
    """Whether a replay gave what the search did: the same excerpts, in order (the search also
    names the workspace and ref; a score may differ in its last bits, as numpy sums a cosine in
    another order, and `more` by a candidate tied at the search's depth)."""
    return len(a) == len(b) and all(
        (x.path, x.start_line, x.end_line, x.content)
        == (y.path, y.start_line, y.end_line, y.content)
        and math.isclose(x.score, y.score, abs_tol=1e-4)
        for x, y in zip(a, b, strict=True)
    )


def file_lines(indexed: Indexed) -> ranking.LinesOf:
    """A file's lines at the indexed ref, as Searcher.rank reads them to join excerpts."""

    def lines_of(_: str, path: str) -> list[str] | None:
        text = indexed.store.file_text(indexed.workspace, indexed.ref, path)
        return None if text is None else text_lines(text)

    return lines_of


def replay(
    vector: Sequence[StoredHit],
    text: Sequence[StoredHit],
    fusion: Fusion,
    rewrite: Rewrite | None = None,
    fuser: Fuser | None = None,
    lines_of: ranking.LinesOf | None = None,
    query: Vector | None = None,
    titles: Mapping[tuple[str, str], Vector] | None = None,
) -> list[Hit]:
    """What Searcher.rank(query, workspace, ref, MRR_K, "hybrid") returns with `fusion`, from deeper
    candidate lists (their prefixes are what the store returns at a smaller depth); the title
    prior as the search applies it (z-score fusion), given the query's vector and `titles`."""
    depth = max(fusion.candidates, ranking.CANDIDATES_PER_HIT * MRR_K)
    if depth > SWEEP_DEPTH:
        raise SystemExit(f"the sweep fetched {SWEEP_DEPTH} candidates, not {depth}")
    v, t = vector[:depth], text[:depth]
    if fuser is None:
        fuser = ranking.fuse if fusion.method == "rrf" else ranking.fuse_scores
    fused = fuser(v, t, fusion)
    if query is not None and titles is not None and fusion.method == "zscore":
        fused = ranking.title_prior(fused, query, titles, fusion.title_weight)
    if rewrite is not None:
        fused = rewrite(fused)
    return ranking.distinct(fused, MRR_K, lines_of=lines_of)


def file_boost(weight: float) -> Rewrite:
    """File evidence: each chunk gains `weight` times the best fused score of its file, so the
    other pieces of a strong file move up."""

    def rewrite(fused: Ranked) -> Ranked:
        best: dict[str, float] = {}
        for hit, score in fused:
            best.setdefault(hit.path, score)
        boosted = [(hit, score + weight * best[hit.path]) for hit, score in fused]
        return sorted(boosted, key=lambda p: (-p[1], p[0].path, p[0].chunk))

    return rewrite


def file_rank(weight: float, rrf_k: float) -> Rewrite:
    """File evidence as a third ranking: files ordered by the sum of their chunks' fused scores,
    each chunk gaining weight / (rrf_k + its file's rank) (for reciprocal rank fusion)."""

    def rewrite(fused: Ranked) -> Ranked:
        total: dict[str, float] = {}
        for hit, score in fused:
            total[hit.path] = total.get(hit.path, 0.0) + score
        order = sorted(total, key=lambda path: (-total[path], path))
        place = {path: n for n, path in enumerate(order, start=1)}
        boosted = [(h, s + weight / (rrf_k + place[h.path])) for h, s in fused]
        return sorted(boosted, key=lambda p: (-p[1], p[0].path, p[0].chunk))

    return rewrite


def file_decay(step: float) -> Rewrite:
    """Diversity: each excerpt already taken from a file lowers that file's other chunks by
    `step` (in fused-score units), so five excerpts spread over more files."""

    def rewrite(fused: Ranked) -> Ranked:
        left = list(fused)
        taken: Counter[str] = Counter()
        out: Ranked = []
        while left:
            best = max(
                range(len(left)), key=lambda i: (left[i][1] - step * taken[left[i][0].path], -i)
            )
            hit, score = left.pop(best)
            out.append((hit, score - step * taken[hit.path]))
            taken[hit.path] += 1
        return out

    return rewrite


def fuse_min_max(vector: Sequence[StoredHit], text: Sequence[StoredHit], fusion: Fusion) -> Ranked:
    """Like search.fuse_scores, with each ranking's scores scaled to [0, 1] by its lowest and
    highest candidate instead of standardised (a chunk missing from a ranking scores 0)."""
    scores: dict[tuple[str, int], float] = {}
    chunks: dict[tuple[str, int], StoredHit] = {}
    for hit in (*vector, *text):
        chunks.setdefault((hit.path, hit.chunk), hit)
        scores[(hit.path, hit.chunk)] = 0.0
    for weight, hits in ((fusion.vector_weight, vector), (fusion.text_weight, text)):
        if not hits:
            continue
        low, high = min(h.score for h in hits), max(h.score for h in hits)
        for h in hits:
            scaled = (h.score - low) / (high - low) if high > low else 1.0
            scores[(h.path, h.chunk)] += weight * scaled
    order = sorted(scores, key=lambda key: (-scores[key], key))
    return [(chunks[key], scores[key]) for key in order]


Fuser = Callable[[Sequence[StoredHit], Sequence[StoredHit], Fusion], Ranked]


@dataclass(frozen=True, slots=True)
class Trial:
    """One configuration of the sweep."""

    label: str
    fusion: Fusion
    rewrite: Rewrite | None = None
    bm25_weights: tuple[float, float, float] | None = None  # (path, heading, content), when
    # not terms.BM25_WEIGHTS
    fuser: Fuser | None = None  # instead of search.py's function for fusion.method


def trials() -> list[Trial]:
    default = Fusion()
    previous = Fusion(1.0, 1.0, 60.0, "rrf", 40)  # the ranking before this sweep
    out = [Trial("rrf k=60 w=1/1 depth 40 (the previous default)", previous)]
    out += [
        Trial(f"rrf k={k:g} w={w:g}/{1 - w:g} depth {d}", Fusion(w, 1 - w, k, "rrf", d))
        for d in (40, 60, 100)
        for k in (5.0, 20.0, 60.0)
        for w in (0.3, 0.5, 0.7)
    ]
    # Depth 30 would be the least: rank(..., k=10) asks CANDIDATES_PER_HIT * 10 candidates.
    out += [
        Trial(
            f"zscore w={w:g}/{1 - w:g} depth {d}", Fusion(w, 1 - w, method="zscore", candidates=d)
        )
        for d in (40, 60, 100, 200)
        for w in (0.3, 0.35, 0.4, 0.45, 0.5, 0.6)
    ]
    out += [
        Trial(
            f"min-max w={w:g}/{1 - w:g} depth 100",
            Fusion(w, 1 - w, candidates=100),
            fuser=fuse_min_max,
        )
        for w in (0.3, 0.4, 0.5)
    ]
    out += [
        Trial(f"default, title weight {w:g}", dataclasses.replace(default, title_weight=w))
        for w in (0.0, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8)
    ]
    out += [Trial(f"default + file boost {w:g}", default, file_boost(w)) for w in (0.1, 0.3)]
    out += [Trial(f"default + per-file decay {w:g}", default, file_decay(w)) for w in (0.2, 0.5)]
    out += [
        Trial(
            "rrf k=60 w=0.5/0.5 depth 100 + file ranking 0.5",
            Fusion(0.5, 0.5, 60.0, "rrf", 100),
            file_rank(0.5, 60.0),
        )
    ]
    out += [
        Trial(f"default, bm25 weights {'/'.join(f'{x:g}' for x in w)}", default, bm25_weights=w)
        for w in (
            (1.0, 1.0, 1.0),
            (2.0, 1.0, 1.0),
            (2.0, 2.0, 1.0),
            (3.0, 3.0, 1.0),
            (5.0, 2.0, 1.0),
        )
    ]
    return out


def sweep(results: Sequence[SetResult]) -> list[tuple[Trial, dict[str, Scores]]]:
    out = []
    for trial in trials():
        scores: dict[str, Scores] = {}
        for result in results:
            assert result.candidates is not None
            candidates = result.candidates
            if trial.bm25_weights is not None:
                candidates = refetch_text(result, trial.bm25_weights)
            answers = {
                q: replay(
                    candidates.vector[q],
                    candidates.text[q],
                    trial.fusion,
                    trial.rewrite,
                    trial.fuser,
                    file_lines(result.indexed),
                    candidates.queries[q],
                    candidates.titles[q],
                )
                for q, _ in result.questions.queries
            }
            scores[result.spec.name] = result.judge.score(answers)
        progress(f"sweep: {trial.label}")
        out.append((trial, scores))
    return out


def refetch_text(result: SetResult, weights: tuple[float, float, float]) -> Candidates:
    """The text candidates again, with BM25's (path, heading, content) columns weighted
    `weights`: the ref's lists made again in memory from its chunks with those weights, and
    ranked by the stores' own code (stores/bm25.py). The weights are part of the stored
    frequencies on both stores, so the stored lists cannot serve."""
    assert result.candidates is not None
    indexed = result.indexed
    assert isinstance(indexed.store, SQLiteStore)
    conn = sqlite3.connect(indexed.store.path)
    try:
        chunks = conn.execute(
            "SELECT id, path, chunk, heading, content, start_line, end_line FROM chunks "
            "WHERE workspace = ? AND ref = ?",
            (indexed.workspace, indexed.ref),
        ).fetchall()
    finally:
        conn.close()
    by_id = {c[0]: c for c in chunks}

    def entry(chunk: tuple[Any, ...]) -> tuple[int, list[str], list[float], int]:
        made = ChunkTerms.of(chunk[1], chunk[3], chunk[4])
        return (chunk[0], *made.weighted(weights), made.length)

    made = RefLists.of(entry(c) for c in chunks)
    held = {term: len(found) for term, found in made.lists.items()}
    text = {}
    for q, query in result.questions.queries:
        ids, scores = bm25.ranked(
            query_terms(query),
            held,
            made.chunks,
            made.length,
            SWEEP_DEPTH,
            lambda terms: [(t, made.lists[t]) for t in terms],
        )
        places = [(i, by_id[i][1], by_id[i][2]) for i in ids.tolist()]
        text[q] = [
            StoredHit.from_columns(by_id[i][1:], score)
            for i, score in bm25.top(ids, scores, places, SWEEP_DEPTH)
        ]
    vector = result.candidates.vector
    titles = {q: candidate_titles(indexed, [*vector[q], *text[q]]) for q in text}
    return Candidates(vector, text, result.candidates.queries, titles)


# -- report ----------------------------------------------------------------------------------


def figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


# -- main ------------------------------------------------------------------------------------


@dataclass(slots=True)
class SetResult:
    spec: EvalSet
    store: str  # SQLite or PostgreSQL
    indexed: Indexed
    questions: Questions
    judge: Judge
    rows: dict[str, Scores]
    ms: dict[str, float]  # median milliseconds per query of each row
    hybrid: dict[str, list[Hit]]
    candidates: Candidates | None = None


def run_set(
    spec: EvalSet,
    questions: Questions,
    indexed: Indexed,
    embedder: CachingEmbedder,
    sweep: bool,
) -> SetResult:
    judge = Judge(questions, indexed.docs)
    embedder.embed([q for _, q in questions.queries])  # one batch: the cache serves every mode
    searcher = Searcher(indexed.store, embedder)
    for _, text in questions.queries:  # untimed: loads the ref's matrix and the FTS pages
        searcher.rank(text, indexed.workspace, indexed.ref, MRR_K, "hybrid")
    rows: dict[str, Scores] = {}
    ms: dict[str, float] = {}
    hybrid: dict[str, list[Hit]] = {}
    kind = store_kind(indexed.store.location)
    for label, mode in ROWS:
        seconds = []
        if mode is None:
            bm25 = WholeFileBM25(indexed.docs)
            ranked: dict[str, list[str]] = {}
            for q, text in questions.queries:
                begun = time.perf_counter()
                ranked[q] = bm25.rank(text, MRR_K)
                seconds.append(time.perf_counter() - begun)
            rows[label] = judge.score_files(ranked)
        else:
            answers: dict[str, list[Hit]] = {}
            for q, text in questions.queries:
                begun = time.perf_counter()
                answers[q] = searcher.rank(text, indexed.workspace, indexed.ref, MRR_K, mode)
                seconds.append(time.perf_counter() - begun)
            rows[label] = judge.score(answers)
            if mode == "hybrid":
                hybrid = answers
        ms[label] = statistics.median(seconds) * MS
        progress(f"{spec.name} ({kind}): {label} {rows[label]}")
    candidates = None
    if sweep:
        candidates = fetch_candidates(indexed, embedder, questions)
        for q, _ in questions.queries:  # the sweep's replay is the search, or its figures lie
            lines_of = file_lines(indexed)
            replayed = replay(
                candidates.vector[q],
                candidates.text[q],
                Fusion(),
                None,
                None,
                lines_of,
                candidates.queries[q],
                candidates.titles[q],
            )
            if not _same_passages(replayed, hybrid[q]):
                raise SystemExit(f"{spec.name} {q}: the replayed ranking differs from the search")
    return SetResult(spec, kind, indexed, questions, judge, rows, ms, hybrid, candidates)


# ef_search values of the HNSW comparison: pgvector's default (40), then deeper walks up to
# docshelf's default (config.DEFAULT_EF_SEARCH) and beyond it.
EF_SEARCHES = (40, 100, 200, 400)


@dataclass(frozen=True, slots=True)
class VectorTrial:
    """Hybrid ranking on PostgreSQL with one way of searching vectors, against exact search."""

    label: str
    scores: Scores
    differ: int  # queries whose 10 excerpts are not exact search's
    recall: float  # mean share of exact search's candidates that this search returns


def hnsw_trials(result: SetResult, embedder: CachingEmbedder, location: str) -> list[VectorTrial]:
    """Hybrid quality with exact vector search and with HNSW at each of EF_SEARCHES."""
    assert isinstance(result.indexed.store, PostgresStore)
    indexed, questions = result.indexed, result.questions
    depth = max(ranking.CANDIDATES, ranking.CANDIDATES_PER_HIT * MRR_K)
    exact_store = ExactVectors(result.indexed.store)

    def answers(store: Any) -> tuple[dict[str, list[Hit]], dict[str, set[tuple[str, int]]]]:
        searcher = Searcher(store, embedder)
        hits, found = {}, {}
        for q, text in questions.queries:
            hits[q] = searcher.rank(text, indexed.workspace, indexed.ref, MRR_K, "hybrid")
            vector = embedder.embed([text])[0]
            near = store.search(indexed.workspace, indexed.ref, vector, depth)
            found[q] = {(h.path, h.chunk) for h in near}
        return hits, found

    exact, exact_found = answers(exact_store)
    out = [VectorTrial("exact", result.judge.score(exact), 0, 1.0)]
    for ef in EF_SEARCHES:
        with PostgresStore.open(location, model_id=None, dim=None, ef_search=ef) as store:
            hits, found = answers(store)
        differ = sum(places(hits[q]) != places(exact[q]) for q, _ in questions.queries)
        recall = statistics.fmean(
            len(found[q] & exact_found[q]) / max(1, len(exact_found[q]))
            for q, _ in questions.queries
        )
        out.append(VectorTrial(f"HNSW ef_search {ef}", result.judge.score(hits), differ, recall))
        progress(f"{result.spec.name}: HNSW ef_search {ef}: {differ} answers differ")
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    names = [s.name for s in SETS]
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL, help="%(default)s")
    parser.add_argument("--sets", nargs="+", choices=names, default=names, help="all")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="%(default)s")
    parser.add_argument(
        "--store",
        nargs="+",
        default=["sqlite", "postgresql"],
        metavar="STORE",
        help="sqlite, postgresql (a server started here from pgserver) or a postgresql:// URL; "
        "default: sqlite postgresql",
    )
    parser.add_argument("--sweep", action="store_true", help="also print the ranking sweep")
    parser.add_argument("--model", help="the local model (default: the packaged one)")
    parser.add_argument(
        "--hnsw",
        action="store_true",
        help="on PostgreSQL, also compare hybrid ranking with exact and HNSW vector searches",
    )
    args = parser.parse_args(argv)
    for name in args.sets:
        if not (args.eval / name / "queries.jsonl").is_file():
            parser.error(f"no evaluation set at {args.eval / name}")
    for store in args.store:
        if store not in ("sqlite", "postgresql") and not store.startswith("postgresql://"):
            parser.error(f"--store {store}: give sqlite, postgresql or a postgresql:// URL")
    if args.hnsw and not any(s != "sqlite" for s in args.store):
        parser.error("--hnsw needs a PostgreSQL store (--store postgresql)")
    return args


def postgres_locations(stack: ExitStack, stores: Sequence[str]) -> Callable[[str], str] | None:
    """A function from a set's name to its PostgreSQL database (a new one per set on a server
    started here; the given URL's database itself), or None without --store postgresql."""
    wanted = [s for s in stores if s != "sqlite"]
    if not wanted:
        return None
    if wanted[0].startswith("postgresql://"):
        url = wanted[0]
        return lambda name: url
    import psycopg  # noqa: PLC0415

    server = stack.enter_context(postgres_server())

    def database(name: str) -> str:
        db = "retrieval_" + re.sub(r"\W", "_", name)
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {db}")
        return str(server.get_uri(db))

    return database


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    load_before = os.getloadavg()
    embedder = CachingEmbedder(LocalEmbedder(args.model))
    suffix = "" if args.model is None else "-" + re.sub(r"[^\w.-]", "_", embedder.model_id)
    results: list[SetResult] = []
    vector_trials: dict[str, list[VectorTrial]] = {}
    with ExitStack() as stack:
        postgres = postgres_locations(stack, args.store)
        for spec in SETS:
            if spec.name not in args.sets:
                continue
            questions = load_questions(args.eval / spec.name)
            progress(f"{spec.name}: indexing (incremental) into {args.cache}")
            args.cache.mkdir(parents=True, exist_ok=True)
            location = str(args.cache / f"retrieval-{spec.name}{suffix}.sqlite3")
            indexed = index_set(args.eval, spec, location, embedder.inner)
            assert isinstance(indexed.store, SQLiteStore)
            if "sqlite" in args.store:
                results.append(run_set(spec, questions, indexed, embedder, args.sweep))
            if postgres is None:
                continue
            url = postgres(spec.name)
            vectors = StoredVectors(embedder.inner, indexed.store, indexed.workspace)
            on_postgres = index_set(args.eval, spec, url, vectors)
            on_postgres.embedded_anew = vectors.embedded
            result = run_set(spec, questions, on_postgres, embedder, sweep=False)
            results.append(result)
            if args.hnsw:
                vector_trials[spec.name] = hnsw_trials(result, embedder, url)
        swept = sweep([r for r in results if r.candidates is not None]) if args.sweep else []
        report(args, results, swept, vector_trials, started, load_before, embedder)
        for result in results:
            result.indexed.store.close()
    return 0


def report(
    args: argparse.Namespace,
    results: Sequence[SetResult],
    swept: Sequence[tuple[Trial, dict[str, Scores]]],
    vector_trials: Mapping[str, Sequence[VectorTrial]],
    started: float,
    load_before: tuple[float, float, float],
    embedder: CachingEmbedder,
) -> None:
    header = [
        ("command", f"`{shlex.join(sys.orig_argv)}`"),
        ("machine", f"{os.cpu_count()} CPUs ({cpu_model()}), {platform.platform()}"),
        (
            "load average",
            "at the start "
            + ", ".join(f"{x:.2f}" for x in load_before)
            + "; at the end "
            + ", ".join(f"{x:.2f}" for x in os.getloadavg())
            + f" (1, 5, 15 min); the run took {time.monotonic() - started:.0f} s",
        ),
        ("model", f"{embedder.model_id}, documents in {embedder.inner.precision}"),
        (
            "python",
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), sentence-transformers "
            f"{version('sentence-transformers')}, numpy {np.__version__}, "
            f"SQLite {sqlite3.sqlite_version}, pgserver {version('pgserver')}",
        ),
        ("model", f"{embedder.model_id} (packaged), on {embedder.inner.device}"),
        ("hybrid ranking", describe(Fusion())),
        (
            "bm25",
            "on both stores over docshelf's terms (stores/terms.py: Porter stems, codes such "
            "as LEDGER-409 one term), column weights path {:g}, heading {:g}, content {:g}; "
            "the query's rarer terms OR-ed, stop words dropped".format(*BM25_WEIGHTS),
        ),
    ]
    print()
    for key, value in header:
        print(f"- {key}: {value}")
    for result in results:
        print_set(result)
    print()
    print(
        "ms/query: median time of one query's ranking (store searches, fusion, distinct "
        "passages), the query's embedding excluded (computed once beforehand); for BM25 whole "
        "files, this script's pure-Python scoring."
    )
    print()
    print("Against the goal (hybrid beats every other row on every metric of every set):")
    print()
    for result in results:
        for line in verdicts(result):
            print(f"- {line}")
    print_parity(results)
    for name, trials_of_set in vector_trials.items():
        print_vector_trials(name, trials_of_set)
    if swept:
        print_sweep([r for r in results if r.candidates is not None], swept)


def places(hits: Sequence[Hit]) -> list[tuple[str, int, int]]:
    """Where the excerpts are, in order (their scores may differ in the last bits: pgvector and
    numpy sum a cosine in other orders)."""
    return [(h.path, h.start_line, h.end_line) for h in hits]


# The goal: the two stores' figures within this much of each other on every set.
PARITY = 0.01


def print_parity(results: Sequence[SetResult]) -> None:
    by_set: dict[str, dict[str, SetResult]] = {}
    for result in results:
        by_set.setdefault(result.spec.name, {})[result.store] = result
    pairs = [(name, r["SQLite"], r["PostgreSQL"]) for name, r in by_set.items() if len(r) == 2]
    if not pairs:
        return
    print()
    print(
        f"SQLite against PostgreSQL, hybrid ranking (goal: within {PARITY} on every metric), "
        "and how many queries' 10 excerpts differ between the two:"
    )
    print()
    rows = []
    for name, a, b in pairs:
        x, y = a.rows[ROWS[0][0]], b.rows[ROWS[0][0]]
        gaps = [abs(x.hit - y.hit), abs(x.mrr - y.mrr)]
        if x.span is not None and y.span is not None:
            gaps.append(abs(x.span - y.span))
        differ = sum(places(a.hybrid[q]) != places(b.hybrid[q]) for q, _ in a.questions.queries)
        cells = [name, *(f"{figure(s.hit)} / {figure(s.mrr)} / {figure(s.span)}" for s in (x, y))]
        cells += [f"{max(gaps):.3f}", f"{differ}/{len(a.questions.queries)}"]
        cells.append("met" if max(gaps) <= PARITY else "MISSED")
        rows.append(cells)
    columns = ["set", "SQLite Hit@5 / MRR@10 / span@5", "PostgreSQL", "largest gap", "differ"]
    print(markdown_table([*columns, "goal"], rows))


def print_vector_trials(name: str, trials_of_set: Sequence[VectorTrial]) -> None:
    print()
    print(
        f"{name} on PostgreSQL: hybrid ranking with exact vector search and with HNSW "
        "(recall: the share of exact search's candidates the search returns; differ: queries "
        "whose 10 excerpts are not exact search's):"
    )
    print()
    rows = [
        [
            t.label,
            figure(t.scores.hit),
            figure(t.scores.mrr),
            figure(t.scores.span),
            f"{t.recall:.3f}",
            str(t.differ),
        ]
        for t in trials_of_set
    ]
    columns = ["vector search", "file Hit@5", "MRR@10", "span recall@5", "recall", "differ"]
    print(markdown_table(columns, rows))


def describe(fusion: Fusion) -> str:
    if fusion.method == "rrf":
        how = f"weighted reciprocal rank fusion, k = {fusion.rrf_k:g}"
    else:
        how = "weighted sum of z-scores (a chunk missing from a list gets its lowest z-score)"
    return (
        f"{how}, vector weight {fusion.vector_weight:g}, text weight {fusion.text_weight:g}, "
        f"{fusion.candidates} candidates per ranking (src/docshelf/search.py)"
    )


def print_set(result: SetResult) -> None:
    indexed, questions = result.indexed, result.questions
    r = indexed.result
    taken = (
        f"; its vectors taken from the SQLite store, {indexed.embedded_anew} embedded anew"
        if indexed.embedded_anew is not None
        else ""
    )
    skipped = ", ".join(f"{s.path} ({s.reason})" for s in r.skipped) or "none"
    mapped = sum("\r" in f.text or f.text.startswith("\ufeff") for f in indexed.docs.files)
    n_spans = sum(len(s) for s in questions.spans.values())
    print()
    print(f"{result.spec.name} ({result.store}):", end=" ")
    print(
        f"{len(indexed.docs.files)} files, {indexed.size / 1e6:.1f} MB, {r.chunks} chunks "
        f"(this run embedded {r.embedded}"
        + (", the ref was already indexed" if r.already_indexed else f", reused {r.reused}")
        + f"{taken}); skipped: {skipped}; with CR line ends or a byte order mark: {mapped}. "
        + f"{len(questions.queries)} queries"
        + (f", {n_spans} gold spans." if n_spans else ", no spans.")
    )
    print()
    rows = [
        [label, figure(s.hit), figure(s.mrr), figure(s.span), f"{result.ms[label]:.1f}"]
        for label, s in result.rows.items()
    ]
    print(markdown_table(["ranking", "file Hit@5", "MRR@10", "span recall@5", "ms/query"], rows))


def comparisons(
    name: str, mine: Scores, rows: dict[str, Scores]
) -> list[tuple[str, str, float, float]]:
    """(metric, other row, hybrid's figure, the other's) for every pair that has both."""
    out = []
    for label, other in list(rows.items())[1:]:
        for metric, a, b in (
            ("file Hit@5", mine.hit, other.hit),
            ("MRR@10", mine.mrr, other.mrr),
            ("span recall@5", mine.span, other.span),
        ):
            if a is not None and b is not None:
                out.append((metric, label, a, b))
    return out


def verdicts(result: SetResult) -> list[str]:
    hybrid = result.rows[ROWS[0][0]]
    lines = []
    for metric, label, mine, theirs in comparisons(result.spec.name, hybrid, result.rows):
        word = "met" if mine > theirs else ("MISSED (tie)" if mine == theirs else "MISSED")
        lines.append(
            f"{word}: {result.spec.name} ({result.store}), {metric}: hybrid {mine:.3f} vs "
            f"{label} {theirs:.3f}"
        )
    return lines


def print_sweep(
    results: Sequence[SetResult], swept: Sequence[tuple[Trial, dict[str, Scores]]]
) -> None:
    print()
    print(
        "Sweep: hybrid ranking under each configuration, replayed on candidates fetched once "
        f"at depth {SWEEP_DEPTH} (per set: file Hit@5 / MRR@10 / span recall@5). wins: of the "
        "comparisons with the vector, text and BM25-whole-files rows above, how many the "
        "configuration wins strictly."
    )
    print()
    columns = ["configuration"]
    for result in results:
        short = result.spec.name.split("-")[0]
        columns += [f"{short} Hit@5", f"{short} MRR@10"]
        if result.questions.has_spans:
            columns.append(f"{short} span@5")
    columns.append("wins")
    rows = []
    total = sum(len(comparisons(r.spec.name, r.rows[ROWS[0][0]], r.rows)) for r in results)
    for trial, scores in swept:
        cells = [trial.label]
        wins = 0
        for result in results:
            s = scores[result.spec.name]
            cells += [figure(s.hit), figure(s.mrr)]
            if result.questions.has_spans:
                cells.append(figure(s.span))
            wins += sum(a > b for _, _, a, b in comparisons(result.spec.name, s, result.rows))
        cells.append(f"{wins}/{total}")
        rows.append(cells)
    print(markdown_table(columns, rows))


if __name__ == "__main__":
    sys.exit(main())
