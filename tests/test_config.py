"""Settings: the default store lives in the user data directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docshelf.config import Config, default_store_location


def test_the_default_store_is_a_file_in_the_user_data_directory() -> None:
    location = Path(default_store_location())
    assert location.name == "docshelf.sqlite3"
    assert location.parent.name == "docshelf"
    assert Config().store == str(location)


def test_the_default_store_follows_xdg_data_home(tmp_path: Path) -> None:
    code = "from docshelf.config import default_store_location; print(default_store_location())"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
    )
    assert result.stdout.strip() == str(tmp_path / "docshelf" / "docshelf.sqlite3")


def test_the_api_key_is_kept_out_of_the_configs_repr() -> None:
    assert "sk-secret" not in repr(Config(api_key="sk-secret"))
