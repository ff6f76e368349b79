"""Worst cases: how long both chunkers take on 1 MB files built to be hard for a line scanner.

Run it from the repository root with

    .venv/bin/python bench/pathological.py              # a plain table
    .venv/bin/python bench/pathological.py --markdown   # the table as Markdown, for BENCHMARKS.md

Each input is about one megabyte. Each chunker cuts it `--rounds` times (default 3) and the best
time is reported; a time over the one-second target is flagged. Nothing here is compared with a
peer: the point is that no input makes either chunker slower than linear.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from docshelf.chunking import chunk_text, split_markdown

# Every input is built to about this many characters.
SIZE = 1_000_000
# A 1 MB file of any shape must be cut in under this many seconds.
TARGET_SECONDS = 1.0
DEFAULT_ROUNDS = 3


def _repeat(unit: str) -> str:
    return unit * (SIZE // len(unit))


def _after(head: str, unit: str) -> str:
    """`head`, then `unit` repeated up to about SIZE characters in all."""
    return head + unit * max((SIZE - len(head)) // len(unit), 0)


CASES: dict[str, Callable[[], str]] = {
    "500k list markers on one line": lambda: "- " * (SIZE // 2),
    "10k lines of 50 nested list markers": lambda: _repeat("- " * 50 + "x\n"),
    "one unclosed fence": lambda: "```\n" + _repeat("code line\n"),
    "250k fence lines": lambda: _repeat("```\n"),
    "a 4-backtick fence of 3-backtick lines": lambda: "````\n" + _repeat("```\n"),
    "200k unclosed HTML comments": lambda: _repeat("<!--\n"),
    "140k inline tags in one paragraph": lambda: "text\n" + _repeat("<span>\n"),
    "333k '--' lines (setext headings)": lambda: _repeat("--\n"),
    "333k '==' lines": lambda: "a\n" + _repeat("==\n"),
    "250k headings": lambda: _repeat("# h\n"),
    "one 1 MB line": lambda: "x" * SIZE,
    "one 1 MB line of 3-byte characters": lambda: "日" * (SIZE // 3),
    "1M blank lines": lambda: "\n" * SIZE,
    "one 200k-line setext title": lambda: _repeat("word\n") + "===\n",
    "100k-row table": lambda: "| a | b |\n|---|---|\n" + _repeat("| 1 | 2 |\n"),
    "10k lines of 100 nested block quotes": lambda: _repeat(">" * 100 + " x\n"),
    "100k nested list markers, then an unclosed fence": lambda: _after(
        "- " * 100_000 + "```\n", "code line\n"
    ),
    "5 lines of 100k nested list markers and a backtick": lambda: _repeat("- " * 100_000 + "x`\n"),
    "166k unclosed fences in list items": lambda: _repeat("- ```\n"),
    "a delimiter row of 1M blanks (was quadratic)": lambda: "--" + " " * SIZE + "|x\n---\n",
    "a 1 MB line of '*' before an underline": lambda: "*" * SIZE + "x\n---\n",
}


def _best(run: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    rows: list[tuple[str, str, str]] = []
    for name, build in CASES.items():
        text = build()
        section = _best(lambda text=text: split_markdown("bench.md", text), args.rounds)
        paragraph = _best(lambda text=text: chunk_text(text), args.rounds)
        rows.append((name, _cell(section), _cell(paragraph)))

    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"inputs of about {SIZE:,} characters; best of {args.rounds} rounds")
    print(f"target: under {TARGET_SECONDS} s each")
    header = ("input", "section chunker (s)", "paragraph chunker (s)")
    if args.markdown:
        print(f"\n| {' | '.join(header)} |\n| --- | ---: | ---: |")
        for row in rows:
            print(f"| {' | '.join(row)} |")
        return
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )


def _cell(seconds: float) -> str:
    flag = " (over target)" if seconds > TARGET_SECONDS else ""
    return f"{seconds:.3f}{flag}"


if __name__ == "__main__":
    main()
