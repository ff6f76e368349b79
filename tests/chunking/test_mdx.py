"""The MDX chunker: one test per rule, the invariants over the mdx-js docs tree, the robustness
corpora and generated MDX, and the pathological shapes it must cut in linear time."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import Chunk
from docshelf.chunking.mdx import outline_mdx, split_mdx
from docshelf.chunking.outline import split_outline
from tests.chunking.invariants import check_outline
from tests.chunking.test_robustness import SETS, examples
from tests.conftest import SHARED_DATA

TREE = "formats/mdx-js/docs"
# As tests/chunking/test_fuzz.py: a linear chunker cuts each shape in milliseconds, a quadratic
# one takes minutes; the bound is far above a linear time on a shared, slow machine.
SHAPE_SIZE = 200_000
SHAPE_SECONDS = 2.0


def check(path: str, text: str) -> list[Chunk]:
    """The chunks of `text`, after checking them and the outline with check_outline, and that
    both are deterministic."""
    found, chunks = outline_mdx(text), split_mdx(path, text)
    assert outline_mdx(text) == found and split_mdx(path, text) == chunks
    check_outline(path, text, found, chunks)
    return chunks


def chunks_of(text: str) -> list[tuple[str, int, int, str]]:
    return [(c.heading, c.start_line, c.end_line, c.content) for c in check("page.mdx", text)]


def headings(text: str) -> list[str]:
    return [c.heading for c in check("page.mdx", text)]


def visible(text: str) -> list[str]:
    return outline_mdx(text).text.split("\n")


# --- ESM ---------------------------------------------------------------------------------------


def test_esm_statements_are_blank_lines_multi_line_ones_to_their_end() -> None:
    text = (
        "import {Note} from './note.jsx'\n"
        "import {\n  a,\n  b\n} from 'x'\n"
        "export const meta = {\n  title: 'Intro',\n  tags: ['a', '}']\n}\n"
        "\n# Intro\n\nBody.\n"
    )
    assert visible(text)[:10] == [""] * 10
    assert chunks_of(text) == [("Intro", 11, 13, "# Intro\n\nBody.")]


def test_a_blank_line_ends_esm_only_once_its_code_is_complete() -> None:
    text = "export const meta = {\n  a: 1,\n\n  b: `\n\n# not a heading\n`\n}\n\n# Real\n\nx\n"
    assert visible(text)[:9] == [""] * 9
    assert headings(text) == ["Real"]
    assert visible("import a from 'a'\n\nimport\n") == ["", "", "import", ""]


def test_import_continuing_a_paragraph_is_prose() -> None:
    text = "# A\n\nWe say\nimport x from 'y'\nin code.\n"
    assert chunks_of(text) == [("A", 1, 5, "# A\n\nWe say\nimport x from 'y'\nin code.")]


def test_indented_import_inside_jsx_is_prose() -> None:
    text = "# A\n\n<Note>\n  import this\n</Note>\n"
    assert visible(text)[3] == "  import this"


def test_a_fence_closes_on_a_run_at_least_as_long_at_any_indentation() -> None:
    text = "# A\n\n````md\n```\n# inside {kept}\n      ````\n\n# B {gone}\n\nbody\n"
    assert headings(text) == ["A", "B"]
    assert visible(text)[4:8] == ["# inside {kept}", "      ````", "", "# B "]


def test_esm_in_a_fence_is_code() -> None:
    text = "# Use\n\n```mdx\nimport {Chart} from './chart.js'\n\n# In a fence\n```\n"
    assert chunks_of(text) == [
        ("Use", 1, 7, "# Use\n\n```mdx\nimport {Chart} from './chart.js'\n\n# In a fence\n```")
    ]


# --- front matter ------------------------------------------------------------------------------


def test_yaml_front_matter_is_blank_and_its_title_tops_the_breadcrumb() -> None:
    text = "---\ntitle: 'Guide'\nauthor: me\n---\n\nIntro.\n\n## Install\n\nRun it.\n"
    assert visible(text)[:4] == [""] * 4
    assert chunks_of(text) == [
        ("Guide", 6, 6, "Intro."),
        ("Guide > Install", 8, 10, "## Install\n\nRun it."),
    ]


def test_toml_front_matter_is_blank_and_its_title_tops_the_breadcrumb() -> None:
    text = '+++\ntitle = "Toml page"\n+++\n\n## Install\n\nRun it.\n'
    assert visible(text)[:3] == [""] * 3
    assert headings(text) == ["Toml page > Install"]


# --- JSX and expressions -----------------------------------------------------------------------


def test_jsx_tags_leave_the_visible_text_but_their_text_attributes_stay() -> None:
    text = '# A\n\n<Card title="Hello" href={url} {...rest}\n  label="Go" />\n'
    assert visible(text)[2:4] == ["Hello", "Go"]


def test_expressions_and_comments_leave_the_visible_text() -> None:
    text = (
        "# A\n\nIn {year}, it snowed. {/* more */}\n\n"
        "{\n  props.items.map(function (x) {\n    return x\n  })\n}\nafter\n"
    )
    assert visible(text)[2:10] == ["In , it snowed. ", "", "", "", "", "", "", "after"]


def test_braces_and_angles_in_code_and_link_destinations_are_text() -> None:
    text = (
        "# A\n\nUse `{a}` and `` <b> `` or [x](https://x.org/{id}), not {b}.\n\n~~~\n{c} <d>\n~~~"
    )
    assert visible(text)[2] == "Use `{a}` and `` <b> `` or [x](https://x.org/{id}), not ."
    assert visible(text)[5] == "{c} <d>"


def test_escaped_braces_and_lone_angles_are_text() -> None:
    assert visible("# A\n\n\\{x} and 1 < 2 and <3\n")[2] == "\\{x} and 1 < 2 and <3"
    # There are no HTML blocks in MDX: "<?" starting a line hides no heading below it.
    assert headings("<?x\n# B\n\nbody\n") == ["", "B"]


def test_an_expression_ends_at_its_own_brace_past_strings_templates_and_comments() -> None:
    text = "# A\n\nx {'}' + `}${'}'}` /* } */} y\n"
    assert visible(text)[2] == "x  y"


def test_a_construct_that_does_not_close_is_text() -> None:
    assert visible("# A\n\nopen {brace and <Tag attr='x\n\nnext\n")[2] == (
        "open {brace and <Tag attr='x"
    )


def test_html_comments_are_taken_out_a_line_of_them_ending_a_paragraph() -> None:
    text = "<!-- draft -->\n\n# T\n\nx <!-- inline --> y\n"
    assert chunks_of(text) == [("T", 3, 5, "# T\n\nx  y")]
    assert headings("# A\n\ntext\n<!-- note -->\n---\n\nmore\n") == ["A"]


# --- headings ----------------------------------------------------------------------------------


def test_a_heading_between_jsx_tags_is_a_heading() -> None:
    text = '<Tabs>\n<TabItem value="a">\n## Install\n\nRun it.\n</TabItem>\n</Tabs>\n'
    assert chunks_of(text) == [("Install", 3, 5, "## Install\n\nRun it.")]


def test_an_indented_heading_inside_a_jsx_block_is_a_heading() -> None:
    text = '<div className="card">\n    ## New: MDX 3!\n\n    Nothing big.\n</div>\n'
    assert headings(text) == ["New: MDX 3!"]


def test_a_heading_like_line_inside_an_expression_is_code() -> None:
    assert headings("# A\n\n{`\n# not a heading\n`}\n\nbody\n") == ["A"]


def test_a_heading_inside_jsx_text_on_its_line_is_prose() -> None:
    assert headings("# A\n\n<Note>## not a heading</Note>\n") == ["A"]


def test_a_tag_line_ends_a_paragraph_so_a_break_after_it_is_no_underline() -> None:
    assert headings("# A\n\nsome text\n<Aside />\n---\n\nmore\n") == ["A"]
    assert headings("Title <b>x</b>\n===\n\nbody\n") == ["Title x"]


def test_breadcrumb_titles_are_plain_words() -> None:
    text = "# `@mdx-js/mdx` *and* [links](https://x.org) <Badge /> {version}\n\nbody\n"
    assert headings(text) == ["@mdx-js/mdx and links"]


def test_a_title_of_tags_alone_is_their_string_attributes_else_their_words() -> None:
    assert headings('## <Badge text="New" />\n\nbody\n') == ["New"]
    assert headings("## <Icon />\n\nbody\n") == ["Icon"]


def test_line_numbers_are_the_files() -> None:
    text = "import a from 'a'\nexport const b = {\n  c: 1\n}\n\n# Title\n\n{/* x */}\nBody.\n"
    assert chunks_of(text) == [("Title", 6, 9, "# Title\n\n\nBody.")]


# --- real data, robustness, generated MDX -----------------------------------------------------


def test_every_file_of_the_mdx_docs_tree_keeps_every_invariant(shared_data: Path) -> None:
    files = sorted((shared_data / TREE).rglob("*.md*"))
    assert len(files) == 44
    for path in files:
        text = path.read_text(encoding="utf-8")
        chunks = check(path.name, text)
        assert chunks, f"{path} gave no chunks"


@pytest.mark.parametrize("name", SETS)
def test_every_robustness_example_chunks_as_mdx(shared_data: Path, name: str) -> None:
    texts = examples(shared_data / "robustness" / name)
    assert len(texts) > 50
    for text in texts:
        check("example.mdx", text)
    check("all.mdx", "\n".join(texts))


# Pieces no docs line holds on its own: the openers and closers of every construct, alone.
ATOMS = (
    "import {a} from 'b'",
    "import {",
    "export const x = {",
    "export default function () {",
    "}",
    "} from 'x'",
    "{",
    "{/*",
    "*/}",
    "{`",
    "`}",
    "${",
    "'",
    '"',
    "<Note>",
    "</Note>",
    '<Card title="x" href={y}',
    '<TabItem value="a" label="A">',
    ":::tip Title",
    ":::note[Title]{#id}",
    ":::",
    "/>",
    "<>",
    "</>",
    "<!--",
    "-->",
    "<",
    "```",
    "```mdx",
    "~~~",
    "`",
    "# Title",
    "    ## Indented {x}",
    "## <B>b</B>",
    "===",
    "---",
    "+++",
    "title: T",
    "- item",
    "> quote",
    "\\{",
    "\t",
    "\r",
)
JOINTS = ("\n", "\n\n", "", " ", "\r\n")
MAX_PIECES = 40


@cache
def docs_texts() -> tuple[str, ...]:
    root = SHARED_DATA / TREE
    return tuple(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.mdx")))


@cache
def docs_lines() -> tuple[str, ...]:
    return tuple(sorted({line for text in docs_texts() for line in text.split("\n")}))


@st.composite
def _slice(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(docs_texts()))
    a = draw(st.integers(0, len(text)))
    return text[a : draw(st.integers(a, min(len(text), a + 400)))]


@st.composite
def mdx_documents(draw: st.DrawFn) -> str:
    """MDX glued from the docs tree's lines and slices, construct atoms and arbitrary text."""
    piece = st.one_of(
        st.sampled_from(docs_lines()),
        st.sampled_from(ATOMS),
        _slice(),
        st.text(max_size=12),
    )
    out: list[str] = []
    for p in draw(st.lists(piece, max_size=MAX_PIECES)):
        out += [p, draw(st.sampled_from(JOINTS))]
    return "".join(out)


@given(mdx_documents())
def test_every_invariant_holds_on_generated_mdx(text: str) -> None:
    check("generated.mdx", text)


# --- linear time -------------------------------------------------------------------------------

SHAPES = {
    "unclosed braces": "{" * SHAPE_SIZE,
    "lines of unclosed braces": "{\n" * (SHAPE_SIZE // 2),
    "nested expression attributes": "<a b={" * (SHAPE_SIZE // 6),
    "nested lines that close, then fail": "<a b={\n" * (SHAPE_SIZE // 14)
    + "}" * (SHAPE_SIZE // 14)
    + "x",
    "backtick runs of every length": "".join("`" * k + "a" for k in range(1, 630)),
    "an import that never ends": "import {\n" + "a,\n" * (SHAPE_SIZE // 3),
    "unclosed comments": "x <!--\n" * (SHAPE_SIZE // 7),
    "attributes without an end": "<a " * (SHAPE_SIZE // 3),
    "an unclosed quote, then tags": '<a b="' + "\n<a" * (SHAPE_SIZE // 3),
    "tag lines": "<a\n" * (SHAPE_SIZE // 3),
    "template literal lines": "{`\n" * (SHAPE_SIZE // 3),
    "strings in expression lines": "{'\n" * (SHAPE_SIZE // 3),
    "tags in a heading": "# " + "<b>x</b>" * (SHAPE_SIZE // 8),
    "link openers in a heading": "# " + "[" * SHAPE_SIZE,
    "text attributes in a heading": "# " + '<b title="x">' * (SHAPE_SIZE // 14),
    "text attribute names without values": "<a " + "title " * (SHAPE_SIZE // 6) + ">",
    "container lines": ":::tip {x} [y\n" * (SHAPE_SIZE // 14),
    "a container line of braces": ":::tip " + "{" * SHAPE_SIZE,
    "a container line of spaces": ":::tip" + " " * SHAPE_SIZE + "x",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_pathological_shapes_chunk_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    found = outline_mdx(text)
    chunks = split_outline("shape.mdx", found)
    assert time.perf_counter() - started < SHAPE_SECONDS
    check_outline("shape.mdx", text, found, chunks)
