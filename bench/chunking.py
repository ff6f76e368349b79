"""Chunker throughput: docshelf's chunkers beside three peer libraries, on real documentation in
Markdown, reStructuredText, MDX and AsciiDoc.

Run it from the repository root with

    make bench                          # installs the `bench` extras into .venv, then runs this
    .venv/bin/python bench/chunking.py  # once the extras are installed
    .venv/bin/python bench/chunking.py --markdown   # the tables as Markdown, for BENCHMARKS.md

Options: `--formats markdown,rst,mdx,asciidoc` chooses the formats, one table each (default: all
four, in that order); `--corpora DIR` measures each chosen format's files under DIR (`.md`,
`.rst`, `.mdx`, `.adoc`) instead of the shared data, and `--rounds N` sets how many timed rounds
are run.

The shared data sits beside the repository, in `../shared/data`, and is read where it lies:
- Markdown: every `.md` file under `corpora` (traefik, fastapi, rust-book);
- reStructuredText: every `.rst` file under `formats/requests/docs` and `formats/pytest/doc`;
- MDX: every `.mdx` file under `formats/mdx-js/docs` (its `.md` files are Markdown, not MDX);
- AsciiDoc: every `.adoc` file under `formats/asciidoctor-pdf/docs`.

The rows of each format's table: docshelf's section chunker of that format (split_markdown,
split_rst, split_mdx or split_asciidoc), the baseline of its table; docshelf's paragraph chunker;
and the peers that have rules for the format:
- langchain-text-splitters: for Markdown and MDX (which is Markdown to it),
  MarkdownHeaderTextSplitter, then RecursiveCharacterTextSplitter with its Language.MARKDOWN
  separators; for reStructuredText, RecursiveCharacterTextSplitter with its Language.RST
  separators. Its Language enum has no AsciiDoc.
- chonkie: RecursiveChunker with the rules of its `markdown` recipe, for Markdown and MDX. Its
  recipes (RecursiveRules.from_recipe, from the HuggingFace dataset chonkie-ai/recipes) are, as
  its release notes (v1.0.3) name them, `markdown` and natural languages (en, hi, zh, jp, ko):
  none for reStructuredText or AsciiDoc.
- semchunk: it has no rules for any markup (it cuts at newlines, whitespace and punctuation), so
  it cuts every format as it cuts Markdown, and has a row in every table, as docshelf's paragraph
  chunker has.
A peer without rules for a format is named under that format's table, never stood in for by one
of its generic splitters.

Every chunker gets the same size budget, docshelf's MAX_CHUNK_BYTES (2000), and the same overlap,
OVERLAP_BYTES (300), where it has one. docshelf's section chunkers count UTF-8 bytes; its
paragraph chunker and the peers count characters, so their chunks may hold more than 2000 bytes.

Method, for each format on its own: every file is read and decoded as UTF-8 once, before any
timing. Each chunker makes one untimed warm-up pass over all files, which also records its chunk
count and largest chunk. Then each round times one full pass over all files per chunker with
time.perf_counter, the chunkers interleaved inside the round (the starting chunker rotates from
round to round), so a slow spell of this shared machine hits all of them alike. The best
(minimum) pass per chunker is reported: noise only ever adds time. The garbage collector stays
on, since the garbage a chunker makes is part of its cost, but it is emptied before each timed
pass.

The peers (chonkie, langchain-text-splitters, semchunk) are optional: one that is not installed
is left out of the tables with a line saying how to install it.
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

from docshelf.chunking import Chunk, chunk_text, split_markdown
from docshelf.chunking.asciidoc import split_asciidoc
from docshelf.chunking.mdx import split_mdx
from docshelf.chunking.rst import split_rst
from docshelf.config import MAX_CHUNK_BYTES, OVERLAP_BYTES
from report import version

# The shared data sits beside the repository: <parent of repo>/shared/data.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_CORPORA = SHARED_DATA / "corpora"
FORMATS_DATA = SHARED_DATA / "formats"

# Seven rounds: the whole run, four formats and warm-up included, takes about 25 s on a 2-core
# machine. Across three runs in a row there, the time ratios on the large corpora (Markdown,
# reStructuredText) stayed within about 11%; on the small MDX and AsciiDoc sets, whose passes
# take 5 to 55 ms, some moved by up to half.
DEFAULT_ROUNDS = 7

# One size budget for every row, so the rows cut comparable pieces: docshelf's own (bytes).
BUDGET = MAX_CHUNK_BYTES
# The same overlap for every chunker that has one: docshelf's section overlap (bytes).
OVERLAP = OVERLAP_BYTES

# Input size is reported in decimal megabytes.
BYTES_PER_MB = 1_000_000

# The row every other row's time is divided by: docshelf's section chunker of the format.
BASELINE = "docshelf section"

# ATX headings run from level 1 (#) to level 6 (######).
HEADING_LEVELS = range(1, 7)

# What `make bench` installs, for the line printed when a peer is missing.
INSTALL_HINT = "run `make bench` (it installs the bench extras: pip install -e '.[dev,bench]')"


@dataclass(frozen=True, slots=True)
class Corpus:
    """Where a format's files are: `folders` under `root`, or all of `root` when there are none."""

    root: Path
    folders: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Format:
    """One table: a documentation format, its files and docshelf's section chunker of it."""

    key: str  # its name in --formats
    title: str
    suffix: str  # the files of this format end so
    corpus: Corpus  # the shared data, unless --corpora names another directory
    section: Callable[[str, str], list[Chunk]]


FORMATS: dict[str, Format] = {
    f.key: f
    for f in [
        Format("markdown", "Markdown", ".md", Corpus(DEFAULT_CORPORA), split_markdown),
        Format(
            "rst",
            "reStructuredText",
            ".rst",
            Corpus(FORMATS_DATA, ("requests/docs", "pytest/doc")),
            split_rst,
        ),
        Format("mdx", "MDX", ".mdx", Corpus(FORMATS_DATA, ("mdx-js/docs",)), split_mdx),
        Format(
            "asciidoc",
            "AsciiDoc",
            ".adoc",
            Corpus(FORMATS_DATA, ("asciidoctor-pdf/docs",)),
            split_asciidoc,
        ),
    ]
}


@dataclass(frozen=True, slots=True)
class Doc:
    """One input file: its path relative to the corpus root, its group and its decoded text."""

    path: str
    group: str  # the folder it is counted under in the input line
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


def docshelf_chunkers(fmt: Format) -> list[Chunker]:
    """docshelf's section chunker of `fmt` (its budget is built in) and its paragraph chunker."""
    split_sections = fmt.section

    def section(path: str, text: str) -> Sequence[Any]:
        return split_sections(path, text)

    def paragraph(path: str, text: str) -> Sequence[Any]:
        return chunk_text(text, max_chars=BUDGET, overlap_chars=OVERLAP)

    return [
        Chunker(BASELINE, section, lambda c: c.content),
        Chunker("docshelf paragraph", paragraph, lambda c: c.text),
    ]


def langchain_chunker(fmt: Format) -> Chunker | None:
    """Markdown and MDX: cut at ATX headings first, then with the recursive splitter's Markdown
    separators. reStructuredText: the recursive splitter with its reStructuredText separators."""
    try:
        from langchain_text_splitters import (  # noqa: PLC0415 (optional peer)
            Language,
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )
    except ImportError:
        return None
    if fmt.key == "rst":
        by_section = RecursiveCharacterTextSplitter.from_language(
            Language.RST, chunk_size=BUDGET, chunk_overlap=OVERLAP
        )

        def split_rst_text(path: str, text: str) -> Sequence[Any]:
            return by_section.split_text(text)

        return Chunker("langchain-text-splitters (rst separators)", split_rst_text, str)
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


def chonkie_chunker(fmt: Format) -> Chunker | None:
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


def semchunk_chunker(fmt: Format) -> Chunker | None:
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
PEERS: list[tuple[str, Callable[[Format], Chunker | None]]] = [
    ("langchain-text-splitters", langchain_chunker),
    ("chonkie", chonkie_chunker),
    ("semchunk", semchunk_chunker),
]

# The formats a peer has no rules for, and where one can see that. Such a peer gets no row in
# that format's table: one of its generic splitters would not be the peer reading the format.
NOT_READ: dict[tuple[str, str], str] = {
    ("langchain-text-splitters", "asciidoc"): "its Language enum has no AsciiDoc",
    ("chonkie", "rst"): "no reStructuredText recipe: its recipes are markdown and languages",
    ("chonkie", "asciidoc"): "no AsciiDoc recipe: its recipes are markdown and languages",
}


def load_docs(corpus: Corpus, suffix: str) -> tuple[list[Doc], int]:
    """Every file ending in `suffix` in `corpus`, in path order, and their total size in UTF-8
    bytes.

    Bytes are decoded as they are: no newline translation, so each chunker sees the file as is.
    """
    docs: list[Doc] = []
    total_bytes = 0
    for folder in corpus.folders or (".",):
        for path in sorted((corpus.root / folder).rglob(f"*{suffix}")):
            if not path.is_file():
                continue
            raw = path.read_bytes()
            total_bytes += len(raw)
            relative = path.relative_to(corpus.root).as_posix()
            if corpus.folders:
                group = folder
            else:
                group = relative.split("/", 1)[0] if "/" in relative else "."
            docs.append(Doc(relative, group, raw.decode("utf-8")))
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


@dataclass(frozen=True, slots=True)
class Table:
    """One format's measurement, as printed: its input, its rows and the peers left out."""

    format: Format
    input: str  # '438 .md files, 4.72 MB of UTF-8 under ... (fastapi: 155, ...)'
    input_mb: float
    results: list[Result]
    not_read: list[str]  # 'peer (why it has no rules for this format)'


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


def parse_formats(value: str) -> list[Format]:
    """`markdown,rst` -> those formats, in the order given, each once."""
    keys = [key.strip() for key in value.split(",") if key.strip()]
    unknown = [key for key in keys if key not in FORMATS]
    if unknown or not keys:
        raise argparse.ArgumentTypeError(
            f"unknown format {', '.join(unknown) or '(none given)'}: "
            f"choose among {','.join(FORMATS)}"
        )
    return [FORMATS[key] for key in dict.fromkeys(keys)]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--corpora",
        type=Path,
        default=None,
        help="directory whose files of each format (.md, .rst, .mdx, .adoc; recursively) are "
        f"chunked (default: the shared data, {DEFAULT_CORPORA} for Markdown and folders of "
        f"{FORMATS_DATA} for the others)",
    )
    parser.add_argument(
        "--formats",
        type=parse_formats,
        default=list(FORMATS.values()),
        metavar=",".join(FORMATS),
        help="the formats measured, comma-separated, one table each (default: all)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="timed rounds; the best pass of each chunker is reported (default: %(default)s)",
    )
    parser.add_argument(
        "--markdown", action="store_true", help="print the tables as Markdown tables"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.corpora is not None:
        if not args.corpora.is_dir():
            parser.error(f"no corpora directory at {args.corpora}")
    else:
        for fmt in args.formats:
            for folder in fmt.corpus.folders or (".",):
                if not (fmt.corpus.root / folder).is_dir():
                    parser.error(f"no {fmt.title} data at {fmt.corpus.root / folder}")
    return args


def input_line(fmt: Format, corpus: Corpus, docs: Sequence[Doc], input_mb: float) -> str:
    """How many files of `fmt`, how large, and where, as '438 .md files, 4.72 MB ... (a: 1)'."""
    per_group: dict[str, int] = {}
    for doc in docs:
        per_group[doc.group] = per_group.get(doc.group, 0) + 1
    return (
        f"{len(docs)} {fmt.suffix} files, {input_mb:.2f} MB of UTF-8 under {corpus.root} ("
        + ", ".join(f"{name}: {n}" for name, n in sorted(per_group.items()))
        + ")"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    formats: list[Format] = args.formats

    missing: list[str] = []
    tables: list[Table] = []
    for fmt in formats:
        corpus = Corpus(args.corpora) if args.corpora is not None else fmt.corpus
        docs, total_bytes = load_docs(corpus, fmt.suffix)
        if not docs:
            print(f"no {fmt.suffix} files under {corpus.root}: {fmt.title} is left out")
            continue
        chunkers = docshelf_chunkers(fmt)
        not_read: list[str] = []
        for distribution, load in PEERS:
            reason = NOT_READ.get((distribution, fmt.key))
            if reason is not None:
                not_read.append(f"{distribution} ({reason})")
                continue
            peer = load(fmt)
            if peer is None:
                if distribution not in missing:
                    missing.append(distribution)
            else:
                chunkers.append(peer)
        input_mb = total_bytes / BYTES_PER_MB
        results = measure(chunkers, docs, args.rounds)
        tables.append(
            Table(fmt, input_line(fmt, corpus, docs, input_mb), input_mb, results, not_read)
        )
    if not tables:
        print("no files of any chosen format: nothing was measured", file=sys.stderr)
        return 1

    for distribution in missing:
        print(f"{distribution} is not installed and is left out: {INSTALL_HINT}")

    code = "`" if args.markdown else ""
    header = [
        ("command", f"{code}{shlex.join(sys.orig_argv)}{code}"),
        ("python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("platform", platform.platform()),
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
    for table in tables:
        fmt = table.format
        print()
        print(f"{fmt.title} ({BASELINE} = {code}{fmt.section.__name__}{code}): {table.input}")
        print()
        rows = table_rows(table.results, table.input_mb)
        print(render_markdown(rows) if args.markdown else render_text(rows))
        if table.not_read:
            print()
            print(f"Not reading {fmt.title}, so not in this table: {'; '.join(table.not_read)}.")
    print()
    print(
        f"time vs {BASELINE} = this chunker's best seconds / {BASELINE}'s best seconds: "
        "2.00x takes twice as long (slower), 0.50x half as long (faster)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
