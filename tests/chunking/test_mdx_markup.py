"""The MDX chunker's visible text is what a reader sees: JSX tags and Docusaurus container lines
leave it, the words they carry (text attributes, titles) stay, on the file's own lines."""

from __future__ import annotations

import re
from pathlib import Path

from docshelf.chunking.mdx import outline_mdx
from tests.chunking.invariants import fenced_lines
from tests.chunking.test_mdx import check, chunks_of, headings, visible

TREE = "formats/mdx-js/docs"
# Docusaurus reads a .md page as MDX (its default `markdown.format`), with `:::` admonitions,
# `<TOCInline />` and partials rendered as `<TypeScriptExamplesNote />`.
DOCUSAURUS = "sites/docusaurus-jest/docs"
# A component tag, opening or closing, or a container line: what must not reach a chunk.
MARKUP = re.compile(r"<[A-Z][\w.]*[\s/>]|</[A-Z]|^[ \t]*:::", re.MULTILINE)
CODE_SPAN = re.compile(r"(`+).*?\1")


# --- JSX tags ----------------------------------------------------------------------------------


def test_a_line_of_component_tags_alone_becomes_an_empty_line() -> None:
    text = (
        '# A\n\n<Tabs groupId="pm">\n<TabItem value="npm">\n\nnpm i\n\n</TabItem>\n</Tabs>\n\n'
        "<TOCInline toc={toc.slice(2)} />\n"
    )
    assert visible(text)[2:11] == ["", "", "", "npm i", "", "", "", "", ""]
    assert chunks_of(text) == [("A", 1, 6, "# A\n\n\n\n\nnpm i")]


def test_a_tabs_label_stays_as_a_word_and_its_value_goes() -> None:
    assert visible('# A\n\n<TabItem value="yarn" label="Yarn 4">\n')[2] == "Yarn 4"


def test_an_admonition_components_title_stays_and_its_type_goes() -> None:
    text = '# A\n\n<Admonition type="tip" title="Hello">\nBe kind.\n</Admonition>\n'
    assert visible(text)[2:5] == ["Hello", "Be kind.", ""]


def test_the_text_a_component_wraps_stays_where_it_stands() -> None:
    text = '# A\n\n<Note type="info">**Note**: read <a href="/x" id="y">the guide</a>.</Note>\n'
    assert visible(text)[2] == "**Note**: read the guide."


def test_a_partial_rendered_from_an_import_leaves_an_empty_line() -> None:
    text = "import Note from './_note.mdx'\n\n# A\n\nIntro.\n\n<Note />\n\nMore.\n"
    assert visible(text) == ["", "", "# A", "", "Intro.", "", "", "", "More.", ""]


def test_text_attributes_stay_as_words_and_ids_classes_links_and_sources_go() -> None:
    text = '<img alt="A cat" src="cat.png" className="wide" id="c" />\n'
    assert visible(text)[0] == "A cat"
    text = '<Card title="Setup" description="First steps" href="/setup" icon="rocket" />\n'
    assert visible(text)[0] == "Setup First steps"


def test_a_name_inside_another_attributes_string_is_no_attribute() -> None:
    assert visible('# A\n\nSee <a href="/x title=\'no\'" data-title="no">it</a>.\n')[2] == (
        "See it."
    )


def test_a_tag_over_several_lines_keeps_each_word_on_its_own_line() -> None:
    text = '# A\n\n<Card\n  title="Setup"\n  href="/setup"\n  label={x}\n  caption="Go"\n/>\n'
    assert visible(text)[2:8] == ["", "Setup", "", "", "Go", ""]


def test_a_text_attribute_after_a_word_is_spaced_from_it() -> None:
    assert visible('# A\n\nnew<Badge text="beta" />\n')[2] == "new beta"
    assert visible("# A\n\nan <Badge text='x' /> and <Badge text=\"y\"/>\n")[2] == "an x and y"


def test_a_tag_in_a_heading_gives_its_text_attributes_to_the_breadcrumb() -> None:
    text = '## Install <Badge text="new" />\n\nRun it.\n'
    assert chunks_of(text) == [("Install new", 1, 3, "## Install new\n\nRun it.")]
    assert headings('## Setup <Version since="2.0" />\n\nbody\n') == ["Setup"]


def test_tags_in_code_stay_code() -> None:
    text = '# A\n\nUse `<Tabs groupId="x">` here.\n\n```jsx\n<Tabs groupId="x" />\n```\n'
    assert visible(text)[2] == 'Use `<Tabs groupId="x">` here.'
    assert visible(text)[5] == '<Tabs groupId="x" />'


# --- Docusaurus containers ---------------------------------------------------------------------


def test_a_container_line_becomes_its_titles_words_or_an_empty_line() -> None:
    text = (
        "# A\n\n:::tip\n\nBe kind.\n\n:::\n\n:::info Legacy Fake Timers\n\nOld.\n\n:::\n\n"
        ":::note[Use *this* one]{#pick}\nNew.\n:::\n\n::::tabs\n:::: \n  :::caution {.red}\n"
    )
    assert visible(text) == [
        "# A",
        "",
        "",
        "",
        "Be kind.",
        "",
        "",
        "",
        "Legacy Fake Timers",
        "",
        "Old.",
        "",
        "",
        "",
        "Use *this* one",
        "New.",
        "",
        "",
        "",
        "",
        "",
        "",
    ]


def test_a_tabs_or_code_group_container_has_no_title_its_rest_is_options() -> None:
    assert visible("# A\n\n::: code-group labels\n::::tabs sync\n")[2:4] == ["", ""]


def test_a_container_title_loses_its_expressions_and_tags() -> None:
    assert visible('# A\n\n:::tip Read {name} <Badge text="now" />\n')[2] == "Read  now"


def test_a_container_line_closes_a_paragraph_so_a_break_after_it_is_no_underline() -> None:
    assert headings("# A\n\nsome text\n:::\n---\n\nmore\n") == ["A"]
    assert headings("# A\n\n:::tip Hello\n===\n\nmore\n") == ["A"]


def test_a_line_of_colons_that_is_no_container_is_prose() -> None:
    text = "# A\n\n:::tip! not one\n: a definition\n::\n"
    assert visible(text)[2:5] == [":::tip! not one", ": a definition", "::"]
    assert chunks_of(text) == [("A", 1, 5, "# A\n\n:::tip! not one\n: a definition\n::")]


def test_a_container_line_in_a_fence_is_code() -> None:
    text = "# A\n\n```md\n:::tip Title\n:::\n```\n"
    assert visible(text)[3:5] == [":::tip Title", ":::"]


# --- real pages --------------------------------------------------------------------------------


def markup_outside_code(path: Path) -> list[str]:
    """The chunks of `path` (after checking every invariant) that hold a component tag or a
    container line outside fences and code spans."""
    text = path.read_text(encoding="utf-8")
    fenced = fenced_lines(text)
    found = []
    for chunk in check(path.name, text):
        lines = chunk.content.split("\n")
        if len(lines) != chunk.end_line - chunk.start_line + 1:
            lines = [chunk.content]  # a slice of one long line
            first = -1
        else:
            first = chunk.start_line - 1
        prose = "\n".join(
            CODE_SPAN.sub("", line)
            for i, line in enumerate(lines, first)
            if first < 0 or i not in fenced
        )
        if MARKUP.search(prose):
            found.append(f"{path.name}:{chunk.start_line}")
    return found


def test_no_chunk_of_the_mdx_docs_tree_holds_a_tag_outside_code(shared_data: Path) -> None:
    files = sorted((shared_data / TREE).rglob("*.mdx"))
    assert len(files) == 35
    assert "<Note" in "".join(p.read_text(encoding="utf-8") for p in files)
    assert [hit for path in files for hit in markup_outside_code(path)] == []


def test_no_chunk_of_a_docusaurus_site_read_as_mdx_holds_its_markup(shared_data: Path) -> None:
    files = sorted((shared_data / DOCUSAURUS).rglob("*.md"))
    assert len(files) > 30
    text = "".join(p.read_text(encoding="utf-8") for p in files)
    assert ":::tip" in text and "<TOCInline" in text and "<TypeScriptExamplesNote />" in text
    assert [hit for path in files for hit in markup_outside_code(path)] == []


def test_the_words_of_a_real_pages_tags_are_kept(shared_data: Path) -> None:
    page = shared_data / DOCUSAURUS / "JestObjectAPI.md"
    text = page.read_text(encoding="utf-8")
    shown = outline_mdx(text).text
    assert ":::info Legacy Fake Timers" in text and "Legacy Fake Timers" in shown


def test_a_front_matter_description_is_the_pages_lead_on_its_own_line() -> None:
    text = (
        '---\ntitle: Quickstart\ndescription: "Install it and index a repository."\n---\n\n'
        "import X from './x.mdx'\n\nIntro.\n\n# Install\n\nText.\n"
    )
    assert chunks_of(text) == [
        ("Quickstart", 3, 8, "Install it and index a repository.\n\n\n\n\nIntro."),
        ("Install", 10, 12, "# Install\n\nText."),
    ]
    folded = "---\ndescription: |\n  Two lines\n  of lead.\n---\n## A\n\nText.\n"
    assert chunks_of(folded) == [("", 3, 4, "Two lines\nof lead."), ("A", 6, 8, "## A\n\nText.")]
