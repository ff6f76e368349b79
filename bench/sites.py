"""Docs sites read as their generator means them, on the real trees of ../shared/data/sites: the
figures of the docs-sites issue, before and after, side by side in one run.

Run it from the repository root with

    .venv/bin/python bench/sites.py              # against the commit before the issue
    .venv/bin/python bench/sites.py --markdown   # the tables as Markdown, for BENCHMARKS.md
    .venv/bin/python bench/sites.py --baseline REV

Each tree is committed to a git repository of its own under a temporary folder (with the
configs its README quotes, tests/support/sites.py) and read as `docshelf index` reads it, with no
--docs: the docs found, then every file's chunks by `chunk_file`. The baseline is the same
measurement by the code of `--baseline` (a git worktree of it, run in a subprocess), so both
columns come from one run on one machine. Per tree: the roots found against the README's; the
share of chunks holding generator markup outside fenced code (tests/support/sites.py says which
markup); chunks that are nothing but include lines; chunks under 80 bytes; and chunking speed,
MB/s per format (best of 3 over the tree's files of that format).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.sites import (  # noqa: E402
    EXPECTED_ROOTS,
    TREES,
    file_markup,
    is_include_chunk,
    site_repo,
)

from report import print_table, worker_result, worktree  # noqa: E402

# The last commit before the docs-sites issue changed discovery and the chunkers.
BASELINE = "6bfaa35"

# A chunk this small is a heading or a stray line: a page cut badly, or an include line.
SMALL_CHUNK_BYTES = 80

ROUNDS = 3


def measure(tree_repo: Path) -> dict[str, Any]:
    """The figures of one tree's repository, by whatever docshelf this interpreter imports."""
    from docshelf.chunking import chunk_file, kind_of  # noqa: PLC0415
    from docshelf.workspace import open_workspace  # noqa: PLC0415

    ws = open_workspace(str(tree_repo), mirrors_dir=tree_repo.parent / "mirrors")
    ref = ws.sync()
    docs = ws.read_docs(ref)
    files = list(docs.files)
    chunks = 0
    markup = 0
    include_only = 0
    small = 0
    examples: list[str] = []
    by_kind: dict[str, list[Any]] = defaultdict(list)
    for f in files:
        cut = chunk_file(f.path, f.text, f.kind)
        chunks += len(cut)
        for c, found in file_markup(cut, f.kind):
            markup += 1
            if len(examples) < 3:
                examples.append(f"{c.path}:{c.start_line}: {found[0][:70]}")
        include_only += sum(is_include_chunk(c.content) for c in cut)
        small += sum(len(c.content.encode()) < SMALL_CHUNK_BYTES for c in cut)
    # Speed over every file of the tree that has a chunker, found as docs or not: the same
    # files for both columns.
    for path in sorted(tree_repo.rglob("*")):
        kind = kind_of(path.name)
        if kind is not None and ".git" not in path.parts and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            by_kind[kind].append((str(path), text, kind))
    speed = {}
    for kind, kind_files in by_kind.items():
        size = sum(len(text.encode()) for _, text, _ in kind_files)
        best = float("inf")
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for path_text_kind in kind_files:
                chunk_file(*path_text_kind)
            best = min(best, time.perf_counter() - started)
        speed[kind] = size / 1e6 / best if best > 0 else 0.0
    layout = getattr(docs, "layout", None)
    return {
        "roots": list(docs.roots),
        "described": layout.describe() if layout is not None else ", ".join(docs.roots),
        "files": len(files),
        "skipped": len(docs.skipped),
        "chunks": chunks,
        "markup": markup,
        "include_only": include_only,
        "small": small,
        "examples": examples,
        "speed": speed,
    }


def _worker(args: argparse.Namespace) -> None:
    print(json.dumps(measure(Path(args.worker))))


def _run(src: Path | None, tree_repo: Path) -> dict[str, Any]:
    return worker_result(__file__, str(tree_repo), src)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare against")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--tree", action="append", help="only these trees (repeatable)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    trees = args.tree or list(TREES)
    with (
        tempfile.TemporaryDirectory(prefix="docshelf-sites-") as tmp,
        worktree(REPO, args.baseline, Path(tmp) / "baseline") as base,
    ):
        results = {}
        for tree in trees:
            tree_repo = Path(tmp) / tree
            site_repo(tree, tree_repo)
            results[tree] = (_run(base / "src", tree_repo), _run(None, tree_repo))
    _print(results, args)


def _print(
    results: dict[str, tuple[dict[str, Any], dict[str, Any]]], args: argparse.Namespace
) -> None:
    def table(columns: list[str], rows: list[list[str]]) -> None:
        print_table(columns, rows, markdown=args.markdown)

    print(f"baseline {args.baseline}; now: the working tree\n")
    rows = []
    for tree, (before, after) in results.items():
        right = tuple(after["roots"]) == EXPECTED_ROOTS[tree]
        rows.append(
            [
                tree,
                ", ".join(before["roots"]),
                after["described"],
                "yes" if right else f"no (README: {', '.join(EXPECTED_ROOTS[tree])})",
            ]
        )
    table(["tree", "roots before", "docs found now", "as README"], rows)
    rows = []
    for tree, (before, after) in results.items():
        rows.append(
            [
                tree,
                f"{before['files']} / {after['files']}",
                f"{before['chunks']} / {after['chunks']}",
                f"{_share(before['markup'], before['chunks'])} / "
                f"{_share(after['markup'], after['chunks'])}",
                f"{before['include_only']} / {after['include_only']}",
                f"{_share(before['small'], before['chunks'])} / "
                f"{_share(after['small'], after['chunks'])}",
            ]
        )
    table(
        [
            "tree (before / now)",
            "files",
            "chunks",
            "chunks with markup",
            "include-only chunks",
            f"chunks < {SMALL_CHUNK_BYTES} B",
        ],
        rows,
    )
    rows = []
    for tree, (before, after) in results.items():
        for kind in sorted(set(before["speed"]) | set(after["speed"])):
            b, a = before["speed"].get(kind), after["speed"].get(kind)
            rows.append(
                [
                    f"{tree} {kind}",
                    f"{b:.2f}" if b else "-",
                    f"{a:.2f}" if a else "-",
                    f"{a / b:.2f}x" if a and b else "-",
                ]
            )
    table(["chunking speed (MB/s)", "before", "now", "now / before"], rows)
    for tree, (_, after) in results.items():
        for example in after["examples"]:
            print(f"markup left in {tree}: {example}")


if __name__ == "__main__":
    main()
