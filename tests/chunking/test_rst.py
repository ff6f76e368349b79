"""The reStructuredText chunker: one test per rule of docutils' section titles, the invariants on
the shared Sphinx trees (requests, pytest), on generated reStructuredText, on the robustness
corpora, and linear time on pathological shapes."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import Chunk
from docshelf.chunking.rst import looks_like_rst, outline_rst, split_rst
from tests.chunking.invariants import check_outline, markdown_lines
from tests.chunking.test_robustness import SETS, examples

TREES = ["formats/requests/docs", "formats/pytest/doc"]
# Inputs of this many characters: a linear chunker cuts each in milliseconds, a quadratic one
# takes minutes.
SHAPE_SIZE = 200_000
# Far above a linear time on a shared, slow machine, far below a quadratic one.
SHAPE_SECONDS = 2.0


# The words Sphinx writes for a directive, which its line may show beside the file's own words.
GENERATED_WORDS = frozenset(
    {
        "added", "changed", "removed", "deprecated", "since", "in", "version", "attention",
        "caution", "danger", "error", "hint", "important", "note", "tip", "warning", "see",
        "also", "todo",
    }
)  # fmt: skip
FENCE_LINE = re.compile(r" *`{3,}")


def rewritten(shown: str, own: str) -> bool:
    """Whether a visible line that is not the file's line with parts taken out is one the
    chunker may write: a fence on a blank line (a literal block's) or on a directive's line
    (with its language), or a directive line's words with the label Sphinx gives them."""
    if not own.strip():
        return FENCE_LINE.fullmatch(shown) is not None
    if not own.lstrip().startswith(".."):
        return False
    words = set(re.findall(r"\w+", shown.casefold())) - GENERATED_WORDS
    return words <= set(re.findall(r"\w+", own.casefold()))


def check(path: str, text: str) -> list[Chunk]:
    """check_outline on the outline and chunks of `text`, once its rewritten lines (fences and
    a directive's words, which check_outline's rule of parts taken out does not know) are
    checked here; returns the chunks."""
    found, chunks = outline_rst(text), split_rst(path, text)
    own = markdown_lines(text)
    shown = found.text.split("\n")
    assert len(shown) == len(own), "the visible text keeps every line of the file"
    written = [
        line if not is_subsequence(line, mine) and rewritten(line, mine) else mine
        for line, mine in zip(shown, own, strict=True)
    ]
    if written != own:
        # The file as the chunker may rewrite it (a byte order mark kept through prepare()).
        text = "\ufeff" + "\n".join(written)
    check_outline(path, text, found, chunks)
    return chunks


def is_subsequence(part: str, whole: str) -> bool:
    it = iter(whole)
    return all(ch in it for ch in part)


def cut(text: str) -> list[tuple[str, str, int, int]]:
    return [(c.heading, c.content, c.start_line, c.end_line) for c in check("doc.rst", text)]


def headings(text: str) -> list[str]:
    return [c.heading for c in check("doc.rst", text)]


def visible(text: str) -> list[str]:
    return outline_rst(text).text.split("\n")


def test_an_underlined_title_starts_a_section_with_exact_lines() -> None:
    text = "Install\n=======\n\nRun pip.\n\nUpgrade\n=======\n\nRun pip -U.\n"
    assert cut(text) == [
        ("Install", "Install\n=======\n\nRun pip.", 1, 4),
        ("Upgrade", "Upgrade\n=======\n\nRun pip -U.", 6, 9),
    ]


def test_an_overlined_title_starts_at_its_overline() -> None:
    text = "intro\n\n=========\n Overview\n=========\n\nbody\n"
    assert cut(text) == [
        ("", "intro", 1, 1),
        ("Overview", "=========\n Overview\n=========\n\nbody", 3, 7),
    ]


def test_levels_follow_the_first_appearance_of_each_style() -> None:
    # An overlined "=" is a style of its own, above the plain "=" that comes next.
    text = "====\nDoc\n====\n\nd\n\nA\n=\n\na\n\nB\n-\n\nb\n\nC\n=\n\nc\n"
    assert headings(text) == ["Doc", "Doc > A", "Doc > A > B", "Doc > C"]


def test_a_title_that_would_skip_a_level_is_no_section() -> None:
    # "~" is the third style; under the top-level D it would skip the second level.
    text = "A\n=\n\nB\n-\n\nC\n~\n\nc\n\nD\n=\n\nE\n~\n\ne\n"
    assert headings(text) == ["A > B > C", "D"]
    assert cut(text)[-1][1] == "D\n=\n\nE\n~\n\ne"
    # A new style is the next level down: under the top-level C, a third style is no section.
    text = "A\n=\n\na\n\nB\n-\n\nb\n\nC\n=\n\nc\n\nD\n~\n\nd\n"
    assert headings(text) == ["A", "A > B", "C"]


def test_a_short_underline_counts_from_four_characters() -> None:
    assert headings("Long title\n----\n\nbody\n") == ["Long title"]
    assert headings("Long title\n---\n\nbody\n") == [""]  # text: a paragraph of two lines
    assert headings("ab\n--\n\nbody\n") == ["ab"]  # as wide as the title


def test_overline_and_underline_must_match() -> None:
    assert headings("=====\nTitle\n-----\n\nbody\n") == [""]
    assert headings("=====\nTitle\n======\n\nbody\n") == [""]


def test_a_transition_is_not_a_title() -> None:
    text = "Intro\n=====\n\nfirst\n\n--------\n\nsecond\n"
    assert cut(text) == [("Intro", "Intro\n=====\n\nfirst\n\n--------\n\nsecond", 1, 8)]


def test_a_short_adornment_alone_is_text_and_may_itself_be_a_title() -> None:
    # docutils: "===" is too short to be an overline, so it is the title of the "===" below.
    assert headings("===\n===\n\nbody\n") == ["==="]


def test_only_the_first_line_of_a_text_block_can_be_a_title() -> None:
    assert headings("para\nTitle\n=====\n\nbody\n") == [""]


def test_a_title_line_may_not_be_indented_nor_its_underline() -> None:
    assert headings("intro\n\n  Quoted\n  ======\n\nbody\n") == [""]  # a block quote
    assert headings("Term\n   =====\n\nbody\n") == [""]  # a definition list


def test_literal_blocks_never_hold_titles() -> None:
    text = "Top\n===\n\nExample::\n\n    Title\n    =====\n\n::\n\n    Other\n    -----\n\nend\n"
    assert headings(text) == ["Top"]
    quoted = "Top\n===\n\nx::\n\n> Title\n> =====\n\nend\n"
    assert headings(quoted) == ["Top"]
    # Without "::" (or with it escaped) no literal block follows, quoted or indented.
    after = '\n\n"Quoted" title\n==============\n\nbody\n'
    assert headings("para" + after) == ["", '"Quoted" title']
    assert headings("para \\::" + after) == ["", '"Quoted" title']
    assert headings("para::" + after) == [""]


def test_directive_bodies_are_content_never_titles() -> None:
    text = (
        "Top\n===\n\n.. code-block:: rst\n\n   Inner\n   =====\n\n"
        ".. note::\n\n   Also inner\n   ----------\n"
    )
    shown = "Top\n===\n\n```rst\n\n   Inner\n   =====\n```\nNote\n\n   Also inner\n   ----------"
    assert cut(text) == [("Top", shown, 1, 12)]


def test_comments_are_hidden_and_never_titles() -> None:
    text = "Top\n===\n\n.. a comment\n\n   Hidden\n   ======\n\nkept\n\n..\n\n   quoted\n"
    assert visible(text) == [
        "Top",
        "===",
        "",
        "",
        "",
        "",
        "",
        "",
        "kept",
        "",
        "",
        "",
        "   quoted",
        "",
    ]
    assert headings(text) == ["Top"]


def test_hyperlink_targets_are_hidden() -> None:
    text = ".. _install:\n\nInstall\n=======\n\nbody\n\n.. _pip: https://pip.pypa.io\n"
    assert visible(text)[0] == "" and visible(text)[-2] == ""
    assert cut(text) == [("Install", "Install\n=======\n\nbody", 3, 6)]


def test_substitution_definitions_are_hidden_and_never_titles() -> None:
    text = "Top\n===\n\n.. |name| replace:: Requests\n\n   =====\n\nbody\n"
    assert headings(text) == ["Top"]
    assert visible(text)[3:6] == ["", "", ""]


def test_field_lists_at_the_top_are_hidden_and_later_ones_kept() -> None:
    text = ":orphan:\n:tocdepth: 2\n\nTitle\n=====\n\n:param x: kept\n"
    assert visible(text)[:2] == ["", ""]
    assert cut(text) == [("Title", "Title\n=====\n\n:param x: kept", 4, 7)]


def test_list_items_tables_doctests_and_line_blocks_hold_no_titles() -> None:
    text = (
        "Top\n===\n\n- item\n------\n\n* item\n  -----\n\n1. first\n2. second\n\n"
        ">>> x\n=====\n\n| line\n------\n\n"
        "=====  =====\nA      B\n=====  =====\nTitle  x\n=====  =====\n\n"
        "+-----+\n| T   |\n+=====+\n| x   |\n+-----+\n"
    )
    assert headings(text) == ["Top"]


def test_an_enumerated_title_is_a_title_when_no_list_follows() -> None:
    assert headings("1. Intro\n========\n\nbody\n") == ["1. Intro"]


def test_an_option_without_a_description_is_text() -> None:
    assert headings("--verbose\n---------\n\nbody\n") == ["--verbose"]
    assert headings("-v  be loud\n----------\n\nbody\n") == [""]


def test_breadcrumbs_run_from_the_document_title_down() -> None:
    text = "Guide\n#####\n\nintro\n\nSetup\n*****\n\nLinux\n=====\n\nsteps\n"
    assert headings(text) == ["Guide", "Guide > Setup > Linux"]


def test_titles_in_breadcrumbs_are_plain_words() -> None:
    titles = [
        "``pytest.raises`` and :ref:`fixtures <fixtures-ref>`",
        "`Requests <https://requests.rtfd.io>`_ is *simple*, **fast**",
        ":class:`~_pytest.nodes.Node` and :func:`!print`",
        "A |name| and an escaped backslash\\\\",
        "A trailing escape\\",
        ":pep:`8` style",
    ]
    text = "".join(f"{t}\n{'=' * len(t)}\n\nbody\n\n" for t in titles)
    assert headings(text) == [
        "pytest.raises and fixtures",
        "Requests is simple, fast",
        "Node and print",
        "A name and an escaped backslash\\",
        "A trailing escape",
        "PEP 8 style",
    ]


def test_a_title_of_markup_alone_keeps_its_characters() -> None:
    assert headings("``\n==\n\nbody\n") == ["``"]


def test_looks_like_rst_on_a_django_style_text_file() -> None:
    django = (
        "=====================\nHow to install Django\n=====================\n\n"
        "This document will get you up and running with Django.\n\n"
        "Install Python\n==============\n\nBeing a Python web framework, Django requires Python.\n"
    )
    assert looks_like_rst(django)
    assert looks_like_rst("Release notes\n----------------------------------------\n\ntext\n")


def test_looks_like_rst_is_false_on_plain_prose() -> None:
    prose = (
        "Dear team,\n\nthe release went out this morning. Thanks to everyone who helped.\n\n"
        "Regards,\n--\nAlex\n"
    )
    assert not looks_like_rst(prose)
    assert not looks_like_rst("A sentence much longer than its underline\n====\n\nbody\n")
    assert not looks_like_rst("\n" * 40 + "x\n" * 40 + "Late title\n==========\n")


@pytest.mark.parametrize("tree", TREES)
def test_real_docs_keep_every_invariant(shared_data: Path, tree: str) -> None:
    root = shared_data / tree
    files = sorted(root.rglob("*.rst"))
    assert len(files) >= 15
    for file in files:
        path = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        chunks = check(path, text)
        found = outline_rst(text)
        bodies = "".join(found.text[s.body_start : s.end] for s in found.sections)
        # A page of titles and markup alone (a toctree, an include) shows nothing to cut.
        assert chunks or not bodies.strip(), f"{path} gave no chunks"


# Lines reStructuredText is made of, glued by the property test below.
PIECES = (
    "Title",
    "An ``inline`` :ref:`title <target>`",
    "1. Intro",
    "(a) item",
    "- item",
    "* item",
    ":orphan:",
    ":field: value",
    "--option",
    "-v  verbose",
    ">>> x = 1",
    "| line block",
    "+-----+-----+",
    "| a   | b   |",
    "=====  =====",
    "a      b",
    ".. note:: text",
    ".. code-block:: python",
    "   .. code:: sh",
    "   .. note::",
    ".. versionadded:: 5.1",
    ".. admonition:: Title",
    ".. option:: -c, --concurrency",
    ".. py:function:: send(name, args=None)",
    "   .. py:method:: f(x)",
    ".. setting:: broker_url",
    ".. autoclass:: Celery",
    ".. automodule:: celery",
    "   :type: int",
    ".. toctree::",
    "   :hidden:",
    "   Title <doc>",
    ".. include:: x.rst",
    "- Example::",
    "```",
    ":class:`~a.B` and :ref:`t <x>`",
    "`link <https://x>`_ and `name`_",
    ":pep:`8`",
    ".. _target:",
    ".. comment",
    "..",
    ".. |name| replace:: x",
    ".. [1] footnote",
    "__ http://example.com",
    "::",
    "Example::",
    "escaped \\::",
    "  indented",
    "    code",
    "\tx",
    "日本語のタイトル",
    "e\u0301te\u0301",
    "trailing \\",
    "\ufeff",
    "\x0c",
)
ADORNMENT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def rst_documents() -> st.SearchStrategy[str]:
    adornment = st.builds(
        lambda c, n, indent: indent + c * n,
        st.sampled_from(ADORNMENT),
        st.integers(1, 12),
        st.sampled_from(["", "", "", " "]),
    )
    line = st.one_of(
        adornment,
        adornment,
        st.sampled_from(PIECES),
        st.just(""),
        st.just("   "),
        st.text(max_size=12),
    )
    joint = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])
    return st.lists(st.tuples(line, joint), max_size=40).map(
        lambda parts: "".join(a + b for a, b in parts)
    )


@given(rst_documents())
def test_every_invariant_holds_on_generated_rst(text: str) -> None:
    chunks = check("gen.rst", text)
    assert split_rst("gen.rst", text) == chunks  # deterministic
    assert outline_rst(text) == outline_rst(text)


@pytest.mark.parametrize("name", SETS)
def test_every_robustness_example_chunks_cleanly(shared_data: Path, name: str) -> None:
    texts = examples(shared_data / "robustness" / name)
    assert len(texts) > 50
    for text in texts:
        check("example.rst", text)
    check("all.rst", "\n".join(texts))


SHAPES = {
    "a megabyte-scale title and underline": "x" * SHAPE_SIZE + "\n" + "=" * SHAPE_SIZE + "\n\nb\n",
    "lines of one adornment character": "=\n" * (SHAPE_SIZE // 2),
    "lines of long adornments": "----\n" * (SHAPE_SIZE // 5),
    "overlined titles": "====\nx\n====\n" * (SHAPE_SIZE // 12),
    "a field marker of colons": ":" + "a:" * (SHAPE_SIZE // 2) + "`\n",
    "a list of options never ended": "-a, " * (SHAPE_SIZE // 4) + "!\n",
    "an unclosed option argument": "-a <" + "b" * SHAPE_SIZE + "\n",
    "a long roman enumerator": "i" * SHAPE_SIZE + ".\n",
    "a long arabic enumerator": "1" * SHAPE_SIZE + ". x\ny\n",
    "role names in a title": ":a" * (SHAPE_SIZE // 2) + "\n=====\n\nb\n",
    "backquotes in a title": "`" * SHAPE_SIZE + "\n=====\n\nb\n",
    "wide characters in a title": "日" * SHAPE_SIZE + "\n=====\n\nb\n",
    "a simple table without its bottom": "=== ===\n" + "x\n" * (SHAPE_SIZE // 2),
    "a directive name of many parts": ".. " + "a:" * (SHAPE_SIZE // 2) + "\n",
    "an unclosed footnote label": ".. [" + "a" * SHAPE_SIZE + "\n",
    "backslashes before a literal marker": "x" + "\\" * SHAPE_SIZE + "::\n\n    code\n",
    "a quoted literal block": "x::\n\n" + "> a\n" * (SHAPE_SIZE // 4),
    "a long comment": ".. c\n" + "   x\n" * (SHAPE_SIZE // 4),
    "definition list items": "term\n  def\n" * (SHAPE_SIZE // 12),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_pathological_shapes_chunk_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    split_rst("shape.rst", text)
    looks_like_rst(text)
    assert time.perf_counter() - started < SHAPE_SECONDS
    # check_outline counts lines once per section: a tenth of the shape keeps it quick.
    check("shape.rst", text[: SHAPE_SIZE // 10])
