"""A Markdown page's visible text: the file's own lines, one for one, with site generators' markup
taken out, so a chunk holds what the page shows and `path:line` stays exact.

Outside fenced code (which stays as written, apart from the indentation of the container it sits
in), a line of markup only becomes an empty line, and markup inside a line is taken out while the
words it carries stay:
- MkDocs admonitions (`!!! note "Title"`, `??? tip`, `???+`) and content tabs (`=== "macOS"`)
  become their title (empty when untitled); the lines of their bodies, nested ones too, lose four
  leading spaces per level. Snippet lines (`--8<-- "file.md"`, the block form, section markers)
  become empty.
- Docusaurus and VitePress containers (`:::tip Title`, `::: code-group`, closing `:::`) become
  their title words, or empty.
- Hugo shortcodes (`{{< name >}}`, `{{% name %}}`) go but for their text attributes' values
  (`title=`, `summary=` ...); an escaped one (`{{</* name */>}}`, the syntax a page documents) is
  shown as Hugo renders it, `{{< name >}}`. mdBook's `{{#include ...}}` and Go template actions
  with a trim marker (`{{- ... -}}`; any action in a `.tmpl` file) go.
- HTML comments (VitePress `<!--@include: ...-->`, `<!--truncate-->`), `<script>` and `<style>`
  blocks, VitePress code-snippet imports (`<<< @/x`) and top-level ESM `import` lines go.
- Component tags (a capitalised name, or a custom element's kebab-case one: `<Badge text="v1" />`,
  `<Version>3.2</Version>`, `<my-widget>`) go but for their text attributes; their children stay.
  Plain HTML stays as written. A `<` right after a word (`Vec<T>`) opens no tag.
- GitHub alerts `> [!NOTE]` keep the quote and the word (`> NOTE`); heading anchors (`{#id}`,
  `{ #id .class }`) at the end of an ATX heading go.
Markup inside a code span is code. A construct that does not close (before a blank line, a fence
or the end of the text) is text: words are never dropped on a guess. Every visible line is its
file line with characters taken out. Breadcrumbs are plain words (markup_title.plain_title).

Linear time, and cheap: the lines that may be markup are found by the section scanner's own
search (MARKUP_LINE_PATTERN) and read by markup_lines; the constructs inside lines by two searches
that start with a literal (markup_inline). The edits are then made, and the sections moved with
their lines, by operations over whole lists and stretches of text (a container's body is dedented
by one substitution), not by a step of Python per line.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import partial
from itertools import accumulate, chain
from operator import add, itemgetter, sub
from typing import TypeVar, cast

from docshelf.chunking.markup_inline import ANGLE, BRACES, BRACES_TEMPLATE, Cut, Finder
from docshelf.chunking.markup_lines import (
    MARKUP_LINE_PATTERN,
    MARKUP_LINE_STARTS,
    dedent,
    depths,
    read_lines,
    ruled,
)
from docshelf.chunking.markup_title import plain_title

__all__ = ["MARKUP_LINE_PATTERN", "MARKUP_LINE_STARTS", "plain_title", "visible_text"]

_S = TypeVar("_S", bound=tuple[int, int, int, str])
_Edits = tuple[list[int], list[int], list[str]]  # the edits' starts, ends and new strings
_FIRST, _SECOND, _THIRD, _FOURTH = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)


def visible_text(
    text: str,
    fences: list[int],
    lines: list[int],
    sections: list[_S],
    template: bool = False,
) -> tuple[str, list[_S]] | None:
    """The visible text of `text` (prepared) and its `sections` moved with their lines (each
    (start, body start, end, heading), by offsets that start lines; the text before the first
    stays as it is); None when nothing changes.

    `fences`: the fenced code blocks, flat: each one's start (of its opening line) and end (of its
    closing line), in order, then len(text); `lines`: the starts of the lines that may be
    line-level markup (the section scanner's), in order; `template`: a Go template (`.tmpl`),
    whose every action goes."""
    body_start = sections[0][0]
    angle = ANGLE.search(text, body_start)
    braces = (BRACES_TEMPLATE if template else BRACES).search(text, body_start)
    if not lines and angle is None and braces is None:
        return None  # the common case of a page without markup: no more work
    finder = Finder(text, fences)
    ruled_lines, bodies = read_lines(finder, lines) if lines else ([], [])
    if angle is not None:
        finder.angles(angle)
    if braces is not None:
        finder.braces(braces)
    cuts = finder.cuts
    if not (cuts or ruled_lines or bodies):
        return None
    if ruled_lines or bodies:
        # Only a container's body, dedented by stretches, can hold a section's start.
        marks = list(chain.from_iterable(map(itemgetter(0, 1), sections))) if bodies else []
        starts, ends, news = _edits(text, cuts, ruled_lines, bodies, marks)
    else:
        starts, ends, news = _cut_edits(text, cuts)
    if not starts:
        return text, sections
    # The visible text: the stretches between edits, and the edits' strings, in turn.
    n = len(text)
    pieces = [""] * (2 * len(starts) + 1)
    pieces[0::2] = map(text.__getitem__, map(slice, [0, *ends], [*starts, n]))
    pieces[1::2] = news
    visible = "".join(pieces)
    # How far the text after the first k edits moved: shifts[k].
    shifts = [0, *accumulate(map(sub, map(len, news), map(sub, ends, starts)))]
    # A line starting at an edit's start was moved only by the edits before it. Sections that
    # end before the first edit stay; each other one ends where the next one starts.
    k = bisect_right(sections, starts[0], key=_THIRD)
    if k == len(sections):
        return visible, sections
    rest = sections[k:]
    moved_by = partial(bisect_left, starts)
    at_start = list(map(_FIRST, rest))
    at_start = list(map(add, at_start, map(shifts.__getitem__, map(moved_by, at_start))))
    at_body = list(map(_SECOND, rest))
    at_body = list(map(add, at_body, map(shifts.__getitem__, map(moved_by, at_body))))
    at_end = at_start[1:]
    at_end.append(len(visible))
    new = cast("partial[_S]", partial(tuple.__new__, type(rest[0])))
    moved = sections[:k]
    moved += map(new, zip(at_start, at_body, at_end, map(_FOURTH, rest)))
    return visible, moved


def _cut_edits(text: str, cuts: list[Cut]) -> _Edits:
    """The edits when every cut is made where it stands: in order, a cut inside one made before
    (a shortcode in a comment) skipped; a cut without words that ends its line takes the blanks
    before it too."""
    n = len(text)
    cuts.sort()
    starts: list[int] = []
    ends: list[int] = []
    news: list[str] = []
    at = 0
    for a, b, words in cuts:
        if a < at:
            continue  # inside a construct already cut (a shortcode in a comment)
        if not words and a > at and (b == n or text[b] == "\n"):  # it ends its line
            while a > at and text[a - 1] in " \t":
                a -= 1
        starts.append(a)
        ends.append(b)
        news.append(words)
        at = b
    return starts, ends, news


def _line_end(text: str, s: int) -> int:
    e = text.find("\n", s)
    return e if e >= 0 else len(text)


def _edits(
    text: str,
    cuts: list[Cut],
    ruled_lines: list[int],
    bodies: list[tuple[int, int]],
    marks: list[int],
) -> _Edits:
    """The edits, in order, when lines are rewritten whole: a line a rule rewrites, or one in a
    container's body, which first loses its cuts, then its indentation, then goes through the
    rules. The other lines of a body lose their indentation by one substitution per stretch (cut
    at `marks`, the offsets the caller moves with their lines); the other cuts are made where they
    stand (as _cut_edits)."""
    n = len(text)
    stretches = depths(bodies) if bodies else []
    stretch_starts = list(map(_FIRST, stretches))
    rewrites: dict[int, list[Cut]] = {s: [] for s in ruled_lines}
    edits: list[tuple[int, int, str]] = []
    if cuts:
        cuts.sort()
        ruled_ends = [_line_end(text, s) for s in ruled_lines]
        done = 0  # where the last cut made in place ends
        for cut in cuts:
            a, b, words = cut
            if stretches:
                k = bisect_right(stretch_starts, a) - 1
                if k >= 0 and a < stretches[k][1]:
                    line_start = text.rfind("\n", stretches[k][0], a) + 1 or stretches[k][0]
                    rewrites.setdefault(line_start, []).append(cut)
                    continue
            if ruled_lines:
                k = bisect_right(ruled_lines, a) - 1
                if k >= 0 and a < ruled_ends[k]:
                    rewrites[ruled_lines[k]].append(cut)
                    continue
            if a < done:
                continue  # inside a construct already cut (a shortcode in a comment)
            if not words and (b == n or text[b] == "\n"):  # it ends its line: blanks go too
                while a > done and text[a - 1] in " \t":
                    a -= 1
            edits.append(cut if a == cut[0] else (a, b, words))
            done = b
    rewritten = sorted(rewrites) if len(rewrites) > len(ruled_lines) else ruled_lines
    ends: dict[int, int] = {}
    for s in rewritten:
        e = ends[s] = _line_end(text, s)
        depth = 0
        if stretches:
            k = bisect_right(stretch_starts, s)
            if k and s < stretches[k - 1][1]:
                depth = stretches[k - 1][2]
        old = text[s:e]
        line_cuts = rewrites[s]
        if line_cuts:
            parts: list[str] = []
            at = s
            for a, b, words in sorted(line_cuts):
                if a < at:
                    continue  # inside a construct already cut (a shortcode in a comment)
                parts += (text[at:a], words)
                at = b
            parts.append(text[at:e])
            line = "".join(parts)
        else:
            line = old
        if depth:
            line = dedent(line, depth)
        line = ruled(line).rstrip()
        if line != old:
            edits.append((s, e, line))
    for a, b, depth in stretches:
        k = bisect_right(rewritten, a - 1)
        at = a
        while k < len(rewritten) and rewritten[k] < b:
            s = rewritten[k]
            _dedented(text, at, s, depth, marks, edits)
            at = ends[s] + 1
            k += 1
        _dedented(text, at, b, depth, marks, edits)
    edits.sort()
    return list(map(_FIRST, edits)), list(map(_SECOND, edits)), list(map(_THIRD, edits))


def _dedented(
    text: str, a: int, b: int, depth: int, marks: list[int], edits: list[tuple[int, int, str]]
) -> None:
    """Add the edits dedenting the lines of text[a:b] (whole lines) by `depth` levels, cut at the
    marks inside it so each mark starts an edit."""
    if a >= b:
        return
    k = bisect_right(marks, a)
    while k < len(marks) and marks[k] < b:
        edits.append((a, marks[k], dedent(text[a : marks[k]], depth)))
        a = marks[k]
        k = bisect_right(marks, a)
    edits.append((a, b, dedent(text[a:b], depth)))
