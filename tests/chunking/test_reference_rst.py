"""The reStructuredText chunker against docutils, the format's own parser, on the shared Sphinx
trees: per file, the share of the sections docutils finds holding content whose titles the
chunker's breadcrumbs end with (tests/chunking/reference.py).

docshelf cuts reference entries (`.. option::`, `.. confval::`) into sections of its own, one
level below the title they sit under; docutils has no such section, and counts the entries as
the content of the title's. So each chunk is compared by the title it sits under: its
breadcrumb with the entries' crumbs left off (the section of `outline_rst(entries=False)` that
holds its first line). The chunks are the ones split_rst gives; only their names change.

The rules were designed from docutils' parser and tuned on requests; pytest (259 files,
directive-heavy, a long changelog) is the check they were not tuned on. docutils reads each tree
once, in one process over all its files (tests/reference/rst_sections.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from docshelf.chunking import Chunk
from docshelf.chunking.rst import outline_rst, split_rst
from tests.chunking import reference
from tests.conftest import REPO

SCRIPT = REPO / "tests" / "reference" / "rst_sections.py"
# The tree each figure is measured on: the rules were tuned on requests, checked on pytest.
TREES = {
    "requests (tuned on)": "formats/requests/docs",
    "pytest (checked on)": "formats/pytest/doc",
}
# No file may agree less than this: a file this far off is broken, whatever the average says.
FILE_FLOOR = 0.5
# How many of the worst files a failure lists.
WORST = 8
# docutils reads the pytest tree in about ten seconds on two cores.
REFERENCE_TIMEOUT = 300


def docutils_titles(paths: list[str]) -> dict[str, list[str]]:
    """docutils' content-bearing section titles of each file, read in one run of the script.

    Raises:
        pytest.fail.Exception: docutils is missing, or it could not read a file.
    """
    probe = subprocess.run(
        [sys.executable, "-c", "import docutils"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.fail(
            "docutils, the reference parser, is missing: install the dev extras and the "
            "reference parsers with `make reference-parsers` (or `.venv/bin/pip install -c "
            "constraints.txt -e '.[dev]'`)"
        )
    run = subprocess.run(
        [sys.executable, str(SCRIPT), *paths],
        capture_output=True,
        text=True,
        timeout=REFERENCE_TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    files = json.loads(run.stdout)["files"]
    errors = [f"{f['path']}: {f['error']}" for f in files if f["error"]]
    assert not errors, "docutils could not read:\n" + "\n".join(errors)
    return {f["path"]: f["titles"] for f in files}


def under_titles(path: str, text: str) -> list[Chunk]:
    """split_rst's chunks, each with the breadcrumb of the title it sits under (a chunk inside
    an entry keeps its title's, not the entry's)."""
    return reference.under_titles(split_rst(path, text), outline_rst(text, entries=False))


@pytest.mark.parametrize("tree", TREES)
def test_sections_agree_with_docutils(shared_data: Path, tree: str) -> None:
    root = shared_data / TREES[tree]
    paths = sorted(str(p) for p in root.rglob("*.rst"))
    assert len(paths) >= 15
    titles = docutils_titles(paths)
    shares = {
        path: reference.agreement(titles[path], under_titles(path, Path(path).read_text("utf-8")))
        for path in paths
    }
    scored = sorted((share, path) for path, share in shares.items() if share is not None)
    worst = "\n".join(f"{share:.2f} {Path(path).relative_to(root)}" for share, path in scored)
    worst = "\n".join(worst.split("\n")[:WORST])
    average = reference.average(shares.values())
    assert average >= reference.GOAL, f"{tree}: {average:.3f} on average; the worst:\n{worst}"
    assert scored[0][0] >= FILE_FLOOR, f"{tree}: files below {FILE_FLOOR}:\n{worst}"
