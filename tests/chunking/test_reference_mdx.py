"""The MDX chunker against the MDX project's own parser (remark-mdx, through
tests/reference/mdx_sections.mjs), over the mdx-js docs tree: the sections that hold content are
the chunker's sections, and no line of an import or export reaches a chunk.

The rules were written from the MDX specification and tuned on the first half of the tree's .mdx
files (sorted by path); the second half is reported and held to the goal apart.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from docshelf.chunking.mdx import outline_mdx, split_mdx
from tests.chunking import reference
from tests.conftest import REPO

TREE = "formats/mdx-js/docs"
SCRIPT = REPO / "tests" / "reference" / "mdx_sections.mjs"
MODULES = REPO / "tests" / "reference" / "node_modules"
# A file that loses a quarter of its sections is broken, whatever the average.
FILE_FLOOR = 0.75
# The reference parser reads the whole tree in about a second.
PARSER_SECONDS = 120


@pytest.fixture(scope="module")
def tree(shared_data: Path) -> list[Path]:
    files = sorted((shared_data / TREE).rglob("*.mdx"))
    assert len(files) == 35
    return files


@pytest.fixture(scope="module")
def parsed(tree: list[Path]) -> dict[str, Any]:
    """What remark-mdx reads in each file of the tree, from one run of the reference script."""
    node = shutil.which("node")
    missing = "remark-mdx is missing: install the reference parsers with `make reference-parsers`"
    assert node is not None, f"node is not installed; {missing}"
    assert (MODULES / "remark-mdx").is_dir(), missing
    run = subprocess.run(
        [node, str(SCRIPT), *map(str, tree)],
        capture_output=True,
        text=True,
        timeout=PARSER_SECONDS,
        check=False,
    )
    assert run.returncode == 0, f"{SCRIPT} failed: {run.stderr}\n{missing}"
    found: dict[str, Any] = json.loads(run.stdout)
    return found


def test_the_reference_parser_reads_every_file(tree: list[Path], parsed: dict[str, Any]) -> None:
    errors = {p.name: parsed[str(p)]["error"] for p in tree if "error" in parsed[str(p)]}
    assert not errors, f"remark-mdx rejected: {errors}"


def shares(files: list[Path], parsed: dict[str, Any]) -> dict[str, float | None]:
    """Per file, the share of remark-mdx's content-bearing titles among the chunker's sections
    (a file the parser rejected counts 0, so it shows among the worst)."""
    out: dict[str, float | None] = {}
    for path in files:
        result = parsed[str(path)]
        text = path.read_text(encoding="utf-8")
        if "error" in result:
            out[str(path)] = 0.0
            continue
        out[str(path)] = reference.agreement(result["titles"], split_mdx(str(path), text))
    return out


@pytest.mark.parametrize("part", ["tuned", "checked", "tree"])
def test_sections_with_content_are_the_ones_remark_mdx_finds(
    tree: list[Path], parsed: dict[str, Any], part: str
) -> None:
    half = len(tree) // 2
    files = {"tuned": tree[:half], "checked": tree[half:], "tree": tree}[part]
    by_file = shares(files, parsed)
    worst = sorted((s, p) for p, s in by_file.items() if s is not None)[:5]
    average = reference.average(by_file.values())
    assert average >= reference.GOAL, f"{part}: {average:.3f}; worst files: {worst}"
    assert all(s >= FILE_FLOOR for s, _ in worst), f"{part}: files below {FILE_FLOOR}: {worst}"


def test_no_import_or_export_line_reaches_a_chunk(tree: list[Path], parsed: dict[str, Any]) -> None:
    esm_lines = 0
    for path in tree:
        text = path.read_text(encoding="utf-8")
        lines = {n for a, b in parsed[str(path)].get("esm", []) for n in range(a, b + 1)}
        esm_lines += len(lines)
        visible = outline_mdx(text).text.split("\n")
        assert all(not visible[n - 1] for n in lines), f"{path.name}: an ESM line is visible"
        for chunk in split_mdx(str(path), text):
            content = chunk.content.split("\n")
            if len(content) != chunk.end_line - chunk.start_line + 1:
                continue  # a slice of one long line
            shown = [c for n, c in enumerate(content, chunk.start_line) if n in lines and c]
            assert not shown, f"{path.name}:{chunk.start_line}: ESM in a chunk: {shown}"
    assert esm_lines > 100  # the tree is full of them: the check looked at real ones
