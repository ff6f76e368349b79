"""Fenced code blocks, as both chunkers recognise them.

A fence opens with three or more backticks or tildes (a backtick fence's info string may not
contain a backtick, or the line is inline code). It closes only on a line of the same character,
at least as long, with nothing after it but spaces or tabs; an unclosed fence runs to the end of
the file. Indentation is not limited: documentation nests fences in list items and admonitions,
and a heading-like line inside any of them must stay content.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")
# A closing line, matched from the newline before it. (The lookahead lets most lines fail on
# their first character.)
_BACKTICK_CLOSE = re.compile(r"\n(?=[ \t`])[ \t]*(`{3,})[ \t]*(?=\n|\Z)")
_TILDE_CLOSE = re.compile(r"\n(?=[ \t~])[ \t]*(~{3,})[ \t]*(?=\n|\Z)")


def fence_open(line: str) -> str | None:
    """The fence marker (for example "```" or "~~~~") when `line` opens a fence, else None."""
    m = _OPEN.match(line)
    if m is None:
        return None
    marker = m.group(1)
    if marker[0] == "`" and "`" in m.group(2):
        return None
    return marker


def fence_closes(line: str, marker: str) -> bool:
    """Whether `line` closes the fence opened with `marker`."""
    m = _CLOSE.fullmatch(line)
    return m is not None and m.group(1)[0] == marker[0] and len(m.group(1)) >= len(marker)


def looks_like_fence(line: str) -> bool:
    """A line a Markdown reader may take for a fence marker, opening or closing."""
    stripped = line.lstrip(" \t")
    return stripped.startswith(("```", "~~~"))


def fence_end(text: str, newline: int, marker: str) -> int:
    """Where the line closing a fence ends (the offset of its newline, or the end of the text),
    searching from `newline`, the newline ending the opening line; -1 when the fence is never
    closed."""
    closes = _BACKTICK_CLOSE if marker[0] == "`" else _TILDE_CLOSE
    pos = newline
    while (m := closes.search(text, pos)) is not None:
        if len(m.group(1)) >= len(marker):
            return m.end()
        pos = m.end()
    return -1
