"""The words both stores rank by: one tokenizer, so that SQLite and PostgreSQL score the same
terms with the same BM25 (stores/bm25.py) and answer a text search alike.

- A word is a run of letters and digits, lower-cased and stemmed (the Porter stemmer, as FTS5's
  `porter` tokenizer stemmed before); stop words are indexed (they count in a chunk's length)
  but never asked for.
- A code is a run of words joined by `-`, `_`, `:`, `.` or `@` with no space: `LEDGER-409`,
  `--sync-interval`, `s3:PutObject`, `max_connections`, `v1.2.3`. It is one term of its own,
  lower-cased and not stemmed, beside the words it is made of: a question naming the code finds
  the passages holding exactly that code first (a rare term weighs much more than its parts),
  and a question naming one of its words still finds it.
- `/` separates (a path's folders and a URL's parts are words and codes of their own).

Each store keeps, per ref, the inverted lists of these terms: for each term the chunks holding
it, with its column-weighted frequency in each and each one's length (stores/bm25.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

# The tokenizer's version, recorded in each store: a store whose terms were made by another
# version has them made again when it is opened (stores/sqlite.py, stores/postgres.py), so that
# the query's terms and the stored ones always come from the same rules.
TERMS_VERSION = "2"

# BM25 as FTS5's bm25() computes it (fts5_aux.c), on both stores: k1 = 1.2, b = 0.75, idf =
# ln((N - n + 0.5) / (n + 0.5)), an idf at or below 0 counting as 1e-6, a term's frequency the
# sum of its counts in each column times the column's weight, and a chunk's length its number of
# terms in all columns.
BM25_K1 = 1.2
BM25_B = 0.75
BM25_MIN_IDF = 1e-6

# Column weights (path, heading, content): a word of the file's path says most about which
# document a chunk is in, one of its heading more than one of its text. Chosen on the sweep of
# bench/retrieval.py with the fusion settings of search.py (BENCHMARKS.md, "Retrieval quality").
BM25_WEIGHTS = (3.0, 2.0, 1.0)

# A text search asks for at most this many terms; a pasted page must not become a huge query.
MAX_QUERY_TERMS = 64

# A code longer than this is not a term (a long URL or a base64 blob names nothing a question
# asks for); its words still are.
MAX_CODE_CHARS = 64

# The characters that join words into one code.
CODE_JOINERS = "-_:.@"

# Words too common to rank by, never asked for: without this, "how do I ..." matches every
# chunk and ranks thousands of rows.
_STOP_LIST = (
    "a an and are as at be but by do does for from had has have how i if in into is it its me "
    "my no not of on or our so such that the their then there these they this to was we were "
    "what when where which who why will with you your"
)
STOP_WORDS = frozenset(_STOP_LIST.split())

# A word: letters and digits. A span: words and joiners with no space (then trimmed to start and
# end with a word).
_WORD = re.compile(r"[^\W_]+")
_SPAN = re.compile(r"[\w" + re.escape(CODE_JOINERS) + r"]+")
_JOINER_EDGES = CODE_JOINERS + "_"
# A code as one match: a word, then joiners and a word, once or more (the span trimmed). It
# starts only where a word starts, and its quantifiers never give back: one pass over the text.
_CODE = re.compile(r"(?<![^\W_])[^\W_]++(?:[" + re.escape(CODE_JOINERS) + r"]++[^\W_]++)+")
_STEMS: dict[str, str] = {}

# Distinct words seen by one process are few (tens of thousands for a large corpus), and
# stemming is the tokenizer's main cost: each is stemmed once.
STEM_CACHE_WORDS = 200_000

# Words shorter or longer than this are kept as they are, as FTS5's porter tokenizer does
# (fts5_tokenize.c): "is" stays "is", and "s" does not become an empty term.
MIN_STEMMED_CHARS = 3
MAX_STEMMED_CHARS = 64

_STEMMER = snowballstemmer.stemmer("porter")


@lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(word: str) -> str:
    """`word` (lower-cased) as the Porter stemmer reduces it; a word of fewer than 3 or more
    than 64 characters as it is."""
    if not MIN_STEMMED_CHARS <= len(word) <= MAX_STEMMED_CHARS:
        return word
    return str(_STEMMER.stemWord(word)) or word


def terms(text: str) -> list[str]:
    """The terms of `text`: each word stemmed, in order (stop words included: they count in the
    length), then each code, in order. Written as two passes of a pattern over the whole text,
    the indexer's hot loop: a word's stem comes from a dict once seen."""
    lower = text.lower()
    stems = _STEMS
    found = [stems.get(w) or _stem_new(w) for w in _WORD.findall(lower)]
    found += [c for c in _CODE.findall(lower) if len(c) <= MAX_CODE_CHARS]
    return found


def _stem_new(word: str) -> str:
    if len(_STEMS) >= STEM_CACHE_WORDS:
        _STEMS.clear()
    _STEMS[word] = made = stem(word)
    return made


def query_terms(query: str) -> list[str]:
    """The distinct terms a text search asks for, in the query's order, stop words left out
    (a stop word inside a code stays in the code), at most MAX_QUERY_TERMS."""
    asked: dict[str, None] = {}
    for span in _SPAN.findall(query.lower()):
        words = _WORD.findall(span)
        for w in words:
            if w not in STOP_WORDS:
                asked.setdefault(stem(w))
        code = span.strip(_JOINER_EDGES)
        if len(words) > 1 and len(code) <= MAX_CODE_CHARS:
            asked.setdefault(code)
    return list(asked)[:MAX_QUERY_TERMS]


@dataclass(frozen=True, slots=True)
class ChunkTerms:
    """A chunk's terms per column (path, heading, content)."""

    path: list[str]
    heading: list[str]
    content: list[str]

    @classmethod
    def of(cls, path: str, heading: str, content: str) -> ChunkTerms:
        return cls(terms(path), terms(heading), terms(content))

    @property
    def length(self) -> int:
        """BM25's length of the chunk: its number of terms in all columns."""
        return len(self.path) + len(self.heading) + len(self.content)

    def weighted(
        self, weights: tuple[float, float, float] = BM25_WEIGHTS
    ) -> tuple[list[str], list[float]]:
        """The distinct terms, sorted, and each one's frequency weighted by column (path,
        heading, content)."""
        counts: dict[str, float] = {}
        columns = (self.path, self.heading, self.content)
        for weight, column in zip(weights, columns, strict=True):
            for term in column:
                counts[term] = counts.get(term, 0.0) + weight
        order = sorted(counts)
        return order, [counts[t] for t in order]


def term_columns(path: str, heading: str, content: str) -> tuple[list[str], list[float], int]:
    """A chunk's distinct terms, their weighted frequencies and its length, as both stores'
    inverted lists take them."""
    made = ChunkTerms.of(path, heading, content)
    terms_, tfs = made.weighted()
    return terms_, tfs, made.length


def bm25_idf(chunks: int, holding: int) -> float:
    """The idf of a term that `holding` of `chunks` chunks hold."""
    idf = math.log((chunks - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0.0 else BM25_MIN_IDF


def asked_terms(found: Iterable[tuple[str, int]], chunks: int) -> list[list[str]]:
    """Of the query's terms and how many of the `chunks` chunks hold each, the sets of terms to
    rank by, in turn until one finds k chunks: those fewer than half of the chunks hold, then
    every term some chunk holds (each set given only when it has a term and differs from the
    one before).

    A term that half the chunks hold or more has an idf at or below 0, which BM25 counts as
    1e-6: a chunk holding only such terms scores below any chunk holding a rarer one, so when
    the rarer terms find k chunks, those are the k best, and asking for the common terms too
    would only make a store score every chunk holding them (most of a large corpus, for a word
    like "aws" in AWS's guides). Both stores follow this rule."""
    held = [(term, holding) for term, holding in found if holding > 0]
    rare = [term for term, holding in held if 2 * holding < chunks]
    every = [term for term, _ in held]
    tries = [rare] if rare else []
    if every and every != rare:
        tries.append(every)
    return tries
