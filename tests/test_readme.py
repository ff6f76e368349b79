"""The README is the user's manual: every command and option of the CLI appears in it."""

from __future__ import annotations

import click

from docshelf.cli import cli
from tests.conftest import REPO


def test_every_command_and_option_is_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
    commands = {"docshelf": cli, **{f"docshelf {n}": c for n, c in cli.commands.items()}}
    for name, command in commands.items():
        assert f"`{name}" in readme, name
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts:
                    assert opt in readme, f"{name} {opt}"
                if isinstance(param.type, click.Choice):
                    for choice in param.type.choices:
                        assert f"{param.opts[0]} {choice}" in readme, f"{name} {choice}"
