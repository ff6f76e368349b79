"""reading.py, chunking/toc.py and app/names.py as pure units: the path and line checks, the
bounds of one answer, the numbering the hits share, the headings of each format, the path filter,
the outline's cuts, the refusal of a path that was not indexed, and the workspaces' short names."""

from __future__ import annotations

import random
import re
import signal
from pathlib import Path

import pytest

from docshelf.app.names import short_names
from docshelf.chunking import Kind, chunk_file, effective_kind, kind_of
from docshelf.chunking.text import text_lines
from docshelf.chunking.toc import TocEntry, file_toc
from docshelf.errors import ConfigError
from docshelf.paths import check_path, check_path_filter
from docshelf.present import MCP
from docshelf.present import render_outline as render_any_outline
from docshelf.present import render_reading as render_any_reading
from docshelf.reading import (
    MAX_LINE_NUMBER,
    DocsOutline,
    OutlineFile,
    Reading,
    check_line,
    narrower_paths,
    outline_files,
    read_lines,
)
from docshelf.reading import no_such_path as refusal_of
from docshelf.rows import StoredFile
from tests.chunking.invariants import shows_line


def no_such_path(path: str, files: list[StoredFile], where: str, *, prefix: bool) -> str:
    """The refusal as str() of its error says it."""
    return str(ConfigError(refusal_of(path, files, where, prefix=prefix)))


def render_reading(reading: Reading, label: str | None = None) -> str:
    """A reading as the tools render it."""
    return render_any_reading(reading, MCP, label)


def render_outline(outline: DocsOutline, label: str | None = None) -> str:
    """An outline as the tools render it."""
    return render_any_outline(outline, MCP, label)


# What the tool descriptions and `docshelf read --help` promise: one answer holds at most this.
PROMISED_LINES = 200
PROMISED_BYTES = 16_000

RULE = "path must be a path relative to the repository, as the hits show it"
LINE_BOUND = f"must be a whole number from 1 to {MAX_LINE_NUMBER}"
COMMIT = "0123456789abcdef" * 2 + "01234567"

# narrower_paths of one file takes microseconds: a second is ample on a busy machine.
NARROWER_TIMEOUT_SECONDS = 1.0

# How many corpus files the numbering and heading checks read (seeded: the same ones each run).
CORPUS_SAMPLE = 30
SAMPLE_SEED = 14


# -- check_path ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (None, "; got None"),
        (3, "; got 3"),
        (b"docs/x.md", "; got b'docs/x.md'"),
        (["docs/x.md"], "; got ['docs/x.md']"),
        ("", "; got ''"),
        ("   ", "; got '   '"),
        ("./", "; got './'"),
        ("/etc/passwd", ", not an absolute path; got '/etc/passwd'"),
        ("C:\\x", ", not an absolute path"),
        ("c:/Windows/win.ini", ", not an absolute path"),
        ("~/x", ", not an absolute path"),
        ("./~root/.ssh/id_rsa", ", not an absolute path"),
        ("./../x", ", without '..'"),
        ("docs/../../etc/passwd", ", without '..'; got 'docs/../../etc/passwd'"),
        ("..\\x", ", without '..'"),
        ("docs\\..\\..\\x", ", without '..'"),
        ("..", ", without '..'"),
        ("docs/..", ", without '..'"),
        ("docs/x.md\x00.png", "; it holds a NUL or control character"),
        ("docs/x\n.md", "; it holds a NUL or control character"),
        ("docs/x\x1b[31m.md", "; it holds a NUL or control character"),
        ("docs/x\x7f.md", "; it holds a NUL or control character"),
        ("docs/x\x9b.md", "; it holds a NUL or control character"),
        ("docs/\ud800.md", "; it holds an unpaired surrogate, not valid Unicode"),
    ],
)
def test_check_path_refuses_what_is_not_a_relative_path_and_states_the_rule(
    value: object, why: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        check_path(value)
    message = str(refused.value)
    assert message.startswith(RULE), message
    assert why in message, message
    assert "\x00" not in message and "\n" not in message and "\x1b" not in message


def test_check_path_counts_utf8_bytes_up_to_4096() -> None:
    for fits in ("a" * 4096, "é" * 2048, "€" * 1365 + "a"):  # 1, 2 and 3 bytes a character
        assert len(fits.encode()) == 4096
        assert check_path(fits) == fits
    for over in ("a" * 4097, "é" * 2048 + "a", "€" * 1365 + "ab"):
        assert len(over.encode()) == 4097
        with pytest.raises(ConfigError, match="at most 4096 bytes; got 4097 bytes"):
            check_path(over)
    with pytest.raises(ConfigError, match="got 8192 bytes"):
        check_path("é" * 4096)  # 4,096 characters, twice the bytes


def test_check_path_takes_off_a_leading_dot_slash_and_keeps_other_dots() -> None:
    assert check_path("./docs/runbooks/payments.md") == "docs/runbooks/payments.md"
    assert check_path("././docs/x.md") == "docs/x.md"
    assert check_path("docs/runbooks/payments.md") == "docs/runbooks/payments.md"
    assert check_path(".github/CONTRIBUTING.md") == ".github/CONTRIBUTING.md"
    assert check_path("docs/v1..v2/notes..md") == "docs/v1..v2/notes..md"  # `..` in a name
    assert check_path("docs/runbooks/", "prefix") == "docs/runbooks/"


def test_check_path_names_the_argument_it_checks() -> None:
    with pytest.raises(ConfigError, match=r"^prefix must be a path relative"):
        check_path("/etc", "prefix")


# -- check_line ----------------------------------------------------------------------------------


def test_check_line_takes_none_and_whole_numbers_within_the_bound() -> None:
    assert check_line(None, "start_line") is None
    assert check_line(1, "start_line") == 1
    assert check_line(MAX_LINE_NUMBER, "end_line") == MAX_LINE_NUMBER
    three = check_line(3.0, "start_line")  # JSON has one number type: 3.0 is 3
    assert three == 3 and type(three) is int


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0, "got 0"),
        (-1, "got -1"),
        (MAX_LINE_NUMBER + 1, f"got {MAX_LINE_NUMBER + 1}"),
        (1.5, "got 1.5"),
        ("3", "got '3'"),
        (True, "got True"),
        (False, "got False"),
        (float("nan"), "got nan"),
        (float("inf"), "got inf"),
        (float("-inf"), "got -inf"),
        (10**50, "got a number of more than 40 digits"),
        (-(10**50), "got a number of more than 40 digits"),
        (1e300, "got a number of more than 40 digits"),
        ([1], "got [1]"),
        ({"line": 1}, "got {'line': 1}"),
    ],
)
def test_check_line_refuses_anything_else_with_the_bound(value: object, shown: str) -> None:
    with pytest.raises(ConfigError) as refused:
        check_line(value, "end_line")
    message = str(refused.value)
    assert message == f"end_line {LINE_BOUND}; {shown}"


# -- read_lines ----------------------------------------------------------------------------------


def test_read_lines_gives_each_line_without_its_line_ending() -> None:
    for text in (
        "one\ntwo\nthree\n",
        "one\r\ntwo\r\nthree\r\n",  # CRLF
        "one\rtwo\rthree",  # lone CR, no last newline
        "\ufeffone\ntwo\nthree\n",  # a byte order mark is dropped, as the chunkers drop it
        "\ufeffone\r\ntwo\rthree",
        "one\ntwo\nthree",  # a last line without a newline
    ):
        assert read_lines(text, None, None, "p.md") == (
            1,
            3,
            3,
            ["one", "two", "three"],
            None,
            None,
        )
    assert read_lines("one\n\n\n", None, None, "p.md") == (1, 3, 3, ["one", "", ""], None, None)
    assert read_lines("\n", None, None, "p.md") == (1, 1, 1, [""], None, None)


def test_an_empty_file_reads_as_no_lines_and_only_from_line_1() -> None:
    assert read_lines("", None, None, "docs/empty.md") == (1, 0, 0, [], None, None)
    assert read_lines("\ufeff", 1, None, "docs/empty.md") == (1, 0, 0, [], None, None)
    assert read_lines("", None, 9, "docs/empty.md") == (1, 0, 0, [], None, None)
    with pytest.raises(ConfigError, match=r"^start_line must be 1: docs/empty.md is empty$"):
        read_lines("", 2, None, "docs/empty.md")


def test_read_lines_gives_a_range_and_stops_at_the_end_of_the_file() -> None:
    text = "a\nb\nc\nd\n"
    assert read_lines(text, 2, 3, "p.md") == (2, 3, 4, ["b", "c"], None, None)
    assert read_lines(text, 4, 4, "p.md") == (4, 4, 4, ["d"], None, None)
    assert read_lines(text, 2, 10, "p.md") == (2, 4, 4, ["b", "c", "d"], None, None)
    assert read_lines(text, 3, None, "p.md") == (3, 4, 4, ["c", "d"], None, None)
    assert read_lines(text, None, 2, "p.md") == (1, 2, 4, ["a", "b"], None, None)


def test_read_lines_refuses_a_start_past_the_end_naming_the_line_count() -> None:
    with pytest.raises(ConfigError, match=r"^start_line must be from 1 to 4: p.md has 4 lines$"):
        read_lines("a\nb\nc\nd\n", 5, None, "p.md")
    with pytest.raises(ConfigError, match=r"^start_line must be from 1 to 4: p.md has 4 lines$"):
        read_lines("a\nb\nc\nd\n", 5, 6, "p.md")
    with pytest.raises(ConfigError, match=r"^start_line must be from 1 to 1: x.md has 1 line$"):
        read_lines("a\n", 2, None, "x.md")


def test_read_lines_refuses_an_end_before_the_start() -> None:
    with pytest.raises(ConfigError) as refused:
        read_lines("a\nb\nc\n", 3, 2, "p.md")
    assert str(refused.value) == (
        "end_line (2) must not be before start_line (3); to read one line, give the same "
        "number twice"
    )
    with pytest.raises(ConfigError, match=r"end_line \(1\) must not be before start_line \(2\)"):
        read_lines("", 2, 1, "p.md")  # the order is checked before the file's length


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


def test_a_long_file_read_from_the_start_stops_at_200_lines_and_says_where_to_read_on() -> None:
    text = numbered(300)
    first, last, total, lines, next_start, cut = read_lines(text, None, None, "docs/long.md")
    assert (first, last, total, next_start) == (1, PROMISED_LINES, 300, PROMISED_LINES + 1)
    assert lines == [f"line {n}" for n in range(1, PROMISED_LINES + 1)]
    assert cut == "200 lines"
    # An explicit range longer than the bound is cut the same way.
    assert read_lines(text, 1, 300, "docs/long.md")[1:] == (200, 300, lines, 201, "200 lines")
    assert read_lines(text, 101, 300, "docs/long.md")[4:] == (None, None)  # exactly 200
    # Reading on from there gives the rest, and nothing more to read on from.
    rest = read_lines(text, 201, None, "docs/long.md")
    assert rest == (201, 300, 300, [f"line {n}" for n in range(201, 301)], None, None)


def test_a_range_given_in_full_says_nothing_about_reading_on() -> None:
    text = numbered(300)
    assert read_lines(text, 10, 20, "p.md")[4:] == (None, None)
    assert read_lines(text, None, 150, "p.md")[4:] == (None, None)
    # Without an end, an answer that stops before the file's end says where to read on.
    assert read_lines(numbered(50), None, None, "p.md")[4] is None
    assert read_lines(numbered(250), 100, None, "p.md")[1:5:3] == (250, None)


def test_a_file_of_long_lines_stops_before_16000_bytes_at_a_line_boundary() -> None:
    # 99 two-byte characters and a number: bytes, not characters, are what is counted.
    lines_in = [f"{n:03d}" + "é" * 99 for n in range(1, 151)]
    line_bytes = len(lines_in[0].encode()) + 1
    text = "\n".join(lines_in) + "\n"
    first, last, total, lines, next_start, cut = read_lines(text, None, None, "p.md")
    fitting = PROMISED_BYTES // line_bytes
    assert (first, last, total) == (1, fitting, 150)
    assert lines == lines_in[:fitting]  # whole lines only
    assert sum(len(line.encode()) + 1 for line in lines) <= PROMISED_BYTES
    assert (last + 1) * line_bytes > PROMISED_BYTES  # and as many as fit
    assert next_start == fitting + 1
    assert cut == "16000 bytes"
    # An explicit range is bounded the same way, and says where to read on.
    assert read_lines(text, 1, 150, "p.md")[1:5:3] == (fitting, fitting + 1)


def test_one_line_longer_than_16000_bytes_is_cut_and_says_so() -> None:
    huge = "é" * 10_000 + "end"  # 20,003 bytes
    text = f"before\n{huge}\nafter\n"
    first, last, total, lines, next_start, cut = read_lines(text, 2, None, "p.md")
    assert (first, last, total, next_start) == (2, 2, 3, 3)
    (shown,) = lines
    assert huge.startswith(shown)
    assert PROMISED_BYTES - 3 <= len(shown.encode()) < PROMISED_BYTES  # never half a character
    assert cut == "16000 bytes (line 2 is cut short)"
    # After a line that fits, the long line is left for the next answer, not cut.
    assert read_lines(text, None, None, "p.md")[1:] == (1, 3, ["before"], 2, "16000 bytes")


def test_render_reading_numbers_the_lines_and_says_how_to_read_on() -> None:
    first, last, total, lines, next_start, cut = read_lines(numbered(300), 95, None, "docs/l.md")
    reading = Reading("shop", COMMIT, "docs/l.md", first, last, total, lines, next_start, None, cut)
    text = render_reading(reading, "shop")
    rows = text.split("\n")
    assert rows[0] == f"docs/l.md of workspace shop, lines 95-294 of 300, at commit {COMMIT[:12]}"
    assert rows[1] == " 95  line 95"  # numbers right-aligned to the widest
    assert rows[200] == "294  line 294"
    assert rows[-3:] == [
        "",
        "[cut at 200 lines; the file goes on: read on with start_line=295]",
        "",
    ]
    empty = Reading("shop", COMMIT, "docs/e.md", 1, 0, 0, [], None)
    assert render_reading(empty) == f"docs/e.md at commit {COMMIT[:12]} is empty (0 lines)\n"
    noted = Reading("shop", COMMIT, "docs/e.md", 1, 1, 1, ["x"], None, "the pin expired")
    assert render_reading(noted).startswith("the pin expired\n\ndocs/e.md, lines 1-1 of 1")


# -- the numbering the hits share ------------------------------------------------------------


def sampled_docs(shared_data: Path) -> list[tuple[str, str, Kind]]:
    """A seeded sample of the corpora, and all of ../shared/data/formats: (path, text, kind)."""

    def docs(root: Path) -> list[Path]:
        return sorted(p for p in root.rglob("*") if p.is_file() and kind_of(p.name))

    corpora, formats = docs(shared_data / "corpora"), docs(shared_data / "formats")
    assert len(corpora) > 400 and len(formats) > 400
    chosen = random.Random(SAMPLE_SEED).sample(corpora, CORPUS_SAMPLE) + formats
    out = []
    for p in chosen:
        kind = kind_of(p.name)
        assert kind is not None
        out.append((p.relative_to(shared_data).as_posix(), p.read_text(encoding="utf-8"), kind))
    assert {kind for _, _, kind in out} >= {"markdown", "mdx", "rst", "asciidoc"}
    return out


def paged_lines(text: str, path: str) -> list[str]:
    """All of a file's lines as an agent reads them: from line 1, then on from each answer's
    next_start_line."""
    lines: list[str] = []
    start = 1
    while True:
        first, last, total, got, next_start, cut = read_lines(text, start, None, path)
        assert first == start and len(got) == last - first + 1, (path, start)
        assert cut is None or "cut short" not in cut, (path, start)
        lines += got
        if next_start is None:
            assert last == total, (path, start)
            return lines
        assert next_start == last + 1, (path, start)
        start = next_start


def check_chunk_lines(path: str, text: str, kind: Kind) -> int:
    """Every chunk's start_line..end_line, read with read_lines, holds the chunk's lines:
    the file's own lines (markdown, text), or those lines with parts taken out (the outline
    formats show what is prose); a chunk of one over-long line holds a slice of it."""
    lines = paged_lines(text, path)
    assert lines == text_lines(text), path
    chunks = chunk_file(path, text, kind)
    for c in chunks:
        shown = lines[c.start_line - 1 : c.end_line]
        content = c.content.split("\n")
        where = (path, c.index, c.start_line, c.end_line)
        assert 1 <= c.start_line <= c.end_line <= len(lines), where
        # A chunk shows what a reader sees: the file's lines with markup taken out (an MDX
        # tag, a shortcode), a fence where the file delimits code, a directive's words.
        if len(content) == len(shown):
            assert all(shows_line(a, b) for a, b in zip(content, shown, strict=True)), where
        else:  # a slice of one line longer than a chunk
            assert c.start_line == c.end_line and shows_line(c.content, shown[0]), where
    for c in chunks[:1] + chunks[-1:]:  # a hit's own range, asked for as such
        assert read_lines(text, c.start_line, c.end_line, path)[:4] == (
            c.start_line,
            c.end_line,
            len(lines),
            lines[c.start_line - 1 : c.end_line],
        )
    return len(chunks)


def test_read_lines_numbers_lines_as_the_chunks_do_on_real_docs(shared_data: Path) -> None:
    counted = sum(check_chunk_lines(*doc) for doc in sampled_docs(shared_data))
    assert counted > 2000


def test_read_lines_numbers_lines_as_the_chunks_do_with_a_bom_and_crlf() -> None:
    body = "# Title\n\nIntro.\n\n## Part\n\nText of the part.\nMore.\n\n## Last\n\nEnd.\n"
    for text in (body, "\ufeff" + body.replace("\n", "\r\n"), body.replace("\n", "\r")):
        assert check_chunk_lines("docs/x.md", text, "markdown") == 3
    rst = "=====\nTitle\n=====\n\nIntro.\n\nPart\n----\n\nText.\n"
    assert check_chunk_lines("docs/x.rst", "\ufeff" + rst.replace("\n", "\r\n"), "rst") >= 2
    assert check_chunk_lines("docs/x.txt", "\ufefffirst para\r\n\r\nsecond\r\n", "text") >= 1


# -- file_toc ------------------------------------------------------------------------------------


MARKDOWN = """\
---
title: Not a heading
---

# Top

Intro.

## Setup

Text.

### Deeper

More.

## Usage

Use it.

Second top
==========

Body.

Its part
--------

Tail.
"""


def test_markdown_headings_nest_and_count_the_front_matter_lines() -> None:
    assert file_toc(MARKDOWN, "markdown") == [
        TocEntry(1, "Top", 5, 20),
        TocEntry(2, "Setup", 9, 16),
        TocEntry(3, "Deeper", 13, 16),
        TocEntry(2, "Usage", 17, 20),
        TocEntry(1, "Second top", 21, 29),  # setext
        TocEntry(2, "Its part", 26, 29),
    ]
    lines = text_lines(MARKDOWN)
    assert lines[4] == "# Top" and lines[20] == "Second top" and lines[25] == "Its part"


def test_markdown_headings_are_those_outside_code_and_depths_start_at_1() -> None:
    text = "```\n# not a heading\n```\n\n## Only level two\n\nx\n\n#### Four\n\ny\n"
    assert file_toc(text, "markdown") == [
        TocEntry(1, "Only level two", 5, 11),
        TocEntry(2, "Four", 9, 11),
    ]
    crlf = "\ufeff# BOM\r\n\r\ntext\r\n## Two\r\nx\r\n"
    assert file_toc(crlf, "markdown") == [TocEntry(1, "BOM", 1, 5), TocEntry(2, "Two", 4, 5)]
    # A front matter title tops the chunks' breadcrumbs ("Page > A"), not the outline.
    titled = "---\ntitle: Page\n---\n\n## A\n\nx\n\n### B\n\ny\n"
    assert file_toc(titled, "markdown") == [TocEntry(1, "A", 5, 11), TocEntry(2, "B", 9, 11)]
    assert file_toc("", "markdown") == []
    assert file_toc("No heading at all.\n", "markdown") == []


def test_a_heading_title_with_the_breadcrumb_separator_keeps_its_title_and_depth() -> None:
    text = "# Settings > Advanced\n\nx\n\n## Proxy\n\ny\n\n# Other\n\nz\n"
    assert file_toc(text, "markdown") == [
        TocEntry(1, "Settings > Advanced", 1, 8),
        TocEntry(2, "Proxy", 5, 8),
        TocEntry(1, "Other", 9, 11),
    ]


def test_definition_list_entries_are_in_the_outline_below_their_heading() -> None:
    text = "# Figure\n\n## Arguments\n\n`src`\n: The source.\n\n`alt`\n: The text.\n\nAfter.\n"
    assert file_toc(text, "markdown") == [
        TocEntry(1, "Figure", 1, 11),
        TocEntry(2, "Arguments", 3, 11),
        TocEntry(3, "src", 5, 7),
        TocEntry(3, "alt", 8, 11),
    ]


RST = """\
=====
Title
=====

Intro.

Section one
-----------

Text.

Sub
~~~

More.

Section two
-----------

End.
"""


def test_rst_titles_nest_by_their_underlines_and_a_txt_that_is_rst_has_them() -> None:
    expected = [
        TocEntry(1, "Title", 1, 20),
        TocEntry(2, "Section one", 7, 16),
        TocEntry(3, "Sub", 12, 16),
        TocEntry(2, "Section two", 17, 20),
    ]
    assert file_toc(RST, "rst") == expected
    assert file_toc(RST, "text") == expected  # as the chunker reads it (looks_like_rst)


def test_asciidoc_and_mdx_headings() -> None:
    adoc = (
        "= Doc Title\n:toc:\n\nPreamble.\n\n== First\n\nText.\n\n=== Deeper\n\nx\n\n"
        "== Second\n\ny\n"
    )
    assert file_toc(adoc, "asciidoc") == [
        TocEntry(1, "Doc Title", 1, 16),
        TocEntry(2, "First", 6, 13),
        TocEntry(3, "Deeper", 10, 13),
        TocEntry(2, "Second", 14, 16),
    ]
    mdx = (
        "import {Chart} from './chart.js'\nexport const meta = {title: 'x'}\n\n# Hello\n\n"
        "<Chart year={2024} />\n\n## Part\n\ntext\n"
    )
    assert file_toc(mdx, "mdx") == [TocEntry(1, "Hello", 4, 10), TocEntry(2, "Part", 8, 10)]


def test_plain_text_has_no_headings() -> None:
    assert file_toc("Just text.\n\nAnother paragraph.\n", "text") == []
    assert file_toc("# looks like markdown\n\nbut is text\n", "text") == []


# An AsciiDoc title's block attributes and anchors ([#id], [discrete], .Title) open its section.
_ADOC_ATTRIBUTE = re.compile(r"\[.*\]\s*$")
_UNDERLINE = re.compile(r"([=\-`:'\"~^_*+#<>.!$%&(),/;?@\[\\\]{|}])\1+\s*$")


def is_heading_line(kind: str, lines: list[str], i: int) -> bool:
    """Whether line i (0-based) opens a heading by the format's own syntax."""
    line = lines[i]
    following = lines[i + 1 :]
    if kind in ("markdown", "mdx"):
        if re.match(r"#{1,6}(\s|$)", line.lstrip() if kind == "mdx" else line[:4].lstrip()):
            return True
        for later in following:  # setext: the paragraph's lines, then the underline
            if not later.strip():
                return False
            if re.fullmatch(r" {0,3}(=+|-+)\s*", later):
                return True
        return False
    if kind == "rst":
        # A title by its underline, or a reference entry (`.. option:: --name`) by its line.
        if re.match(r"\s*\.\.\s+[\w:-]+::", line):
            return True
        return bool(_UNDERLINE.match(line) or (following and _UNDERLINE.match(following[0])))
    if kind == "asciidoc":
        # A title, or a reference entry: a description list's term (`key:: text`, `key;;`).
        if re.match(r"\s*\S(?:.*?\S)?(?::{2,4}|;;)(?:\s|$)", line):
            return True
        while _ADOC_ATTRIBUTE.match(line) and following:
            line, following = following[0], following[1:]
        return bool(re.match(r"[=#]{1,6}\s+\S", line))
    return False


def test_every_heading_of_real_docs_starts_at_a_heading_line_and_ranges_nest(
    shared_data: Path,
) -> None:
    entries = 0
    for path, text, kind in sampled_docs(shared_data):
        read_as = effective_kind(kind, text)
        lines = text_lines(text)
        toc = file_toc(text, kind)
        entries += len(toc)
        chunks = [
            c for c in chunk_file(path, text, kind) if toc and c.start_line >= toc[0].start_line
        ]
        for i, entry in enumerate(toc):
            where = (path, entry)
            assert 1 <= entry.start_line <= entry.end_line <= len(lines), where
            assert is_heading_line(read_as, lines, entry.start_line - 1), where
            assert entry.depth >= 1 and (i == 0 or entry.depth <= toc[i - 1].depth + 1), where
            later = [e.start_line for e in toc[i + 1 :] if e.depth <= entry.depth]
            assert entry.end_line == max((later or [len(lines) + 1])[0] - 1, entry.start_line)
        # The outline names the sections the hits come from: each chunk lies in its heading's.
        for c in chunks:
            title = c.heading.rsplit(" > ", 1)[-1]
            assert any(
                e.title == title and e.start_line <= c.start_line <= c.end_line <= e.end_line
                for e in toc
            ), (path, c.heading, c.start_line)
    assert entries > 2000


# -- the path filter -----------------------------------------------------------------------------


PATHS = [
    "docs/runbooks/payments.md",
    "docs/runbooks/deep/refunds.md",
    "docs/runbooks-old/payments.md",
    "docs/runbooks",
    "docs/a.md",
    "docs/a/b.md",
    "other/payments.md",
    "payments.md",
]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("docs/runbooks/", ["docs/runbooks/payments.md", "docs/runbooks/deep/refunds.md"]),
        (
            "docs/runbooks",
            ["docs/runbooks/payments.md", "docs/runbooks/deep/refunds.md", "docs/runbooks"],
        ),
        ("./docs/runbooks/", ["docs/runbooks/payments.md", "docs/runbooks/deep/refunds.md"]),
        ("docs/runbooks/payments.md", ["docs/runbooks/payments.md"]),
        ("docs/runbooks/pay", []),  # a prefix is a folder or a file, never part of a name
        (
            "**/payments.md",
            [
                "docs/runbooks/payments.md",
                "docs/runbooks-old/payments.md",
                "other/payments.md",
                "payments.md",
            ],
        ),
        ("docs/*.md", ["docs/a.md"]),
        ("docs/runbooks/*", ["docs/runbooks/payments.md"]),
        ("docs/?.md", ["docs/a.md"]),
        ("docs/[ab].md", ["docs/a.md"]),
    ],
)
def test_the_path_filter_keeps_a_folder_a_file_or_a_glob(given: str, kept: list[str]) -> None:
    chosen = check_path_filter(given)
    assert chosen is not None
    assert [p for p in PATHS if chosen.keeps(p)] == kept


def test_the_path_filter_refuses_what_check_path_refuses_and_a_glob_that_does_not_compile() -> None:
    assert check_path_filter(None) is None
    with pytest.raises(
        ConfigError, match=r"'docs/\[a.md': a \[ is not closed; escape it as \[\[\]"
    ):
        check_path_filter("docs/[a.md")
    for bad in ("/docs/", "../docs/", "docs/../../x", "", 7):
        with pytest.raises(ConfigError, match=f"^{RULE}"):
            check_path_filter(bad)


# -- outlines ------------------------------------------------------------------------------------


def page(i: int) -> str:
    return f"# Page {i}\n\n## Setup\n\nx\n\n## Usage\n\ny\n"


def many_files() -> list[tuple[StoredFile, str | None]]:
    out: list[tuple[StoredFile, str | None]] = []
    for folder in ("api/v1", "api/v2", "guides", "runbooks"):
        for i in range(40):
            text = page(i)
            out.append((StoredFile(f"docs/{folder}/page{i:02d}.md", 9, len(text)), text))
    out.append((StoredFile("README.md", 1, 4), "Hi.\n"))
    return out


def body_of(rendered: str) -> list[str]:
    """The outline's file and heading lines: after the header, before the closing note."""
    return rendered.rstrip("\n").split("\n\n", maxsplit=1)[0].split("\n")[1:]


def test_an_outline_of_many_files_is_cut_within_the_bounds_and_names_narrower_folders() -> None:
    texts = [(f, t) for f, t in many_files() if f.path.startswith("docs/")]
    files = [f for f, _ in texts]
    shown, complete = outline_files(texts, ["markdown"] * len(texts))
    assert not complete
    assert [f.path for f in shown] == [f.path for f in files[: len(shown)]]  # in order
    assert shown[0].headings == [
        TocEntry(1, "Page 0", 1, 9),
        TocEntry(2, "Setup", 3, 6),
        TocEntry(2, "Usage", 7, 9),
    ]
    narrower = narrower_paths(files, "docs/")
    assert narrower == [("docs/api/", 80), ("docs/guides/", 40), ("docs/runbooks/", 40)]
    rendered = render_outline(DocsOutline("shop", COMMIT, "docs/", shown, len(files), narrower))
    body = body_of(rendered)
    assert len(body) == 4 * len(shown) and len(body) <= PROMISED_LINES
    assert len(body) + 4 > PROMISED_LINES  # as many files as fit
    assert len(rendered.encode()) <= PROMISED_BYTES
    assert rendered.startswith(
        f"The docs under docs/ at commit {COMMIT[:12]}: {len(shown)} of 160 files\n"
    )
    assert rendered.endswith(
        "\n\n[cut at 200 lines or 16000 bytes; see less at once with path=docs/api/ (80 files), "
        "path=docs/guides/ (40 files), path=docs/runbooks/ (40 files)]\n"
    )
    assert "docs/api/v1/page00.md (9 lines)\n  1-9 Page 0\n    3-6 Setup\n" in rendered
    # From the top, the folders at the top; the files at the top are no folder.
    assert narrower_paths([f for f, _ in many_files()], None) == [("docs/", 160)]


def test_an_outline_of_long_headings_is_cut_within_16000_bytes() -> None:
    title = "A heading of many words, " * 8
    texts: list[tuple[StoredFile, str | None]] = []
    for i in range(60):
        text = f"# {title}{i}\n\n## {title}\n\nx\n"
        texts.append((StoredFile(f"docs/p{i:02d}.md", 5, len(text)), text))
    shown, complete = outline_files(texts, ["markdown"] * len(texts))
    assert not complete and len(shown) < 60
    outline = DocsOutline("shop", COMMIT, None, shown, 60, [])
    rendered = render_outline(outline)
    assert len("\n".join(body_of(rendered)).encode()) + 1 <= PROMISED_BYTES
    assert len(body_of(rendered)) < PROMISED_LINES  # bytes, not lines, cut this one
    assert rendered.endswith(
        "[cut at 200 lines or 16000 bytes; name one file as path to see all its headings]\n"
    )


def huge_page(headings: int) -> str:
    return "".join(f"## Heading {i}\n\nText {i}.\n\n" for i in range(headings))


def test_one_huge_file_s_headings_are_cut_within_the_bounds() -> None:
    text = huge_page(400)
    file = StoredFile("docs/ref/huge.md", 1600, len(text))
    for texts in ([(file, text)], [(file, text), (StoredFile("docs/z.md", 1, 2), "z\n")]):
        shown, complete = outline_files(texts, ["markdown"] * len(texts))
        assert not complete
        (only,) = shown
        assert only.path == "docs/ref/huge.md"
        assert only.headings == file_toc(text, "markdown")[: len(only.headings)]
        assert len(only.headings) == PROMISED_LINES - 1  # and the file's own line
        rendered = render_outline(DocsOutline("shop", COMMIT, None, shown, len(texts)))
        assert len(body_of(rendered)) <= PROMISED_LINES
        assert len(rendered.encode()) <= PROMISED_BYTES
    # With other files, the answer says it was cut, and where to see less.
    narrower = narrower_paths([f for f, _ in texts], None)
    assert narrower == [("docs/ref/", 1)]
    rendered = render_outline(DocsOutline("shop", COMMIT, None, shown, 2, narrower))
    assert rendered.startswith(f"The docs at commit {COMMIT[:12]}: 1 of 2 files\n")
    assert rendered.endswith(
        "\n\n[cut at 200 lines or 16000 bytes; see less at once with path=docs/ref/ (1 file)]\n"
    )


@pytest.mark.parametrize("path", ["README.md", "docs/ref/huge.md"])
def test_an_outline_cut_inside_its_only_file_says_it_was_cut(path: str) -> None:
    text = huge_page(400)
    texts: list[tuple[StoredFile, str | None]] = [(StoredFile(path, 1600, len(text)), text)]
    shown, complete = outline_files(texts, ["markdown"])
    assert not complete
    narrower = narrower_paths([f for f, _ in texts], None)  # as Service.outline asks for them
    rendered = render_outline(
        DocsOutline("shop", COMMIT, None, shown, 1, narrower, cut=not complete)
    )
    assert "[cut at" in rendered
    last = shown[0].headings[-1].end_line
    assert rendered.endswith(
        f"[cut at 200 lines or 16000 bytes: the first headings of {path} only; read on from "
        f"line {last + 1} with docs_read]\n"
    )


def test_an_outline_that_fits_is_whole() -> None:
    texts: list[tuple[StoredFile, str | None]] = [
        (StoredFile("docs/a.md", 9, 40), page(1)),
        (StoredFile("docs/b.txt", 1, 5), "text\n"),
        (StoredFile("docs/gone.md", 3, 9), None),  # no text kept: the file, without headings
    ]
    shown, complete = outline_files(texts, ["markdown", "text", "markdown"])
    assert complete
    assert shown == [
        OutlineFile("docs/a.md", 9, file_toc(page(1), "markdown")),
        OutlineFile("docs/b.txt", 1, []),
        OutlineFile("docs/gone.md", 3, []),
    ]
    rendered = render_outline(DocsOutline("shop", COMMIT, "docs/", shown, 3), "shop")
    assert rendered == (
        f"The docs of workspace shop under docs/ at commit {COMMIT[:12]}: 3 files\n"
        "docs/a.md (9 lines)\n  1-9 Page 1\n    3-6 Setup\n    7-9 Usage\n"
        "docs/b.txt (1 line)\ndocs/gone.md (3 lines)\n"
    )


def test_narrower_paths_names_the_folders_one_level_below_a_folder() -> None:
    files = [f for f, _ in many_files() if f.path.startswith("docs/api/")]
    expected = [("docs/api/v1/", 40), ("docs/api/v2/", 40)]
    assert narrower_paths(files, "docs/api/") == expected
    assert narrower_paths(files, "docs/api") == expected
    assert narrower_paths(files[:40], "docs/api/v1/") == []  # files only: nothing narrower


def test_narrower_paths_of_a_glob_names_folders_from_the_top() -> None:
    files = [f for f, _ in many_files()]
    assert narrower_paths(files, "**/*.md") == [("docs/", 160)]
    under_docs = [f for f in files if f.path.startswith("docs/")]
    # One folder holding every file says nothing: the level below it is named instead.
    assert narrower_paths(under_docs, "**/page*.md") == [
        ("docs/api/", 80),
        ("docs/guides/", 40),
        ("docs/runbooks/", 40),
    ]
    assert narrower_paths(under_docs, None) == narrower_paths(under_docs, "**/page*.md")


def narrower_in_time(files: list[str], path: str) -> list[tuple[str, int]]:
    """narrower_paths(files, path), interrupted if it does not return in time."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, NARROWER_TIMEOUT_SECONDS)
    try:
        return narrower_paths([StoredFile(p, 1, 1) for p in files], path)
    except TimeoutError:
        pytest.fail(f"narrower_paths({files!r}, {path!r}) never returned")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_narrower_paths_of_a_file_ends_and_names_folders_that_hold_it() -> None:
    for path, count in narrower_in_time(["docs/ref/huge.md"], "docs/ref/huge.md"):
        assert "docs/ref/huge.md".startswith(path) and count == 1


# -- no_such_path --------------------------------------------------------------------------------


INDEXED = [
    StoredFile(p, 1, 1)
    for p in (
        "docs/runbooks/payments.md",
        "docs/runbooks/refunds.md",
        "docs/services/checkout.md",
        "guides/start.md",
        "README.md",
    )
]


def test_an_unknown_path_is_refused_with_the_closest_indexed_paths() -> None:
    message = no_such_path("docs/runbooks/payment.md", INDEXED, "shop at commit 0123", prefix=False)
    assert message.startswith(
        "'docs/runbooks/payment.md' is not an indexed doc of shop at commit 0123. Only the "
        "indexed docs can be read; the closest are: docs/runbooks/payments.md, "
    )
    assert message.endswith(". Call docs_outline to see them all.")
    # Nothing alike: the files of the nearest folder that exists.
    far = no_such_path("docs/runbooks/" + "q" * 200, INDEXED, "w", prefix=False)
    assert "the closest are: docs/runbooks/payments.md, docs/runbooks/refunds.md." in far
    assert "guides/start.md" not in far and "README.md" not in far
    hostile = no_such_path("docs/\x1b[2J" + "x" * 200, INDEXED, "w", prefix=False)
    assert "\x1b" not in hostile and "..." in hostile  # escaped and clipped


def test_a_filter_that_keeps_nothing_is_refused_with_the_top_folders() -> None:
    message = no_such_path("docs/runbook/", INDEXED, "shop at commit 0123", prefix=True)
    assert message.startswith(
        "no indexed doc of shop at commit 0123 is under or matches 'docs/runbook/'. Its docs "
        "are in . (1 file), docs/ (3 files), guides/ (1 file); the closest files are "
    )
    assert "docs/runbooks/refunds.md" in message
    assert no_such_path("x/", [], "shop at commit 0123", prefix=True) == (
        "shop at commit 0123 holds no indexed docs"
    )


# -- short names ---------------------------------------------------------------------------------


def test_short_names_are_the_repositories_names() -> None:
    assert short_names(["/home/a/shop", "/srv/billing/"]) == {
        "/home/a/shop": "shop",
        "/srv/billing/": "billing",
    }
    assert short_names(["https://github.com/org/shop.git", "git@host:org/billing.git"]) == {
        "https://github.com/org/shop.git": "shop",
        "git@host:org/billing.git": "billing",
    }
    assert short_names(["https://host/org/docs.git?token=abc#main", "/x/y"]) == {
        "https://host/org/docs.git?token=abc#main": "docs",
        "/x/y": "y",
    }


def test_colliding_names_get_their_folder_then_a_number() -> None:
    assert short_names(["/a/x/docs", "/b/y/docs", "/c/other"]) == {
        "/a/x/docs": "x-docs",
        "/b/y/docs": "y-docs",
        "/c/other": "other",
    }
    assert short_names(["/b/x/docs", "/a/x/docs", "https://host/x/docs.git"]) == {
        "/a/x/docs": "x-docs",
        "/b/x/docs": "x-docs-2",
        "https://host/x/docs.git": "x-docs-3",
    }


def test_short_names_do_not_depend_on_the_order_of_the_names() -> None:
    names = [
        "/a/x/docs",
        "/b/x/docs",
        "/c/y/docs",
        "https://host/org/shop.git",
        "/srv/shop",
        "/srv/billing",
        "ssh://git@host/team/billing",
    ]
    expected = short_names(names)
    assert len(set(expected.values())) == len(names)  # each its own
    shuffler = random.Random(SAMPLE_SEED)
    for _ in range(20):
        shuffled = names[:]
        shuffler.shuffle(shuffled)
        assert short_names(shuffled) == expected


@pytest.mark.parametrize(
    ("url", "label"),
    [
        ("https://user:s3cret@host/org/repo.git", "repo"),
        ("https://user:s3cret@host:8443/repo.git", "repo"),
        ("https://user:s3%2Fcret@host/org/repo", "repo"),
        ("https://s3cret@host/org/repo.git", "repo"),
        ("https://x-access-token:s3cret@github.com/org/repo.git", "repo"),
        ("ssh://git:s3cret@host/org/repo.git", "repo"),
        ("user:s3cret@host:org/repo.git", "repo"),
        ("https://user:s3cret@host", None),
        ("https://user:s3cret@host/", None),
    ],
)
def test_a_clone_url_s_password_never_becomes_a_label(url: str, label: str | None) -> None:
    labels = short_names([url, "/srv/other"])
    assert all("s3cret" not in shown for shown in labels.values()), labels
    assert label is None or labels[url] == label


@pytest.mark.parametrize(
    "url", ["https://s3cret:x-oauth-basic@github.com", "https://user:s3cret:x@host"]
)
def test_a_secret_in_a_url_without_a_path_never_becomes_a_label(url: str) -> None:
    labels = short_names([url, "/srv/other"])
    assert all("s3cret" not in shown for shown in labels.values()), labels
