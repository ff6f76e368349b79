"""The AsciiDoc chunker: one test per rule of the format, the invariants over the shared
asciidoctor-pdf tree, the robustness examples and generated AsciiDoc, and pathological shapes."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import Chunk
from docshelf.chunking.asciidoc import outline_asciidoc, split_asciidoc
from docshelf.chunking.text import prepare
from tests.chunking.invariants import check_outline
from tests.chunking.test_fuzz import SHAPE_SECONDS, SHAPE_SIZE
from tests.chunking.test_robustness import SETS, examples

TREE = "formats/asciidoctor-pdf/docs"


def headings(text: str) -> list[str]:
    return [c.heading for c in split_asciidoc("doc.adoc", text)]


def ranges(text: str) -> list[tuple[str, int, int]]:
    return [(c.heading, c.start_line, c.end_line) for c in split_asciidoc("doc.adoc", text)]


def visible(text: str) -> list[str]:
    return outline_asciidoc(text).text.split("\n")


# A block of code's delimiter shows as a Markdown fence with the block's language (an outer block's
# delimiter too, when it closes the block of code): the one kind of visible line that is not the
# file's line with parts taken out.
FENCE = re.compile(r"`{3,}[\w+#.-]*")
CODE_DELIMITER = re.compile(r"--|([-.=*_+])\1{3,}|[|,:!]={3,}")


def check(text: str, path: str = "doc.adoc") -> list[Chunk]:
    """check_outline on the outline and chunks of `text` (with each code delimiter that shows as a
    fence taken as that fence), and that both are deterministic; returns the chunks."""
    found, chunks = outline_asciidoc(text), split_asciidoc(path, text)
    assert outline_asciidoc(text) == found and split_asciidoc(path, text) == chunks
    lines, shown = prepare(text).split("\n"), found.text.split("\n")
    assert len(lines) == len(shown), "the visible text keeps every line of the file"
    for i, (line, seen) in enumerate(zip(lines, shown, strict=True)):
        if FENCE.fullmatch(seen) and not is_subsequence(seen, line):
            assert CODE_DELIMITER.fullmatch(line.rstrip(" \t\v\f\r\x00")), (line, seen)
            lines[i] = seen
    check_outline(path, "\n".join(lines), found, chunks)
    return chunks


def is_subsequence(part: str, whole: str) -> bool:
    it = iter(whole)
    return all(ch in it for ch in part)


def test_equals_titles_nest_under_the_document_title() -> None:
    text = "= Guide\n\nIntro.\n\n== Install\n\nRun it.\n\n=== On Linux\n\napt.\n\n== Use\n\nGo.\n"
    chunks = split_asciidoc("guide.adoc", text)
    assert [(c.heading, c.content, c.start_line, c.end_line) for c in chunks] == [
        ("Guide", "= Guide\n\nIntro.", 1, 3),
        ("Guide > Install", "== Install\n\nRun it.", 5, 7),
        ("Guide > Install > On Linux", "=== On Linux\n\napt.", 9, 11),
        ("Guide > Use", "== Use\n\nGo.", 13, 15),
    ]


def test_title_markers_need_a_blank_after_them_and_stop_at_six() -> None:
    text = "== A ==\n\na\n\n==No blank\n\n====== Six\n\nb\n\n======= Seven is text\n"
    assert ranges(text) == [("A", 1, 5), ("A > Six", 7, 11)]
    assert "==No blank" in split_asciidoc("doc.adoc", text)[0].content


def test_markdown_hash_titles_count_as_equals_titles() -> None:
    assert headings("# Doc\n\nintro\n\n## Part\n\ntext\n\n#hashtag is text\n") == [
        "Doc",
        "Doc > Part",
    ]


def test_underlined_titles_need_an_underline_as_long_as_the_title_give_or_take_one() -> None:
    text = "Title\n=====\n\nintro\n\nPart one\n-------\n\nbody\n\nNot a title\n~~~~\n\ntail\n"
    assert ranges(text) == [("Title", 1, 4), ("Title > Part one", 6, 14)]


def test_a_title_inside_a_paragraph_is_text() -> None:
    assert headings("== A\n\ntext\n== Not a title\n\nmore\n") == ["A"]


def test_metadata_above_a_title_shows_nothing_and_its_section_starts_at_the_title() -> None:
    text = "= Doc\n\nintro\n\n[#install]\n\n[[setup]]\n== Install\n\nbody\n"
    chunks = split_asciidoc("doc.adoc", text)
    assert [(c.heading, c.start_line, c.end_line) for c in chunks] == [
        ("Doc", 1, 3),
        ("Doc > Install", 8, 10),
    ]
    assert chunks[1].content == "== Install\n\nbody"
    assert visible(text)[4:7] == ["", "", ""]


def test_a_discrete_heading_is_content_of_its_section() -> None:
    text = "== A\n\na\n\n[discrete]\n== Not a section\n\nmore\n\n[float]\n=== Nor this\n"
    chunks = split_asciidoc("doc.adoc", text)
    assert [c.heading for c in chunks] == ["A"]
    assert "== Not a section" in chunks[0].content
    assert chunks[0].content.endswith("=== Nor this")


def test_document_header_lines_are_no_content() -> None:
    text = (
        "= Doc\nJane Doe <jane@example.org>\nv1.0, 2024-01-01\n:toc:\n:page-aliases: a.adoc\n"
        "\nIntro.\n"
    )
    assert visible(text) == ["= Doc", "", "", "", "", "", "Intro.", ""]
    assert ranges(text) == [("Doc", 1, 7)]


def test_any_line_right_after_the_document_title_is_its_author_line() -> None:
    text = "= Doc\n== Not a section\n\nIntro.\n"
    assert visible(text)[:2] == ["= Doc", ""]
    assert headings(text) == ["Doc"]


def test_a_level_zero_title_after_content_is_no_document_title() -> None:
    text = "Intro.\n\n= Late\nnot an author\n"
    assert ranges(text) == [("", 1, 1), ("Late", 3, 4)]


def test_attribute_entries_between_blocks_are_no_content() -> None:
    text = "== A\n\n:url: https://example.org \\\n  /docs\n\n== B\n\nb\n"
    assert visible(text)[2:4] == ["", ""]
    assert headings(text) == ["B"]


@pytest.mark.parametrize(
    ("delimiter", "shown"),
    [
        ("----", "```"),
        ("....", "```"),
        ("====", ""),
        ("****", ""),
        ("____", ""),
        ("++++", ""),
        ("--", ""),
        ("|===", ""),
        (",===", ""),
        (":===", ""),
        ("!===", ""),
        ("------", "```"),
    ],
)
def test_delimited_blocks_never_hold_a_title(delimiter: str, shown: str) -> None:
    text = f"== A\n\n{delimiter}\n== Inside\n\n== Nor this\n{delimiter}\n\n== B\n\nb\n"
    chunks = split_asciidoc("doc.adoc", text)
    assert [c.heading for c in chunks] == ["A", "B"]
    assert chunks[0].content == f"== A\n\n{shown}\n== Inside\n\n== Nor this\n{shown}".rstrip()


def test_fenced_code_opens_with_a_language_and_closes_on_three_backticks() -> None:
    text = "== A\n\n```ruby\n\n== Inside\n````\n```\n\n== B\n\nb\n"
    assert headings(text) == ["A", "B"]


def test_a_block_closes_only_on_a_delimiter_of_its_own_length() -> None:
    text = "== A\n\n------\ncode\n----\n\n== Still code\n------\n\n== B\n\nb\n"
    assert headings(text) == ["A", "B"]


def test_an_unclosed_block_runs_to_the_end_of_the_file() -> None:
    assert headings("== A\n\n----\n== not a title\n\n== nor this\n") == ["A"]


def test_an_outer_blocks_delimiter_closes_the_blocks_inside_it() -> None:
    text = "== A\n\n====\n----\ncode\n====\n== B\n\nb\n"
    assert ranges(text) == [("A", 1, 6), ("B", 7, 9)]
    assert visible(text)[2:6] == ["", "```", "code", "```"]  # the listing's fence closes there


def test_comment_blocks_and_line_comments_are_no_content() -> None:
    text = "== A\n\n////\n== hidden\ntext\n////\n// note\n\n== B\n\nb\n/// is text\n"
    assert visible(text)[2:7] == ["", "", "", "", ""]
    assert ranges(text) == [("B", 9, 12)]


def test_comment_style_paragraphs_and_open_blocks_are_no_content() -> None:
    text = "== A\n\n[comment]\nhidden\n\n== B\n\n[comment]\n--\nhidden\n--\n\n== C\n\nc\n"
    assert headings(text) == ["C"]
    assert visible(text)[7:11] == ["", "", "", ""]


def test_an_indented_literal_paragraph_holds_no_title() -> None:
    text = "== A\n\n  indented\n== not a title\n\n== B\n\nb\n"
    chunks = split_asciidoc("doc.adoc", text)
    assert [c.heading for c in chunks] == ["A", "B"]
    assert chunks[0].content == "== A\n\n  indented\n== not a title"


def test_block_titles_are_content_not_section_titles() -> None:
    text = "== A\n\n.Example\n----\ncode\n----\n"
    assert [(c.heading, c.content) for c in split_asciidoc("doc.adoc", text)] == [
        ("A", "== A\n\nExample\n```\ncode\n```")
    ]


def test_list_items_take_adjacent_lines_and_continued_blocks() -> None:
    text = "== A\n\n* item\n== not a title\n+\n\n== attached\n\n== B\n\nb\n"
    assert ranges(text) == [("A", 1, 7), ("B", 9, 11)]


def test_a_continuation_reaches_over_one_blank_line_only() -> None:
    assert headings("== A\n\n* item\n+\n\n\n== B\n\nb\n") == ["A", "B"]


def test_a_term_without_text_takes_the_next_line_after_blank_ones() -> None:
    # The term is a reference entry (test_asciidoc_entries.py), and "== its text" its text.
    assert headings("== A\n\nterm::\n\n== its text\n\n== B\n\nb\n") == ["A > term", "B"]


def test_a_verbatim_styled_paragraph_shows_its_comments_and_holds_no_title() -> None:
    text = "== A\n\n[source]\nputs 1\n// shown\n----\n== not a title\n\n== B\n\nb\n"
    assert headings(text) == ["A", "B"]
    assert visible(text)[4] == "// shown"


def test_a_tables_comment_lines_are_no_content_and_its_entries_define_nothing() -> None:
    text = "|===\n// note\n:name: Table\n|a\n|===\n\n== {name}\n\nb\n"
    assert visible(text)[1:3] == ["", ":name: Table"]
    assert headings(text)[-1] == "{name}"


def test_a_list_ends_at_a_blank_line_before_a_title() -> None:
    assert headings("== A\n\n* item\n\n== B\n\nb\n") == ["A", "B"]


def test_a_literal_paragraph_in_a_list_item_runs_to_a_blank_line() -> None:
    text = "== A\n\n* item\n+\n  $ run\n----\n== not a title\n\n== B\n\nb\n"
    assert headings(text) == ["A", "B"]


def test_conditional_directives_are_no_content() -> None:
    text = "== A\n\nifdef::env-github[]\ntext\nendif::[]\n"
    assert visible(text)[2:5] == ["", "text", ""]


def test_breadcrumb_titles_are_plain_words() -> None:
    text = (
        "= The `docshelf` *Guide*\n:product: DocShelf\n\nIntro.\n\n"
        "== Use xref:cli.adoc[the CLI] with _flags_ in {product} [[use]]\n\nbody\n"
    )
    assert headings(text) == [
        "The docshelf Guide",
        "The docshelf Guide > Use the CLI with flags in DocShelf",
    ]


def test_undefined_attribute_references_stay_as_written() -> None:
    assert headings("== Version {page-version} {vbar} {empty}notes\n\nx\n") == [
        "Version {page-version} | notes"
    ]


def test_line_ranges_count_the_files_own_lines_whatever_their_endings() -> None:
    text = "= Doc\r\n:toc:\r\n\r\nIntro.\r\n\r\n== Part\r\n\r\nbody\r\n"
    assert ranges(text) == [("Doc", 1, 4), ("Doc > Part", 6, 8)]
    check(text)


def test_every_file_of_the_shared_tree_keeps_the_invariants(shared_data: Path) -> None:
    files = sorted((shared_data / TREE).rglob("*.adoc"))
    assert len(files) > 100
    titled = 0
    for path in files:
        chunks = check(path.read_text(encoding="utf-8"), str(path))
        titled += any(c.heading for c in chunks)
    assert titled > 90


@pytest.mark.parametrize("name", SETS)
def test_every_robustness_example_keeps_the_invariants(shared_data: Path, name: str) -> None:
    texts = examples(shared_data / "robustness" / name)
    assert len(texts) > 50
    for text in texts:
        check(text)
    check("\n".join(texts))


# Lines of AsciiDoc for the generated documents: titles, underlines, delimiters of every block,
# block metadata, list lines, header lines, directives and text that only almost is one of them.
PIECES = (
    *("= Doc", "== Section", "=== Sub", "====== Six", "======= Seven", "## Hash", "# Top"),
    *("== Closed ==", "== `code` *bold* {attr} [[anchor]]", "==No space", "Title", "ab"),
    *("=====", "-----", "~~~~~", "^^^^^", "+++++", "==", "--", "~~", "+"),
    *("----", "....", "====", "****", "____", "++++", "|===", ",===", ":===", "!===", "////"),
    *("------", "```", "```ruby", "````", "///", "//// ", "---- "),
    *("[discrete]", "[float]", "[#id]", "[[anchor]]", "[source,ruby]", "[comment]", "[verse]"),
    *("[literal]", "[NOTE]", "[[not an anchor]]", ".Block title", ". step", "..", "// comment"),
    *(":attr: value", ":attr: a \\", "  continued", ":!attr:", ":name: {attr} x", ":not entry"),
    *("* item", "** nested", "- dash", "1. one", "a. alpha", "ii) roman", "<1> callout"),
    *("term:: def", "term::", "Q;; A", "  indented", "\tTab", "    four"),
    *("Jane Doe", "v1.0, 2024", "ifdef::x[]", "endif::[]", "include::x.adoc[]"),
    *("image::a.png[]", "toc::[]", "'''", "<<<", "- - -", "NOTE: note", "> quote", "a|"),
    *("[source,java]", "[,kotlin]", "[tabs]", "======", "Java::", "[TIP]", "include-code::./A[]"),
    *("xref:a.adoc#b[Text]", "link:https://x.org[X]", "javadoc:a.B[]", "{url}a[b]", "[[id]]x"),
    *("<<id,Text>>", "<<id>>", "**strong**", "anchor:a[]", "indexterm:[a]", "`+<a>+` +", "```"),
)
JOINTS = ("\n", "\n", "\n", "\n\n", "\r\n", "\r", "", " ")


@st.composite
def asciidoc_documents(draw: st.DrawFn) -> str:
    piece = st.one_of(st.sampled_from(PIECES), st.sampled_from(PIECES), st.text(max_size=12))
    out: list[str] = []
    for p in draw(st.lists(piece, max_size=40)):
        out += [p, draw(st.sampled_from(JOINTS))]
    return "".join(out)


@given(asciidoc_documents())
def test_every_invariant_holds_on_generated_asciidoc(text: str) -> None:
    check(text, "gen.adoc")


# Inputs of about SHAPE_SIZE characters that a scanner of lines could take quadratic time on.
N = SHAPE_SIZE
SHAPES = {
    "nested delimiters of growing length": "".join(
        "=" * k + "\n" for k in range(4, int((2 * N) ** 0.5))
    ),
    "delimiters that open and close": "----\n....\n" * (N // 10),
    "title of markup characters": "== " + "*_`#+^~[<{" * (N // 10),
    "title of blanks before its closing markers": "== a" + " " * N + "b ==\n",
    "title of anchors": "== t" + " [[a" * (N // 4) + "]]\n",
    "underlined titles": "ab\n--\n" * (N // 6),
    "underline of a long line": "a" * (N // 2) + "\n" + "=" * (N // 2) + "\n",
    "attribute line of brackets": "[" * N + "]\n== t\n",
    "anchor line of brackets": "[[" + "a" * N + "]\n",
    "description marks": "a" + ":x" * (N // 2) + "::\n",
    "list markers": "*" * (N // 2) + " x\n" + ". " * (N // 4) + "\n",
    "continued list items": "* a\n+\n" * (N // 6),
    "literal paragraphs in list items": "* a\n+\n  lit\n" * (N // 12),
    "attribute value continued": ":a: b \\\n" + "  c \\\n" * (N // 6),
    "header of attribute entries": "= T\n" + ":a: b\n" * (N // 6),
    "attribute references in a title": ":a: " + "x" * 400 + "\n\n== " + "{a}" * (N // 3),
    "comment lines": "// c\n" * (N // 5),
    "many sections": "== h\n\nx\n" * (N // 9),
    "macro targets of colons": "a:" * (N // 2) + "[x]\n",
    "macro texts of brackets": "a:b" + "]" * (N // 2) + "[" * (N // 2) + "\n",
    "cross references that never close": "<<a," * (N // 4) + "\n",
    "strong marks that never close": "**a" * (N // 3) + "\n",
    "listings of source": "[source,java]\n----\nx\n----\n" * (N // 30),
    "backticks in a listing": "----\n" + "```\n" * (N // 4) + "----\n",
    "tabs": "[tabs]\n======\nJava::\n+\n----\nx\n----\n======\n" * (N // 40),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_pathological_shapes_chunk_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    split_asciidoc("shape.adoc", text)
    assert time.perf_counter() - started < SHAPE_SECONDS
    check(text, "shape.adoc")
