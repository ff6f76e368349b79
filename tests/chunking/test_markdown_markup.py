"""A Markdown chunk's text is the page's visible text: one test per site generator's markup, the
breadcrumbs as plain words, the share of chunks still holding markup on the real site trees of
../shared/data/sites, and the shapes the visible-text pass must read in linear time."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import Chunk, embedding_input, split_markdown
from docshelf.chunking.markdown import visible_markdown
from tests.chunking.invariants import (
    _check_sections,
    _is_subsequence,
    fenced_lines,
    markdown_lines,
    section_lines,
)
from tests.chunking.test_robustness import SETS, examples

# As tests/chunking/test_fuzz.py: a linear pass reads each shape in milliseconds, a quadratic one
# takes minutes; the bound is far above a linear time on a shared, slow machine.
SHAPE_SIZE = 200_000
SHAPE_SECONDS = 2.0

# Generator markup that must not reach a chunk outside fences (the list).
MARKUP = [
    re.compile(p)
    for p in (
        r"\{\{<",
        r"\{\{%",
        r"^\s*(?:!!!|\?\?\?)",
        r'^\s*=== "',
        r"^\s*:::",
        r"--8<--",
        r"\{\{#include",
        r"<!--@include",
    )
]
# The Markdown trees of ../shared/data/sites (Docusaurus's .md files are Markdown by suffix).
TREES = [
    "mkdocs-chezmoi",
    "hugo-hugoDocs",
    "vitepress-vitest",
    "vitepress-i18n",
    "mdbook-rust-cookbook",
    "docusaurus-jest",
]
# At most this share of a tree's chunks may still hold generator markup outside fences.
MARKUP_SHARE = 0.02


def check(path: str, text: str) -> list[Chunk]:
    """The chunks of `text`, after checking the packer's guarantees on the visible lines: the
    file's lines one for one, each the file's line with parts taken out; and determinism."""
    chunks = split_markdown(path, text)
    assert split_markdown(path, text) == chunks
    lines = markdown_lines(text)
    visible = visible_markdown(path, text).split("\n")
    assert len(visible) == len(lines), "the visible text keeps every line of the file"
    for shown, own in zip(visible, lines, strict=True):
        assert _is_subsequence(shown, own), (shown, own)
    _check_sections(path, visible, section_lines(text), chunks)
    return chunks


def chunks_of(text: str, path: str = "page.md") -> list[tuple[str, int, int, str]]:
    return [(c.heading, c.start_line, c.end_line, c.content) for c in check(path, text)]


# --- Hugo -----------------------------------------------------------------------------------------


def test_hugo_shortcodes_go_and_their_title_and_summary_values_stay() -> None:
    text = (
        "# Build\n"
        "\n"
        "{{< new-in 0.140.0 />}}\n"
        'Options: {{< code-toggle file=hugo >}} and {{% details summary="See the details" %}}\n'
        '{{% include "/_common/configuration/locale.md" %}}\n'
        "{{< /code-toggle >}}\n"
        'Read {{< figure src="zion.jpg" title="Zion National Park" >}} now.\n'
    )
    assert chunks_of(text) == [
        (
            "Build",
            1,
            7,
            "# Build\n\n\nOptions:  and See the details\n\n\nRead Zion National Park now.",
        )
    ]


def test_a_shortcode_over_several_lines_keeps_each_line_and_its_text_attributes() -> None:
    text = (
        "# Figure\n"
        "\n"
        "Before.\n"
        "{{< figure\n"
        '  src="/images/zion.jpg"\n'
        '  alt="A photograph of Zion National Park"\n'
        ">}}\n"
        "After.\n"
    )
    assert chunks_of(text) == [
        ("Figure", 1, 8, "# Figure\n\nBefore.\n\n\nA photograph of Zion National Park\n\nAfter.")
    ]


def test_an_escaped_shortcode_is_shown_as_hugo_renders_it() -> None:
    # The documented syntax: Hugo shows {{< highlight go >}}, without the comment marks.
    text = "# Highlight\n\nCall it as {{</* highlight go */>}} or {{%/* hl */%}}.\n"
    assert chunks_of(text) == [
        ("Highlight", 1, 3, "# Highlight\n\nCall it as {{< highlight go >}} or {{% hl %}}.")
    ]


def test_a_page_of_one_include_shortcode_gives_no_chunk() -> None:
    text = '---\ntitle: Next\n---\n\n{{% include "/_common/methods/page/next-and-prev.md" %}}\n'
    assert chunks_of(text) == []


def test_go_template_actions_go_from_a_template_page_and_trimmed_ones_from_any() -> None:
    text = (
        '{{- $latest := gitHubLatestRelease "twpayne/chezmoi" -}}\n'
        "# Install\n"
        "\n"
        "The latest version is {{ $version }} ([release notes][notes]).\n"
    )
    assert chunks_of(text, "install.md.tmpl") == [
        ("Install", 2, 4, "# Install\n\nThe latest version is  ([release notes][notes]).")
    ]
    # In a page that is no template, `{{ x }}` may be the page's own text (a Vue interpolation).
    assert chunks_of(text) == [
        (
            "Install",
            2,
            4,
            "# Install\n\nThe latest version is {{ $version }} ([release notes][notes]).",
        )
    ]


# --- MkDocs ---------------------------------------------------------------------------------------


def test_an_admonition_becomes_its_title_and_its_body_loses_four_spaces() -> None:
    text = (
        "# Setup\n"
        "\n"
        '!!! warning "Back up first"\n'
        "\n"
        "    Run `chezmoi archive` before you start.\n"
        "      An indented line keeps its extra spaces.\n"
        "\n"
        "Next paragraph.\n"
    )
    assert chunks_of(text) == [
        (
            "Setup",
            1,
            8,
            "# Setup\n\nBack up first\n\nRun `chezmoi archive` before you start.\n"
            "  An indented line keeps its extra spaces.\n\nNext paragraph.",
        )
    ]


def test_a_body_line_of_blanks_stays_a_line() -> None:
    text = "# Nomad\n\n!!! warning\n  \n    Define one option.\n\nAfter.\n"
    assert chunks_of(text) == [("Nomad", 1, 7, "# Nomad\n\n\n\nDefine one option.\n\nAfter.")]


def test_an_untitled_or_collapsible_admonition_line_becomes_empty_or_its_title() -> None:
    text = (
        "# Notes\n"
        "\n"
        "!!! note\n"
        "    Plain note.\n"
        '??? tip "Click to open"\n'
        "    Hidden tip.\n"
        '???+ example ""\n'
        "    Open example.\n"
    )
    assert chunks_of(text) == [
        ("Notes", 1, 8, "# Notes\n\n\nPlain note.\nClick to open\nHidden tip.\n\nOpen example.")
    ]


def test_nested_content_tabs_become_their_titles_and_their_bodies_are_dedented() -> None:
    text = (
        "## Install\n"
        "\n"
        '=== "Linux"\n'
        "\n"
        '    === "Alpine"\n'
        "\n"
        "        ```sh\n"
        "        apk add chezmoi\n"
        "        ```\n"
        "\n"
        '=== "macOS"\n'
        "\n"
        "    brew install chezmoi\n"
    )
    assert chunks_of(text) == [
        (
            "Install",
            1,
            13,
            "## Install\n\nLinux\n\nAlpine\n\n```sh\napk add chezmoi\n```\n\nmacOS\n\n"
            "brew install chezmoi",
        )
    ]


def test_a_heading_like_line_in_a_fence_inside_an_admonition_stays_code() -> None:
    text = "!!! example\n\n    ```sh\n    # not a heading\n    ```\n\n# After\n\nbody\n"
    assert chunks_of(text) == [
        ("", 3, 5, "```sh\n# not a heading\n```"),
        ("After", 7, 9, "# After\n\nbody"),
    ]


def test_snippet_lines_become_empty_and_an_include_only_page_gives_no_chunk() -> None:
    assert chunks_of('---\ntitle: Consul\n---\n\n--8<-- "providers/consul.md"\n') == []
    text = (
        "# Flags\n"
        "\n"
        '--8<-- "common-flags/exclude.md"\n'
        '--8<-- "common-flags/path-style.md:all"\n'
        "--8<-- [start:all]\n"
        "Only this stays.\n"
        "--8<-- [end:all]\n"
    )
    assert chunks_of(text) == [("Flags", 1, 6, "# Flags\n\n\n\n\nOnly this stays.")]


def test_the_snippet_block_form_becomes_empty_lines() -> None:
    text = "# Page\n\nIntro.\n\n--8<--\nfirst.md\nsecond.md\n--8<--\n\nOutro.\n"
    assert chunks_of(text) == [("Page", 1, 10, "# Page\n\nIntro.\n\n\n\n\n\n\nOutro.")]


# --- Docusaurus and VitePress ---------------------------------------------------------------------


def test_containers_become_their_title_words_or_empty_lines() -> None:
    text = (
        "# Config\n"
        "\n"
        ":::tip Use the CLI\n"
        "Run it.\n"
        ":::\n"
        "::: warning\n"
        "Careful.\n"
        ":::\n"
        ":::note[Legacy timers]\n"
        "Old.\n"
        ":::\n"
        "::: details Click me\n"
        "Hidden.\n"
        ":::\n"
    )
    assert chunks_of(text) == [
        (
            "Config",
            1,
            13,
            "# Config\n\nUse the CLI\nRun it.\n\n\nCareful.\n\nLegacy timers\nOld.\n\n"
            "Click me\nHidden.",
        )
    ]


def test_tabs_of_the_vitepress_tabs_plugin_become_their_titles() -> None:
    text = "# T\n\n== not a tab\n\n::: tabs\n== npm\nA\n== pnpm\nB\n:::\n== after\n"
    assert chunks_of(text) == [("T", 1, 11, "# T\n\n== not a tab\n\n\nnpm\nA\npnpm\nB\n\n== after")]


def test_code_groups_and_tabs_containers_leave_only_their_code() -> None:
    text = (
        "# Install\n"
        "\n"
        "::: code-group\n"
        "```sh [npm]\n"
        "npm add -D vitest\n"
        "```\n"
        ":::\n"
        ":::: tabs key:provider\n"
        "Text.\n"
        "::::\n"
    )
    assert chunks_of(text) == [
        ("Install", 1, 9, "# Install\n\n\n```sh [npm]\nnpm add -D vitest\n```\n\n\nText.")
    ]


def test_vitepress_includes_snippet_imports_and_comments_become_empty() -> None:
    text = (
        "# Benchmark\n"
        "\n"
        "<!--@include: ./import-example.md-->\n"
        "<<< ./snippets/benchmark-table.ansi\n"
        "Words <!-- a note --> stay.\n"
        "<!--truncate-->\n"
        "<!--\n"
        "A comment over\n"
        "three lines.\n"
        "-->\n"
        "End.\n"
    )
    assert chunks_of(text) == [
        ("Benchmark", 1, 11, "# Benchmark\n\n\n\nWords  stay.\n\n\n\n\n\nEnd.")
    ]


def test_components_go_but_their_text_attributes_and_children_stay() -> None:
    text = (
        '# watch <CRoot /> <Badge type="info" text="v1.2" /> {#watch}\n'
        "\n"
        'Since <Version>3.2.0</Version>, see <my-widget label="Widget"></my-widget>.\n'
        "<TOCInline toc={toc.slice(2)} />\n"
        "<Box>Test file</Box>\n"
    )
    assert chunks_of(text) == [
        ("watch v1.2", 1, 5, "# watch  v1.2\n\nSince 3.2.0, see Widget.\n\nTest file")
    ]


def test_a_placeholder_written_as_a_tag_is_text() -> None:
    # No attribute, not closing itself, never closed: a placeholder, as AWS's guides write them.
    # A closing tag whose opening one stayed (it is no tag: `<Directory "/var">`) stays too.
    text = (
        "# Setup\n\nReplace *<Region>* with your Region, then <Version>3.2</Version>.\n\n"
        '<Directory "/var/www/html">\n</Directory>\n'
    )
    assert chunks_of(text) == [
        (
            "Setup",
            1,
            6,
            "# Setup\n\nReplace *<Region>* with your Region, then 3.2.\n\n"
            '<Directory "/var/www/html">\n</Directory>',
        )
    ]


def test_an_import_line_is_text_unless_the_page_uses_what_it_imports() -> None:
    # Code pasted without a fence (a scraped page) stays; Docusaurus's imports go.
    pasted = (
        "# SDK\n\nimport Anthropic from '@anthropic-ai/sdk';\nconst client = new Anthropic();\n"
    )
    assert chunks_of(pasted) == [("SDK", 1, 4, pasted.rstrip("\n"))]
    used = (
        "# Page\n\nimport useBaseUrl from '@docusaurus/useBaseUrl';\n"
        "import {A, B as Card} from './cards';\n\n<Card />\n<img src={useBaseUrl('/x.png')} />\n"
    )
    assert chunks_of(used) == [
        ("Page", 1, 7, "# Page\n\n\n\n\n\n<img src={useBaseUrl('/x.png')} />")
    ]


def test_a_tag_over_several_lines_keeps_its_text_attributes() -> None:
    text = '# Team\n\n<VPTeamMembers\n  size="small"\n  title="Core team"\n/>\nText.\n'
    assert chunks_of(text) == [("Team", 1, 7, "# Team\n\n\n\nCore team\n\nText.")]


def test_script_and_style_blocks_become_empty_lines() -> None:
    text = (
        "---\nlayout: home\n---\n\n"
        "<script setup>\n"
        "import Home from './.vitepress/theme/Home.vue'\n"
        "</script>\n"
        "\n"
        "<style>\n"
        "h1 { color: red; }\n"
        "</style>\n"
        "\n"
        "# Welcome\n"
        "\n"
        "<Home />\n"
        "Text.\n"
    )
    assert chunks_of(text) == [("Welcome", 13, 16, "# Welcome\n\n\nText.")]
    assert chunks_of("<script setup>\nimport X from './x.vue'\n</script>\n\n<X />\n") == []
    # One left open on the page's last line is text.
    assert chunks_of("# Page\n\nText.\n<script setup>") == [
        ("Page", 1, 4, "# Page\n\nText.\n<script setup>")
    ]


def test_esm_import_lines_of_a_docusaurus_page_become_empty() -> None:
    text = (
        "---\nid: cli\ntitle: Jest CLI Options\n---\n\n"
        "import TOCInline from '@theme/TOCInline';\n"
        "\n"
        "Intro.\n"
        "\n"
        "<TOCInline toc={toc.slice(2)} />\n"
    )
    assert chunks_of(text) == [("Jest CLI Options", 8, 8, "Intro.")]


def test_markup_inside_a_container_title_or_body_goes_too() -> None:
    text = (
        "# Coverage\n"
        "\n"
        "::: warning WARNING <Version>3.2.0</Version>\n"
        "Slow.\n"
        ":::\n"
        "\n"
        '!!! note "Since {{< new-in 0.1 />}}"\n'
        "    Body {{< new-in 0.1 />}}\n"
        "    <!-- a comment\n"
        "    over two lines -->\n"
        "    End.\n"
    )
    assert chunks_of(text) == [
        ("Coverage", 1, 11, "# Coverage\n\nWARNING 3.2.0\nSlow.\n\n\nSince\nBody\n\n\nEnd.")
    ]


def test_a_container_line_holding_a_component_loses_it_then_becomes_its_title() -> None:
    # The tag goes first (its text attribute stays), then the line rule reads what is left.
    text = ':::tip <Badge text="New" /> Title\nBody.\n:::\n'
    assert chunks_of(text) == [("", 1, 2, "New Title\nBody.")]
    # A comment over the lines of a container hides it whole.
    text = "# Note\n\n<!--\n:::tip Hidden\n-->\nText.\n"
    assert chunks_of(text) == [("Note", 1, 6, "# Note\n\n\n\n\nText.")]


def test_a_container_inside_an_admonition_body_is_dedented_then_becomes_its_title() -> None:
    text = '# Note\n\n!!! note "N"\n    :::tip Inner\n    Body.\n    :::\n'
    assert chunks_of(text) == [("Note", 1, 5, "# Note\n\nN\nInner\nBody.")]


# --- mdBook and GitHub ----------------------------------------------------------------------------


def test_an_mdbook_include_goes_outside_a_fence_and_stays_inside_one() -> None:
    text = (
        "# Random\n"
        "\n"
        "{{#include randomness/rand.md}}\n"
        "\n"
        "```rust,edition2018\n"
        "{{#include ../crates/rand.rs::7 }}\n"
        "```\n"
    )
    assert chunks_of(text) == [
        (
            "Random",
            1,
            7,
            "# Random\n\n\n\n```rust,edition2018\n{{#include ../crates/rand.rs::7 }}\n```",
        )
    ]
    assert chunks_of("# Sorting\n\n{{#include sorting/sort.md}}\n{{#include ../links.md}}\n") == []


def test_a_github_alert_keeps_the_quote_and_its_word() -> None:
    text = (
        "# Build\n\n> [!NOTE]\n> Hugo caches builds.\n\n> [!WARNING]+ Radiation hazard\n> Do not.\n"
    )
    assert chunks_of(text) == [
        (
            "Build",
            1,
            7,
            "# Build\n\n> NOTE\n> Hugo caches builds.\n\n> WARNING Radiation hazard\n> Do not.",
        )
    ]


# --- what stays -----------------------------------------------------------------------------------


def test_plain_html_stays_as_written() -> None:
    text = (
        "# Hashing\n"
        "\n"
        '<a name="ex-pbkdf2"></a>\n'
        "<details>\n"
        "<summary>More</summary>\n"
        "\n"
        "| a | b |\n"
        "</details>\n"
    )
    assert chunks_of(text) == [
        (
            "Hashing",
            1,
            8,
            '# Hashing\n\n<a name="ex-pbkdf2"></a>\n<details>\n<summary>More</summary>\n\n'
            "| a | b |\n</details>",
        )
    ]


def test_type_parameters_after_a_word_are_not_components() -> None:
    text = "# Box\n\nA Box<T> holds a Vec<String> and an Option<Rc<T>>.\n"
    assert chunks_of(text) == [
        ("Box", 1, 3, "# Box\n\nA Box<T> holds a Vec<String> and an Option<Rc<T>>.")
    ]


def test_markup_in_code_spans_and_fences_is_code() -> None:
    text = (
        "# Syntax\n"
        "\n"
        'Write `{{< youtube id >}}`, `<Badge text="x" />` or `<!-- x -->` inline.\n'
        "\n"
        "```md\n"
        '!!! note "Title"\n'
        ":::tip\n"
        '--8<-- "file.md"\n'
        "{{< x >}}\n"
        "```\n"
    )
    assert chunks_of(text) == [
        (
            "Syntax",
            1,
            10,
            "# Syntax\n\n"
            'Write `{{< youtube id >}}`, `<Badge text="x" />` or `<!-- x -->` inline.\n\n'
            '```md\n!!! note "Title"\n:::tip\n--8<-- "file.md"\n{{< x >}}\n```',
        )
    ]


def test_a_construct_that_does_not_close_is_text() -> None:
    text = (
        "# Open\n\nA {{< shortcode without end\n\nand <!-- a comment\n\n"
        "and <Tag that never closes\n"
    )
    assert chunks_of(text) == [
        (
            "Open",
            1,
            7,
            "# Open\n\nA {{< shortcode without end\n\nand <!-- a comment\n\n"
            "and <Tag that never closes",
        )
    ]


def test_front_matter_stays_out_of_the_chunks_and_its_title_tops_the_breadcrumb() -> None:
    text = '---\ntitle: "The `chezmoi` *guide*"\n---\n\n!!! note\n    Body.\n\n## Use\n\nText.\n'
    assert chunks_of(text) == [
        ("The chezmoi guide", 6, 6, "Body."),
        ("The chezmoi guide > Use", 8, 10, "## Use\n\nText."),
    ]


def test_a_front_matter_description_is_the_pages_lead_on_its_own_line() -> None:
    # Hugo's docs show it under the title; its words are the page's summary.
    text = (
        "---\ntitle: strings.Truncate\n"
        "description: 'Truncates a string to a maximum length without cutting words.'\n"
        "keywords: []\n---\n\nIntro.\n\n# Usage\n\nText.\n"
    )
    assert chunks_of(text) == [
        (
            "strings.Truncate",
            3,
            7,
            "Truncates a string to a maximum length without cutting words.\n\n\n\nIntro.",
        ),
        ("Usage", 9, 11, "# Usage\n\nText."),
    ]
    folded = "---\ndescription: >-\n  Folded words\n  and more.\ntags: [a]\n---\n## Use\n\nText.\n"
    assert chunks_of(folded) == [
        ("", 3, 4, "Folded words\nand more."),
        ("Use", 7, 9, "## Use\n\nText."),
    ]
    nested = "---\nparams:\n  description: not the page's\n---\n# T\n\nText.\n"
    assert chunks_of(nested) == [("T", 5, 7, "# T\n\nText.")]


# --- breadcrumbs ----------------------------------------------------------------------------------


def test_breadcrumbs_are_plain_words() -> None:
    text = (
        "# Using [a library](https://example.com/lib) and [the guide][guide]\n"
        "\n"
        "intro\n"
        "\n"
        "## The `chezmoi` **apply** _command_ { #apply }\n"
        "\n"
        "body\n"
        "\n"
        '### Custom Provider <Badge type="danger">advanced</Badge> {#custom-provider}\n'
        "\n"
        "body\n"
        "\n"
        "#### Since {{< new-in 0.140.0 />}} &amp; ![logo](x.png) \\*star\\*\n"
        "\n"
        "body\n"
        "\n"
        "Setext `title` with [link](u)\n"
        "---\n"
        "\n"
        "body\n"
    )
    assert [c.heading for c in check("page.md", text)] == [
        "Using a library and the guide",
        "Using a library and the guide > The chezmoi apply command",
        "Using a library and the guide > The chezmoi apply command > Custom Provider advanced",
        "Using a library and the guide > The chezmoi apply command > Custom Provider advanced"
        " > Since & logo *star*",
        "Using a library and the guide > Setext title with link",
    ]


def test_an_anchor_right_after_a_title_goes_from_its_breadcrumb() -> None:
    # AWS's guides end nearly every heading so; `Vec<T>` right after a word stays a type.
    text = '# BatchGetItem<a name="API_BatchGetItem_v20111205"></a>\n\nText.\n## Vec<T>\n\nMore.\n'
    assert [c.heading for c in check("api.md", text)] == ["BatchGetItem", "BatchGetItem > Vec<T>"]


def test_code_keeps_its_characters_in_a_breadcrumb() -> None:
    text = "# The `__init__` and `*args` of `Vec<T>`\n\nbody\n"
    assert [c.heading for c in check("page.md", text)] == ["The __init__ and *args of Vec<T>"]


def test_the_embedding_input_holds_the_visible_text() -> None:
    text = "# Tips\n\n:::tip Use the cache\nIt is {{< hl >}}fast{{< /hl >}}.\n:::\n"
    (chunk,) = check("tips.md", text)
    assert embedding_input(chunk) == "tips.md\nTips\n\n# Tips\n\nUse the cache\nIt is fast."


# --- properties -----------------------------------------------------------------------------------

MARKUP_LINES = st.sampled_from(
    [
        "",
        "  ",
        "    ",
        "\t",
        "# Title {#title}",
        '## Sub <Badge text="x" />',
        '!!! note "Note"',
        "??? tip",
        '=== "Tab"',
        '    === "Nested"',
        "    body line",
        "        deeper line",
        ":::tip Title",
        ":::",
        '--8<-- "file.md"',
        "--8<--",
        "<<< @/snippets/x.ts",
        "> [!NOTE]",
        "import X from './x.md';",
        "<script setup>",
        "</script>",
        "<style>",
        "</style>",
        "<!--",
        "-->",
        "<!-- c -->",
        "{{< figure",
        'alt="Words"',
        ">}}",
        "{{< x >}} text {{% y %}}",
        "{{</* z */>}}",
        "{{#include a.md}}",
        "<Version>1.0</Version>",
        "<Tag",
        "/>",
        "```",
        "~~~",
        "`code <X/> {{< y >}}`",
        "text",
        "---",
        "title: t",
    ]
)


@st.composite
def markup_docs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.one_of(MARKUP_LINES, st.text(max_size=30)), max_size=40))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


@given(markup_docs())
def test_every_invariant_holds_on_generated_markup(text: str) -> None:
    check("gen.md", text)


@pytest.mark.parametrize("name", SETS)
def test_every_robustness_example_keeps_the_invariants_on_its_visible_text(
    shared_data: Path, name: str
) -> None:
    for text in examples(shared_data / "robustness" / name):
        check("example.md", text)


# --- reference entries: definition lists --------------------------------------------------------

ARGUMENTS = """# Figure

## Arguments

`src`
: (`string`) The `src` attribute of the `img` element.

[**alt**](alt.md)
: The alt attribute.
  More about it.

: A second description of alt.

After the list, the arguments again.
"""


def test_definition_list_entries_are_sections_named_by_their_term() -> None:
    assert chunks_of(ARGUMENTS) == [
        (
            "Figure > Arguments > src",
            5,
            6,
            "`src`\n: (`string`) The `src` attribute of the `img` element.",
        ),
        (
            "Figure > Arguments > alt",
            8,
            12,
            "[**alt**](alt.md)\n: The alt attribute.\n  More about it.\n\n"
            ": A second description of alt.",
        ),
        ("Figure > Arguments", 14, 14, "After the list, the arguments again."),
    ]


def test_a_long_entry_keeps_its_term_as_the_last_crumb_of_every_piece() -> None:
    description = "\n".join(f"  Line {i} of what the flag does, at some length." for i in range(80))
    text = f"# CLI\n\n`--verbose`\n: Prints more.\n{description}\n\nAfter.\n"
    chunks = check("cli.md", text)
    entry = [c for c in chunks if c.heading == "CLI > --verbose"]
    assert len(entry) > 1
    assert entry[0].start_line == 3
    assert [c.heading for c in chunks[len(entry) :]] == ["CLI"]


def test_several_term_lines_name_one_entry_and_a_heading_ends_the_list() -> None:
    text = "# H\n\nfirst\nsecond\n: Both.\n## Next\nText.\n"
    assert [(h, a, b) for h, a, b, _ in chunks_of(text)] == [
        ("H > first, second", 3, 5),
        ("H > Next", 6, 7),
    ]


def test_what_is_no_term_makes_no_entry() -> None:
    for text in (
        "# H\n\n- an item\n: text\n",  # a list item
        "# H\n\n> a quote\n: text\n",  # a quote
        "# H\n\n" + "a line of prose\n" * 4 + ": text\n",  # a paragraph, not a term
        "# H\n\n```\nterm\n: in a fence\n```\n",  # code
        "# H\n\n:::tip\n: text\n:::\n",  # a container
    ):
        assert {c.heading for c in check("page.md", text)} == {"H"}, text


def test_a_real_reference_page_has_an_entry_per_argument(shared_data: Path) -> None:
    path = shared_data / "sites" / "hugo-hugoDocs" / "content" / "en" / "shortcodes" / "figure.md"
    text = path.read_text(encoding="utf-8")
    chunks = check("figure.md", text)
    lines = text.split("\n")
    entries = {c.heading.rsplit(" > ", 1)[-1]: c for c in chunks if " > Arguments > " in c.heading}
    assert {"src", "alt", "width", "caption", "attrlink"} <= set(entries)
    alt = entries["alt"]
    assert lines[alt.start_line - 1] == "`alt`"
    assert lines[alt.start_line].startswith(": (`string`) The `alt` attribute")


# --- the real site trees --------------------------------------------------------------------------


def _markup_share(root: Path) -> tuple[int, int]:
    """How many chunks of the tree's .md files hold generator markup outside fences, of all."""
    held = total = 0
    for file in sorted(root.rglob("*.md")):
        path, text = file.relative_to(root).as_posix(), file.read_text(encoding="utf-8")
        fenced = fenced_lines(text)
        for chunk in split_markdown(path, text):
            total += 1
            lines = (
                [chunk.content] if chunk.start_line == chunk.end_line else chunk.content.split("\n")
            )
            if any(
                chunk.start_line - 1 + i not in fenced and any(m.search(line) for m in MARKUP)
                for i, line in enumerate(lines)
            ):
                held += 1
    return held, total


@pytest.mark.parametrize("tree", TREES)
def test_every_file_of_a_real_site_keeps_the_invariants_on_its_visible_text(
    shared_data: Path, tree: str
) -> None:
    root = shared_data / "sites" / tree
    for file in sorted(root.rglob("*.md")):
        check(file.relative_to(root).as_posix(), file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("corpus", ["traefik", "fastapi", "rust-book"])
def test_every_file_of_the_corpora_keeps_the_invariants_on_its_visible_text(
    shared_data: Path, corpus: str
) -> None:
    root = shared_data / "corpora" / corpus
    for file in sorted(root.rglob("*.md")):
        check(file.relative_to(root).as_posix(), file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("tree", TREES)
def test_few_chunks_of_a_real_site_hold_generator_markup(shared_data: Path, tree: str) -> None:
    held, total = _markup_share(shared_data / "sites" / tree)
    assert total > 100
    assert held / total < MARKUP_SHARE, (held, total)


# --- linear time ----------------------------------------------------------------------------------

SHAPES = {
    "unclosed shortcodes": "{{< x " * (SHAPE_SIZE // 6),
    "unclosed comments": "<!-- " * (SHAPE_SIZE // 5),
    "unclosed tags": '<Tag a="' * (SHAPE_SIZE // 8),
    "tags on one line": '<Badge text="x" />' * (SHAPE_SIZE // 18),
    "backticks and tags": "`<X/>` " * (SHAPE_SIZE // 7),
    "shortcodes in code spans": "`{{< x >}}` " * (SHAPE_SIZE // 12),
    "admonitions": '!!! note "t"\n    body\n' * (SHAPE_SIZE // 22),
    "nested tabs": "".join("    " * d + '=== "t"\n' for d in range(100)) * 10,
    "containers": ":::tip\n" * (SHAPE_SIZE // 7),
    "anchors": "# h {#a}\n" * (SHAPE_SIZE // 9),
    "blank-separated comments": "<!--\n\n" * (SHAPE_SIZE // 6) + "-->",
    "an import line of quotes": "import " + "'x' from " * (SHAPE_SIZE // 9),
    "descriptions": ": d\n" * (SHAPE_SIZE // 4),
    "terms and descriptions": "t\n: d\n" * (SHAPE_SIZE // 6),
    "entries": "t\n: d\n\n" * (SHAPE_SIZE // 7),
    "a long paragraph, then descriptions": "x\n" * (SHAPE_SIZE // 4) + ": d\n" * (SHAPE_SIZE // 8),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_markup_shapes_are_read_in_linear_time(shape: str) -> None:
    text = SHAPES[shape]
    started = time.perf_counter()
    split_markdown("shape.md", text)
    visible_markdown("shape.md", text)
    assert time.perf_counter() - started < SHAPE_SECONDS
    check("shape.md", text)
