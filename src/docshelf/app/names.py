"""The names workspaces are shown by: short and stable, never a password or token."""

from __future__ import annotations

import re
from collections.abc import Sequence


def short_names(names: Sequence[str]) -> dict[str, str]:
    """The name each workspace is shown by: its repository's name (the last part of its path or
    clone URL, without `.git`), with the folder above it, then a number, when two collide.
    Stable: it depends only on the set of names, and never holds a password (clone URLs are
    redacted before they become names)."""

    def parts(name: str) -> list[str]:
        text = name.rstrip("/")
        if "://" in text:
            authority, _, rest = text.split("://", 1)[1].partition("/")
            # never the user or password; the host (without its port) when there is no path
            text = rest or authority.rpartition("@")[2].split(":", 1)[0]
        text = text.split("?", 1)[0].split("#", 1)[0]
        if text.endswith(".git"):
            text = text[:-4]
        pieces = [p for p in re.split(r"[/\\:]", text) if p and "@" not in p]
        return [re.sub(r"[^A-Za-z0-9._-]+", "-", p).strip("-") or "docs" for p in pieces] or [
            "docs"
        ]

    chosen: dict[str, str] = {}
    split = {name: parts(name) for name in sorted(set(names))}
    for name, pieces in split.items():
        label = pieces[-1]
        if sum(1 for other in split.values() if other[-1] == label) > 1 and len(pieces) > 1:
            label = f"{pieces[-2]}-{pieces[-1]}"
        chosen[name] = label
    counts: dict[str, int] = {}
    for name in sorted(chosen):
        label = chosen[name]
        counts[label] = counts.get(label, 0) + 1
        if counts[label] > 1:
            chosen[name] = f"{label}-{counts[label]}"
    return chosen
