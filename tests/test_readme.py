"""The README and docs/ are the user's manual: every command and option of the CLI is in the
reference generated from --help (docs/cli.md), every command has an example, and the README's
Python examples run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click

from docshelf.cli import cli
from tests.conftest import REPO


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    # docs/cli.md is generated from --help (tests/test_cli_reference.py keeps it current); this
    # checks it is whole: a heading per command, each option and each choice.
    reference = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    commands = {"docshelf": cli, **{f"docshelf {n}": c for n, c in cli.commands.items()}}
    for name, command in commands.items():
        assert f"## `{name}`" in reference, name
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts:
                    assert opt in reference, f"{name} {opt}"
                if isinstance(param.type, click.Choice):
                    choices = "|".join(str(choice) for choice in param.type.choices)
                    assert f"[{choices}]" in reference, f"{name} {param.opts[0]}"


def guides() -> dict[str, str]:
    """The README and the pages of docs/ written by hand (not the generated reference)."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return {
        str(page.relative_to(REPO)): page.read_text(encoding="utf-8")
        for page in pages
        if page.name != "cli.md"
    }


def test_the_readme_names_the_two_commands_and_links_the_reference() -> None:
    readme = guides()["README.md"]
    assert "make run" in readme and "make test" in readme
    assert "](docs/cli.md)" in readme


def test_every_command_has_an_example_in_the_readme_or_docs() -> None:
    blocks = [
        block
        for text in guides().values()
        for block in re.findall(r"^```(?:bash|text)\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    ]
    for name in cli.commands:
        example = re.compile(rf"^(?:\$ )?docshelf {name}\b", re.MULTILINE)
        assert any(example.search(block) for block in blocks), f"no example of docshelf {name}"


def python_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", readme, re.DOTALL | re.MULTILINE)


def test_the_readme_python_examples_run_as_written(tmp_path: Path) -> None:
    blocks = python_blocks()
    assert len(blocks) == 2
    assert all("import docshelf" in b or "from docshelf import" in b for b in blocks)
    # Run where the README says (a checkout of this repository), with a home of its own for ~.
    env = {**os.environ, "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("XDG_DATA_HOME", None)
    outputs = []
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    hits = outputs[0].splitlines()
    assert len(hits) == 3
    assert hits[0].startswith("docs/chunking.md:"), outputs[0]
    assert (tmp_path / "docshelf-example.sqlite3").is_file()
    assert outputs[1].splitlines()[0] == "Checkout 1 3"


def test_the_readme_python_examples_use_only_exported_names() -> None:
    import docshelf  # noqa: PLC0415 - the package under test

    for block in python_blocks():
        for name in re.findall(r"\bdocshelf\.(\w+)", block):
            assert name in docshelf.__all__, name
        for names in re.findall(r"^from docshelf import (.+)$", block, re.MULTILINE):
            for name in names.split(","):
                assert name.strip() in docshelf.__all__, name
