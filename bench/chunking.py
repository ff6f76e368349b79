"""Chunker throughput: docshelf's two chunkers beside three peer libraries, on real Markdown.

Run it from the repository root with

    make bench                          # installs the `bench` extras into .venv, then runs this
    .venv/bin/python bench/chunking.py  # once the extras are installed
    .venv/bin/python bench/chunking.py --markdown   # the table as Markdown, for BENCHMARKS.md

Options: `--corpora DIR` measures every `.md` file under DIR instead of the shared corpora
(`../shared/data/corpora` beside the repository: traefik, fastapi, rust-book), and
`--rounds N` sets how many timed rounds are run.

Every chunker gets the same size budget, docshelf's MAX_CHUNK_BYTES (2000), and the same overlap,
OVERLAP_BYTES (300), where it has one. docshelf's section chunker counts UTF-8 bytes; its paragraph
chunker and the peers count characters, so their chunks may hold more than 2000 bytes.

Method: every file is read and decoded as UTF-8 once, before any timing. Each chunker makes one
untimed warm-up pass over all files, which also records its chunk count and largest chunk. Then
each round times one full pass over all files per chunker with time.perf_counter, the chunkers
interleaved inside the round (the starting chunker rotates from round to round), so a slow spell
of this shared machine hits all of them alike. The best (minimum) pass per chunker is reported:
noise only ever adds time. The garbage collector stays on, since the garbage a chunker makes is
part of its cost, but it is emptied before each timed pass.

The peers (chonkie, langchain-text-splitters, semchunk) are optional: one that is not installed
is left out of the table with a line saying how to install it.
"""

from __future__ import annotations

import argparse
import gc
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docshelf.chunking import chunk_text, split_markdown
from docshelf.config import MAX_CHUNK_BYTES, OVERLAP_BYTES
from report import version

# The shared corpora sit beside the repository: <parent of repo>/shared/data/corpora.
DEFAULT_CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora"

# Seven rounds: the whole run, warm-up included, takes about 10 s on the shared corpora on a
# 2-core machine, and across repeated runs there the time ratios stayed within about 8%.
DEFAULT_ROUNDS = 7

# One size budget for every row, so the rows cut comparable pieces: docshelf's own (bytes).
BUDGET = MAX_CHUNK_BYTES
# The same overlap for every chunker that has one: docshelf's section overlap (bytes).
OVERLAP = OVERLAP_BYTES

# Input size is reported in decimal megabytes.
BYTES_PER_MB = 1_000_000

# The row every other row's time is divided by.
BASELINE = "docshelf section"

# ATX headings run from level 1 (#) to level 6 (######).
HEADING_LEVELS = range(1, 7)

# What `make bench` installs, for the line printed when a peer is missing.
INSTALL_HINT = "run `make bench` (it installs the bench extras: pip install -e '.[dev,bench]')"


@dataclass(frozen=True, slots=True)
class Doc:
    """One input file: its path relative to the corpora root and its decoded text."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Chunker:
    """A row of the table: how to cut one file, and how to read a chunk's text back."""

    name: str
    split: Callable[[str, str], Sequence[Any]]  # (path, text) -> chunks
    text_of: Callable[[Any], str]  # chunk -> its text


@dataclass(frozen=True, slots=True)
class Result:
    """What one chunker did to the whole corpus."""

    name: str
    best_seconds: float
    chunks: int
    max_chunk_bytes: int


def docshelf_chunkers() -> list[Chunker]:
    """docshelf's section chunker (its budget is built in) and its paragraph chunker."""

    def section(path: str, text: str) -> Sequence[Any]:
        return split_markdown(path, text)

    def paragraph(path: str, text: str) -> Sequence[Any]:
        return chunk_text(text, max_chars=BUDGET, overlap_chars=OVERLAP)

    return [
        Chunker(BASELINE, section, lambda c: c.content),
        Chunker("docshelf paragraph", paragraph, lambda c: c.text),
    ]


def langchain_chunker() -> Chunker | None:
    """Cut at ATX headings first, then with the recursive splitter's Markdown separators."""
    try:
        from langchain_text_splitters import (  # noqa: PLC0415 (optional peer)
            Language,
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )
    except ImportError:
        return None
    # ATX headings of every level; each becomes metadata h1..h6 and stays in the text.
    headers = [("#" * level, f"h{level}") for level in HEADING_LEVELS]
    by_header = MarkdownHeaderTextSplitter(headers_to_split_on=headers, strip_headers=False)
    recursive = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=BUDGET, chunk_overlap=OVERLAP
    )

    def split(path: str, text: str) -> Sequence[Any]:
        return recursive.split_documents(by_header.split_text(text))

    return Chunker("langchain-text-splitters", split, _page_content)


def _page_content(document: Any) -> str:
    return str(document.page_content)


def chonkie_chunker() -> Chunker | None:
    """chonkie's RecursiveChunker with its Markdown rules, counting characters."""
    try:
        from chonkie import (  # noqa: PLC0415 (optional peer)
            RecursiveChunker,
            RecursiveLevel,
            RecursiveRules,
        )
    except ImportError:
        return None
    # chonkie's `markdown_en` recipe, v0.1.0, written out: RecursiveChunker.from_recipe fetches
    # recipes from the HuggingFace hub, which this machine cannot reach.
    rules = RecursiveRules(
        levels=[
            RecursiveLevel(
                delimiters=["######", "#####", "####", "###", "##", "#"], include_delim="next"
            ),
            RecursiveLevel(delimiters=["\n\n", "\n\r"], include_delim="prev"),
            RecursiveLevel(delimiters=["\n", "\r"], include_delim="prev"),
            RecursiveLevel(delimiters=[".", "!", "?"], include_delim="prev"),
            RecursiveLevel(),
        ]
    )
    # 24: RecursiveChunker's own default, kept explicit (pieces shorter than this are merged).
    min_characters_per_chunk = 24
    chunker = RecursiveChunker(
        tokenizer="character",
        chunk_size=BUDGET,
        rules=rules,
        min_characters_per_chunk=min_characters_per_chunk,
    )

    def split(path: str, text: str) -> Sequence[Any]:
        return chunker(text)

    return Chunker("chonkie RecursiveChunker (markdown rules)", split, _chunk_text)


def _chunk_text(chunk: Any) -> str:
    return str(chunk.text)


def semchunk_chunker() -> Chunker | None:
    """semchunk with `len` as its token counter, so its budget is characters."""
    try:
        import semchunk  # noqa: PLC0415 (optional peer)
    except ImportError:
        return None
    # No overlap: semchunk's overlap mode makes chunks larger than the budget, so it would not be
    # held to the same size as the other rows. memoize=False: every file here is chunked in each
    # pass, and a cache of token counts would time the cache, not the chunker, after the warm-up.
    chunker = semchunk.chunkerify(len, BUDGET, memoize=False)

    def split(path: str, text: str) -> Sequence[Any]:
        result: list[str] = chunker(text)
        return result

    return Chunker("semchunk", split, str)


# Each peer's distribution (for its version, and to name when it is missing) and its loader.
PEERS: list[tuple[str, Callable[[], Chunker | None]]] = [
    ("langchain-text-splitters", langchain_chunker),
    ("chonkie", chonkie_chunker),
    ("semchunk", semchunk_chunker),
]


def load_docs(corpora: Path) -> tuple[list[Doc], int]:
    """Every `.md` file under `corpora`, in path order, and their total size in UTF-8 bytes.

    Bytes are decoded as they are: no newline translation, so each chunker sees the file as is.
    """
    docs: list[Doc] = []
    total_bytes = 0
    for path in sorted(corpora.rglob("*.md")):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        total_bytes += len(raw)
        docs.append(Doc(path.relative_to(corpora).as_posix(), raw.decode("utf-8")))
    return docs, total_bytes


def one_pass(chunker: Chunker, docs: Sequence[Doc]) -> float:
    """Seconds for one pass of `chunker` over all of `docs`."""
    split = chunker.split
    gc.collect()
    start = time.perf_counter()
    for doc in docs:
        split(doc.path, doc.text)
    return time.perf_counter() - start


def warm_up(chunker: Chunker, docs: Sequence[Doc]) -> tuple[int, int]:
    """One untimed pass: the chunk count and the largest chunk in UTF-8 bytes."""
    count = 0
    largest = 0
    for doc in docs:
        for chunk in chunker.split(doc.path, doc.text):
            count += 1
            largest = max(largest, len(chunker.text_of(chunk).encode()))
    return count, largest


def measure(chunkers: Sequence[Chunker], docs: Sequence[Doc], rounds: int) -> list[Result]:
    """Warm every chunker up, then time `rounds` interleaved rounds; the best pass counts."""
    stats = {c.name: warm_up(c, docs) for c in chunkers}
    best = {c.name: float("inf") for c in chunkers}
    for round_index in range(rounds):
        shift = round_index % len(chunkers)
        for chunker in [*chunkers[shift:], *chunkers[:shift]]:
            best[chunker.name] = min(best[chunker.name], one_pass(chunker, docs))
    return [Result(c.name, best[c.name], *stats[c.name]) for c in chunkers]


def ratio_label(result: Result, baseline: Result) -> str:
    """This row's time over the baseline's: '3.10x' takes 3.1 times as long."""
    if result is baseline:
        return "1.00x (baseline)"
    ratio = result.best_seconds / baseline.best_seconds
    return f"{ratio:.2f}x ({'slower' if ratio > 1 else 'faster'})"


COLUMNS = ("chunker", "MB/s", "seconds (best)", "chunks", "max chunk bytes", "time vs " + BASELINE)
# Every column but the chunker's name holds a number and is right-aligned.
NUMERIC_FROM = 1


def table_rows(results: Sequence[Result], input_mb: float) -> list[list[str]]:
    baseline = next(r for r in results if r.name == BASELINE)
    return [
        [
            r.name,
            f"{input_mb / r.best_seconds:.2f}",
            f"{r.best_seconds:.4f}",
            str(r.chunks),
            str(r.max_chunk_bytes),
            ratio_label(r, baseline),
        ]
        for r in results
    ]


def render_text(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(w) if i >= NUMERIC_FROM else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(COLUMNS), rule, *(line(row) for row in rows)])


def render_markdown(rows: Sequence[Sequence[str]]) -> str:
    align = ["---" if i < NUMERIC_FROM else "---:" for i in range(len(COLUMNS))]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in [COLUMNS, align, *rows])


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--corpora",
        type=Path,
        default=DEFAULT_CORPORA,
        help="directory whose .md files (recursively) are chunked (default: %(default)s)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="timed rounds; the best pass of each chunker is reported (default: %(default)s)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the table as a Markdown table"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not args.corpora.is_dir():
        parser.error(f"no corpora directory at {args.corpora}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    docs, total_bytes = load_docs(args.corpora)
    if not docs:
        print(f"no .md files under {args.corpora}", file=sys.stderr)
        return 1

    chunkers = docshelf_chunkers()
    for distribution, load in PEERS:
        peer = load()
        if peer is None:
            print(f"{distribution} is not installed and is left out: {INSTALL_HINT}")
        else:
            chunkers.append(peer)

    results = measure(chunkers, docs, args.rounds)
    input_mb = total_bytes / BYTES_PER_MB
    per_corpus: dict[str, int] = {}
    for doc in docs:
        top = doc.path.split("/", 1)[0] if "/" in doc.path else "."
        per_corpus[top] = per_corpus.get(top, 0) + 1

    header = [
        (
            "command",
            f"`{shlex.join(sys.orig_argv)}`" if args.markdown else shlex.join(sys.orig_argv),
        ),
        ("python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("platform", platform.platform()),
        (
            "input",
            f"{len(docs)} .md files, {input_mb:.2f} MB of UTF-8 under {args.corpora} ("
            + ", ".join(f"{name}: {n}" for name, n in sorted(per_corpus.items()))
            + ")",
        ),
        (
            "budget",
            f"{BUDGET} per chunk, overlap {OVERLAP} where used "
            "(docshelf section counts UTF-8 bytes; docshelf paragraph and the peers, characters)",
        ),
        ("rounds", f"{args.rounds} after one warm-up pass each; best pass reported"),
        (
            "versions",
            ", ".join(
                f"{name} {version(name)}"
                for name in ["docshelf", *(distribution for distribution, _ in PEERS)]
            ),
        ),
    ]
    bullet = "- " if args.markdown else ""
    for key, value in header:
        print(f"{bullet}{key}: {value}")
    print()
    rows = table_rows(results, input_mb)
    print(render_markdown(rows) if args.markdown else render_text(rows))
    print()
    print(
        f"time vs {BASELINE} = this chunker's best seconds / {BASELINE}'s best seconds: "
        "2.00x takes twice as long (slower), 0.50x half as long (faster)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
