"""Answers sized for an agent, on the three shared evaluation sets: how many excerpts of one file
an answer holds (`per_file`) and how near two excerpts of one file must be to be joined (the
merge distance), chosen by cross-validation, and the tokens an answer costs, before and after.

Run it from the repository root with

    .venv/bin/python bench/answers.py              # the tables
    .venv/bin/python bench/answers.py --markdown   # the tables as Markdown, for BENCHMARKS.md

Each set is indexed (incrementally, the same SQLite stores as bench/retrieval.py, whose loading
and scoring this script imports) with the packaged model. Every query's vector and text
candidates are fetched once, fused as `docshelf search` fuses them (search.fuse_scores, the
default Fusion), and each setting is applied to the fused list by search.distinct, with the
stored file texts telling the lines between two excerpts: top_k 5 for file Hit@5 and span
recall@5, top_k 10 for MRR@10 (bench/retrieval.py's metrics and judge). "before" is the answer
before this change: no bound per file, nothing joined (an excerpt overlapping a better one
dropped).

Cross-validation: for each set held out, the setting is chosen on the other two: among the
settings that no training set scores worse than "before" on any metric, the best mean over them
of Hit@5 + MRR@10 + span recall@5 (where a set has spans; ties: the smaller per_file, then the
smaller distance). The held-out set's
figures for that setting are reported against its "before". A default is kept only where no fold
makes its held-out set worse.

Tokens per answer: the answer as `docs_search` renders it (present.render_answer), its UTF-8
bytes / 4, rounded up (search.tokens_of, the count max_tokens uses), median, p95 and max over the
set's queries, at top_k 5 and 10: before, with the default setting, and with it fitted to the
default max_tokens (present.fit_answer), with how many answers the budget cut.
"""

from __future__ import annotations

import argparse
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

# The settings tried: per_file (None: no bound) and the merge distance in lines (None: nothing
# joined, as before).
PER_FILE = (None, 1, 2, 3, 4)
MERGE = (None, 0, 1, 2, 3, 5)
BEFORE = (None, None)


@dataclass(frozen=True, slots=True)
class Setting:
    per_file: int | None
    merge: int | None

    def __str__(self) -> str:
        bound = "any" if self.per_file is None else str(self.per_file)
        joined = "none" if self.merge is None else f"{self.merge} lines"
        return f"per_file {bound}, merge {joined}"


@dataclass(slots=True)
class Loaded:
    name: str
    questions: Questions
    indexed: Indexed
    judge: Judge
    candidates: Candidates
    fused: dict[str, list[tuple[object, float]]]
    lines: dict[str, list[str] | None]


def answer(loaded: Loaded, query_id: str, k: int, setting: Setting) -> list[Hit]:
    def lines_of(_: str, path: str) -> list[str] | None:
        if path not in loaded.lines:
            text = loaded.indexed.store.file_text(
                loaded.indexed.workspace, loaded.indexed.ref, path
            )
            loaded.lines[path] = None if text is None else text_lines(text)
        return loaded.lines[path]

    return ranking.distinct(
        loaded.fused[query_id],  # type: ignore[arg-type]
        k,
        setting.per_file,
        0 if setting.merge is None else setting.merge,
        None if setting.merge is None else lines_of,
    )


def scores(loaded: Loaded, setting: Setting) -> Scores:
    five = {q: answer(loaded, q, 5, setting) for q, _ in loaded.questions.queries}
    ten = {q: answer(loaded, q, 10, setting) for q, _ in loaded.questions.queries}
    at_five = loaded.judge.score(five)
    at_ten = loaded.judge.score(ten)
    return Scores(at_five.hit, at_ten.mrr, at_five.span)


def token_counts(
    loaded: Loaded, setting: Setting, k: int, max_tokens: int | None = None
) -> tuple[list[int], int]:
    """Each query's answer in tokens (search.tokens_of), fitted to `max_tokens` if given, and
    how many answers the budget cut."""
    counts, cut = [], 0
    for q, text in loaded.questions.queries:
        hits = answer(loaded, q, k, setting)
        whole = Answer("ws", loaded.indexed.ref, text, "hybrid", None, hits)
        shown = whole if max_tokens is None else fit_answer(whole, max_tokens)
        cut += shown is not whole and (shown.left_out > 0 or any(h.cut for h in shown.hits))
        counts.append(tokens_of(render_answer(shown)))
    return counts, cut


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
        fused = {
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


def choose(table: dict[Setting, dict[str, Scores]], training: Sequence[str]) -> Setting:
    before = Setting(*BEFORE)
    admissible = [
        s for s in table if all(no_worse(table[s][t], table[before][t]) for t in training)
    ]

    def key(s: Setting) -> tuple[float, int, int]:
        gain = statistics.fmean(
            table[s][t].hit + table[s][t].mrr + (table[s][t].span or 0.0) for t in training
        )
        return (-round(gain, 9), s.per_file or 99, -1 if s.merge is None else s.merge)

    return min(admissible, key=key)


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
    settings = [Setting(p, m) for p, m in itertools.product(PER_FILE, MERGE)]
    table = {s: {loaded.name: scores(loaded, s) for loaded in sets} for s in settings}
    before = Setting(*BEFORE)
    default = Setting(ranking.DEFAULT_PER_FILE, ranking.MERGE_LINES)

    def show(columns: list[str], rows: list[list[str]]) -> None:
        print_table(columns, rows, markdown=args.markdown)

    print("file Hit@5 / MRR@10 / span recall@5 (hybrid, SQLite), every setting:\n")
    show(["setting", *names], [[str(s), *(triple(table[s][n]) for n in names)] for s in settings])
    rows = []
    for held in names:
        training = [n for n in names if n != held]
        chosen = choose(table, training)
        rows.append(
            [
                held,
                ", ".join(training),
                str(chosen),
                triple(table[before][held]),
                triple(table[chosen][held]),
                "yes" if no_worse(table[chosen][held], table[before][held]) else "NO",
            ]
        )
    print("cross-validation: chosen on two sets, checked on the third\n")
    show(["held out", "chosen on", "chosen", "before", "chosen, held out", "no worse"], rows)
    print(f"the default ({default}) on every set\n")
    show(
        ["set", "before", "default", "no worse"],
        [
            [
                n,
                triple(table[before][n]),
                triple(table[default][n]),
                "yes" if no_worse(table[default][n], table[before][n]) else "NO",
            ]
            for n in names
        ],
    )
    token_rows = []
    budget = ranking.DEFAULT_MAX_TOKENS
    for loaded in sets:
        for k in (5, 10):
            for label, setting, limit in (
                ("before", before, None),
                ("default, not fitted", default, None),
                (f"default, max_tokens {budget}", default, budget),
            ):
                found, cut = token_counts(loaded, setting, k, limit)
                counts = sorted(found)
                p95 = counts[min(len(counts) - 1, math.ceil(0.95 * len(counts)) - 1)]
                token_rows.append(
                    [
                        loaded.name,
                        str(k),
                        label,
                        str(int(statistics.median(counts))),
                        str(p95),
                        str(counts[-1]),
                        "-" if limit is None else f"{cut} of {len(counts)}",
                    ]
                )
    print("tokens per answer (UTF-8 bytes / 4 of the rendered answer)\n")
    show(["set", "top_k", "answer", "median", "p95", "max", "answers cut"], token_rows)
    for loaded in sets:
        loaded.indexed.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
