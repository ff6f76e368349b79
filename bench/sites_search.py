"""Search quality on the real docs-site trees of ../shared/data/sites: does `docshelf search`, on
a site indexed with no --docs, put the file that answers a question in its top 5? The issue's
goal is at least 95% of questions. Now, the commit before the docs-sites work, and plain
`git grep` side by side in one run.

Run it from the repository root with

    .venv/bin/python bench/sites_search.py              # every tree, against the baseline commit
    .venv/bin/python bench/sites_search.py --markdown   # the tables as Markdown, for BENCHMARKS.md
    .venv/bin/python bench/sites_search.py --tree sphinx-celery --tree vitepress-i18n
    .venv/bin/python bench/sites_search.py --baseline REV
    .venv/bin/python bench/sites_search.py --questions bench/unseen_questions.json --no-baseline

Questions: bench/sites_questions.json, 5 per tree, written by hand from pages of each tree's
current docs before any search was run (its "about" says how); each names the files of the tree
that answer it (a page, or a page and the fragment it includes, or two pages that both state the
answer). `--questions FILE` asks another file of the same shape. A question there may name, in
place of a site "tree", a "root": a folder of ../shared/data (such as "corpora/fastapi"), which is
committed as it is, every file of it, to a git repository of its own (`root_repo`) and indexed
the same way; its rows are labelled by the root. bench/unseen_questions.json holds 35 such
questions on seven docs trees never used to develop discovery or ranking (the held-out check).
For those, one more table gives the docs roots each version found (the `docs:` line of
`docshelf index`) and how many of the questions' answering files it indexed.

Method. Each tree is committed to a git repository of its own under a temporary folder (with the
configs its README quotes: `site_repo` of tests/support/sites.py) and indexed as a user would,
with no --docs, through the Python API: `docshelf.index(repo, workspace=TREE, config=...)` with
the default embedder (the packaged all-MiniLM-L6-v2 model) into a SQLite store of the run; then
`docshelf.open(config=..., workspace=TREE).search(question, top_k)` with the default mode
(hybrid), once with top_k 5 (what `docshelf search` returns by default) and once with top_k 10.
Both versions run in a worker subprocess, one per version for all trees, so the model is loaded
once per version (the embedder keeps it per process). "now" is the working tree; "baseline" is
`--baseline` (default 6bfaa35, the last commit before the docs-sites work), checked out as a git
worktree in the temporary folder and imported with PYTHONPATH=<worktree>/src; `--no-baseline`
skips it (its columns show "-"). Embeddings are not shared between the two: each version cuts the
files its own way, so each embeds its own chunks.

Figures, per tree and in total (means over the questions):
- Hit@5: 1 when any of the 5 excerpts of the default search is from one of the question's files;
- MRR@10: 1 / the rank of the first excerpt (of the 10 of a top_k 10 search) from one of them,
  0 when none is (as bench/retrieval.py counts it).

Reference, "grep": `git grep -i -c -w -F -e WORD` for each distinct word of the question (lower
case, runs of letters and digits of at least 3 characters, minus STOPWORDS), over the repository's
files with a documentation suffix (docshelf.config.DOC_SUFFIXES: .md .markdown .mdx .rst .rest
.adoc .asciidoc .asc .txt, wherever they are: no docs root, no exclusions). Files are ranked by the
number of distinct question words they contain, ties by the total count of matching lines, then
by path; Hit@5 and MRR@10 are over that ranking of files.

Output: the figures per tree; the index each version built (files, chunks, seconds); every
question's rank of the first right excerpt per column; and the questions "now" misses in its top
5, with the distinct files of its top 5.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.gitrepo import Repo  # noqa: E402
from tests.support.sites import SITES, site_repo  # noqa: E402

from report import print_table, worker_result, worktree  # noqa: E402

# The last commit before the docs-sites issue changed discovery and the chunkers.
BASELINE = "6bfaa35"

QUESTIONS = Path(__file__).resolve().parent / "sites_questions.json"

# The shared data a question's "root" is a folder of (../shared/data beside the checkout).
DATA = SITES.parent

HIT_K = 5
MRR_K = 10

# Every suffix docshelf reads as documentation (docshelf.config.DOC_SUFFIXES), as git pathspecs.
DOC_GLOBS = tuple(
    f"*{s}"
    for s in (".md", ".markdown", ".mdx", ".rst", ".rest", ".adoc", ".asciidoc", ".asc", ".txt")
)

# Words too common in questions to say anything about the answer.
_STOPWORDS = """
the and for are but not you your yours our ours its his her they them their this that these those
there then than with without from into onto over under about after before when where which while
what who whom whose why how can could should would will shall may might must does did done doing
has have had having was were been being get gets got make makes made want need use using used just
only also still instead very some any all each every one two own same other more most such like
way set sets
"""
STOPWORDS = frozenset(_STOPWORDS.split())

_WORD = re.compile(r"[a-z0-9]+")

# Matching lines per file, whole words, case-insensitive, the word as a fixed string; paths as
# they are (not C-quoted).
GREP = ("-c", "core.quotePath=false", "grep", "-i", "-c", "-w", "-F")


def question_words(question: str) -> list[str]:
    words = _WORD.findall(question.lower())
    return list(dict.fromkeys(w for w in words if len(w) >= 3 and w not in STOPWORDS))


def root_repo(root: str, dest: Path) -> Repo:
    """A git repository at `dest` holding the folder `root` of the shared data as it is (all its
    files, nothing added), committed on main."""
    shutil.copytree(DATA / root, dest, symlinks=True)
    repo = Repo(dest)
    repo.git("add", "-A")
    repo.git("commit", "--quiet", "-m", root)
    return repo


def tree_of(question: dict[str, Any]) -> str:
    """What a question is asked of: its site tree, or its folder of the shared data."""
    return str(question["tree"] if "tree" in question else question["root"])


# -- the worker: index and search with whatever docshelf this interpreter imports ------------


def _worker(spec_path: Path) -> None:
    import docshelf  # noqa: PLC0415 - the version PYTHONPATH names

    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    config = docshelf.Config(store=spec["store"], mirror_dir=spec["mirrors"])
    out: dict[str, Any] = {}
    for job in spec["trees"]:
        tree = job["tree"]
        started = time.perf_counter()
        result = docshelf.index(job["repo"], workspace=tree, config=config)
        seconds = time.perf_counter() - started
        print(
            f"[{time.strftime('%H:%M:%S')}] {spec['label']} ({Path(docshelf.__file__).parent}) "
            f"{tree}: {result.files} files, {result.chunks} chunks in {seconds:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        layout = getattr(result, "layout", None)  # not in older versions
        if layout is not None and layout.roots:
            docs = layout.describe()
        else:
            docs = ", ".join(getattr(result, "roots", ()))
        answers = []
        indexed = {}
        with docshelf.open(config=config, workspace=tree) as shelf:
            for path in job.get("files", []):
                try:
                    indexed[path] = getattr(shelf.outline(path), "total_files", 0) > 0
                except docshelf.DocshelfError:  # no indexed doc there
                    indexed[path] = False
            for question in job["questions"]:
                top5 = shelf.search(question, HIT_K).hits
                top10 = shelf.search(question, MRR_K).hits
                answers.append(
                    {
                        "top5": [h.path for h in top5],
                        "top10": [h.path for h in top10],
                    }
                )
        out[tree] = {
            "files": result.files,
            "skipped": len(result.skipped),
            "chunks": result.chunks,
            "seconds": seconds,
            "docs": docs,
            "indexed": indexed,
            "answers": answers,
        }
    print(json.dumps(out))


def _run(label: str, src: Path | None, spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    spec = {**spec, "label": label, "store": str(tmp / f"{label}.sqlite3")}
    spec_path = tmp / f"{label}.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    return worker_result(__file__, str(spec_path), src)


# -- the git grep reference ------------------------------------------------------------------


def grep_ranking(repo: Path, question: str) -> list[str]:
    """The repository's documentation files, best first, by the question's words they hold."""
    words: dict[str, int] = {}
    counts: dict[str, int] = {}
    for word in question_words(question):
        done = subprocess.run(
            ["git", "-C", str(repo), *GREP, "-e", word, "--", *DOC_GLOBS],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 1):  # 1: no match
            raise SystemExit(f"git grep failed in {repo}: {done.stderr}")
        for line in done.stdout.splitlines():
            path, _, count = line.rpartition(":")
            words[path] = words.get(path, 0) + 1
            counts[path] = counts.get(path, 0) + int(count)
    return sorted(words, key=lambda p: (-words[p], -counts[p], p))


# -- the figures -----------------------------------------------------------------------------


def first_rank(ranked: list[str], right: set[str]) -> int | None:
    """The 1-based rank of the first entry that is a right file, or None."""
    for rank, path in enumerate(ranked, 1):
        if path in right:
            return rank
    return None


def score(
    ranked5: list[str], ranked10: list[str], right: set[str]
) -> tuple[int, float, int | None]:
    rank = first_rank(ranked10[:MRR_K], right)
    hit = int(any(p in right for p in ranked5[:HIT_K]))
    return hit, (1.0 / rank if rank else 0.0), rank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--tree",
        action="append",
        help="only these trees (or roots, such as corpora/fastapi) of the questions file",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=QUESTIONS,
        help="the questions file (default: bench/sites_questions.json)",
    )
    parser.add_argument(
        "--no-baseline",
        dest="baseline_run",
        action="store_false",
        help="skip the baseline version (its columns show -)",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker)
        return
    every = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    labels = list(dict.fromkeys(tree_of(q) for q in every))
    unknown = [t for t in args.tree or [] if t not in labels]
    if unknown:
        parser.error(f"no questions on {', '.join(unknown)} in {args.questions}")
    trees = list(dict.fromkeys(args.tree or labels))
    questions = [q for q in every if tree_of(q) in trees]
    by_tree = {t: [q for q in questions if tree_of(q) == t] for t in trees}
    roots = {t for t in trees if "tree" not in by_tree[t][0]}
    with tempfile.TemporaryDirectory(prefix="docshelf-sites-search-") as name:
        tmp = Path(name)
        repos = {}
        for tree in trees:
            repos[tree] = tmp / "repos" / tree
            if tree in roots:
                root_repo(tree, repos[tree])
            else:
                site_repo(tree, repos[tree])
        spec = {
            "mirrors": str(tmp / "mirrors"),
            "trees": [
                {
                    "tree": t,
                    "repo": str(repos[t]),
                    "questions": [q["question"] for q in by_tree[t]],
                    "files": list(dict.fromkeys(f for q in by_tree[t] for f in q["files"])),
                }
                for t in trees
            ],
        }
        now = _run("now", None, spec, tmp)
        before = None
        if args.baseline_run:
            with worktree(REPO, args.baseline, tmp / "baseline") as base:
                before = _run("baseline", base / "src", spec, tmp)
        grep = {t: [grep_ranking(repos[t], q["question"]) for q in by_tree[t]] for t in trees}
    _print(by_tree, now, before, grep, roots, args)


def _print(
    by_tree: dict[str, list[dict[str, Any]]],
    now: dict[str, Any],
    before: dict[str, Any] | None,
    grep: dict[str, list[list[str]]],
    roots: set[str],
    args: argparse.Namespace,
) -> None:
    def table(columns: list[str], rows: list[list[str]]) -> None:
        print_table(columns, rows, markdown=args.markdown)

    columns = ("now", "baseline", "grep")
    # Per question and column: (hit@5, reciprocal rank, rank or None); no baseline: None.
    scored: dict[str, list[dict[str, tuple[int, float, int | None] | None]]] = {}
    for tree, qs in by_tree.items():
        scored[tree] = []
        for k, q in enumerate(qs):
            right = set(q["files"])
            now_a = now[tree]["answers"][k]
            base_a = None if before is None else before[tree]["answers"][k]
            scored[tree].append(
                {
                    "now": score(now_a["top5"], now_a["top10"], right),
                    "baseline": None
                    if base_a is None
                    else score(base_a["top5"], base_a["top10"], right),
                    "grep": score(grep[tree][k], grep[tree][k], right),
                }
            )

    def figures(rows: list[dict[str, tuple[int, float, int | None] | None]]) -> list[str]:
        n = len(rows)

        def mean(c: str, i: int, form: str) -> str:
            total = 0.0
            for r in rows:
                value = r[c]
                if value is None:  # a column not run
                    return "-"
                total += value[i] or 0
            return format(total / n, form)

        hits = [mean(c, 0, ".0%") for c in columns]
        mrr = [mean(c, 1, ".3f") for c in columns]
        return [str(n), *hits, *mrr]

    baseline = args.baseline if before is not None else "- (not run: --no-baseline)"
    print(
        f"baseline {baseline}; now: the working tree; grep: git grep over every "
        f"documentation file; {HIT_K} excerpts for Hit@{HIT_K}, {MRR_K} for MRR@{MRR_K}\n"
    )
    name = "root" if roots and len(roots) == len(by_tree) else "tree"
    rows = [[tree, *figures(rows)] for tree, rows in scored.items()]
    every = [r for rows in scored.values() for r in rows]
    rows.append(["**all**" if args.markdown else "all", *figures(every)])
    table(
        [
            name,
            "questions",
            *(f"Hit@{HIT_K} {c}" for c in columns),
            *(f"MRR@{MRR_K} {c}" for c in columns),
        ],
        rows,
    )

    rows = []
    for tree in by_tree:
        a = now[tree]
        b = before[tree] if before is not None else {"files": "-", "chunks": "-", "seconds": None}
        seconds = "-" if b["seconds"] is None else f"{b['seconds']:.0f}"
        rows.append(
            [
                tree,
                f"{b['files']} / {a['files']}",
                f"{b['chunks']} / {a['chunks']}",
                f"{seconds} / {a['seconds']:.0f}",
            ]
        )
    table(["index (baseline / now)", "files", "chunks", "seconds"], rows)

    if roots:
        # Where each version found the docs of a root, and how many answering files it read.
        rows = []
        for tree in by_tree:
            if tree not in roots:
                continue
            cells = []
            for version in (now, before):
                if version is None:
                    cells += ["-", "-"]
                    continue
                v = version[tree]
                read = sum(v.get("indexed", {}).values())
                cells += [v.get("docs") or "(none named)", f"{read} of {len(v.get('indexed', {}))}"]
            rows.append([tree, cells[0], cells[1], cells[2], cells[3]])
        table(
            [
                name,
                "docs found now",
                "answering files indexed now",
                "docs found baseline",
                "answering files indexed baseline",
            ],
            rows,
        )

    def rank(r: tuple[int, float, int | None] | None) -> str:
        return "-" if r is None or r[2] is None else str(r[2])

    rows = []
    for tree, qs in by_tree.items():
        for k, q in enumerate(qs):
            s = scored[tree][k]
            rows.append([f"{tree} {k + 1}", *(rank(s[c]) for c in columns), q["question"]])
    table([f"question (rank of first right excerpt/file, of {MRR_K})", *columns, "text"], rows)

    missed = []
    for tree, qs in by_tree.items():
        for k, q in enumerate(qs):
            found = scored[tree][k]["now"]
            if found is not None and not found[0]:
                top = list(dict.fromkeys(now[tree]["answers"][k]["top5"]))
                indexed = now[tree].get("indexed", {})
                missed.append(
                    [
                        f"{tree} {k + 1}",
                        ", ".join(
                            f if indexed.get(f, True) else f"{f} (not indexed)" for f in q["files"]
                        ),
                        ", ".join(top) or "(no hits)",
                    ]
                )
    print(f"missed by now (not in the top {HIT_K}): {len(missed)}\n")
    if missed:
        table(["question", "answering files", f"top {HIT_K} files now"], missed)


if __name__ == "__main__":
    main()
