from __future__ import annotations

import os

import pytest

from docshelf._platform import require_posix


def test_a_system_other_than_posix_is_refused_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "name", "nt")
    with pytest.raises(ImportError) as raised:
        require_posix()
    assert str(raised.value) == (
        "docshelf needs a POSIX system (Linux, macOS): it uses fcntl locks and O_NOFOLLOW; "
        "on Windows run it under WSL"
    )


def test_posix_passes() -> None:
    assert os.name == "posix"
    require_posix()
