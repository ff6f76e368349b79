"""Section titles against each format's reference parser, on the real docs trees of
../shared/data/formats: the figure the format issue's goal is stated in.

Run it from the repository root (after `make reference-parsers`) with

    .venv/bin/python bench/agreement.py              # a table
    .venv/bin/python bench/agreement.py --markdown   # the table as Markdown, for BENCHMARKS.md

Per file, the reference parser (docutils, remark-mdx, Asciidoctor, through the scripts in
tests/reference/) names the sections that hold content; a file's agreement is the share of those
titles among the last crumbs of docshelf's chunks, compared as words (tests/chunking/reference.py);
an AsciiDoc chunk is named by the title it sits under, since a description list's items are
docshelf's sections (reference entries), not Asciidoctor's.
The table gives the average over the files of each tree, the worst file, and the average on the
half the chunker was tuned on and on the half held back to check it (reStructuredText: tuned on
requests, checked on pytest; MDX and AsciiDoc: the first half of the files by path, then the
rest). The last column cuts the same files with docshelf's Markdown chunker instead, for what the
format's own rules add.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

# The reference helpers live with the tests, one folder up from here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.chunking import reference

from docshelf.chunking import Chunk, split_markdown
from docshelf.chunking.asciidoc import outline_asciidoc, split_asciidoc
from docshelf.chunking.mdx import split_mdx
from docshelf.chunking.rst import split_rst
from report import markdown_table

REPO = Path(__file__).resolve().parents[1]
FORMATS = REPO.parent / "shared" / "data" / "formats"
SCRIPTS = REPO / "tests" / "reference"


def _rst(files: list[Path]) -> dict[str, list[str]]:
    run = _run([sys.executable, str(SCRIPTS / "rst_sections.py"), *map(str, files)])
    return {f["path"]: f["titles"] for f in json.loads(run)["files"]}


def _mdx(files: list[Path]) -> dict[str, list[str]]:
    found = json.loads(_run(["node", str(SCRIPTS / "mdx_sections.mjs"), *map(str, files)]))
    return {path: result.get("titles", []) for path, result in found.items()}


def _asciidoc(files: list[Path]) -> dict[str, list[str]]:
    import html  # noqa: PLC0415
    import re  # noqa: PLC0415

    tag = re.compile(r"<[^>]*>")
    found = json.loads(_run(["ruby", str(SCRIPTS / "asciidoc_sections.rb"), *map(str, files)]))
    return {
        path: [html.unescape(tag.sub("", t)) for t in titles["content"]]
        for path, titles in found.items()
    }


def _asciidoc_under_titles(path: str, text: str) -> list[Chunk]:
    """split_asciidoc's chunks, each named by the title it sits under: a description list's
    items are sections of docshelf's (reference entries), not Asciidoctor's."""
    return reference.under_titles(split_asciidoc(path, text), outline_asciidoc(text, entries=False))


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        sys.exit(f"{command[1]} failed (run `make reference-parsers`): {done.stderr[-2000:]}")
    return done.stdout


# format, parser, trees (name, folder, suffix), the tuned part, the chunker
Tree = tuple[str, str, str]
SETS: list[
    tuple[
        str,
        str,
        list[Tree],
        Callable[[list[str]], list[bool]],
        Callable[[list[Path]], dict[str, list[str]]],
        Callable[[str, str], list[Chunk]],
    ]
] = [
    (
        "reStructuredText",
        "docutils",
        [("requests", "requests/docs", ".rst"), ("pytest", "pytest/doc", ".rst")],
        lambda paths: ["/requests/" in p for p in paths],
        _rst,
        split_rst,
    ),
    (
        "MDX",
        "remark-mdx",
        [("mdx-js", "mdx-js/docs", ".mdx")],
        lambda paths: [i < len(paths) // 2 for i in range(len(paths))],
        _mdx,
        split_mdx,
    ),
    (
        "AsciiDoc",
        "Asciidoctor",
        [("asciidoctor-pdf", "asciidoctor-pdf/docs", ".adoc")],
        lambda paths: [i < len(paths) // 2 for i in range(len(paths))],
        _asciidoc,
        _asciidoc_under_titles,
    ),
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    columns = (
        "format (parser)",
        "trees",
        "files scored",
        "titles",
        "agreement",
        "worst file",
        "tuned half",
        "checked half",
        "as Markdown",
    )
    rows = []
    for fmt, name, trees, tuned_of, parse, split in SETS:
        files = sorted(
            f for _, folder, suffix in trees for f in (FORMATS / folder).rglob(f"*{suffix}")
        )
        titles = parse(files)
        shares, plain, tuned = [], [], tuned_of([str(f) for f in files])
        for path in files:
            text = path.read_text(encoding="utf-8")
            wanted = titles[str(path)]
            shares.append(reference.agreement(wanted, split(str(path), text)))
            plain.append(reference.agreement(wanted, split_markdown(str(path), text)))
        scored = [s for s in shares if s is not None]
        on_tuned = [s for s, t in zip(shares, tuned, strict=True) if t]
        on_checked = [s for s, t in zip(shares, tuned, strict=True) if not t]
        count = sum(
            len(titles[str(p)]) for p, s in zip(files, shares, strict=True) if s is not None
        )
        rows.append(
            (
                f"{fmt} ({name})",
                ", ".join(t[0] for t in trees),
                f"{len(scored)} of {len(files)}",
                str(count),
                f"{reference.average(shares):.3f}",
                f"{min(scored):.3f}",
                f"{reference.average(on_tuned):.3f}",
                f"{reference.average(on_checked):.3f}",
                f"{reference.average(plain):.3f}",
            )
        )
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    if args.markdown:
        print(markdown_table(columns, rows))
    else:
        widths = [max(len(r[i]) for r in [columns, *rows]) for i in range(len(columns))]
        for row in [columns, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
