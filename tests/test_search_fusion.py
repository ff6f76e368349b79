"""Hybrid ranking by standardised scores: what fuse_scores keeps that ranks alone lose, and how
it treats chunks one ranking did not return."""

from __future__ import annotations

import numpy as np
import pytest

from docshelf.chunking import title_input
from docshelf.rows import StoredHit
from docshelf.search import TITLE_WEIGHT, Fusion, fuse, fuse_scores, title_prior


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


# -- the file title prior ---------------------------------------------------------------------


def axis(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i] = 1.0
    return v


def test_a_file_whose_title_is_near_the_query_lifts_its_passages() -> None:
    ranked = [(hit("a.md", 0.0), 1.0), (hit("b.md", 0.0), 0.9), (hit("quotas.md", 0.0), 0.6)]
    query = axis(0)
    titles = {("", "a.md"): axis(1), ("", "b.md"): axis(2), ("", "quotas.md"): axis(0)}
    lifted = title_prior(ranked, query, titles, 0.5)
    # Cosines 0, 0, 1: z-scores -0.707, -0.707, 1.414; quotas.md gains 0.707, a.md loses 0.354.
    assert paths(lifted) == ["quotas.md", "a.md", "b.md"]
    assert dict((h.path, s) for h, s in lifted)["quotas.md"] == pytest.approx(0.6 + 0.5 * 1.4142136)
    assert paths(title_prior(ranked, query, titles, 0.0)) == ["a.md", "b.md", "quotas.md"]


def test_files_without_a_title_gain_nothing_and_too_few_titles_change_nothing() -> None:
    ranked = [(hit("a.md", 0.0), 1.0), (hit("old.md", 0.0), 0.9), (hit("c.md", 0.0), 0.8)]
    query = axis(0)
    titles = {("", "a.md"): axis(1), ("", "c.md"): axis(0)}
    lifted = dict((h.path, s) for h, s in title_prior(ranked, query, titles, 0.5))
    assert lifted["old.md"] == 0.9  # a ref indexed before titles were kept
    assert lifted["c.md"] == pytest.approx(1.3) and lifted["a.md"] == pytest.approx(0.5)
    one = {("", "c.md"): axis(0)}
    assert title_prior(ranked, query, one, 0.5) == ranked
    alike = {("", "a.md"): axis(1), ("", "c.md"): axis(1)}  # titles that do not spread
    assert title_prior(ranked, query, alike, 0.5) == ranked


def test_the_default_fusion_adds_half_a_title_z_score() -> None:
    assert TITLE_WEIGHT == 0.5 and Fusion().title_weight == TITLE_WEIGHT


def test_a_title_input_is_the_first_heading_and_the_words_of_the_path() -> None:
    assert (
        title_input("aws-lambda-developer-guide/gettingstarted-limits.md", "Lambda quotas > Memory")
        == "Lambda quotas (aws lambda developer guide gettingstarted limits)"
    )
    assert title_input("docs/v1.2/README", "") == "(docs v1 2 README)"
    assert title_input("docs/how_to.rst", "  How to  ") == "How to (docs how to)"
