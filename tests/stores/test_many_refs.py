"""Reads over many refs at once (a search over many workspaces), on a real SQLite file and a
real PostgreSQL: the same hits as each ref's own search merged, BM25 over the union's
statistics as one corpus, and a number of statements that does not grow with the refs."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from docshelf.rows import ChunkRow, FileRow, StoredHit
from docshelf.stores import open_store, postgres_many, postgres_merged
from docshelf.stores.contract import RefScope
from docshelf.stores.postgres import PostgresStore
from tests.stores.test_contract import DIM, MODEL, Store, at_each_statement, unit
from tests.support.bm25_reference import bm25

WORDS = ["payments", "rotate", "key", "gateway", "timeout", "runbook", "owner", "deploy"]


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    opened = open_store(location, model_id=MODEL, dim=DIM)
    yield opened
    opened.close()


def team_rows(team: int, n: int, *, seed: int) -> list[ChunkRow]:
    """n chunks of a team's docs, with words drawn from WORDS (so that the teams share terms
    at different rates) and vectors of their own."""
    rng = np.random.default_rng(seed)
    made = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 9))))
        made.append(
            ChunkRow(
                path=f"docs/team{team}/page{i // 3}.md",
                chunk=i % 3,
                heading=f"Team {team} > Part {i}",
                content=f"{words} note {i}",
                start_line=i * 10 + 1,
                end_line=i * 10 + 9,
                content_hash=f"{seed}-{i}",
                embedding=unit(seed * 1000 + i),
            )
        )
    return made


def organisation(store: Store, teams: int, per_team: int = 12) -> dict[str, list[ChunkRow]]:
    """`teams` workspaces, each with a current ref and an older one, and their rows by
    workspace (of the current ref)."""
    current: dict[str, list[ChunkRow]] = {}
    for team in range(teams):
        workspace = f"team{team}"
        store.replace_doc_chunks(workspace, "old", team_rows(team, per_team, seed=500 + team))
        current[workspace] = team_rows(team, per_team + team % 4, seed=team + 1)
        store.replace_doc_chunks(workspace, "new", current[workspace])
        store.set_current(workspace, "new")
    return current


def merged(store: Store, scopes: list[RefScope], query: np.ndarray, k: int) -> list[StoredHit]:
    hits = [
        dataclasses.replace(h, workspace=w)
        for w, r, paths in scopes
        for h in store.search(w, r, query, k, paths)
    ]
    hits.sort(key=lambda h: (-h.score, h.workspace, h.path, h.chunk))
    return hits[:k]


def places(hits: list[StoredHit]) -> list[tuple[str, str, int]]:
    return [(h.workspace, h.path, h.chunk) for h in hits]


def test_a_vector_search_of_many_refs_is_each_ref_s_search_merged(store: Store) -> None:
    organisation(store, 8)
    scopes: list[RefScope] = [(f"team{t}", "new", None) for t in range(8)]
    scopes[2] = ("team2", "old", None)  # a pinned older ref of one workspace
    scopes[5] = ("team5", "new", ["docs/team5/page1.md", "docs/team5/page3.md"])
    for seed in range(5):
        query = unit(9000 + seed)
        for k in (1, 5, 30):
            got = store.search_refs(scopes, query, k)
            want = merged(store, scopes, query, k)
            assert places(got) == places(want)
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)
    assert store.search_refs([("team1", "none", None)], unit(1), 5) == []
    assert store.search_refs([("team1", "new", [])], unit(1), 5) == []
    assert store.search_refs([], unit(1), 5) == []


def test_postgres_walks_the_shared_index_for_most_of_the_table_and_ranks_exactly_otherwise(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(postgres_url, model_id=MODEL, dim=DIM) as store:
        organisation(store, 6, per_team=40)
        everyone: list[RefScope] = [(f"team{t}", "new", None) for t in range(6)]
        one: list[RefScope] = [("team3", "new", None)]
        walked: list[bool] = []
        real = postgres_many.search_refs

        class Seen:
            def __init__(self, conn: Any) -> None:
                self.conn = conn

            def execute(self, sql: str, params: Any = None) -> Any:
                if sql == postgres_many.WALK_SQL:
                    walked.append(True)
                return self.conn.execute(sql, params)

        def spied(conn: Any, scopes: Any, query: Any, k: int, ef_search: int) -> Any:
            walked.append(False)
            return real(Seen(conn), scopes, query, k, ef_search)

        # The whole organisation holds 250 rows: "large" here is anything above 10.
        monkeypatch.setattr(postgres_many, "EXACT_MAX_CHUNKS", 10)
        monkeypatch.setattr(postgres_many, "search_refs", spied)
        # k 10 over everyone walks; k 60 over one team (43 of 487 rows) would need a list of
        # 1,360: ranked exactly.
        for scopes, k, walks in ((everyone, 10, True), (one, 60, False)):
            for seed in range(5):
                query = unit(7000 + seed)
                want = merged(store, scopes, query, k)  # a search of one ref is a union of one
                walked.clear()
                got = store.search_refs(scopes, query, k)
                assert places(got) == places(want)
                assert walked == [False, True] if walks else walked == [False]
        # The walk's candidate list is twice k over the union's share of the table (487 rows:
        # 240 old, 247 new), at least the configured 200 and WALK_DEPTH times k, and at most
        # pgvector's 1,000; a union needing more is ranked exactly.
        with psycopg.connect(postgres_url) as conn:
            pairs = [(w, r) for w, r, _ in everyone]  # 247 of 487
            assert postgres_many.walk_ef(conn, pairs, 10, 200) == 200
            assert postgres_many.walk_ef(conn, pairs, 40, 200) == 280  # WALK_DEPTH * 40
            assert postgres_many.walk_ef(conn, pairs, 70, 200) == 490  # above 2 * 70 * 487 / 247
            assert postgres_many.walk_ef(conn, pairs, 200, 200) == 1000  # 790 needed; the most
            team = [("team3", "new")]  # 43 of 487
            assert postgres_many.walk_ef(conn, team, 10, 200) == 227
            assert postgres_many.walk_ef(conn, team, 60, 200) is None  # 1,360 > 1,000
        # A walk with a longer list gives the connection back at the configured one.
        assert len(store.search_refs(one, unit(3), 10)) == 10  # walked with 227
        shown = store._read("ef", lambda c: c.execute("SHOW hnsw.ef_search").fetchone())
        assert shown is not None and shown[0] == str(store.ef_search)


def test_a_text_search_of_one_ref_is_what_search_text_answers(store: Store) -> None:
    organisation(store, 3)
    for query in ("rotate the payments key", "gateway timeout", "owner deploy runbook"):
        for k in (1, 5, 20):
            one = store.search_text("team1", "new", query, k)
            many = store.search_text_refs([("team1", "new", None)], query, k)
            assert places(many) == [("team1", h.path, h.chunk) for h in one]
            assert [h.score for h in many] == pytest.approx([h.score for h in one], rel=1e-6)


def assert_ranks_the_union(
    store: Store, rows: dict[tuple[str, str], list[ChunkRow]], scopes: list[RefScope]
) -> None:
    """Every text search of `scopes` scores as BM25 written out over their rows taken as one
    corpus (`rows`: each ref's rows)."""
    union = [row for w, r, _ in scopes for row in rows[(w, r)]]
    workspace_of = {row.path: w for w, r, _ in scopes for row in rows[(w, r)]}
    for query in ("rotate the payments key", "gateway timeout", "owner deploy runbook note"):
        want = bm25(union, query, 10)
        got = store.search_text_refs(scopes, query, 10)
        assert len(got) == min(10, len(want))
        for hit in got:
            assert hit.workspace == workspace_of[hit.path]
            assert hit.score == pytest.approx(want[(hit.path, hit.chunk)], rel=1e-5)
        best = sorted(want.values(), reverse=True)[: len(got)]
        assert [h.score for h in got] == pytest.approx(best, rel=1e-5)


def test_a_text_search_of_many_refs_scores_their_union_as_one_corpus(store: Store) -> None:
    current = organisation(store, 6)
    scopes: list[RefScope] = [(w, "new", None) for w in current]
    assert_ranks_the_union(store, {(w, "new"): rows for w, rows in current.items()}, scopes)
    # Some paths only: ranked among themselves, scored with their refs' statistics.
    kept = ["docs/team2/page0.md", "docs/team4/page1.md"]
    some: list[RefScope] = [(w, "new", kept if w in ("team2", "team4") else None) for w in current]
    some = [s for s in some if s[2] is not None]
    # Words of the paths, rare in every ref: both searches score the same set of terms.
    got = store.search_text_refs(some, "page0 page1", 50)
    assert got and {h.path for h in got} <= set(kept)
    full = store.search_text_refs([(w, r, None) for w, r, _ in some], "page0 page1", 500)
    score_of = {(h.workspace, h.path, h.chunk): h.score for h in full}
    for hit in got:
        assert hit.score == pytest.approx(score_of[(hit.workspace, hit.path, hit.chunk)])


def test_merged_term_lists_rank_as_the_refs_own_as_refs_are_written_again_and_pruned(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL merges the lists of the current refs into a row a term (postgres_merged.py),
    # from 32 current refs (4 here); SQLite never does. A search reads the merged parts of the
    # refs still as they were merged and the others' own lists: every ranking stays BM25 over
    # the union, before a merge and after, as refs are written again, made current and pruned.
    monkeypatch.setattr(postgres_merged, "MERGE_MIN_REFS", 4)
    current = organisation(store, 8)
    rows = {(w, "new"): made for w, made in current.items()}
    rows |= {(f"team{t}", "old"): team_rows(t, 12, seed=500 + t) for t in range(8)}
    every: list[RefScope] = [(f"team{t}", "new", None) for t in range(8)]

    def all_rank_the_union() -> None:
        pinned = [*every[:5], ("team5", "old", None)]  # a session pinned to an older commit
        for scopes in (every, pinned, every[::2], every[3:4]):
            assert_ranks_the_union(store, rows, scopes)

    all_rank_the_union()
    postgres = isinstance(store, PostgresStore)
    assert store.merge_term_lists(force=True) == (8 if postgres else 0)
    all_rank_the_union()
    assert store.merge_term_lists() == 0  # nothing moved on since
    # The same ref written again: its merged part names the write before, and is not read.
    rows[("team3", "new")] = team_rows(3, 9, seed=77)
    store.replace_doc_chunks("team3", "new", rows[("team3", "new")])
    all_rank_the_union()
    # A merged ref pruned, its workspace's older ref current again.
    store.set_current("team6", "old")
    assert store.prune("team6", ["old"]) == 1
    every[6] = ("team6", "old", None)
    all_rank_the_union()
    # A fifth of the current chunks is not merged now: the next merge is due.
    assert store.merge_term_lists() == (8 if postgres else 0)
    all_rank_the_union()


def test_a_ref_named_twice_is_searched_once(store: Store) -> None:
    organisation(store, 3)
    once: list[RefScope] = [("team0", "new", None), ("team1", "new", None)]
    twice: list[RefScope] = [*once, ("team1", "new", ["docs/team1/page0.md"]), once[0]]
    for query in ("rotate the payments key", "gateway timeout"):
        assert places(store.search_text_refs(twice, query, 20)) == places(
            store.search_text_refs(once, query, 20)
        )
        vector = unit(4321)
        assert places(store.search_refs(twice, vector, 20)) == places(
            store.search_refs(once, vector, 20)
        )
    # Some paths of one ref, named twice: the union of the paths.
    pages = [("team1", "new", ["docs/team1/page0.md"]), ("team1", "new", ["docs/team1/page1.md"])]
    paths = {h.path for h in store.search_refs(pages, unit(4321), 50)}
    assert paths == {"docs/team1/page0.md", "docs/team1/page1.md"}


def test_currents_indexed_refs_and_titles_of_many_workspaces(store: Store) -> None:
    organisation(store, 4)
    assert store.currents(["team0", "team3", "nobody"]) == {"team0": "new", "team3": "new"}
    asked = {("team0", "new"), ("team1", "old"), ("team2", "gone"), ("nobody", "new")}
    assert store.indexed_refs(asked) == {("team0", "new"), ("team1", "old")}
    title = unit(77)
    files = [
        FileRow("docs/a.md", "# A\n", "h-a", 1, "t-a", title),
        FileRow("docs/b.md", "# B\n", "h-b", 1),
    ]
    store.replace_doc_chunks("team0", "titled", team_rows(0, 2, seed=3), files)
    found = store.file_titles_refs(
        {
            ("team0", "titled", "docs/a.md"),
            ("team0", "titled", "docs/b.md"),
            ("team1", "new", "docs/a.md"),
        }
    )
    assert list(found) == [("team0", "docs/a.md")]
    np.testing.assert_allclose(found[("team0", "docs/a.md")], title, atol=1e-6)
    assert store.currents([]) == {} and store.indexed_refs(set()) == set()


def test_the_files_of_many_refs_under_a_prefix_in_one_read(store: Store) -> None:
    def page(path: str) -> FileRow:
        return FileRow(path, f"{path}\n", f"h-{path}", 1)

    store.replace_doc_chunks(
        "a", "r1", [], [page("docs/x.md"), page("docs/ops/y.md"), page("README.md")]
    )
    store.replace_doc_chunks("b", "r1", [], [page("docs/ops/z.md"), page("docsy.md")])
    store.replace_doc_chunks("b", "r0", [], [page("docs/ops/old.md")])
    refs = [("a", "r1"), ("b", "r1"), ("c", "r9")]
    every = store.files_refs(refs)
    assert {key: [f.path for f in files] for key, files in every.items()} == {
        ("a", "r1"): ["README.md", "docs/ops/y.md", "docs/x.md"],
        ("b", "r1"): ["docs/ops/z.md", "docsy.md"],
    }
    assert every[("a", "r1")] == store.files("a", "r1")  # as `files` lists them
    under = store.files_refs(refs, "docs/ops/")
    assert {key: [f.path for f in files] for key, files in under.items()} == {
        ("a", "r1"): ["docs/ops/y.md"],
        ("b", "r1"): ["docs/ops/z.md"],
    }
    assert store.files_refs(refs, "docs/x.md") == {("a", "r1"): store.files("a", "r1")[2:]}
    assert store.files_refs(refs, "nothing/") == {}
    assert store.files_refs([], "docs") == {}


def test_a_search_of_many_refs_is_a_bounded_number_of_statements(store: Store) -> None:
    organisation(store, 40, per_team=4)
    counts = []
    for teams in (4, 40):
        scopes: list[RefScope] = [(f"team{t}", "new", None) for t in range(teams)]
        store.search_refs(scopes, unit(5), 10)  # matrices loaded (SQLite), plans warm
        n = [0]

        def count(n: list[int] = n) -> None:
            n[0] += 1

        with at_each_statement(store, count):
            store.currents([w for w, _, _ in scopes])
            store.indexed_refs({(w, r) for w, r, _ in scopes})
            store.search_refs(scopes, unit(6), 10)
            store.search_text_refs(scopes, "rotate the payments key", 10)
        counts.append(n[0])
    # The same statements for 4 workspaces as for 40; a keyword search reads the lists of its
    # common terms in one more when its rare ones find too few, which depends on the terms.
    assert counts[1] <= counts[0] + 2 and max(counts) <= 14, counts
