"""AsciiDoc reference entries: a description list's items are sections, one level below the title
(or entry) they sit in, named by the term; the text after the list is the title's again."""

from __future__ import annotations

from pathlib import Path

from docshelf.chunking.asciidoc import outline_asciidoc
from docshelf.chunking.text import prepare
from tests.chunking.test_asciidoc import check

THEMING = "formats/asciidoctor-pdf/docs/modules/theme/pages"


def ranges(text: str) -> list[tuple[str, int, int]]:
    return [(c.heading, c.start_line, c.end_line) for c in check(text)]


def test_each_item_is_a_section_named_by_its_term_on_the_files_lines() -> None:
    text = (
        "= Guide\n\n== Keys\n\nThe keys:\n\n"
        "font-size:: The size of the text.\nIn points.\n"
        "font-color::\nThe color of the text.\n"
    )
    chunks = check(text)
    assert [(c.heading, c.content, c.start_line, c.end_line) for c in chunks] == [
        ("Guide > Keys", "== Keys\n\nThe keys:", 3, 5),
        ("Guide > Keys > font-size", "font-size: The size of the text.\nIn points.", 7, 8),
        ("Guide > Keys > font-color", "font-color\nThe color of the text.", 9, 10),
    ]
    lines = prepare(text).split("\n")
    for c in chunks[1:]:  # a term's line starts its chunk, at its own line number
        assert lines[c.start_line - 1].startswith(c.heading.rsplit(" > ", 1)[-1])


def test_a_long_description_keeps_its_term_as_the_last_crumb_in_every_piece() -> None:
    description = "".join(f"Sentence {n} of a long description of the key.\n" for n in range(120))
    text = f"== Keys\n\nborder-width::\n{description}\nAfter the list.\n"
    chunks = check(text)
    pieces = [c for c in chunks if c.heading == "Keys > border-width"]
    assert len(pieces) > 2
    assert (pieces[0].start_line, pieces[-1].end_line) == (3, 3 + 120)
    assert chunks[-1].heading == "Keys"
    assert chunks[-1].content == "After the list."
    assert chunks[-1].start_line == chunks[-1].end_line == 3 + 120 + 2


def test_nested_terms_are_one_level_deeper_and_a_sibling_ends_them() -> None:
    text = (
        "== Options\n\nIntro.\n\n"
        "output:: Where it goes.\n"
        "file::: A file.\n"
        "dir::: A folder.\n"
        "mode;; Its mode.\n"
        "input:: Where it comes from.\n"
    )
    assert ranges(text) == [
        ("Options", 1, 3),
        ("Options > output", 5, 5),
        ("Options > output > file", 6, 6),
        ("Options > output > dir", 7, 7),
        ("Options > output > dir > mode", 8, 8),
        ("Options > input", 9, 9),
    ]


def test_the_text_after_the_list_goes_back_to_the_title() -> None:
    text = "== A\n\nBefore.\n\nterm:: text\n\nAfter.\n\n.Listing\n----\ncode\n----\n\n=== B\n\nb\n"
    assert ranges(text) == [("A", 1, 3), ("A > term", 5, 5), ("A", 7, 12), ("A > B", 14, 16)]


def test_a_deeper_title_after_entries_nests_under_the_title_not_the_entry() -> None:
    assert ranges("== A\n\nterm:: text\n\n==== Deep\n\nd\n") == [
        ("A > term", 3, 3),
        ("A > Deep", 5, 7),
    ]


def test_blocks_attached_to_an_item_belong_to_it_and_a_list_inside_them_nests() -> None:
    text = (
        "== A\n\n"
        "outer::\n+\n[source,yaml]\n----\nkey: value\n----\n+\n"
        "--\nInside.\n\ninner:: nested text\n--\n"
        "+\nMore of outer.\n\n"
        "Back to A.\n"
    )
    assert ranges(text) == [
        ("A > outer", 3, 11),
        ("A > outer > inner", 13, 13),
        ("A > outer", 16, 16),
        ("A", 18, 18),
    ]


def test_a_list_in_a_block_ends_with_the_block() -> None:
    text = "== A\n\n****\nterm:: text\n****\n\nAfter the sidebar.\n"
    assert ranges(text) == [("A > term", 4, 4), ("A", 7, 7)]


def test_tab_labels_are_no_entries() -> None:
    tabs = (
        '[tabs]\n======\nJava::\n+\n[source,java,role="primary"]\n----\nnew A();\n----\n\n'
        "Kotlin::\n+\n[source,kotlin]\n----\nA()\n----\n======\n"
    )
    assert {c.heading for c in check(f"== Config\n\nText.\n\n{tabs}")} == {"Config"}
    # Tabs attached to a list item, as Spring Security's steps hold them.
    attached = f"== Config\n\n. Step one:\n+\n{tabs}"
    assert {c.heading for c in check(attached)} == {"Config"}
    # ... and inside an entry: the entry's name, never a tab's.
    inside = f"== Config\n\nbean::\n+\n{tabs}"
    assert {c.heading for c in check(inside)} == {"Config > bean"}


def test_double_colons_that_are_no_term_make_no_entry() -> None:
    text = (
        "== A\n\n"
        "include::partial$x.adoc[]\n\n"
        "image::diagram.png[A diagram]\n\n"
        "Call Foo::bar from xref:a.adoc[the page] or https://example.org::x.\n"
        "The scope operator :: stays text.\n\n"
        ":name: ends in a colon::\n"
        ":other: value\n\n"
        "* item with Foo::bar inside\n"
        "* scope operator :: here\n\n"
        "----\nkey:: not a term in a listing\n----\n\n"
        "....\nliteral:: neither\n....\n\n"
        "++++\npass:: neither\n++++\n\n"
        "////\ncomment:: neither\n////\n"
    )
    assert {c.heading for c in check(text)} == {"A"}


def test_a_term_names_its_entry_in_plain_words() -> None:
    text = (
        ":product: Shop\n\n== A\n\n"
        "{product} key:: text\n"
        "xref:keys.adoc#size[The *size* key]:: text\n"
        "[[hex]]`#hex`:: text\n"
        "https://example.org[Example]:: text\n"
    )
    assert [c.heading for c in check(text)] == [
        "A > Shop key",
        "A > The size key",
        "A > #hex",
        "A > Example",
    ]


def test_a_term_without_a_description_stays_as_its_words() -> None:
    text = "== A\n\nfirst::\nsecond:: shared text\n\nlast::\n"
    chunks = check(text)
    assert [(c.heading, c.content) for c in chunks] == [
        ("A > first", "first"),
        ("A > second", "second: shared text"),
        ("A > last", "last"),
    ]


def test_the_outline_switches_off_entries_or_the_text_resumed_after_them() -> None:
    text = "== A\n\nIntro.\n\nterm:: text\n\nAfter.\n\n== B\n\nb\n"
    headings = [s.heading for s in outline_asciidoc(text).sections]
    assert headings == ["", "A", "A > term", "A", "B"]
    titles = [s.heading for s in outline_asciidoc(text, entries=False).sections]
    assert titles == ["", "A", "B"]  # the sections Asciidoctor sees
    no_resume = [s.heading for s in outline_asciidoc(text, resume=False).sections]
    assert no_resume == ["", "A", "A > term", "B"]  # no section named as its parent


def test_the_lines_of_an_entry_are_the_files() -> None:
    text = "= T\n:toc:\n\n== A\n\n// note\nx:: one\n+\n----\ncode\n----\ny::\n\n  literal\n"
    lines = prepare(text).split("\n")
    chunks = check(text)
    assert [(c.heading, c.start_line, c.end_line) for c in chunks] == [
        ("T > A > x", 7, 11),
        ("T > A > y", 12, 14),
    ]
    assert lines[6] == "x:: one" and lines[10] == "----" and lines[13] == "  literal"


def test_a_theming_guide_page_has_chunks_named_by_its_terms(shared_data: Path) -> None:
    path = shared_data / THEMING / "role.adoc"
    text = path.read_text(encoding="utf-8")
    chunks = check(text, str(path))
    lines = prepare(text).split("\n")
    (lead,) = [c for c in chunks if c.heading.endswith(" > lead")]
    assert lead.heading.split(" > ")[-2] == "Built-in roles"
    assert lines[lead.start_line - 1].startswith("lead:: The `lead` role")
    assert lead.content.startswith("lead: The `lead` role")
    named = {c.heading.rsplit(" > ", 1)[-1] for c in chunks}
    assert {"big", "small", "underline", "nowrap"} <= named


def test_a_list_that_ends_the_text_adds_no_empty_section_after_it() -> None:
    # Found by the generated documents: a block delimiter left open at the end closed the list
    # on the last (empty) line, where a section named as the title would have started.
    assert ranges("term:: def\n= Doc\n=====") == [("term", 1, 2)]
    assert [s.heading for s in outline_asciidoc("term:: def\n= Doc\n=====").sections] == [
        "",
        "term",
    ]
