"""Answering a question: the checks of its arguments, and the ranking of chunks by meaning and by
words. Which refs a call answers from, and what it says when it cannot, is app.Service's.

Constraints:
- A question the model can fix (an empty, over-long or not valid Unicode query, a top_k that is
  not a whole number from 1 to 20) is refused, never clamped or cut, with a message stating the
  bound, so the model learns it; a refusal costs no embedding and no store query.
- Hybrid ranking, not by vectors alone: on real docs, questions name
  products, flags and error codes that keyword ranking finds and a small embedding model misses.
  Both rankings' scores are standardised per query and combined with weights tuned on
  ../shared/data/eval with bench/retrieval.py (BENCHMARKS.md, "Retrieval quality"); weighted
  reciprocal rank fusion is kept as the alternative the sweep measures against.
- The k excerpts are k distinct passages: pieces of one section that overlap (a long section's
  pieces share up to 300 bytes) count once.
- A hybrid search runs its full-text search on a worker thread while this one embeds the query
  and searches by vector: the model, the store's statements and numpy release the GIL, so the
  call takes about as long as the longer of the two (BENCHMARKS.md, "docs_search on the AWS
  guides").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from docshelf.answers import (
    COPIES_SHOWN,
    DEFAULT_PER_FILE,
    JOIN_MAX_BYTES,
    MAX_MAX_TOKENS,
    MERGE_LINES,
    MIN_MAX_TOKENS,
    MIN_PER_FILE,
    MODES,
    TOKENS_PER_EXCERPT,
    Answer,
    Copy,
    Hit,
    LinesOf,
    Mode,
    default_max_tokens,
    distinct,
    tokens_of,
)
from docshelf.chunking.text import text_lines
from docshelf.errors import ConfigError, term
from docshelf.shown import shown_int, shown_value

if TYPE_CHECKING:  # numpy stays out of `docshelf --help`, which imports this module's bounds
    from docshelf.rows import StoredHit, Vector

# This module's names, and the answer's (answers.py) that callers name through it.
__all__ = [
    "CANDIDATES",
    "CANDIDATES_PER_HIT",
    "COPIES_SHOWN",
    "DEFAULT_PER_FILE",
    "DEFAULT_TOP_K",
    "JOIN_MAX_BYTES",
    "MAX_MAX_TOKENS",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "MERGE_LINES",
    "MIN_MAX_TOKENS",
    "MIN_PER_FILE",
    "MIN_TOP_K",
    "MODES",
    "TOKENS_PER_EXCERPT",
    "Answer",
    "Copy",
    "Fusion",
    "Hit",
    "LinesOf",
    "Mode",
    "QueryEmbedder",
    "Scope",
    "SearchStore",
    "Searcher",
    "check_max_tokens",
    "check_mode",
    "check_per_file",
    "check_query",
    "check_top_k",
    "default_max_tokens",
    "distinct",
    "fuse",
    "fuse_scores",
    "title_prior",
    "tokens_of",
]


# How many excerpts a search returns: enough for an answer and its context, few enough that the
# tool's answer stays a small part of the model's context window (20 excerpts of at most about
# 2,000 bytes each are some 40 KB).
MIN_TOP_K = 1
MAX_TOP_K = 20
DEFAULT_TOP_K = 5

# The longest query, in characters, that a search accepts. The eval questions
# (../shared/data/eval) are at most 191 characters; the embedding model reads its first 256
# tokens (about 1,000 characters) and SQLite's full-text search its first 64 words, so 4,000
# leaves room for a question with a pasted error message and cuts off nothing a ranking uses.
# Longer ones are refused before any work: the model took 0.8 s to embed a 1 MB query on these
# machines, a cost any client could make the server pay on every call.
MAX_QUERY_CHARS = 4_000

# Candidates each ranking contributes to hybrid ranking. The candidates, and so each ranking's
# mean and spread below, are the same for every top_k up to MAX_TOP_K (3 x 20 = 60), so a longer
# answer extends a shorter one. 60 rather than 40 or 100: at the weights below it was the depth
# that won every winnable comparison of the sweep (BENCHMARKS.md, "Retrieval quality").
# PostgreSQL's HNSW search returns up to hnsw.ef_search (200) rows, so all 60 are real
# neighbours there. Should MAX_TOP_K grow, each excerpt asked for still gets CANDIDATES_PER_HIT.
CANDIDATES = 60
CANDIDATES_PER_HIT = 3

# Worker threads for the full-text side of hybrid searches, shared by every search of the
# process: as many as the calls a server answers at once would use (the PostgreSQL pool lends
# POSTGRES_POOL_MAX connections); a call beyond them waits for a free worker.
TEXT_WORKERS = 8
_TEXT_SEARCHES = ThreadPoolExecutor(TEXT_WORKERS, thread_name_prefix="docshelf-text")

# Hybrid ranking by standardised scores ("zscore", the default): each ranking's scores (cosine
# similarity; BM25 on both stores) become z-scores over its candidates, so a
# chunk far ahead of the rest of one ranking keeps that lead, which ranks alone throw away; a
# chunk missing from one ranking counts as that ranking's last candidate. The fused score is
# VECTOR_WEIGHT * z(vector) + TEXT_WEIGHT * z(text). Text weighs more: on the AWS set words find
# the right file more often than the small model does. Of the settings swept on the three sets
# of ../shared/data/eval (BENCHMARKS.md, "Retrieval quality"), 0.4/0.6 at 60 candidates, with
# the SQLite store's bm25 weights, was the one that beat vector-only, text-only and BM25 over
# whole files on every metric where a win is possible; the margins are a query or two.
FusionMethod = Literal["zscore", "rrf"]
FUSION_METHOD: FusionMethod = "zscore"
VECTOR_WEIGHT = 0.4
TEXT_WEIGHT = 0.6

# Reciprocal rank fusion ("rrf", the alternative): a chunk's fused score is the sum over rankings
# of weight / (RRF_K + rank). RRF_K = 60 is the constant of Cormack et al. (2009). With equal
# weights (the previous default) it lost to text alone on the AWS set, and no setting of the
# sweep beat text alone on span recall of the chroma set.
RRF_K = 60.0

# A file whose title is near the query lifts its passages (title_prior): in hybrid ranking by
# z-scores, each candidate's fused score gains TITLE_WEIGHT times the z-score, among the
# candidates' files, of the cosine between the query and its file's title (chunking.title_input:
# the file's first heading and the words of its path, embedded when the ref is indexed). A
# question often names a page's subject in its title's or its file name's words while no
# passage of the page ranks high ("What is the maximum function timeout in AWS Lambda?" and the
# page "Lambda quotas"). 0.5: on the three shared sets, chosen by cross-validation (each fold's
# choice, 0.4 or 0.6, no worse on its held-out set; 0.2 to 0.6 no worse on any set), AWS file
# Hit@5 / MRR@10 0.840 / 0.698 -> 0.880 / 0.741 (bench/retrieval.py, BENCHMARKS.md).
TITLE_WEIGHT = 0.5


class SearchStore(Protocol):
    """What a search needs of a store."""

    def search(
        self,
        workspace: str,
        ref: str,
        vector: Vector,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]: ...

    def search_text(
        self,
        workspace: str,
        ref: str,
        query: str,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]: ...

    def file_text(self, workspace: str, ref: str, path: str) -> str | None: ...

    def file_titles(
        self, workspace: str, ref: str, paths: Collection[str]
    ) -> dict[str, Vector]: ...

    def search_refs(
        self, scopes: Sequence[tuple[str, str, Collection[str] | None]], vector: Vector, k: int
    ) -> list[StoredHit]: ...

    def search_text_refs(
        self, scopes: Sequence[tuple[str, str, Collection[str] | None]], query: str, k: int
    ) -> list[StoredHit]: ...

    def file_titles_refs(
        self, files: Collection[tuple[str, str, str]]
    ) -> dict[tuple[str, str], Vector]: ...


class QueryEmbedder(Protocol):
    """What a search needs of an embedder."""

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: list[str]) -> Vector: ...


@dataclass(frozen=True, slots=True)
class Scope:
    """One workspace's part of a search: its store name, the name shown for it, the ref to
    rank, and the paths to keep (None: all)."""

    workspace: str
    label: str
    ref: str
    paths: Collection[str] | None = None


@dataclass(frozen=True, slots=True)
class Fusion:
    """How hybrid ranking combines its two rankings (see the constants above): by `method`,
    with these weights, from `candidates` chunks of each ranking (at least CANDIDATES_PER_HIT
    per excerpt asked for)."""

    vector_weight: float = VECTOR_WEIGHT
    text_weight: float = TEXT_WEIGHT
    rrf_k: float = RRF_K
    method: FusionMethod = FUSION_METHOD
    candidates: int = CANDIDATES
    title_weight: float = TITLE_WEIGHT


def check_query(query: object) -> str:
    """The query, stripped, with each NUL character a space (PostgreSQL text cannot hold NUL,
    and to every ranking it separates words like a space).

    Raises:
        ConfigError: the query is missing, not a string, blank, longer than MAX_QUERY_CHARS, or
            not valid Unicode (an unpaired surrogate, which no embedder or store can encode).
    """
    if isinstance(query, str):
        query = query.replace("\x00", " ").strip()
    if not isinstance(query, str) or not query:
        raise ConfigError(
            f"{term('query')} must be a non-empty string: the question to look up in the "
            "documentation"
        )
    if len(query) > MAX_QUERY_CHARS:
        raise ConfigError(
            f"{term('query')} must be at most {MAX_QUERY_CHARS} characters; got {len(query)}. "
            "Ask again with the question and its key words (a name, a flag, an error "
            "message), not a whole document"
        )
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ConfigError(
            f"{term('query')} must be valid Unicode text; character {e.start + 1} is an unpaired "
            f"surrogate ({query[e.start]!r}). Ask again with the query as plain text"
        ) from None
    return query


def check_top_k(top_k: object) -> int:
    """top_k as an int: a whole number from 1 to 20 (5.0 counts; 5.5, "5", true do not).

    Raises:
        ConfigError: anything else, with the bound in the message.
    """
    bound = f"{term('top_k')} must be a whole number from {MIN_TOP_K} to {MAX_TOP_K}"
    return _whole_number(top_k, "top_k", MIN_TOP_K, MAX_TOP_K, bound)


def check_per_file(per_file: object, top_k: int) -> int:
    """per_file as an int: a whole number from 1 to `top_k` (2.0 counts; 1.5, "2", true do not);
    None gives the default, DEFAULT_PER_FILE (None: top_k, no bound), or top_k when that is
    fewer.

    Raises:
        ConfigError: anything else, with the bound in the message.
    """
    if per_file is None:
        return top_k if DEFAULT_PER_FILE is None else min(DEFAULT_PER_FILE, top_k)
    bound = (
        f"{term('per_file')} must be a whole number from {MIN_PER_FILE} to {term('top_k')} "
        f"({top_k})"
    )
    return _whole_number(per_file, "per_file", MIN_PER_FILE, top_k, bound)


def check_max_tokens(max_tokens: object, top_k: object) -> int:
    """max_tokens as an int: a whole number from MIN_MAX_TOKENS to MAX_MAX_TOKENS; None gives
    the default for an answer of `top_k` excerpts (default_max_tokens).

    Raises:
        ConfigError: anything else, with the bound in the message (or top_k's, refused).
    """
    if max_tokens is None:
        return default_max_tokens(check_top_k(top_k))
    bound = (
        f"{term('max_tokens')} must be a whole number from {MIN_MAX_TOKENS} (one excerpt and its "
        f"header) to {MAX_MAX_TOKENS}"
    )
    return _whole_number(max_tokens, "max_tokens", MIN_MAX_TOKENS, MAX_MAX_TOKENS, bound)


def _whole_number(value: object, name: str, low: int, high: int, bound: str) -> int:
    """`value` as an int from `low` to `high`: a whole float counts; a fractional one, a string
    or a bool is refused with `bound`, never clamped."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{bound}; got {shown_value(value)}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ConfigError(f"{bound}; got {value!r}")
    number = int(value)
    if not low <= number <= high:
        raise ConfigError(
            f"{bound}; got {shown_int(number)}. Ask again with {term(name)} in that range"
        )
    return number


def check_mode(mode: object, embedder: QueryEmbedder | None) -> Mode:
    """The search mode (None: hybrid, or text without an embedder); without an embedder only
    text search exists.

    Raises:
        ConfigError: an unknown mode, or vector/hybrid without an embedder.
    """
    if mode is None:
        return "text" if embedder is None else "hybrid"
    for known in MODES:
        if mode == known:
            if known != "text" and embedder is None:
                raise ConfigError(
                    f"{term('mode')} {mode} ranks by meaning, which needs an embedder, "
                    "and this search has none (the store was indexed with the none embedder, or "
                    f"none was asked for); search with {term('mode')} text"
                )
            return known
    raise ConfigError(f"unknown {term('mode')} {shown_value(mode)}: choose hybrid, vector or text")


class Searcher:
    """Ranks the chunks of one store for a query: by meaning (the embedder's vectors), by words
    (the store's full-text ranking), or both fused."""

    def __init__(
        self, store: SearchStore, embedder: QueryEmbedder | None, *, fusion: Fusion | None = None
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._fusion = fusion or Fusion()

    def rank(
        self,
        query: str,
        workspace: str,
        ref: str,
        k: int,
        mode: Mode,
        per_file: int | None = None,
        merge_lines: int = MERGE_LINES,
    ) -> list[Hit]:
        """The k best distinct passages of one workspace's `ref` for `query`, by `mode`."""
        scopes = [Scope(workspace, workspace, ref)]
        return self.rank_scopes(query, scopes, k, mode, per_file, merge_lines)

    def rank_scopes(
        self,
        query: str,
        scopes: Sequence[Scope],
        k: int,
        mode: Mode,
        per_file: int | None = None,
        merge_lines: int = MERGE_LINES,
    ) -> list[Hit]:
        """The k best distinct passages of all of `scopes` for `query`, by `mode`, ranked
        together: each ranking's candidates are the best of every scope's by score (cosine
        similarity, and BM25: the same formula over the same terms on both stores, from each
        ref's own statistics, so comparable across workspaces), then fused once. At most
        `per_file` excerpts of one file (None: no bound); neighbours within `merge_lines` lines
        joined, and a text other workspaces hold shown once, naming them (distinct)."""
        depth = max(self._fusion.candidates, CANDIDATES_PER_HIT * k)
        vector_hits: list[StoredHit] = []
        text_hits: list[StoredHit] = []
        several = len(scopes) > 1
        # Several workspaces: each ranking is one read of the store over the union of their
        # refs, however many there are (the union's BM25 statistics, as one corpus).
        union = [(s.workspace, s.ref, s.paths) for s in scopes]

        def by_text() -> list[StoredHit]:
            if several:
                return self._store.search_text_refs(union, query, depth)
            only = scopes[0]
            return self._store.search_text(only.workspace, only.ref, query, depth, only.paths)

        if mode == "text":
            text_hits = by_text()
        else:
            assert self._embedder is not None
            text: Future[list[StoredHit]] | None = None
            if mode == "hybrid":
                text = _TEXT_SEARCHES.submit(by_text)
            try:
                vector = self._embedder.embed([query])[0]
                if several:
                    vector_hits = self._store.search_refs(union, vector, depth)
                else:
                    only = scopes[0]
                    vector_hits = self._store.search(
                        only.workspace, only.ref, vector, depth, only.paths
                    )
            except BaseException:
                # No search of this call outlives it; the first failure is the one raised.
                if text is not None:
                    wait([text])
                raise
            if text is not None:
                text_hits = text.result()
        if mode == "vector":
            ranked = [(h, h.score) for h in vector_hits]
        elif mode == "text":
            ranked = [(h, h.score) for h in text_hits]
        elif self._fusion.method == "rrf":
            ranked = fuse(vector_hits, text_hits, self._fusion)
        else:
            ranked = fuse_scores(vector_hits, text_hits, self._fusion)
            if self._fusion.title_weight:
                titles = self._titles(ranked, scopes)
                ranked = title_prior(ranked, vector, titles, self._fusion.title_weight)
        refs = {s.workspace: (s.label, s.ref) for s in scopes}
        only = scopes[0]

        def lines_of(workspace: str, path: str) -> list[str] | None:
            name, ref = (
                (only.workspace, only.ref) if not several else (workspace, refs[workspace][1])
            )
            text = self._store.file_text(name, ref, path)
            return None if text is None else text_lines(text)

        return [
            dataclasses.replace(
                hit,
                workspace=refs[hit.workspace][0] if several else only.label,
                ref=refs[hit.workspace][1] if several else only.ref,
                copies=tuple(
                    dataclasses.replace(c, workspace=refs[c.workspace][0]) for c in hit.copies
                ),
            )
            for hit in distinct(ranked, k, per_file, merge_lines, lines_of)
        ]

    def _titles(
        self, ranked: Sequence[tuple[StoredHit, float]], scopes: Sequence[Scope]
    ) -> dict[tuple[str, str], Vector]:
        """The title vectors of the files of `ranked`, by (hit workspace, path): one read."""
        if len(scopes) == 1:
            only = scopes[0]
            found = self._store.file_titles(only.workspace, only.ref, {h.path for h, _ in ranked})
            return {("", path): vector for path, vector in found.items()}  # hits of one: ""
        ref_of = {s.workspace: s.ref for s in scopes}
        return self._store.file_titles_refs(
            {(h.workspace, ref_of[h.workspace], h.path) for h, _ in ranked}
        )


def fuse(
    vector_hits: Sequence[StoredHit], text_hits: Sequence[StoredHit], fusion: Fusion
) -> list[tuple[StoredHit, float]]:
    """Weighted reciprocal rank fusion of two rankings, best first (ties: path, chunk)."""
    scores: dict[tuple[str, str, int], float] = {}
    chunks: dict[tuple[str, str, int], StoredHit] = {}
    for weight, hits in ((fusion.vector_weight, vector_hits), (fusion.text_weight, text_hits)):
        for rank, hit in enumerate(hits, start=1):
            key = (hit.workspace, hit.path, hit.chunk)
            chunks.setdefault(key, hit)
            scores[key] = scores.get(key, 0.0) + weight / (fusion.rrf_k + rank)
    order = sorted(scores, key=lambda key: (-scores[key], key))
    return [(chunks[key], scores[key]) for key in order]


def fuse_scores(
    vector_hits: Sequence[StoredHit], text_hits: Sequence[StoredHit], fusion: Fusion
) -> list[tuple[StoredHit, float]]:
    """Weighted sum of each ranking's z-scores, best first (ties: path, chunk). A chunk missing
    from one ranking gets that ranking's lowest z-score; an empty ranking adds nothing."""
    scores: dict[tuple[str, str, int], float] = {}
    chunks: dict[tuple[str, str, int], StoredHit] = {}
    for hit in (*vector_hits, *text_hits):
        key = (hit.workspace, hit.path, hit.chunk)
        chunks.setdefault(key, hit)
        scores[key] = 0.0
    for weight, hits in ((fusion.vector_weight, vector_hits), (fusion.text_weight, text_hits)):
        standard, missing = _standardised([h.score for h in hits])
        found = {(h.workspace, h.path, h.chunk): z for h, z in zip(hits, standard, strict=True)}
        for key in scores:
            scores[key] += weight * found.get(key, missing)
    order = sorted(scores, key=lambda key: (-scores[key], key))
    return [(chunks[key], scores[key]) for key in order]


def title_prior(
    ranked: Sequence[tuple[StoredHit, float]],
    query: Vector,
    titles: Mapping[tuple[str, str], Vector],
    weight: float = TITLE_WEIGHT,
) -> list[tuple[StoredHit, float]]:
    """`ranked` (fused by z-scores) with each chunk's score raised by `weight` times the
    z-score of its file's title cosine to `query` among the files of `ranked` that have a title
    (`titles`, by workspace and path), best first (ties: path, chunk). A file without a title
    gains nothing; with fewer than two titles, or titles that do not spread, nothing changes."""
    files = list(dict.fromkeys((h.workspace, h.path) for h, _ in ranked))
    known = [f for f in files if f in titles]
    if not weight or len(known) < 2:
        return list(ranked)
    import numpy as np  # noqa: PLC0415 (loaded by then: the vectors are arrays)

    cosines = np.stack([titles[f] for f in known]).astype(np.float64) @ query.astype(np.float64)
    spread = float(cosines.std())
    if not spread > 0.0 or not math.isfinite(spread):
        return list(ranked)
    standard = (weight * (cosines - cosines.mean()) / spread).tolist()
    lift = dict(zip(known, standard, strict=True))
    lifted = [(h, s + lift.get((h.workspace, h.path), 0.0)) for h, s in ranked]
    return sorted(lifted, key=lambda p: (-p[1], p[0].workspace, p[0].path, p[0].chunk))


def _standardised(values: Sequence[float]) -> tuple[list[float], float]:
    """The z-scores of `values`, and the score of a chunk the ranking did not return: its
    lowest z-score. Values that do not spread (one hit, or ties) score 1, and a chunk not
    returned 0, so being found still counts."""
    if not values:
        return [], 0.0
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if not spread > 0.0 or not math.isfinite(spread):
        return [1.0] * len(values), 0.0
    standard = [(v - mean) / spread for v in values]
    return standard, min(standard)
