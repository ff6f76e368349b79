"""The AsciiDoc chunker against Asciidoctor's own parser (tests/reference/asciidoc_sections.rb,
run once per tree): the sections that hold content are the ones the chunker makes.

docshelf cuts a description list's items (reference entries) into sections of its own, one level
below the title they sit under; Asciidoctor has no such section. So each chunk is compared by the
title it sits under: the breadcrumb of the section of `outline_asciidoc(entries=False)` that holds
its first line. The chunks are the ones split_asciidoc gives; only their names change.

The rules were tuned on the first half of the tree's files (by path) and checked on the second
half: each half must reach the goal too. `python -m tests.chunking.test_reference_asciidoc`
prints the figures.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

from docshelf.chunking import Chunk
from docshelf.chunking.asciidoc import outline_asciidoc, split_asciidoc
from tests.chunking import reference
from tests.conftest import REPO, SHARED_DATA

TREE = "formats/asciidoctor-pdf/docs"
SCRIPT = REPO / "tests" / "reference" / "asciidoc_sections.rb"
INSTALL = (
    "Asciidoctor is the AsciiDoc reference parser: install it with `make reference-parsers` "
    "(Debian's asciidoctor package, which brings ruby)"
)
# A file under this share has a section rule badly broken, whatever the tree's average.
FLOOR = 0.5
# A section Asciidoctor does not have is a title read inside a block or a paragraph: almost none
# is allowed, on average and in any file (reading titles inside delimited blocks makes 0.977 of
# the tree's sections real, and half of one file's).
PRECISION = 0.99
PRECISION_FLOOR = 0.9
# Asciidoctor parses the whole tree in about a second.
TIMEOUT_SECONDS = 120
_TAG = re.compile(r"<[^>]*>")


class Reference(NamedTuple):
    """A file's section titles as Asciidoctor converts them, as plain text."""

    content: list[str]  # of the sections that hold content
    sections: list[str]  # of every section, the document title included


def reference_titles(files: list[Path]) -> dict[str, Reference]:
    """What Asciidoctor finds in each file, from one run over all of them.

    Raises:
        pytest.fail.Exception: Asciidoctor (or ruby) is missing or failed; never a skip.
    """
    try:
        run = subprocess.run(
            ["ruby", str(SCRIPT), *map(str, files)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        pytest.fail(f"ruby is not installed. {INSTALL}.")
    if run.returncode != 0:
        pytest.fail(f"{SCRIPT.name} failed ({run.stderr.strip()[-2000:]}). {INSTALL}.")
    found: dict[str, dict[str, list[str]]] = json.loads(run.stdout)
    return {
        path: Reference(
            [plain(t) for t in titles["content"]], [plain(t) for t in titles["sections"]]
        )
        for path, titles in found.items()
    }


def plain(title: str) -> str:
    """A title Asciidoctor converted to HTML, as text: tags dropped, entities unescaped."""
    return html.unescape(_TAG.sub("", title))


def precision(sections: list[str], chunks: list[Chunk]) -> float | None:
    """The share of the chunks' sections (by their last crumbs) that Asciidoctor has as
    sections: the agreement counts the sections the chunker misses, this the ones it makes up.
    None for a file whose chunks have no heading."""
    ours = set(reference.last_crumbs(chunks))
    if not ours:
        return None
    return len(ours & {reference.words(t) for t in sections}) / len(ours)


def under_titles(path: str, text: str) -> list[Chunk]:
    """split_asciidoc's chunks, each with the breadcrumb of the title it sits under (a chunk inside
    an entry keeps its title's, not the entry's)."""
    return reference.under_titles(split_asciidoc(path, text), outline_asciidoc(text, entries=False))


def scores(root: Path) -> dict[str, tuple[float | None, float | None]]:
    """Each file's agreement (None when Asciidoctor finds no titled section with content) and
    precision, by its path under `root`."""
    files = sorted(root.rglob("*.adoc"))
    found = reference_titles(files)
    result = {}
    for path in files:
        chunks = under_titles(str(path), path.read_text(encoding="utf-8"))
        titles = found[str(path)]
        result[path.relative_to(root).as_posix()] = (
            reference.agreement(titles.content, chunks),
            precision(titles.sections, chunks),
        )
    return result


def halves(shares: dict[str, float | None]) -> tuple[list[float | None], list[float | None]]:
    """The files tuned on (the first half by path) and those checked on (the rest)."""
    ordered = [shares[path] for path in sorted(shares)]
    return ordered[: len(ordered) // 2], ordered[len(ordered) // 2 :]


@pytest.fixture(scope="module")
def found(shared_data: Path) -> dict[str, tuple[float | None, float | None]]:
    """The scores of every file of the tree, from one run of Asciidoctor."""
    return scores(shared_data / TREE)


def test_asciidoctor_and_the_chunker_agree_on_the_sections_that_hold_content(
    found: dict[str, tuple[float | None, float | None]],
) -> None:
    assert len(found) > 100
    shares = {path: share for path, (share, _) in found.items()}
    worst = sorted((s, path) for path, s in shares.items() if s is not None)[:5]
    average = reference.average(shares.values())
    assert average >= reference.GOAL, f"{average:.3f} on average; worst files: {worst}"
    assert worst[0][0] >= FLOOR, f"files far below the goal: {worst}"
    tuned, checked = halves(shares)
    assert reference.average(tuned) >= reference.GOAL
    assert reference.average(checked) >= reference.GOAL, "the rules fit only the half tuned on"


def test_the_chunker_makes_up_no_section_asciidoctor_does_not_have(
    found: dict[str, tuple[float | None, float | None]],
) -> None:
    shares = {path: share for path, (_, share) in found.items()}
    worst = sorted((s, path) for path, s in shares.items() if s is not None)[:5]
    average = reference.average(shares.values())
    assert average >= PRECISION, f"{average:.3f} on average; worst files: {worst}"
    assert worst[0][0] >= PRECISION_FLOOR, f"files with sections made up: {worst}"


def test_a_missing_reference_parser_fails_with_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match="make reference-parsers"):
        reference_titles([])


if __name__ == "__main__":
    results = scores(SHARED_DATA / TREE)
    for name, at in (("agreement", 0), ("precision", 1)):
        shares = {path: pair[at] for path, pair in results.items()}
        tuned_half, checked_half = halves(shares)
        print(f"{TREE} {name}: {reference.average(shares.values()):.3f} over {len(results)} files")
        print(f"  tuned on the first half:    {reference.average(tuned_half):.3f}")
        print(f"  checked on the second half: {reference.average(checked_half):.3f}")
