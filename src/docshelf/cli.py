"""The command line: a thin adapter over app.py.

Start-up stays fast: nothing heavy is imported here, and the embedding model (later) loads on the
first embedding, never for `--help` or `chunk`.
"""

from __future__ import annotations

import bisect
import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from docshelf import __version__
from docshelf.app import ChunkedFile, ChunkerChoice, chunk_paths
from docshelf.chunking import Chunk, TextChunk
from docshelf.chunking.text import prepare
from docshelf.errors import DocshelfError
from docshelf.workspace import shown

# Widest heading shown in the `chunk` table before it is cut with an ellipsis.
TABLE_HEADING_WIDTH = 48


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="docshelf")
def cli() -> None:
    """docshelf: make a repository's Markdown documentation answerable by meaning."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--chunker",
    type=click.Choice(["auto", "markdown", "paragraph"]),
    default="auto",
    show_default=True,
    help="auto: sections for .md/.markdown, paragraphs for .txt. "
    "markdown or paragraph: that chunker for every file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of chunks.")
def chunk(paths: tuple[Path, ...], chunker: ChunkerChoice, as_json: bool) -> None:
    """Show how files are cut into chunks, the pieces a search retrieves.

    Each PATH is a file or a directory (every .md, .markdown and .txt file below it, with paths
    relative to that directory).
    """
    results = chunk_paths(paths, chunker)
    if as_json:
        rows = [_json_row(r.file.path, c) for r in results for c in r.chunks]
        _write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    else:
        _write(_table(results))


def _json_row(path: str, c: Chunk | TextChunk) -> dict[str, Any]:
    if isinstance(c, Chunk):
        return {
            "path": c.path,
            "index": c.index,
            "heading": c.heading,
            "content": c.content,
            "start_line": c.start_line,
            "end_line": c.end_line,
        }
    return {
        "path": path,
        "chunk_index": c.chunk_index,
        "text": c.text,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "tokens": c.tokens,
    }


def _table(results: list[ChunkedFile]) -> str:
    rows: list[tuple[str, str, str, str, str]] = []
    total_bytes = largest = count = 0
    for r in results:
        newlines: list[int] | None = None
        for c in r.chunks:
            if isinstance(c, Chunk):
                index, heading, text = c.index, c.heading, c.content
                first, last = c.start_line, c.end_line
            else:
                if newlines is None:  # offsets count in the prepared text, and so do lines
                    prepared = prepare(r.file.text)
                    newlines = [m.start() for m in re.finditer("\n", prepared)]
                index, heading, text = c.chunk_index, "", c.text
                first = bisect.bisect_left(newlines, c.char_start) + 1
                last = bisect.bisect_left(newlines, c.char_end - 1) + 1
            size = len(text.encode())
            total_bytes += size
            largest = max(largest, size)
            count += 1
            if len(heading) > TABLE_HEADING_WIDTH:
                heading = heading[: TABLE_HEADING_WIDTH - 1] + "…"
            lines = f"{first}-{last}" if last != first else str(first)
            rows.append((shown(r.file.path), str(index), shown(heading), lines, str(size)))
    header = ("PATH", "#", "HEADING", "LINES", "BYTES")
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]
    out = []
    for row in [header, *rows]:
        cells = [
            cell.rjust(w) if i in (1, 4) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    files = len(results)
    out.append(
        f"\n{count} chunks from {files} file{'s' if files != 1 else ''}, "
        f"{total_bytes} bytes in all, largest chunk {largest} bytes"
    )
    return "\n".join(out) + "\n"


def _write(text: str) -> None:
    sys.stdout.buffer.write(text.encode())
    sys.stdout.flush()


def main() -> None:
    """Entry point of the `docshelf` console script: errors become one line and exit status 1."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("docshelf: aborted", err=True)
        sys.exit(130)
    except DocshelfError as e:
        click.echo(f"docshelf: error: {e}", err=True)
        sys.exit(1)
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (docshelf chunk docs | head): not an error
        sys.exit(0)
