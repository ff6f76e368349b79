"""BM25 written out from its definition, for the tests of both stores' keyword ranking."""

from __future__ import annotations

import math

from docshelf.rows import ChunkRow
from docshelf.stores.terms import BM25_B, BM25_K1, ChunkTerms, query_terms


def bm25(rows_of_ref: list[ChunkRow], query: str, k: int) -> dict[tuple[str, int], float]:
    """BM25 written out from its definition (FTS5's bm25() with the column weights) over the
    terms of `rows_of_ref`, asking for the rarer terms first and for every term when those find
    fewer than k chunks: what both stores must compute. Scores of every matching chunk."""
    made = {(r.path, r.chunk): ChunkTerms.of(r.path, r.heading, r.content) for r in rows_of_ref}
    freqs = {key: dict(zip(*m.weighted(), strict=True)) for key, m in made.items()}
    n = len(made)
    avgdl = sum(m.length for m in made.values()) / n
    asked = query_terms(query)
    holding = {t: sum(1 for f in freqs.values() if t in f) for t in asked}
    held = [t for t in asked if holding[t] > 0]
    rare = [t for t in held if 2 * holding[t] < n]
    for terms in (rare, held):
        scores: dict[tuple[str, int], float] = {}
        for key, freq in freqs.items():
            if not any(t in freq for t in terms):
                continue
            score = 0.0
            for t in terms:
                f = freq.get(t, 0.0)
                idf = max(math.log((n - holding[t] + 0.5) / (holding[t] + 0.5)), 0.0) or 1e-6
                norm = 1 - BM25_B + BM25_B * made[key].length / avgdl
                score += idf * (f * (BM25_K1 + 1) / (f + BM25_K1 * norm))
            scores[key] = score
        if len(scores) >= k:
            break
    return scores
