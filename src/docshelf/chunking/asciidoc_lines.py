"""What one line of AsciiDoc is, as Asciidoctor's parser tells it: a delimiter (and the kind
of block it opens), a comment, a block attribute line, a list item's marker or a description
list's term, a section title; and the words a one-line block macro shows.

Constraints:
- Pure functions of a line (and, for a title, the line after it): no state, no I/O. The scanner
  (asciidoc.py, asciidoc_blocks.py) keeps the state and calls these where a line may be more than
  text, never for every line of prose or code.
- Each pattern is matched against a whole stripped line (fullmatch) or at its start (match), and
  none can backtrack over a line more than a bounded number of times.
"""

from __future__ import annotations

import re

# A delimited block's opening line is its closing line: two characters for an open block, four or
# more of one character for the others (a table's first character may differ), three backticks
# and an optional language for fenced code, which closes on three backticks. What one holds:
# blocks, lines shown as they are, a comment, a table's cells (lines shown as they are but for
# comment lines: an AsciiDoc cell is a document of its own, whose entries stay in it).
COMPOUND, VERBATIM, COMMENT, TABLE = range(4)
DELIMITED = {
    **dict.fromkeys(("----", "....", "++++"), VERBATIM),
    **dict.fromkeys(("====", "****", "____"), COMPOUND),
    **dict.fromkeys(("|===", ",===", ":===", "!==="), TABLE),
    "////": COMMENT,
}
DELIMITER_HEADS = frozenset(tip[:2] for tip in DELIMITED) | {"--", "``"}
DELIMITER_FIRST = frozenset(head[0] for head in DELIMITER_HEADS)
FENCE = "```"

# Asciidoctor's patterns for lines, each matched against a whole stripped line (fullmatch) or at
# its start (match).
BLOCK_ANCHOR = re.compile(r"\[\[(?:|(?:[^\W\d]|:)[\w\-:.]*+(?:, *+.+)?)\]\]")
BLOCK_ATTRIBUTES = re.compile(r"\[(?:|[\w.#%{,\"'].*)\]")
LIST_ITEM = re.compile(
    r"[ \t]*+(-|\*++|\u2022|\.++|[0-9]++\.|[a-zA-Z]\.|[IVXivx]++\))[ \t]|(<(?:[0-9]++|\.)>)[ \t]"
)
ITEM_FIRST = frozenset(" \t-*\u2022.<0123456789IVXivx")  # or a letter and ".": "a. alpha"
_DESCRIPTION_MARK = re.compile(r"(?::{2,4}+|;;)(?=[ \t]|$)")
_ALNUM = re.compile(r"[^\W_]")
_STYLE_END = re.compile(r"[#.%]")
TERM = (":", ";")  # how a description list's marker ends
SETEXT_LEVELS = {"=": 0, "-": 1, "~": 2, "^": 3, "+": 4}
_SECTION_ANCHOR = re.compile(r"\[\[(?:[^\W\d]|:)[\w\-:.]*+(?:, *+.+)?\]\]")

Title = tuple[int, str, int]  # level, text, lines (1, or 2 with an underline): a plain tuple


def delimiter(s: str) -> str | None:
    """The line that closes the delimited block `s` opens, or None when it opens none."""
    n = len(s)
    if n < 2 or s[:2] not in DELIMITER_HEADS:
        return None
    if n == 2:
        return s if s == "--" else None
    if s[0] == "`":
        return FENCE if s.startswith(FENCE) and not s.startswith("````") else None
    tip = n > 3 and s[:4] in DELIMITED
    return s if tip and (n == 4 or s.count(s[3], 1) == n - 1) else None


def is_comment(s: str) -> bool:
    return s.startswith("//") and s[2:3] != "/"


def is_attribute_line(s: str) -> bool:
    return (
        s.startswith("[")
        and s.endswith("]")
        and (BLOCK_ATTRIBUTES.fullmatch(s) is not None or BLOCK_ANCHOR.fullmatch(s) is not None)
    )


def breaks_paragraph(s: str) -> bool:
    """Whether the line ends a paragraph and starts a block: a delimiter or an attribute line."""
    return delimiter(s) is not None or is_attribute_line(s)


def list_marker(s: str) -> str:
    """A list item's marker as Asciidoctor tells siblings: "*", "1.", "a.", "i)", "<1>", "::"
    (a description list's term), or "" for a line that starts no list item."""
    m = LIST_ITEM.match(s) if s[:1] in ITEM_FIRST or s[1:2] == "." else None
    if m is None:
        mark = term_mark(s)
        return mark.group(0) if mark is not None else ""
    marker = m.group(1) or "<1>"
    if marker[-1] == ")":
        return "I)" if marker[0].isupper() else "i)"
    if len(marker) > 1 and marker[-1] == "." and marker[0] != ".":
        return "1." if marker[0].isdigit() else "A." if marker[0].isupper() else "a."
    return marker


def term_mark(s: str) -> re.Match[str] | None:
    """The mark after a description list's term ("::" in "term:: text"), or None."""
    if ("::" not in s and ";;" not in s) or is_comment(s):
        return None
    return _DESCRIPTION_MARK.search(s, len(s) - len(s.lstrip(" \t")) + 1)


def block_style(inner: str) -> str:
    """The block style an attribute line sets ("source" of "[source%linenums,ruby]")."""
    first = inner.partition(",")[0].strip()
    if first.isalnum():
        return first
    if not first or "=" in first or first[0] in "\"'":
        return ""
    return _STYLE_END.split(first, 1)[0]


def source_language(inner: str) -> str:
    """The source language a source block's attribute line names ("java" of "source,java,x=y"),
    or ""."""
    second = inner.split(",", 2)[1:2]
    return second[0].strip() if second and "=" not in second[0] else ""


def leading_ticks(line: str) -> int:
    """The run of backticks a line starts with, after its indent."""
    rest = line.lstrip(" \t")
    return len(rest) - len(rest.lstrip("`"))


def macro_words(s: str) -> str:
    """The words a one-line block macro shows: an image's alternative text, else nothing."""
    if not s.startswith("image::"):
        return ""
    attributes = s[s.find("[", len("image::") + 1) + 1 : -1]
    alt = attributes.split(",", 1)[0].strip()
    return "" if "=" in alt else alt.strip('"')


def section_title(s: str, next_line: str) -> Title | None:
    """The section title that starts at the line `s` (with `next_line` after it), or None."""
    first = s[:1]
    if first in ("=", "#"):
        markers = len(s) - len(s.lstrip(first))
        if markers <= 6 and markers < len(s) and s[markers] in " \t":
            title = s[markers:].lstrip(" \t")
            closing = s[:markers]
            if len(title) > markers and title.endswith(closing) and title[-markers - 1] in " \t":
                title = title[:-markers].rstrip(" \t")
            return markers - 1, _without_anchor(title), 1
    level = SETEXT_LEVELS.get(next_line[:1])
    if (
        level is not None
        and abs(len(s) - len(next_line)) < 2
        and first != "."
        and next_line.count(next_line[0]) == len(next_line)
        and _ALNUM.search(s) is not None
    ):
        return level, _without_anchor(s), 2
    return None


def _without_anchor(title: str) -> str:
    """The title without a trailing inline anchor (" [[id]]"), which names the section."""
    if title.endswith("]]"):
        at = title.rfind(" [[")
        if at > 0 and _SECTION_ANCHOR.fullmatch(title, at + 1):
            return title[:at].rstrip(" \t")
    return title
