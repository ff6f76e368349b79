"""YAML front matter at the start of a Markdown or MDX file: where it ends, its title, and the
description a page shows as its lead. Front matter is not prose; only its description's words
are shown (on their own lines, so a file's lines stay one for one).
"""

from __future__ import annotations

import re

from docshelf.chunking.text import cut_title

_FRONT_MATTER_END = re.compile(r"\n(?:---|\.\.\.)[^\S\n]*(?=\n|\Z)")
_FRONT_MATTER_TITLE = re.compile(r"^title[ \t]*:(.*)$", re.MULTILINE)
_FRONT_MATTER_DESCRIPTION = re.compile(r"^description[ \t]*:(.*)$", re.MULTILINE)
# A line front matter cannot hold: not blank, indented, a comment, a list item or "key:".
_NOT_YAML = re.compile(
    r"\n(?![ \t#]|-(?:[ \t]|(?=\n|\Z))|[^\s:][^:\n]*:(?:[ \t]|(?=\n|\Z))|[^\S\n]*(?=\n|\Z))"
)


def front_matter(text: str) -> tuple[int, str]:
    """The offset just after YAML front matter (0 without any), and its title."""
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return 0, ""
    m = _FRONT_MATTER_END.search(text, first_end)
    if m is None or _NOT_YAML.search(text, first_end, m.start() + 1) is not None:
        return 0, ""  # a thematic break, then prose: no front matter
    end = m.end() + 1 if m.end() < len(text) else m.end()
    title = _FRONT_MATTER_TITLE.search(text, first_end, m.start() + 1)
    return end, cut_title(unquote(title.group(1).strip())) if title else ""


def lead_text(text: str, end: int) -> str | None:
    """The front matter text[:end] as a page shows it when it has a top-level description: every
    line empty but the description's words (front_matter_lead). None without one."""
    pieces = front_matter_lead(text, end)
    if not pieces:
        return None
    parts: list[str] = []
    at = 0
    for a, b in pieces:
        parts += ("\n" * text.count("\n", at, a), text[a:b])
        at = b
    parts.append("\n" * text.count("\n", at, end))
    return "".join(parts)


def front_matter_lead(text: str, end: int) -> list[tuple[int, int]]:
    """The words of the top-level `description:` of the front matter text[:end], which Hugo's
    docs theme shows as the page's lead and search engines as its summary: its value (unquoted)
    or a block scalar's lines (`>-`, `|`), each as (start, end) on one line, in order."""
    m = _FRONT_MATTER_DESCRIPTION.search(text, 0, end)
    if m is None:
        return []
    a, b = m.span(1)
    while a < b and text[a] in " \t":
        a += 1
    while b > a and text[b - 1] in " \t":
        b -= 1
    if text[a:b].rstrip("+-") not in {">", "|"}:
        if b - a >= 2 and text[a] == text[b - 1] and text[a] in "\"'":
            a, b = a + 1, b - 1
        return [(a, b)] if text[a:b].strip() else []
    pieces = []
    line = b + 1
    while line < end and text[line] in " \t":  # the block's lines are indented
        stop = text.find("\n", line, end)
        stop = stop if stop >= 0 else end
        first = len(text[line:stop]) - len(text[line:stop].lstrip(" \t")) + line
        if first < stop:
            pieces.append((first, len(text[first:stop].rstrip(" \t")) + first))
        line = stop + 1
    return pieces


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value
