"""Answers sized for an agent, on the three shared evaluation sets: how many excerpts of one file
an answer holds (`per_file`), how near two excerpts of one file must be to be joined (the merge
distance), how large a joined excerpt may grow, and the default budget of tokens (`max_tokens`),
chosen by cross-validation, and the tokens an answer costs, before and after.

Run it from the repository root with

    .venv/bin/python bench/answers.py              # the tables
    .venv/bin/python bench/answers.py --markdown   # the tables as Markdown, for BENCHMARKS.md

Each set is indexed (incrementally, the same SQLite stores as bench/retrieval.py, whose loading
and scoring this script imports) with the packaged model. Every query's vector and text
candidates are fetched once, fused as `docshelf search` fuses them (search.fuse_scores, the
default Fusion), and each setting is applied to the fused list by search.distinct, with the
stored file texts telling the lines between two excerpts (after the title prior, as the search
applies it: search.title_prior), then fitted to the setting's budget
(present.fit_answer): top_k 5 for file Hit@5 and span recall@5, top_k 10 for MRR@10
(bench/retrieval.py's metrics and judge). An excerpt whose text the budget cut still names its
file (Hit@5, MRR@10) but shows no span: span recall@5 counts the text an agent is shown. "before"
is the answer before this change: no bound per file, nothing joined (an excerpt overlapping a
better one dropped), no budget.

Two grids: every per_file and merge distance with joins bounded only by a read and no budget
(what each does to ranking), then per_file, joins within one line or none, the joined size and
the budget together (what the defaults are chosen from).

Cross-validation: for each set held out, the setting is chosen on the other two: among the
settings that no training set scores worse than "before" on any metric and whose answers' p95
tokens at top_k 5 are no more than before's on each training set, the best mean over them of
Hit@5 + MRR@10 + span recall@5 (where a set has spans; ties: the fewer tokens at p95, then the
smaller per_file). The held-out set's figures for that setting are reported against its "before".
A fold's choice is reported as it falls; the defaults are then checked on every set.

Tokens per answer: the answer as `docs_search` renders it (present.render_answer), its UTF-8
bytes / 4, rounded up (search.tokens_of, the count max_tokens uses), median, p95 and max over the
set's queries, at top_k 5 and 10: before, with the default setting unfitted, and fitted to the
default max_tokens (search.default_max_tokens of top_k), with how many answers the budget cut.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docshelf import search as ranking
from docshelf.chunking.text import text_lines
from docshelf.config import READ_MAX_BYTES
from docshelf.embedders import LocalEmbedder
from docshelf.present import fit_answer, render_answer
from docshelf.search import Answer, Fusion, Hit, tokens_of
from report import print_table
from retrieval import (
    DEFAULT_CACHE,
    DEFAULT_EVAL,
    SETS,
    CachingEmbedder,
    Candidates,
    Indexed,
    Judge,
    Questions,
    Scores,
    fetch_candidates,
    index_set,
    load_questions,
    progress,
)

# The settings tried: per_file (None: no bound), the merge distance in lines (None: nothing
# joined, as before), the most bytes a joined excerpt may hold (a read's, 16,000, is no bound of
# its own) and the budget in tokens for each excerpt asked for (None: none; a budget is at least
# search.MIN_MAX_TOKENS, as search.default_max_tokens makes it).
PER_FILE = (None, 1, 2, 3, 4)
MERGE = (None, 0, 1, 2, 3, 5)
JOIN_BYTES = (2_000, 3_000, 4_000, READ_MAX_BYTES)
BUDGETS = (None, 400, 450, 500, 600, 1_000)


@dataclass(frozen=True, slots=True)
class Setting:
    per_file: int | None
    merge: int | None
    join_bytes: int = READ_MAX_BYTES
    budget: int | None = None
    title_weight: float = ranking.TITLE_WEIGHT

    def __str__(self) -> str:
        bound = "any" if self.per_file is None else str(self.per_file)
        joined = "none" if self.merge is None else f"{self.merge} lines"
        if self.merge is not None and self.join_bytes != READ_MAX_BYTES:
            joined += f" to {self.join_bytes:,} B"
        budget = "" if self.budget is None else f", {self.budget} tokens an excerpt"
        title = (
            "" if self.title_weight == ranking.TITLE_WEIGHT else f", title {self.title_weight:g}"
        )
        return f"per_file {bound}, merge {joined}{budget}{title}"


BEFORE = Setting(None, None, title_weight=0.0)
# The title prior's weights tried (search.title_prior), the other settings at their defaults.
TITLE_WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def first_grid() -> list[Setting]:
    """Per_file and the merge distance, joins bounded by a read's bytes, no budget."""
    return [Setting(p, m) for p, m in itertools.product(PER_FILE, MERGE)]


def second_grid() -> list[Setting]:
    """Per_file, joins within one line or none, the joined size and the budget."""
    out = []
    for per_file, budget in itertools.product(PER_FILE, BUDGETS):
        out.append(Setting(per_file, None, READ_MAX_BYTES, budget))
        out += [Setting(per_file, 1, size, budget) for size in JOIN_BYTES]
    return out


@dataclass(frozen=True, slots=True)
class Measured:
    """A setting's scores on one set, and its answers' tokens (median, p95, max) at top_k 5 and
    10, with how many answers of each the budget cut."""

    scores: Scores
    tokens: dict[int, tuple[int, int, int, int]]


@dataclass(slots=True)
class Loaded:
    name: str
    questions: Questions
    indexed: Indexed
    judge: Judge
    candidates: Candidates
    fused: dict[str, list[tuple[object, float]]]
    lines: dict[str, list[str] | None]


def excerpts(loaded: Loaded, query_id: str, k: int, setting: Setting) -> list[Hit]:
    def lines_of(_: str, path: str) -> list[str] | None:
        if path not in loaded.lines:
            text = loaded.indexed.store.file_text(
                loaded.indexed.workspace, loaded.indexed.ref, path
            )
            loaded.lines[path] = None if text is None else text_lines(text)
        return loaded.lines[path]

    fused = ranking.title_prior(
        loaded.fused[query_id],  # type: ignore[arg-type]
        loaded.candidates.queries[query_id],
        loaded.candidates.titles[query_id],
        setting.title_weight,
    )
    return ranking.distinct(
        fused,
        k,
        setting.per_file,
        0 if setting.merge is None else setting.merge,
        None if setting.merge is None else lines_of,
        setting.join_bytes,
    )


def answer(loaded: Loaded, query_id: str, text: str, k: int, setting: Setting) -> Answer:
    """The query's answer as docs_search gives it with `setting`, fitted to its budget (before
    this change, no hit counted its file's other passages)."""
    hits = excerpts(loaded, query_id, k, setting)
    if setting == BEFORE:
        hits = [dataclasses.replace(h, more=0) for h in hits]
    whole = Answer("ws", loaded.indexed.ref, text, "hybrid", None, hits)
    if setting.budget is None:
        return whole
    return fit_answer(whole, max(ranking.MIN_MAX_TOKENS, setting.budget * k))


def measure(loaded: Loaded, setting: Setting) -> Measured:
    answers = {
        k: {q: answer(loaded, q, text, k, setting) for q, text in loaded.questions.queries}
        for k in (5, 10)
    }
    at_five = loaded.judge.score({q: a.hits for q, a in answers[5].items()})
    shown = loaded.judge.score({q: [h for h in a.hits if not h.cut] for q, a in answers[5].items()})
    at_ten = loaded.judge.score({q: a.hits for q, a in answers[10].items()})
    tokens = {}
    for k, of_k in answers.items():
        counts = sorted(tokens_of(render_answer(a)) for a in of_k.values())
        cut = sum(a.left_out > 0 or any(h.cut for h in a.hits) for a in of_k.values())
        tokens[k] = (int(statistics.median(counts)), p95(counts), counts[-1], cut)
    return Measured(Scores(at_five.hit, at_ten.mrr, shown.span), tokens)


def p95(counts: Sequence[int]) -> int:
    """The 95th percentile of sorted `counts` (nearest rank)."""
    return counts[min(len(counts) - 1, math.ceil(0.95 * len(counts)) - 1)]


def load(args: argparse.Namespace, embedder: CachingEmbedder) -> list[Loaded]:
    loaded = []
    for spec in SETS:
        questions = load_questions(args.eval / spec.name)
        progress(f"{spec.name}: indexing (incremental) into {args.cache}")
        args.cache.mkdir(parents=True, exist_ok=True)
        indexed = index_set(
            args.eval, spec, str(args.cache / f"retrieval-{spec.name}.sqlite3"), embedder.inner
        )
        embedder.embed([q for _, q in questions.queries])
        candidates = fetch_candidates(indexed, embedder, questions)
        depth = max(ranking.CANDIDATES, ranking.CANDIDATES_PER_HIT * 10)
        fused = {  # each setting adds its title prior (excerpts)
            q: ranking.fuse_scores(
                candidates.vector[q][:depth], candidates.text[q][:depth], Fusion()
            )
            for q, _ in questions.queries
        }
        judge = Judge(questions, indexed.docs)
        loaded.append(Loaded(spec.name, questions, indexed, judge, candidates, fused, {}))  # type: ignore[arg-type]
    return loaded


def no_worse(a: Scores, b: Scores) -> bool:
    """`a` is at least `b` on every metric both have."""
    pairs = [(a.hit, b.hit), (a.mrr, b.mrr)]
    if a.span is not None and b.span is not None:
        pairs.append((a.span, b.span))
    return all(x >= y - 1e-12 for x, y in pairs)


def admissible(measured: Measured, before: Measured) -> bool:
    """No worse than before on any metric, and no costlier at p95 at top_k 5."""
    return no_worse(measured.scores, before.scores) and measured.tokens[5][1] <= before.tokens[5][1]


def choose(table: dict[Setting, dict[str, Measured]], training: Sequence[str]) -> Setting:
    kept = [s for s in table if all(admissible(table[s][t], table[BEFORE][t]) for t in training)]

    def key(s: Setting) -> tuple[float, float, int]:
        gain = statistics.fmean(
            table[s][t].scores.hit + table[s][t].scores.mrr + (table[s][t].scores.span or 0.0)
            for t in training
        )
        cost = statistics.fmean(table[s][t].tokens[5][1] for t in training)
        return (-round(gain, 9), cost, s.per_file or 99)

    return min(kept, key=key)


def figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def triple(s: Scores) -> str:
    return " / ".join(figure(v) for v in (s.hit, s.mrr, s.span) if v is not None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    embedder = CachingEmbedder(LocalEmbedder(None))
    sets = load(args, embedder)
    names = [s.name for s in sets]
    first, second = first_grid(), second_grid()
    table: dict[Setting, dict[str, Measured]] = {}
    for setting in dict.fromkeys([BEFORE, *first, *second]):
        table[setting] = {loaded.name: measure(loaded, setting) for loaded in sets}
    default = Setting(
        ranking.DEFAULT_PER_FILE,
        ranking.MERGE_LINES,
        ranking.JOIN_MAX_BYTES,
        ranking.TOKENS_PER_EXCERPT,
    )
    if default not in table:
        table[default] = {loaded.name: measure(loaded, default) for loaded in sets}
    titles = [dataclasses.replace(default, title_weight=w) for w in TITLE_WEIGHTS]
    for setting in titles:
        if setting not in table:
            table[setting] = {loaded.name: measure(loaded, setting) for loaded in sets}

    def show(columns: list[str], rows: list[list[str]]) -> None:
        print_table(columns, rows, markdown=args.markdown)

    def cell(setting: Setting, name: str) -> str:
        return triple(table[setting][name].scores)

    print("file Hit@5 / MRR@10 / span recall@5 (hybrid, SQLite): per_file and merge distance\n")
    show(["setting", *names], [[str(s), *(cell(s, n) for n in names)] for s in first])
    print("the same and p95 tokens at top_k 5: joins within one line, joined size, budget\n")
    show(
        ["setting", *names],
        [[str(s), *(f"{cell(s, n)}, {table[s][n].tokens[5][1]:,}" for n in names)] for s in second],
    )
    rows = []
    for held in names:
        training = [n for n in names if n != held]
        chosen = choose(table, training)
        rows.append(
            [
                held,
                ", ".join(training),
                str(chosen),
                f"{cell(BEFORE, held)}, {table[BEFORE][held].tokens[5][1]:,}",
                f"{cell(chosen, held)}, {table[chosen][held].tokens[5][1]:,}",
                "yes" if admissible(table[chosen][held], table[BEFORE][held]) else "NO",
            ]
        )
    print("cross-validation: chosen on two sets, checked on the third (scores, p95 tokens)\n")
    show(["held out", "chosen on", "chosen", "before", "chosen, held out", "no worse"], rows)
    untitled = titles[0]
    print("the title prior's weight, the other settings at their defaults\n")
    show(
        ["title weight", *names],
        [[f"{s.title_weight:g}", *(cell(s, n) for n in names)] for s in titles],
    )
    rows = []
    for held in names:
        training = [n for n in names if n != held]
        kept = [
            s
            for s in titles
            if all(no_worse(table[s][t].scores, table[untitled][t].scores) for t in training)
        ]
        chosen = min(
            kept,
            key=lambda s: (
                -round(
                    statistics.fmean(
                        table[s][t].scores.hit
                        + table[s][t].scores.mrr
                        + (table[s][t].scores.span or 0.0)
                        for t in training
                    ),
                    9,
                ),
                s.title_weight,
            ),
        )
        rows.append(
            [
                held,
                ", ".join(training),
                f"{chosen.title_weight:g}",
                cell(untitled, held),
                cell(chosen, held),
                "yes"
                if no_worse(table[chosen][held].scores, table[untitled][held].scores)
                else "NO",
            ]
        )
    print("cross-validation of the title weight (against weight 0, the defaults otherwise)\n")
    show(["held out", "chosen on", "chosen", "weight 0", "chosen, held out", "no worse"], rows)
    print(f"the default ({default}) on every set\n")
    show(
        ["set", "before", "default", "no worse"],
        [
            [
                n,
                f"{cell(BEFORE, n)}, {table[BEFORE][n].tokens[5][1]:,}",
                f"{cell(default, n)}, {table[default][n].tokens[5][1]:,}",
                "yes" if admissible(table[default][n], table[BEFORE][n]) else "NO",
            ]
            for n in names
        ],
    )
    unfitted = dataclasses.replace(default, budget=None)
    if unfitted not in table:
        table[unfitted] = {loaded.name: measure(loaded, unfitted) for loaded in sets}
    token_rows = []
    for n in names:
        for k in (5, 10):
            for label, setting in (
                ("before", BEFORE),
                ("default, not fitted", unfitted),
                (f"default, max_tokens {default.budget} x top_k", default),
            ):
                median, high, most, cut = table[setting][n].tokens[k]
                count = len(sets[names.index(n)].questions.queries)
                token_rows.append(
                    [
                        n,
                        str(k),
                        label,
                        str(median),
                        str(high),
                        str(most),
                        "-" if setting.budget is None else f"{cut} of {count}",
                    ]
                )
    print("tokens per answer (UTF-8 bytes / 4 of the rendered answer)\n")
    show(["set", "top_k", "answer", "median", "p95", "max", "answers cut"], token_rows)
    for loaded in sets:
        loaded.indexed.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
