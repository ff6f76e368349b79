"""Hybrid ranking by standardised scores: what fuse_scores keeps that ranks alone lose, and how
it treats chunks one ranking did not return."""

from __future__ import annotations

import pytest

from docshelf.rows import StoredHit
from docshelf.search import Fusion, fuse, fuse_scores


def hit(path: str, score: float, chunk: int = 0) -> StoredHit:
    return StoredHit(path, chunk, "H", path, 1, 5, score)


def paths(ranked: list[tuple[StoredHit, float]]) -> list[str]:
    return [h.path for h, _ in ranked]


def test_a_chunk_far_ahead_in_one_ranking_beats_a_consensus_of_middling_places() -> None:
    # Text finds "exact.md" far ahead of everything else; vector ranks it nowhere. Rank fusion
    # prefers "both.md", in both lists; standardised scores keep the lead.
    vector = [hit("both.md", 0.52)] + [hit(f"v{i}.md", 0.51 - i / 100) for i in range(8)]
    text = [hit("exact.md", 30.0), hit("t0.md", 3.1), hit("both.md", 3.0)]
    text += [hit(f"t{i}.md", 3.0 - i / 10) for i in range(1, 7)]
    equal = Fusion(vector_weight=0.5, text_weight=0.5)
    assert paths(fuse(vector, text, Fusion(0.5, 0.5, 60.0, "rrf")))[0] == "both.md"
    assert paths(fuse_scores(vector, text, equal))[0] == "exact.md"


def test_a_chunk_missing_from_a_ranking_counts_as_its_last_candidate() -> None:
    vector = [hit("a.md", 0.9), hit("b.md", 0.5), hit("c.md", 0.1)]
    text = [hit("d.md", 5.0), hit("e.md", 1.0)]
    fused = dict((h.path, s) for h, s in fuse_scores(vector, text, Fusion(1.0, 1.0)))
    # c.md is the last vector candidate and missing from text; e.md is the last text candidate
    # and missing from vector: each gets the lowest z-score of the ranking that lacks it.
    assert fused["c.md"] == pytest.approx(-1.2247449 + -1.0)
    assert fused["e.md"] == pytest.approx(-1.2247449 + -1.0)
    assert len(fused) == 5


def test_an_empty_ranking_leaves_the_other_in_its_order() -> None:
    vector = [hit("a.md", 0.9), hit("b.md", 0.5), hit("c.md", 0.4)]
    assert paths(fuse_scores(vector, [], Fusion())) == ["a.md", "b.md", "c.md"]
    assert paths(fuse_scores([], vector, Fusion())) == ["a.md", "b.md", "c.md"]
    assert fuse_scores([], [], Fusion()) == []


def test_a_single_text_match_still_lifts_its_chunk() -> None:
    # One text hit has no spread to standardise by; being found must still count.
    vector = [hit("a.md", 0.60), hit("b.md", 0.59), hit("c.md", 0.20)]
    text = [hit("b.md", 4.2)]
    assert paths(fuse_scores(vector, text, Fusion()))[0] == "b.md"


def test_the_default_fusion_is_standardised_scores_weighing_text_more() -> None:
    fusion = Fusion()
    assert fusion.method == "zscore"
    assert fusion.text_weight > fusion.vector_weight
