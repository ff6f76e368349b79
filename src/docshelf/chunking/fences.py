"""Fenced code blocks, as both chunkers recognise them.

A fence opens with three or more backticks or tildes (a backtick fence's info string may not
contain a backtick, or the line is inline code), at any indentation, or after list markers
("- ```bash", "1. ```"): documentation nests fences in list items and admonitions, and a
heading-like line inside any of them must stay content. It closes only on a line of the same
character, at least as long, with nothing after it but spaces or tabs, indented at most three
columns deeper than the opening marker (at most three columns for a fence at the top level), as
CommonMark has it. An unclosed fence runs to the end of the file.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# The opening line: indentation and list markers, the marker, the info string.
_OPEN = re.compile(r"([ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*)(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"([ \t]*)(`{3,}|~{3,})[ \t]*")
# A line that may open a fence, as a pattern for the scanners to embed. (Possessive quantifiers:
# a list item that opens no fence fails without backtracking.)
_LIST_MARKER = r"(?:[-+*]|\d{1,9}+[.)])[ \t]++"
MAY_OPEN_PATTERN = rf"[ \t]*+(?:```|~~~|{_LIST_MARKER}(?:{_LIST_MARKER})*+(?:```|~~~))"
# A closing line, matched from the newline before it. (The lookahead lets most lines fail on
# their first character.)
_BACKTICK_CLOSE = re.compile(r"\n(?=[ \t`])([ \t]*+)(`{3,}+)[ \t]*+(?=\n|\Z)")
_TILDE_CLOSE = re.compile(r"\n(?=[ \t~])([ \t]*+)(~{3,}+)[ \t]*+(?=\n|\Z)")
# A closing line may be indented this many columns deeper than the opening marker.
CLOSING_INDENT = 3
TAB_STOP = 4


class Fence(NamedTuple):
    """An open fence: its marker (for example "```" or "~~~~") and the deepest indentation, in
    columns, of a line that can close it."""

    marker: str
    limit: int


def fence_open(line: str) -> Fence | None:
    """The fence `line` opens, else None."""
    m = _OPEN.match(line)
    if m is None:
        return None
    marker = m.group(2)
    if marker[0] == "`" and "`" in m.group(3):
        return None
    prefix = m.group(1)
    column = _columns(prefix)
    nested = column > CLOSING_INDENT or bool(prefix.strip())  # deeper, or after list markers
    return Fence(marker, column + CLOSING_INDENT if nested else CLOSING_INDENT)


def fence_closes(line: str, fence: Fence) -> bool:
    """Whether `line` closes `fence`."""
    m = _CLOSE.fullmatch(line)
    return m is not None and _closes(m.group(1), m.group(2), fence)


def fence_end(text: str, newline: int, fence: Fence) -> int:
    """Where the line closing `fence` ends (the offset of its newline, or the end of the text),
    searching from `newline`, the newline ending the opening line; -1 when it is never closed."""
    closes = _BACKTICK_CLOSE if fence.marker[0] == "`" else _TILDE_CLOSE
    pos = newline
    while (m := closes.search(text, pos)) is not None:
        if _closes(m.group(1), m.group(2), fence):
            return m.end()
        pos = m.end()
    return -1


def looks_like_fence(line: str) -> bool:
    """A line a Markdown reader may take for a fence marker, opening or closing."""
    m = _OPEN.match(line)
    return m is not None


def _closes(indent: str, marker: str, fence: Fence) -> bool:
    return (
        marker[0] == fence.marker[0]
        and len(marker) >= len(fence.marker)
        and _columns(indent) <= fence.limit
    )


def _columns(prefix: str) -> int:
    """The width of a line's prefix, tabs advancing to the next multiple of four."""
    if "\t" not in prefix:
        return len(prefix)
    column = 0
    for ch in prefix:
        column = (column // TAB_STOP + 1) * TAB_STOP if ch == "\t" else column + 1
    return column
