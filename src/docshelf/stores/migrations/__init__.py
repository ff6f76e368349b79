"""Versioned SQL migrations, one folder per store, files named NNNN_description.sql."""

from __future__ import annotations

import re
from importlib.resources import files

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")


def migrations(store: str) -> list[tuple[int, str, str]]:
    """(version, file name, SQL) for every migration of `store`, in version order."""
    found = []
    for entry in files(__package__).joinpath(store).iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions) or versions != list(range(1, len(versions) + 1)):
        raise RuntimeError(f"{store} migrations must be numbered 1, 2, 3... once each: {versions}")
    return found
