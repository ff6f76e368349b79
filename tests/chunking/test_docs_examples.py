"""The examples of docs/chunking.md's "Other formats" chunk as the page says they do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docshelf.chunking import Kind, chunk_file

PAGE = Path(__file__).resolve().parents[2] / "docs" / "chunking.md"

# Per example: its kind, the breadcrumbs the page names, and text the page says never shows.
EXAMPLES: dict[str, tuple[Kind, list[str], list[str]]] = {
    "mdx": (
        "mdx",
        ["Install", "Install > With npm"],
        ["import", "export", "sidebar", "props", "<Tabs", "<TabItem", "value="],
    ),
    "rst": ("rst", ["Install > Quick start", "Install > Upgrading"], [":orphan:", "maintainers"]),
    "asciidoc": (
        "asciidoc",
        ["Shop Manual", "Shop Manual > Payments"],
        ["Jane Doe", ":toc:", ":page-layout:", "a comment"],
    ),
}


@pytest.mark.parametrize("lang", sorted(EXAMPLES))
def test_the_pages_example_has_the_breadcrumbs_it_names(lang: str) -> None:
    kind, crumbs, hidden = EXAMPLES[lang]
    found = re.search(rf"```{lang}\n(.*?)```\n", PAGE.read_text(encoding="utf-8"), re.S)
    assert found is not None, f"docs/chunking.md has no {lang} example"
    chunks = chunk_file(f"example.{lang}", found.group(1), kind)
    assert [c.heading for c in chunks] == crumbs
    content = "\n".join(c.content for c in chunks)
    for text in hidden:
        assert text not in content, text
    if lang == "mdx":
        assert "`npm install {name}`" in content  # code keeps its braces
        assert "\nnpm\n" in content  # the tab's label stays as a word, its tag goes
