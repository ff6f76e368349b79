"""Long fuzzing of every chunker: every invariant of tests/chunking/invariants.py on arbitrary text
and on documents glued from real pieces: Markdown from the robustness corpora's pieces
(tests/chunking/corpus_pieces.py), and reStructuredText, AsciiDoc and MDX from the strategies of
their tests (tests/chunking/test_rst.py, test_asciidoc.py, test_mdx.py).

Run it from the repository root with

    .venv/bin/python bench/fuzz.py                      # 100,000 examples in all
    .venv/bin/python bench/fuzz.py --examples 20000     # a shorter run
    .venv/bin/python bench/fuzz.py --markdown           # the table as Markdown

The examples are shared equally by ten properties: the section chunker and the paragraph
chunker (random budget and overlap), each on arbitrary text and on corpus pieces, and the
reStructuredText, AsciiDoc and MDX chunkers, each on arbitrary text and on its own glued
documents (check_outline: the packer's guarantees on the visible lines, and determinism).
Hypothesis runs each property for its share (no example database, no deadline, health checks
off), and stops a property at its first failure, which it shrinks and prints; `failures` counts
the properties that failed, and must be 0. The exit status is 1 when any did. Examples counts
every call of a property, shrinking included.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# The invariants and the corpus strategy live with the tests, one folder up from here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.chunking.corpus_pieces import corpus_documents
from tests.chunking.invariants import check_markdown, check_outline, check_paragraphs
from tests.chunking.test_asciidoc import asciidoc_documents
from tests.chunking.test_mdx import mdx_documents
from tests.chunking.test_rst import rst_documents

from docshelf.chunking import chunk_text, split_markdown
from docshelf.chunking.asciidoc import outline_asciidoc, split_asciidoc
from docshelf.chunking.mdx import outline_mdx, split_mdx
from docshelf.chunking.outline import Outline
from docshelf.chunking.rst import outline_rst, split_rst
from report import markdown_table

DEFAULT_EXAMPLES = 100_000
# Arbitrary text as long as the property tests' (tests/chunking/test_markdown.py).
MAX_ARBITRARY_CHARS = 3_000
# The paragraph chunker's budget and overlap are drawn from these ranges, as in its tests.
MAX_CHARS = (1, 900)
OVERLAP = (-5, 400)


def _markdown(text: str) -> None:
    chunks = split_markdown("fuzz.md", text)
    check_markdown("fuzz.md", text, chunks)
    assert split_markdown("fuzz.md", text) == chunks


# Each outline format: its file name, outline and chunker.
FORMATS: dict[str, tuple[str, Callable[[str], Outline], Callable[[str, str], list[Any]]]] = {
    "reStructuredText": ("fuzz.rst", outline_rst, split_rst),
    "AsciiDoc": ("fuzz.adoc", outline_asciidoc, split_asciidoc),
    "MDX": ("fuzz.mdx", outline_mdx, split_mdx),
}


def _outlined(fmt: str, text: str) -> None:
    path, outline, split = FORMATS[fmt]
    chunks = split(path, text)
    check_outline(path, text, outline(text), chunks)
    assert split(path, text) == chunks


def _paragraphs(text: str, max_chars: int, overlap: int) -> None:
    check_paragraphs(text, chunk_text(text, max_chars, overlap), max_chars, overlap)


def _properties(counter: list[int]) -> dict[str, Callable[[int], None]]:
    """Each property as a function of its number of examples; `counter` counts the calls."""
    arbitrary = st.text(max_size=MAX_ARBITRARY_CHARS)
    budgets = st.integers(*MAX_CHARS)
    overlaps = st.integers(*OVERLAP)

    def markdown(text: str) -> None:
        counter[0] += 1
        _markdown(text)

    def paragraphs(text: str, max_chars: int, overlap: int) -> None:
        counter[0] += 1
        _paragraphs(text, max_chars, overlap)

    def outlined(fmt: str) -> Callable[[str], None]:
        def test(text: str) -> None:
            counter[0] += 1
            _outlined(fmt, text)

        return test

    def run(
        test: Callable[..., None], *strategies: st.SearchStrategy[object]
    ) -> Callable[[int], None]:
        def go(examples: int) -> None:
            configured = settings(
                max_examples=examples,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            configured(given(*strategies)(test))()

        return go

    return {
        "section chunker, arbitrary text": run(markdown, arbitrary),
        "section chunker, corpus pieces": run(markdown, corpus_documents()),
        "paragraph chunker, arbitrary text": run(paragraphs, arbitrary, budgets, overlaps),
        "paragraph chunker, corpus pieces": run(paragraphs, corpus_documents(), budgets, overlaps),
        "reStructuredText chunker, arbitrary text": run(outlined("reStructuredText"), arbitrary),
        "reStructuredText chunker, glued pieces": run(
            outlined("reStructuredText"), rst_documents()
        ),
        "AsciiDoc chunker, arbitrary text": run(outlined("AsciiDoc"), arbitrary),
        "AsciiDoc chunker, glued pieces": run(outlined("AsciiDoc"), asciidoc_documents()),
        "MDX chunker, arbitrary text": run(outlined("MDX"), arbitrary),
        "MDX chunker, glued pieces": run(outlined("MDX"), mdx_documents()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    if args.examples < 10:
        parser.error("--examples must be at least 10 (one per property)")

    counter = [0]
    properties = _properties(counter)
    share = args.examples // len(properties)
    rows: list[tuple[str, str, str, str]] = []
    failed = 0
    total_started = time.perf_counter()
    for name, go in properties.items():
        counter[0] = 0
        started = time.perf_counter()
        failure = ""
        try:
            go(share)
        except Exception:  # hypothesis re-raises the shrunk failure; report it and go on
            failure = traceback.format_exc()
        seconds = time.perf_counter() - started
        if failure:
            failed += 1
            print(f"FAILED {name}:\n{failure}", file=sys.stderr)
        rows.append((name, f"{counter[0]:,}", "1" if failure else "0", f"{seconds:.1f}"))
    total = time.perf_counter() - total_started

    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(f"{share:,} examples asked of each of {len(properties)} properties")
    columns = ("property", "examples run", "failures", "seconds")
    examples_run = sum(int(r[1].replace(",", "")) for r in rows)
    rows.append(("all", f"{examples_run:,}", str(failed), f"{total:.1f}"))
    if args.markdown:
        print(markdown_table(columns, rows))
    else:
        widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
        for row in [columns, *rows]:
            print(
                "  ".join(
                    cell.ljust(w) if i == 0 else cell.rjust(w)
                    for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                )
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
