"""An MDX page's outline from the spans the reader found: its visible lines, its scan text (what
the Markdown scanner reads for headings) and its headings, titled with plain words.

Constraints:
- Pure and deterministic, no I/O, one pass over the spans (in order, not overlapping): a hidden
  span leaves only its newlines in the visible text, a tag's syntax its text attributes' words
  (mdx_tags.tag_text); the lines of front matter and ESM are blank, so are lines of JSX and
  expressions alone in the scan text. Every visible line is its file line, one for one.
- In the scan text a construct inside prose becomes a neutral letter, indentation goes (MDX has
  no indented code), and a `<` left at a line's start opens no HTML block: the Markdown scanner
  finds MDX's headings and fences there, and nothing else.
- Breadcrumb titles are the heading's visible text as plain words (no tags, links' targets,
  backticks or emphasis; text attributes' words stay), never empty when the heading has a word;
  a huge heading is cut before its markup is read.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from html import unescape
from itertools import accumulate

from docshelf.chunking.markdown import _sections
from docshelf.chunking.mdx_tags import Span, tag_text
from docshelf.chunking.outline import Heading, Outline, outline
from docshelf.config import MAX_TITLE_CHARS

# A heading's opening run of `#`.
ATX = re.compile(r"(#{1,6})(?:[ \t]|$)")
# The scan text: what a construct inside prose becomes (a letter keeps the line a paragraph line:
# a blank would end the paragraph, a space could make "<b/># x" a heading), and indentation.
_FILLER = "a"
_NOT_NEWLINE = re.compile(r"[^\n]+")
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)
_LEADING_LT = re.compile(r"^<", re.MULTILINE)  # a `<` that began no tag opens no HTML block

# Titles: a huge heading is cut before its markup is read; links, code, emphasis, escapes go.
_TITLE_SCAN_CHARS = 4 * MAX_TITLE_CHARS
_LINK = re.compile(r"!?\[([^\[\]\n]*)\](?:\([^()\n]*\)|\[[^\[\]\n]*\])?")
_EMPHASIS = re.compile(r"[*`]+|~~|(?<!\w)_+|_+(?!\w)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_WORD = re.compile(r"\w+")
_TITLE_MARKUP = re.compile(r"[\[*`~_\\&]")  # what the patterns above and unescape look for
_STRING_ATTRIBUTE = re.compile(r"=[ \t]*+(?:\"([^\"\n]*+)\"|'([^'\n]*+)')")


def build_outline(
    text: str,
    spans: list[Span],
    blank: list[tuple[int, int]],
    flow: list[tuple[int, int]],
    top: str,
) -> Outline:
    """The visible lines, the scan text's headings, and the outline of both: from the `spans`
    of `text`, its `blank` ranges (front matter, ESM) and its `flow` ones (lines of JSX tags and
    expressions alone), with `top` atop the breadcrumb."""
    visible_parts: list[str] = []
    scan_parts: list[str] = []
    title_parts: list[str] = []
    at = 0
    tail = "\n"  # the last character of the visible text so far
    for a, b, hidden in spans:
        plain, piece = text[at:a], text[a:b]
        if "\n" in piece:
            newlines, filled = "\n" * piece.count("\n"), _NOT_NEWLINE.sub(_FILLER, piece)
        else:
            newlines, filled = "", _FILLER * (b - a)
        if plain:
            tail = plain[-1]
        shown = newlines if hidden else tag_text(text, a, b, tail.isspace(), newlines)
        if shown:
            tail = shown[-1]
        visible_parts += (plain, shown)
        scan_parts += (plain, filled)
        title_parts += (plain, shown)
        at = b
    lines = text.split("\n")
    if spans:
        visible = ("".join(visible_parts) + text[at:]).split("\n")
        scan = ("".join(scan_parts) + text[at:]).split("\n")
        titles = ("".join(title_parts) + text[at:]).split("\n")
    else:  # the file's own lines, copied where lines are blanked below
        visible = list(lines) if blank else lines
        scan = list(lines) if blank or flow else lines
        titles = lines
    if blank or flow:
        # Where each line starts, and one past the end.
        starts = [a + i for i, a in enumerate(accumulate(map(len, lines), initial=0))]
        for ranges, blanked in ((blank, (visible, scan)), (flow, (scan,))):
            for a, b in ranges:  # offsets on the first and the last line
                first, last = bisect_right(starts, a) - 1, bisect_right(starts, b) - 1
                for kept in blanked:
                    kept[first : last + 1] = [""] * (last + 1 - first)
    # Indentation means nothing in MDX; a `<` left at a line's start began no tag.
    joined = _LEADING_LT.sub(
        _FILLER, _INDENT.sub("", "\n".join(scan) if scan is not lines else text)
    )
    first_end = joined.find("\n")
    if joined[: first_end if first_end >= 0 else len(joined)].rstrip() == "---":
        joined = "***" + joined[3:]  # a break the Markdown scanner must not read as YAML
    return outline(visible, _headings(joined, titles, lines), top)


def _headings(scan: str, titles: list[str], lines: list[str]) -> list[Heading]:
    """The headings the Markdown scanner finds in the scan text, by line index, with their titles
    from the title lines (the visible lines, ESM and front matter left in)."""
    headings: list[Heading] = []
    line, counted, n = 0, 0, len(scan)
    for section in _sections(scan)[1:]:
        line += scan.count("\n", counted, section.start)
        counted = section.start
        body = line + scan.count("\n", section.start, section.body_start)
        if section.body_start == n and not scan.endswith("\n"):
            body += 1
        end = scan.find("\n", section.start)
        atx = ATX.match(scan, section.start, end if end >= 0 else n)
        if atx is not None:
            level = len(atx.group(1))
            title = _atx_title(titles[line], level)
        else:
            last = scan.rfind("\n", 0, section.body_start - 1) + 1
            level = 1 if scan.startswith("=", last) else 2
            title = " ".join(t.strip().removesuffix("\\") for t in titles[line : body - 1])
        plain = _plain(title) or _words(" ".join(lines[line:body]))  # never empty with a word
        headings.append((line, body, level, plain))
    return headings


def _atx_title(line: str, level: int) -> str:
    """An ATX heading's text: without its opening run of `#` and an optional closing one."""
    title = line.lstrip(" \t")[level:].strip(" \t")
    if title.endswith("#"):
        unclosed = title.rstrip("#")
        if not unclosed or unclosed[-1] in " \t":
            title = unclosed.rstrip(" \t")
    return title


def _plain(title: str) -> str:
    """A title as plain words: link text without its target, code without backticks, no
    emphasis, escapes or character references."""
    title = title[:_TITLE_SCAN_CHARS]
    if _TITLE_MARKUP.search(title) is not None:
        title = _LINK.sub(r"\1", title)
        title = unescape(_ESCAPE.sub(r"\1", _EMPHASIS.sub("", title)))
    return " ".join(title.split())


def _words(source: str) -> str:
    """The words of a heading's own lines (tags and all), for a title without any: its tags'
    string attributes' words, else all its words."""
    source = source[:_TITLE_SCAN_CHARS]
    values = " ".join(a or b for a, b in _STRING_ATTRIBUTE.findall(source))
    return " ".join(_WORD.findall(values) or _WORD.findall(source))
