"""The AsciiDoc chunker's text is the page's visible text: generator markup never reaches a chunk,
code shows as Markdown fences with its language, and every line stays on its own line number."""

from __future__ import annotations

import re
from pathlib import Path

from docshelf.chunking.asciidoc import split_asciidoc
from tests.chunking.test_asciidoc import check, visible

SITE = "sites/antora-spring-security"
# The markup the docs-sites issue names for AsciiDoc, as it is measured on the site.
MARKUP = re.compile(
    r"^(?:----|====+|\*\*\*\*|\.\.\.\.|____|\|===)\s*$"
    r"|^\[(?:source|tabs|NOTE|TIP|IMPORTANT|WARNING|CAUTION)[^\]]*\]\s*$"
    r"|^include::|^:[\w-]+:|^ifn?def::|^endif::",
    re.MULTILINE,
)
# Goal of the issue: fewer than this share of chunks holds generator markup.
MARKUP_SHARE = 0.02


def test_a_source_listing_shows_as_a_fence_with_its_language_on_the_same_lines() -> None:
    text = "== A\n\n.Example\n[source,java]\n----\nint x = 1;\n----\n"
    assert visible(text) == ["== A", "", "Example", "", "```java", "int x = 1;", "```", ""]
    (chunk,) = check(text)
    assert (chunk.start_line, chunk.end_line) == (1, 7)


def test_a_listing_without_a_language_shows_as_a_bare_fence() -> None:
    assert visible("----\ncode\n----\n")[:3] == ["```", "code", "```"]
    assert visible("....\nliteral\n....\n")[:3] == ["```", "literal", "```"]
    assert visible("[source]\n----\ncode\n----\n")[:4] == ["", "```", "code", "```"]


def test_a_listing_takes_its_language_from_any_source_attribute_line() -> None:
    assert visible("[,kotlin]\n----\nval x = 1\n----\n")[:2] == ["", "```kotlin"]
    assert visible('[source,xml,subs="attributes"]\n----\n<a/>\n----\n')[:2] == ["", "```xml"]
    text = ":source-language: ruby\n\n[source]\n----\nputs 1\n----\n"
    assert visible(text)[:4] == ["", "", "", "```ruby"]


def test_tabs_show_their_labels_and_code_without_their_markup() -> None:
    text = (
        '[tabs]\n======\nJava::\n+\n[source,java,role="primary"]\n----\nnew A();\n----\n\n'
        "Kotlin::\n+\n.build.gradle\n[source,kotlin]\n----\nA()\n----\n======\n"
    )
    assert visible(text) == [
        *("", "", "Java", "", "", "```java", "new A();", "```", ""),
        *("Kotlin", "", "build.gradle", "", "```kotlin", "A()", "```", "", ""),
    ]
    check(text)


def test_an_admonition_shows_its_label_and_its_paragraph_form_stays_as_written() -> None:
    text = "[NOTE]\n====\nRead this.\n====\n\nTIP: Use it.\n\n[WARNING]\nCareful.\n"
    assert visible(text) == [
        "NOTE",
        "",
        "Read this.",
        "",
        "",
        "TIP: Use it.",
        "",
        "WARNING",
        "Careful.",
        "",
    ]


def test_block_titles_show_their_words() -> None:
    assert visible(".A title\n----\nx\n----\n")[0] == "A title"


def test_anchors_attribute_lines_entries_and_conditionals_show_nothing() -> None:
    text = "[[top]]\n[#id.role]\n:name: value\nifdef::env[]\nText.\nendif::[]\nifndef::x[Shown.]\n"
    assert visible(text) == ["", "", "", "", "Text.", "", "Shown.", ""]


def test_an_include_line_shows_nothing_and_is_never_a_chunk_of_its_own() -> None:
    text = "== A\n\ninclude::partial$a.adoc[]\n\n== B\n\nb\n"
    assert [(c.heading, c.content) for c in check(text)] == [("B", "== B\n\nb")]


def test_include_lines_in_a_listing_show_nothing_and_a_listing_of_only_them_no_fence() -> None:
    text = (
        "[source,java]\n----\ninclude::example$A.java[tags=a]\n----\n\n"
        "----\na\ninclude::b[]\n----\n"
    )
    assert visible(text) == ["", "", "", "", "", "```", "a", "", "```", ""]


def test_block_macros_show_only_an_images_alternative_text() -> None:
    text = "image::a.png[A diagram, 300]\n\ntoc::[]\n\ninclude-code::./Sample[tag=a,indent=0]\n"
    assert visible(text) == ["A diagram", "", "", "", "", ""]


def test_list_continuations_show_nothing_and_description_terms_lose_their_marks() -> None:
    text = "Term:: its text\nQ;; A\nLabel::\n+\nMore.\n\n* item\n+\nattached\n"
    assert visible(text) == [
        "Term: its text",
        "Q A",
        "Label",
        "",
        "More.",
        "",
        "* item",
        "",
        "attached",
        "",
    ]


def test_macros_and_cross_references_show_their_text() -> None:
    text = (
        "See xref:a/b.adoc#c[the guide], link:https://x.org/a[a link] and https://x.org[X].\n"
        "Use javadoc:org.a.Bean[] or {api-url}org/a/B.html[B] or mailto:a@b.org[].\n"
        "Read <<install,Installing>> and <<setup>>.[[anchor]] anchor:here[] indexterm:[a, b]\n"
    )
    assert visible(text)[:3] == [
        "See the guide, a link and X.",
        "Use org.a.Bean or B or mailto:a@b.org.",
        "Read Installing and setup.  ",
    ]


def test_formatting_marks_stay_as_markdown_keeps_them() -> None:
    assert visible("A **strong** _word_ and `code`.\n")[0] == "A **strong** _word_ and `code`."


def test_code_and_literal_text_keep_their_markup() -> None:
    text = (
        "----\nxref:a.adoc[b] <<c,d>> **/*.java\n----\n\n"
        "[source]\nxref:a.adoc[b] **e**\n\n  <<id,text>> literal\n"
    )
    assert visible(text) == [
        *("```", "xref:a.adoc[b] <<c,d>> **/*.java", "```", ""),
        *("", "xref:a.adoc[b] **e**", "", "  <<id,text>> literal", ""),
    ]


def test_a_fence_is_longer_than_any_run_of_backticks_its_code_starts_a_line_with() -> None:
    text = "[source,markdown]\n----\n```js\nx\n```\n----\n"
    assert visible(text) == ["", "````markdown", "```js", "x", "```", "````", ""]


def test_markdown_fences_show_as_written() -> None:
    assert visible("```ruby\nputs 1\n```\n") == ["```ruby", "puts 1", "```", ""]


def test_the_spring_security_site_keeps_every_invariant_with_almost_no_markup(
    shared_data: Path,
) -> None:
    files = sorted((shared_data / SITE).rglob("*.adoc"))
    assert len(files) > 190
    chunks = []
    for path in files:
        chunks += check(path.read_text(encoding="utf-8"), str(path))
    marked = [c for c in chunks if MARKUP.search(c.content)]
    assert len(marked) < MARKUP_SHARE * len(chunks), [c.content for c in marked][:3]
    assert not any(c.content.startswith("include::") for c in chunks)
    assert not any("xref:" in c.heading or "`" in c.heading for c in chunks)


def test_chunks_cite_the_files_own_lines() -> None:
    text = "= Doc\n\n[[a]]\n== Part\n\n[source,java]\n----\nx\n----\n"
    assert [
        (c.heading, c.content, c.start_line, c.end_line) for c in split_asciidoc("d.adoc", text)
    ] == [("Doc > Part", "== Part\n\n\n```java\nx\n```", 4, 9)]
