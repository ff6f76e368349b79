"""docs/cli.md is the commands' own --help, as scripts/cli_reference.py renders it."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

from tests.conftest import REPO


def cli_reference() -> ModuleType:
    path = REPO / "scripts" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_the_commands_help() -> None:
    rendered = cli_reference().render()
    written = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == rendered, (
        "docs/cli.md differs from the commands' --help: run `make cli-reference` and commit it"
    )


def test_the_reference_names_no_home_of_this_machine() -> None:
    rendered = cli_reference().render()
    home = os.path.expanduser("~")
    if home not in ("", "/"):
        assert home not in rendered
    assert "~/.local/share/docshelf/docshelf.sqlite3" in rendered
