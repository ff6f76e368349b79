"""Answers sized for an agent: at most per_file excerpts of one file, the file's other passages
counted on its hits, and neighbouring excerpts of one file joined into one over exact lines; on
both real stores through the service, and on ranked candidates directly."""

from __future__ import annotations

import dataclasses

import pytest

from docshelf.app import Service
from docshelf.errors import ConfigError
from docshelf.indexer import Indexer
from docshelf.present import answer_data, fit_answer, render_answer
from docshelf.rows import StoredHit
from docshelf.search import (
    COPIES_SHOWN,
    DEFAULT_PER_FILE,
    DEFAULT_TOP_K,
    JOIN_MAX_BYTES,
    MAX_MAX_TOKENS,
    MERGE_LINES,
    MIN_MAX_TOKENS,
    TOKENS_PER_EXCERPT,
    Answer,
    Copy,
    Hit,
    check_max_tokens,
    check_per_file,
    default_max_tokens,
    distinct,
    tokens_of,
)
from docshelf.stores import SQLiteStore
from docshelf.stores.postgres import PostgresStore
from tests.support.indexing import FakeEmbedder, MemorySource
from tests.support.service import build_service

Store = SQLiteStore | PostgresStore

# A file's lines, numbered from 1, and its passages as a store returns them.
FILE = [f"line {n}" if n % 10 else "" for n in range(1, 121)]


def passage(start: int, end: int, path: str = "a.md", lines: list[str] = FILE) -> StoredHit:
    return StoredHit(path, start, "H", "\n".join(lines[start - 1 : end]), start, end, 0.0)


def ranked(*hits: StoredHit) -> list[tuple[StoredHit, float]]:
    return [(h, 1.0 - i / 100) for i, h in enumerate(hits)]


def lines_of(workspace: str, path: str) -> list[str]:
    return FILE


def spans(hits: list[StoredHit] | list) -> list[tuple[str, int, int]]:
    return [(h.path, h.start_line, h.end_line) for h in hits]


# -- per_file ---------------------------------------------------------------------------------


def test_at_most_per_file_excerpts_of_one_file_and_its_other_passages_are_counted() -> None:
    found = distinct(
        ranked(
            passage(1, 5),
            passage(21, 25),
            passage(41, 45),  # a third of a.md: left out, counted
            passage(1, 5, "b.md"),
            passage(61, 65),  # a fourth: counted
            passage(42, 44),  # the same passage as the third: not counted twice
            passage(21, 25, "b.md"),
        ),
        5,
        per_file=2,
        lines_of=lines_of,
    )
    assert spans(found) == [("a.md", 1, 5), ("a.md", 21, 25), ("b.md", 1, 5), ("b.md", 21, 25)]
    assert [h.more for h in found] == [2, 2, 0, 0]


def test_a_full_answer_counts_the_passages_of_the_files_it_shows() -> None:
    found = distinct(
        ranked(passage(1, 5), passage(1, 5, "b.md"), passage(41, 45), passage(1, 5, "c.md")),
        2,
        per_file=2,
        lines_of=lines_of,
    )
    assert spans(found) == [("a.md", 1, 5), ("b.md", 1, 5)]
    assert [h.more for h in found] == [1, 0]  # c.md is not shown: nothing to count on


@pytest.mark.parametrize("per_file", [0, 21, -1, 1.5, "2", True, [2], float("inf")])
def test_a_per_file_that_is_not_a_whole_number_from_1_to_top_k_is_refused(
    per_file: object,
) -> None:
    with pytest.raises(
        ConfigError, match=r"per_file must be a whole number from 1 to top_k \(20\)"
    ):
        check_per_file(per_file, 20)


def test_per_file_is_bounded_by_top_k_and_defaults_to_top_k() -> None:
    assert DEFAULT_PER_FILE is None  # no bound unless asked: measured in bench/answers.py
    assert check_per_file(None, 5) == 5
    assert check_per_file(None, 1) == 1
    assert check_per_file(3.0, 3) == 3
    with pytest.raises(ConfigError, match=r"from 1 to top_k \(3\); got 4\. Ask again"):
        check_per_file(4, 3)


# -- neighbours merged ------------------------------------------------------------------------


def test_overlapping_and_touching_excerpts_of_one_file_become_one_over_the_joined_lines() -> None:
    found = distinct(
        ranked(passage(31, 38), passage(35, 45), passage(46, 48)), 5, lines_of=lines_of
    )
    assert spans(found) == [("a.md", 31, 48)]
    assert found[0].content == "\n".join(FILE[30:48])
    assert found[0].score == pytest.approx(1.0)  # the best of them


def test_excerpts_with_only_blank_lines_between_join_and_with_text_between_do_not() -> None:
    # Line 50 is blank: 41-49 and 51-55 join. Lines 56-57 hold text: 58-59 stays apart.
    found = distinct(
        ranked(passage(41, 49), passage(51, 55), passage(58, 59)),
        5,
        merge_lines=MERGE_LINES,
        lines_of=lines_of,
    )
    assert spans(found) == [("a.md", 41, 55), ("a.md", 58, 59)]
    assert found[0].content.split("\n")[9] == ""
    far = distinct(ranked(passage(41, 49), passage(51, 55)), 5, merge_lines=0, lines_of=lines_of)
    assert spans(far) == [("a.md", 41, 49), ("a.md", 51, 55)]


def test_a_passage_between_two_excerpts_joins_them_and_gives_a_place_back() -> None:
    found = distinct(
        ranked(passage(1, 9), passage(1, 5, "b.md"), passage(21, 29), passage(11, 19)),
        5,
        per_file=2,
        lines_of=lines_of,
    )
    assert spans(found) == [("a.md", 1, 29), ("b.md", 1, 5)]


def test_what_cannot_be_told_exactly_is_not_joined() -> None:
    other = [line.upper() for line in FILE]  # text that differs where the two overlap
    found = distinct(ranked(passage(31, 38), passage(35, 45, lines=other)), 5, lines_of=lines_of)
    assert spans(found) == [("a.md", 31, 38)]  # the same passage: dropped, as before
    # Without the file's lines (no text stored), nothing joins.
    assert spans(distinct(ranked(passage(31, 38), passage(39, 45)), 5)) == [
        ("a.md", 31, 38),
        ("a.md", 39, 45),
    ]
    # A slice of a line longer than a chunk is no whole line.
    long = ["x" * 5000 if n == 60 else line for n, line in enumerate(FILE, start=1)]
    cut = StoredHit("a.md", 9, "H", "x" * 1000, 60, 60, 0.0)
    found = distinct(ranked(passage(55, 59), cut), 5, lines_of=lambda *_: long)
    assert spans(found) == [("a.md", 55, 59), ("a.md", 60, 60)]


def test_a_join_stays_within_a_reads_bounds() -> None:
    lines = ["w" * 150 for _ in range(300)]  # 200 lines of 150 bytes pass 16,000 bytes
    found = distinct(
        ranked(passage(1, 60, lines=lines), passage(61, 120, lines=lines)),
        5,
        lines_of=lambda *_: lines,
        join_bytes=10**9,
    )
    assert spans(found) == [("a.md", 1, 60), ("a.md", 61, 120)]


def test_a_joined_excerpt_holds_at_most_join_max_bytes() -> None:
    lines = ["w" * 99 for _ in range(120)]  # 100 bytes a line, with its newline
    small = [passage(1, 15, lines=lines), passage(16, 30, lines=lines)]
    found = distinct(ranked(*small, passage(31, 40, lines=lines)), 5, lines_of=lambda *_: lines)
    # 1-30 joined (3,000 bytes); 31-40 would make 4,000 bytes less one newline: joined too.
    assert spans(found) == [("a.md", 1, 40)]
    found = distinct(ranked(*small, passage(31, 41, lines=lines)), 5, lines_of=lambda *_: lines)
    assert JOIN_MAX_BYTES == 4_000
    assert spans(found) == [("a.md", 1, 30), ("a.md", 31, 41)]  # 4,099 bytes: two excerpts
    # Overlapping an excerpt it cannot join, a candidate is not shown again in part; its lines
    # not shown are counted as a passage more, and one shown whole is not.
    found = distinct(
        ranked(
            passage(1, 25, lines=lines), passage(20, 45, lines=lines), passage(5, 9, lines=lines)
        ),
        5,
        lines_of=lambda *_: lines,
    )
    assert spans(found) == [("a.md", 1, 25)]
    assert [h.more for h in found] == [1]


# -- through the service, on both stores ------------------------------------------------------

# A runbook whose steps all match, each closed by a heading of its own with nothing under it (so
# no two steps are neighbours); a guide whose sections touch; two short files.
RUNBOOK = "# Payments runbook\n\n" + "\n".join(
    f"## Step {n}\n\nRestart the payments worker, step {n} of the payments runbook.\n\n### Done"
    for n in range(1, 9)
)
GUIDE = "# Deploys\n\n## Build\n\nBuild the gateway image.\n\n## Ship\n\nShip the gateway image.\n"
DOCS = {
    "docs/runbook.md": RUNBOOK + "\n",
    "docs/guide.md": GUIDE,
    "docs/oncall.md": "# On call\n\nThe payments team restarts the worker.\n",
    "docs/faq.md": "# FAQ\n\nPayments worker restarts are logged.\n",
}


@pytest.fixture
def service(store: Store) -> Service:
    source = MemorySource()
    source.add("a" * 40, DOCS)
    Indexer(store, FakeEmbedder(), source).index("a" * 40)
    return build_service(store, FakeEmbedder(), "ws")


def test_an_answer_holds_at_most_per_file_excerpts_of_one_file_and_counts_the_rest(
    service: Service,
) -> None:
    query = "payments runbook restart worker step"
    default = service.search(query, 5, mode="text")
    paths = [h.path for h in default.hits]
    assert paths.count("docs/runbook.md") == 5  # eight steps match, no bound by default
    assert [h.more for h in default.hits] == [3] * 5  # the three left out are counted
    two = service.search(query, 5, mode="text", per_file=2)
    paths = [h.path for h in two.hits]
    assert paths.count("docs/runbook.md") == 2
    assert {"docs/oncall.md", "docs/faq.md"} <= set(paths)  # the places the runbook left
    counted = [h.more for h in two.hits if h.path == "docs/runbook.md"]
    assert counted == [6, 6]  # its other six steps
    assert "[6 more passages of this file matched]" in render_answer(two)
    every = service.search(query, 5, mode="text", per_file=5)
    assert [h.path for h in every.hits].count("docs/runbook.md") == 5


def test_neighbouring_sections_of_one_file_come_back_as_one_excerpt_over_exact_lines(
    service: Service,
) -> None:
    answer = service.search("gateway image", 5, mode="text")
    assert [(h.path, h.start_line, h.end_line) for h in answer.hits] == [("docs/guide.md", 3, 9)]
    assert answer.hits[0].content == "\n".join(GUIDE.split("\n")[2:9])
    for hit in service.search("payments runbook restart worker step", 5, mode="text").hits:
        file_lines = DOCS[hit.path].split("\n")
        assert hit.content.split("\n") == file_lines[hit.start_line - 1 : hit.end_line]


@pytest.mark.parametrize("per_file", [0, 6, 1.5, "2"])
def test_the_service_refuses_a_per_file_outside_1_to_top_k(
    service: Service, per_file: object
) -> None:
    with pytest.raises(ConfigError, match=r"per_file must be a whole number from 1 to top_k"):
        service.search("payments", 5, per_file=per_file)


# -- max_tokens -------------------------------------------------------------------------------


def hostile_answer(hits: int, path_bytes: int, line_bytes: int, query_chars: int) -> Answer:
    path = "docs/" + "p" * (path_bytes - 8) + ".md"
    return Answer(
        "ws",
        "f" * 40,
        "q" * query_chars,
        "hybrid",
        "Note: this session is pinned to another commit. " * 3,
        [
            Hit(path, "H > " + "h" * 190, n, n, 1.0 - n / 100, "é" * (line_bytes // 2), more=3)
            for n in range(1, hits + 1)
        ],
    )


@pytest.mark.parametrize(
    "budget", [MIN_MAX_TOKENS, 1_500, default_max_tokens(DEFAULT_TOP_K), 10_000, MAX_MAX_TOKENS]
)
@pytest.mark.parametrize(
    ("hits", "path_bytes", "line_bytes", "query_chars"),
    [(20, 4096, 2000, 4000), (20, 40, 2000, 20), (5, 4096, 16_000, 4000), (1, 20, 16_000, 10)],
)
def test_a_fitted_answer_never_passes_its_budget_whatever_the_docs_hold(
    budget: int, hits: int, path_bytes: int, line_bytes: int, query_chars: int
) -> None:
    answer = hostile_answer(hits, path_bytes, line_bytes, query_chars)
    fitted = fit_answer(answer, budget)
    text = render_answer(fitted)
    assert tokens_of(text) <= budget
    assert len(fitted.hits) + fitted.left_out == hits
    for i, hit in enumerate(fitted.hits):  # in order: whole ones, then citations
        assert hit.path == answer.hits[i].path and hit.start_line == answer.hits[i].start_line
        if hit.cut:
            assert hit.content == "" and f"read lines {hit.start_line}-{hit.end_line} of" in text
    if fitted.left_out:
        assert f"{fitted.left_out} more excerpt" in text and "left out to keep this answer" in text


def test_an_answer_within_its_budget_is_shown_whole_and_a_cut_one_says_how_to_read_the_rest() -> (
    None
):
    hits = [Hit(f"docs/{n}.md", "H", 1, 40, 1.0, "word " * 600) for n in range(5)]  # 3,000 B
    answer = Answer("ws", "f" * 40, "words", "hybrid", None, hits)
    whole = fit_answer(answer, 5_000)
    assert [h.cut for h in whole.hits] == [False] * 5 and whole.left_out == 0
    assert render_answer(whole) == render_answer(answer)
    tight = fit_answer(answer, 1_500)
    assert [h.cut for h in tight.hits] == [False, True, True, True, True]
    text = render_answer(tight)
    assert tokens_of(text) <= 1_500
    assert (
        "[text left out to keep this answer within 1500 tokens: read lines 1-40 of docs/1.md]"
        in text
    )
    data = answer_data(tight)
    assert (data["max_tokens"], data["left_out"]) == (1_500, 0)
    assert [h["cut"] for h in data["hits"]] == [False, True, True, True, True]


@pytest.mark.parametrize("max_tokens", [0, 999, 25_001, 1.5, "2000", True, [2000]])
def test_a_max_tokens_below_the_smallest_useful_answer_or_past_the_bound_is_refused(
    max_tokens: object,
) -> None:
    bound = r"max_tokens must be a whole number from 1000 \(one excerpt and its header\) to 25000"
    with pytest.raises(ConfigError, match=bound):
        check_max_tokens(max_tokens, 5)
    assert check_max_tokens(2_000.0, 5) == 2_000


def test_the_default_budget_is_tokens_per_excerpt_asked_for_at_least_the_least() -> None:
    assert TOKENS_PER_EXCERPT == 450
    assert [check_max_tokens(None, k) for k in (1, 2, 3, 5, 10, 20)] == [
        1_000,
        1_000,
        1_350,
        2_250,
        4_500,
        9_000,
    ]
    with pytest.raises(ConfigError, match=r"top_k must be a whole number from 1 to 20"):
        check_max_tokens(None, 21)  # the default of a top_k refused is no number


def test_a_place_a_join_frees_goes_to_the_file_s_best_passage_left_out() -> None:
    # Line 11 holds text: 1-10 and 12-20 stay two excerpts until 9-13 joins them; the place
    # that frees goes to 30-40 (left out by per_file), not to the lower-ranked 50-60.
    lines = [f"text {n}" for n in range(1, 121)]
    found = distinct(
        ranked(
            passage(1, 10, lines=lines),
            passage(12, 20, lines=lines),
            passage(30, 40, lines=lines),
            passage(9, 13, lines=lines),
            passage(50, 60, lines=lines),
        ),
        5,
        per_file=2,
        lines_of=lambda *_: lines,
    )
    assert spans(found) == [("a.md", 1, 20), ("a.md", 30, 40)]
    assert [h.more for h in found] == [1, 1]  # 50-60


def test_more_never_counts_lines_the_answer_shows() -> None:
    lines = [f"text {n}" for n in range(1, 121)]
    found = distinct(
        ranked(
            passage(1, 10, lines=lines), passage(12, 15, lines=lines), passage(10, 16, lines=lines)
        ),
        5,
        per_file=1,
        lines_of=lambda *_: lines,
    )
    assert spans(found) == [("a.md", 1, 16)] and found[0].more == 0


def test_a_header_too_long_for_the_budget_counts_the_workspaces_and_keeps_a_short_query() -> None:
    refs = {f"service-{n}": "f" * 40 for n in range(100)}
    hits = [Hit("docs/a.md", "H", 1, 3, 1.0, "text", f"service-{n}", "f" * 40) for n in range(5)]
    answer = Answer("", "", "foo", "hybrid", "Note: " + "pinned. " * 200, hits, refs)
    fitted = fit_answer(answer, MIN_MAX_TOKENS)
    text = render_answer(fitted)
    assert tokens_of(text) <= MIN_MAX_TOKENS
    assert fitted.query == "foo" and "for 'foo' from the documentation of 100 workspaces" in text
    assert len(fitted.hits) == 5 and fitted.refs == refs  # the data still names every commit


# -- the same text in several workspaces ------------------------------------------------------


def held(workspace: str, path: str, start: int, text: str) -> StoredHit:
    lines = text.count("\n") + 1
    hit = StoredHit(path, start, "H", text, start, start + lines - 1, 0.0)
    return dataclasses.replace(hit, workspace=workspace)


def test_a_text_other_workspaces_hold_is_one_excerpt_that_names_where_else_it_is() -> None:
    vendored = "Rotate the payments key every 90 days.\nUse the vault."
    got = distinct(
        ranked(
            held("shop", "docs/keys.md", 3, vendored),
            held("billing", "vendor/keys.md", 7, vendored),  # a vendored copy
            held("shop", "docs/other.md", 1, vendored),  # the same workspace: an excerpt
            held("ops", "docs/runbook.md", 1, "Page the on-call engineer."),
            held("checkout", "docs/keys.md", 3, vendored),
            held("billing", "vendor/keys.md", 7, vendored),  # named twice: one place
        ),
        2,
    )
    assert [(h.workspace, h.path) for h in got] == [
        ("shop", "docs/keys.md"),
        ("shop", "docs/other.md"),
    ]
    # Copies found after the answer is full are still named: they cost no excerpt.
    assert got[0].copies == (
        Copy("billing", "vendor/keys.md", 7, 8),
        Copy("checkout", "docs/keys.md", 3, 4),
    )
    assert got[1].copies == ()


def test_the_text_names_a_few_places_of_the_same_text_and_counts_the_rest() -> None:
    places = tuple(Copy(f"service-{n}", "docs/keys.md", 3, 4) for n in range(COPIES_SHOWN + 2))
    hit = Hit("docs/keys.md", "Keys", 3, 4, 1.0, "Rotate the key.", "shop", "f" * 40, copies=places)
    answer = Answer("", "", "rotate", "hybrid", None, [hit], {"shop": "f" * 40})
    text = render_answer(answer)
    assert (
        "[the same text is also in service-0: docs/keys.md:3-4; service-1: docs/keys.md:3-4; "
        "service-2: docs/keys.md:3-4; and 2 more places]"
    ) in text
    assert answer_data(answer)["hits"][0]["copies"][4] == {
        "workspace": "service-4",
        "path": "docs/keys.md",
        "start_line": 3,
        "end_line": 4,
    }
    # A fitted answer counts the line in its budget.
    fitted = fit_answer(answer, MIN_MAX_TOKENS)
    assert tokens_of(render_answer(fitted)) <= MIN_MAX_TOKENS and "and 2 more places" in text
