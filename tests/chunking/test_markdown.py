from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import Chunk, embedding_input, split_markdown
from docshelf.chunking.markdown import hard_wrap
from docshelf.config import MAX_CHUNK_BYTES, OVERLAP_BYTES
from tests.chunking.invariants import check_markdown


def headings(text: str) -> list[str]:
    return [c.heading for c in split_markdown("doc.md", text)]


def test_runbook_shell_comment_in_a_code_fence_is_content_not_a_heading() -> None:
    text = (
        "# Runbook\n\n## Restart\n\nRun:\n\n```bash\n# stop the payment worker first\n"
        "systemctl stop payments\n## not a heading either\n```\n\nThen check the logs.\n"
    )
    chunks = split_markdown("runbook.md", text)
    assert [c.heading for c in chunks] == ["Runbook > Restart"]
    assert "# stop the payment worker first" in chunks[0].content
    assert "Then check the logs." in chunks[0].content


def test_fence_closes_only_on_the_same_character_at_least_as_long() -> None:
    text = "# A\n\n````md\n```\n# inside\n~~~~\n````` trailing\n````\n\n# B\n\nbody\n"
    assert headings(text) == ["A", "B"]


def test_unclosed_fence_runs_to_the_end_of_the_file() -> None:
    assert headings("# A\n\ntext\n\n```\n# never a heading\n\n## nor this\n") == ["A"]


def test_fence_opened_after_a_list_marker_hides_its_comments() -> None:
    text = "1. ```bash\n   # restart the worker\n   ```\n\n# Real\n\nbody\n"
    assert headings(text) == ["", "Real"]


def test_a_closing_line_indented_four_columns_deeper_is_code() -> None:
    text = "```\n    ```\n# still code\n```\n\n# After\n\nbody\n"
    assert headings(text) == ["", "After"]


def test_nested_fence_closes_at_its_own_indentation() -> None:
    text = "!!! note\n\n    ```sh\n    # comment\n    ```\n\n# After\n\nbody\n"
    assert headings(text) == ["", "After"]


def test_heading_like_lines_in_html_blocks_are_html() -> None:
    text = "<!--\n# commented out\n-->\n\n<details>\n# inside details\n\n# Real\n\nbody\n"
    assert headings(text) == ["", "Real"]


def test_a_fence_line_inside_an_html_block_opens_no_fence() -> None:
    assert headings("<div>\n```\n\n# After the div\n\nbody\n") == ["", "After the div"]


def test_backtick_line_with_a_backtick_in_its_info_string_is_not_a_fence() -> None:
    assert headings("# A\n\n```inline`code```\n\n# B\n\nbody\n") == ["A", "B"]


def test_heading_directly_followed_by_a_subheading_is_dropped() -> None:
    chunks = split_markdown("services.md", "# Services\n\n## Checkout\n\nOwned by team Payments.\n")
    assert [(c.heading, c.content) for c in chunks] == [
        ("Services > Checkout", "## Checkout\n\nOwned by team Payments.")
    ]
    assert (chunks[0].start_line, chunks[0].end_line) == (3, 5)


def test_breadcrumb_pops_deeper_levels_and_skipped_levels_leave_no_empty_crumb() -> None:
    text = "# A\n\na\n\n### C\n\nc\n\n## B\n\nb\n\n#### D\n\nd\n\n# E\n\ne\n"
    assert headings(text) == ["A", "A > C", "A > B", "A > B > D", "E"]


def test_atx_headings_follow_commonmark() -> None:
    text = (
        "   # Three spaces ##   \nx\n"
        "    # four spaces is code\nx\n"
        "#hashtag is text\nx\n"
        "####### seven is text\nx\n"
        "## Closing sequence needs a blank #\nx\n"
        "##\ttab\nx\n"
        "### foo#\nx\n"
    )
    assert headings(text) == [
        "Three spaces",
        "Three spaces > Closing sequence needs a blank",
        "Three spaces > tab",
        "Three spaces > tab > foo#",
    ]


def test_an_empty_atx_heading_starts_a_section_without_a_crumb() -> None:
    assert headings("# A\n\n## \n\nbody\n") == ["A"]


def test_setext_headings_count() -> None:
    text = "Title\n=====\n\nintro\n\nPart one\n--------\n\nbody\n"
    chunks = split_markdown("doc.md", text)
    assert [(c.heading, c.start_line, c.end_line) for c in chunks] == [
        ("Title", 1, 4),
        ("Title > Part one", 6, 9),
    ]


def test_multiline_setext_title_joins_its_paragraph() -> None:
    assert headings("Long\ntitle\n===\n\nbody\n") == ["Long title"]


def test_thematic_break_table_row_and_list_item_are_not_setext_headings() -> None:
    text = (
        "# Doc\n\ntext\n\n---\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n---\n\n"
        "a | b\n--- | ---\n1 | 2\n---\n\n"
        "- item\n---\n\n"
        "1. step\n===\n\n"
        "> quote\n---\n"
    )
    assert headings(text) == ["Doc"]


def test_front_matter_is_not_content_and_its_title_tops_the_breadcrumb() -> None:
    text = '---\ntitle: "Checkout service"\nowner: payments\n---\n\nIntro.\n\n## Owners\n\nTeam.\n'
    chunks = split_markdown("checkout.md", text)
    assert [(c.heading, c.content, c.start_line) for c in chunks] == [
        ("Checkout service", "Intro.", 6),
        ("Checkout service > Owners", "## Owners\n\nTeam.", 8),
    ]


def test_front_matter_title_yields_to_a_level_one_heading() -> None:
    assert headings("---\ntitle: Meta\n---\n# Real\n\nbody\n") == ["Real"]


def test_unclosed_front_matter_is_content() -> None:
    chunks = split_markdown("doc.md", "---\ntitle: x\n\nbody\n")
    assert "title: x" in chunks[0].content


def test_crlf_and_lone_cr_become_lf_and_lines_count_in_the_normalised_file() -> None:
    crlf = "# A\r\n\r\nline one\r\nline two\r\n\r\n## B\r\n\r\nthree\r\n"
    cr = crlf.replace("\r\n", "\r")
    lf = crlf.replace("\r\n", "\n")
    assert split_markdown("x.md", crlf) == split_markdown("x.md", lf)
    assert split_markdown("x.md", cr) == split_markdown("x.md", lf)
    chunks = split_markdown("x.md", crlf)
    assert [(c.content, c.start_line, c.end_line) for c in chunks] == [
        ("# A\n\nline one\nline two", 1, 4),
        ("## B\n\nthree", 6, 8),
    ]
    assert all("\r" not in c.content for c in chunks)


def test_a_10kb_line_of_multibyte_characters_is_wrapped_at_character_boundaries() -> None:
    line = "日本語のドキュメント" * 350  # 3,500 characters, 10,500 bytes
    chunks = split_markdown("ja.md", f"# 見出し\n\n{line}\n")
    assert all(len(c.content.encode()) <= MAX_CHUNK_BYTES for c in chunks)
    assert "".join(c.content for c in chunks) == line
    assert all(c.start_line == c.end_line == 3 and c.heading == "見出し" for c in chunks)


def test_a_heading_whose_first_line_does_not_fit_beside_it_is_no_chunk_of_its_own() -> None:
    long_line = "Retry " * 332  # 1,992 bytes: fits alone, not beside the heading
    text = f"# Checkout\n\n## Retries\n\n{long_line}\n\nSecond paragraph.\n"
    chunks = split_markdown("checkout.md", text)
    assert [c.content for c in chunks] == [long_line, "Second paragraph."]
    assert all(c.heading == "Checkout > Retries" for c in chunks)
    check_markdown("checkout.md", text, chunks)


def test_a_long_run_of_blanks_gives_no_blank_chunk() -> None:
    for blanks in (" " * 5000, "\u3000" * 3000, "\t" * 5000):
        text = f"x{blanks}y"
        chunks = split_markdown("x.md", text)
        assert [c.content.strip() for c in chunks if c.content.strip()] == ["x", "y"]
        assert all(c.content.strip() for c in chunks)
        check_markdown("x.md", text, chunks)


def test_lone_surrogates_are_counted_not_fatal() -> None:
    text = "# T\n\n" + "a\ud800 " * 600
    chunks = split_markdown("x.md", text)
    assert chunks
    check_markdown("x.md", text, chunks)


def test_a_thematic_break_opening_a_file_is_not_front_matter() -> None:
    text = "---\n\nWelcome to the guide.\n\n# Install\n\nRun it.\n\n...\n\n# Use\n\nCall it.\n"
    assert headings(text) == ["", "Install", "Use"]


def test_hard_wrap_prefers_a_space_in_the_second_half() -> None:
    words = "word " * 1000
    pieces = hard_wrap(words, 2000)
    assert "".join(pieces) == words
    assert all(p.endswith(" ") for p in pieces[:-1])
    assert all(len(p.encode()) <= 2000 for p in pieces)


def test_long_section_is_packed_with_whole_line_overlap_that_never_repeats_the_heading() -> None:
    body = "\n".join(f"Step {i}: restart the payment worker and wait for it." for i in range(200))
    text = f"# Runbook\n\n## Restart\n\n{body}\n\n## Next\n\nshort\n"
    chunks = split_markdown("runbook.md", text)
    restart = [c for c in chunks if c.heading == "Runbook > Restart"]
    assert len(restart) > 3
    for prev, nxt in pairwise(restart):
        assert nxt.start_line <= prev.end_line  # they overlap
        shared = "\n".join(prev.content.split("\n")[-(prev.end_line - nxt.start_line + 1) :])
        assert nxt.content.startswith(shared)
        assert 0 < len(shared.encode()) <= OVERLAP_BYTES
        assert not nxt.content.startswith("## ")
    assert chunks[-1].content == "## Next\n\nshort"
    check_markdown("runbook.md", text, chunks)


def test_embedding_input_prefixes_path_and_heading() -> None:
    chunk = Chunk("services.md", 0, "Services > Checkout", "Owned by Payments.", 3, 3)
    assert embedding_input(chunk) == "services.md\nServices > Checkout\n\nOwned by Payments."
    bare = Chunk("notes.md", 0, "", "text", 1, 1)
    assert embedding_input(bare) == "notes.md\n\ntext"


def test_byte_order_mark_does_not_hide_the_first_heading() -> None:
    assert headings("\ufeff# Title\n\nbody\n") == ["Title"]


def test_empty_and_blank_files_give_no_chunks() -> None:
    assert split_markdown("a.md", "") == []
    assert split_markdown("a.md", "\n \n\t\n") == []
    assert split_markdown("a.md", "# Only a heading\n") == []


# --- properties --------------------------------------------------------------------------------

LINES = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "# Title",
            "## Sub",
            "### Deep #",
            "   #### Indented",
            "    # code",
            "#nospace",
            "```",
            "```bash",
            "````",
            "~~~",
            "~~~~ python",
            "  ```",
            "# comment inside code?",
            "===",
            "---",
            "- item",
            "1. step",
            "| a | b |",
            "|---|---|",
            "> quote",
            "<div>",
            "***",
            "text line",
            "Ünïcödé 日本語 🚀",
            "---",
            "title: Front",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
    st.builds(
        lambda n, c: c * n, st.integers(1_000, 3_000), st.sampled_from(["a", "é", "日", "🚀 "])
    ),
)


@st.composite
def markdown_docs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINES, max_size=60))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return newline.join(lines)


@given(markdown_docs())
def test_every_invariant_holds_on_generated_markdown(text: str) -> None:
    chunks = split_markdown("gen.md", text)
    check_markdown("gen.md", text, chunks)
    assert split_markdown("gen.md", text) == chunks  # deterministic


@given(st.text(max_size=3_000))
def test_every_invariant_holds_on_arbitrary_text(text: str) -> None:
    check_markdown("any.md", text, split_markdown("any.md", text))


@st.composite
def documents_with_known_fences(draw: st.DrawFn) -> str:
    """Blocks of prose, real headings and fences whose contents look like headings."""
    out: list[str] = []
    for n in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["heading", "prose", "fence", "setext"]))
        if kind == "heading":
            out.append("#" * draw(st.integers(1, 6)) + f" real {n}")
        elif kind == "setext":
            out.append(f"real {n}\n" + draw(st.sampled_from(["===", "---"])))
        elif kind == "prose":
            out.append(draw(st.sampled_from(["Some prose.", "More\nprose.", "- a list"])))
        else:
            char = draw(st.sampled_from("`~"))
            marker = char * draw(st.integers(3, 6))
            inner = draw(
                st.lists(
                    st.sampled_from(
                        [
                            "# fenced",
                            "## fenced",
                            "fenced\n===",
                            "fenced\n---",
                            char * 3 + " not closing",
                            ("~" if char == "`" else "`") * len(marker),
                            "",
                        ]
                    ),
                    max_size=6,
                )
            )
            shorter = char * (len(marker) - 1) if len(marker) > 3 else ""
            out.append("\n".join([marker + "info", *inner, shorter, marker]))
        out.append("body")
    return "\n\n".join(out)


@given(documents_with_known_fences())
def test_no_heading_is_ever_reported_from_inside_a_fence(text: str) -> None:
    chunks = split_markdown("fenced.md", text)
    assert all("fenced" not in c.heading for c in chunks)
    assert all(
        part.startswith("real ") for c in chunks if c.heading for part in c.heading.split(" > ")
    )
    check_markdown("fenced.md", text, chunks)
