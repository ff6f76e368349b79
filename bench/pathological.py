"""Worst cases: how long the chunkers take on 1 MB files built to be hard for a line scanner.

Run it from the repository root with

    .venv/bin/python bench/pathological.py              # a plain table
    .venv/bin/python bench/pathological.py --markdown   # the table as Markdown, for BENCHMARKS.md
    .venv/bin/python bench/pathological.py --format mdx # one format's shapes only

Each input is about one megabyte. Every format has its own shapes: Markdown's, and those of
tests/chunking/test_rst.py, test_asciidoc.py, test_mdx.py and test_fuzz.py built at a megabyte
instead of 200k characters. Each input is cut by its format's section chunker and by the
paragraph chunker (what any text file gets) `--rounds` times (default 3), and the best time is
reported; a time over the one-second target is flagged. Nothing here is compared with a peer: the
point is that no input makes any chunker slower than linear.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from docshelf.chunking import (
    Chunk,
    chunk_text,
    split_asciidoc,
    split_markdown,
    split_mdx,
    split_rst,
)

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


Cases = dict[str, Callable[[], str]]

MARKDOWN: Cases = {
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
    # The rest of tests/chunking/test_fuzz.py's shapes.
    "a delimiter row of 1M blanks after a paragraph": lambda: "a\n-:" + " " * SIZE + "|x\n---\n",
    "250k nested list markers opening a fence of code": lambda: _after(
        "- " * (SIZE // 4) + "```\n", "code line\n"
    ),
    "a lone tag of 1M blanks": lambda: "<a" + " " * SIZE + "\n---\n",
}

# tests/chunking/test_rst.py's shapes.
RST: Cases = {
    "a 500k title and underline": lambda: "x" * (SIZE // 2) + "\n" + "=" * (SIZE // 2) + "\n\nb\n",
    "500k lines of one adornment character": lambda: _repeat("=\n"),
    "200k lines of long adornments": lambda: _repeat("----\n"),
    "83k overlined titles": lambda: _repeat("====\nx\n====\n"),
    "a field marker of 500k colons": lambda: ":" + "a:" * (SIZE // 2) + "`\n",
    "a list of 250k options never ended": lambda: "-a, " * (SIZE // 4) + "!\n",
    "an unclosed option argument": lambda: "-a <" + "b" * SIZE + "\n",
    "a 1M-character roman enumerator": lambda: "i" * SIZE + ".\n",
    "a 1M-digit arabic enumerator": lambda: "1" * SIZE + ". x\ny\n",
    "500k role names in a title": lambda: ":a" * (SIZE // 2) + "\n=====\n\nb\n",
    "1M backquotes in a title": lambda: "`" * SIZE + "\n=====\n\nb\n",
    "333k wide characters in a title": lambda: "日" * (SIZE // 3) + "\n=====\n\nb\n",
    "a simple table of 500k lines without its bottom": lambda: _after("=== ===\n", "x\n"),
    "a directive name of 500k parts": lambda: ".. " + "a:" * (SIZE // 2) + "\n",
    "an unclosed footnote label": lambda: ".. [" + "a" * SIZE + "\n",
    "1M backslashes before a literal marker": lambda: "x" + "\\" * SIZE + "::\n\n    code\n",
    "a quoted literal block of 250k lines": lambda: _after("x::\n\n", "> a\n"),
    "a comment of 250k lines": lambda: _after(".. c\n", "   x\n"),
    "83k definition list items": lambda: _repeat("term\n  def\n"),
}

# tests/chunking/test_asciidoc.py's shapes.
ASCIIDOC: Cases = {
    "1.4k nested delimiters of growing length": lambda: "".join(
        "=" * k + "\n" for k in range(4, int((2 * SIZE) ** 0.5))
    ),
    "200k delimiters that open and close": lambda: _repeat("----\n....\n"),
    "a title of 1M markup characters": lambda: "== " + _repeat("*_`#+^~[<{"),
    "a title of 1M blanks before its closing markers": lambda: "== a" + " " * SIZE + "b ==\n",
    "a title of 250k anchors": lambda: "== t" + _repeat(" [[a") + "]]\n",
    "166k underlined titles": lambda: _repeat("ab\n--\n"),
    "the underline of a 500k line": lambda: "a" * (SIZE // 2) + "\n" + "=" * (SIZE // 2) + "\n",
    "an attribute line of 1M brackets": lambda: "[" * SIZE + "]\n== t\n",
    "an anchor line of 1M brackets": lambda: "[[" + "a" * SIZE + "]\n",
    "500k description marks": lambda: "a" + ":x" * (SIZE // 2) + "::\n",
    "a 500k-star list marker, then 250k dots": lambda: (
        "*" * (SIZE // 2) + " x\n" + ". " * (SIZE // 4) + "\n"
    ),
    "166k continued list items": lambda: _repeat("* a\n+\n"),
    "83k literal paragraphs in list items": lambda: _repeat("* a\n+\n  lit\n"),
    "an attribute value continued 166k times": lambda: _after(":a: b \\\n", "  c \\\n"),
    "a header of 166k attribute entries": lambda: _after("= T\n", ":a: b\n"),
    "333k attribute references in a title": lambda: _after(":a: " + "x" * 400 + "\n\n== ", "{a}"),
    "200k comment lines": lambda: _repeat("// c\n"),
    "111k sections": lambda: _repeat("== h\n\nx\n"),
}

# tests/chunking/test_mdx.py's shapes.
MDX: Cases = {
    "1M unclosed braces": lambda: "{" * SIZE,
    "500k lines of unclosed braces": lambda: _repeat("{\n"),
    "166k nested expression attributes": lambda: _repeat("<a b={"),
    "125k nested lines that close, then fail": lambda: (
        "<a b={\n" * (SIZE // 8) + "}" * (SIZE // 8) + "x"
    ),
    "backtick runs of every length to 1.4k": lambda: "".join(
        "`" * k + "a" for k in range(1, int((2 * SIZE) ** 0.5))
    ),
    "an import of 333k lines that never ends": lambda: _after("import {\n", "a,\n"),
    "142k unclosed comments": lambda: _repeat("x <!--\n"),
    "333k attributes without an end": lambda: _repeat("<a "),
    "an unclosed quote, then 333k tags": lambda: _after('<a b="', "\n<a"),
    "333k tag lines": lambda: _repeat("<a\n"),
    "333k template literal lines": lambda: _repeat("{`\n"),
    "333k strings in expression lines": lambda: _repeat("{'\n"),
    "125k tags in a heading": lambda: "# " + _repeat("<b>x</b>"),
    "1M link openers in a heading": lambda: "# " + "[" * SIZE,
}

# Each format's shapes, with its section chunker and the file name it is given.
FORMATS: dict[str, tuple[Cases, Callable[[str, str], list[Chunk]], str]] = {
    "markdown": (MARKDOWN, split_markdown, "bench.md"),
    "rst": (RST, split_rst, "bench.rst"),
    "asciidoc": (ASCIIDOC, split_asciidoc, "bench.adoc"),
    "mdx": (MDX, split_mdx, "bench.mdx"),
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
    parser.add_argument(
        "--format", choices=FORMATS, action="append", help="only this format's shapes (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    rows: list[tuple[str, str, str, str]] = []
    slowest: dict[str, tuple[float, str]] = {}
    for fmt in args.format or FORMATS:
        cases, split, path = FORMATS[fmt]
        for name, build in cases.items():
            text = build()
            section = _best(lambda s=split, p=path, t=text: s(p, t), args.rounds)
            paragraph = _best(lambda text=text: chunk_text(text), args.rounds)
            rows.append((fmt, name, _cell(section), _cell(paragraph)))
            slowest[fmt] = max(slowest.get(fmt, (0.0, "")), (section, name))
            slowest["paragraphs"] = max(slowest.get("paragraphs", (0.0, "")), (paragraph, name))

    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"inputs of about {SIZE:,} characters; best of {args.rounds} rounds")
    print(f"target: under {TARGET_SECONDS} s each")
    header = ("format", "input", "section chunker (s)", "paragraph chunker (s)")
    if args.markdown:
        print(f"\n| {' | '.join(header)} |\n| --- | --- | ---: | ---: |")
        for row in rows:
            print(f"| {' | '.join(row)} |")
    else:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            print(
                "  ".join(
                    cell.rjust(w) if i >= 2 else cell.ljust(w)
                    for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                )
            )
    print()
    for chunker, (seconds, name) in slowest.items():
        print(f"slowest, {chunker}: {_cell(seconds)} s, {name}")


def _cell(seconds: float) -> str:
    flag = " (over target)" if seconds > TARGET_SECONDS else ""
    return f"{seconds:.3f}{flag}"


if __name__ == "__main__":
    main()
