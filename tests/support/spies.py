"""Calls counted: a method replaced by one that records how many texts each call took."""

from __future__ import annotations

from typing import Any

import pytest


def count_texts(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Replace `owner.name` (a method taking a list of texts first) by one that records the
    length of that list on each call, then calls the original; returns the record."""
    original = getattr(owner, name)
    calls: list[int] = []

    def counted(texts: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(texts))
        return original(texts, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
