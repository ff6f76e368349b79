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

Constraints: linear time, and work in proportion to the markup, not to the text. The lines that
may be markup are found by the section scanner's own search (MARKUP_LINE_PATTERN) and read by
markup_lines, which also gives a line rewritten whole its new text as it reads it; the constructs
inside lines are found by two searches that start with a literal (markup_inline), run only when
the text holds a `<` or a `{`. A page without markup costs those searches and nothing else. The
edits are made in one pass that also moves the sections with their lines; a container's body is
dedented by one substitution per stretch. Only a page with a container's body, or with a cut
inside a line a rule rewrites, takes the longer way of rewriting such lines whole (_edits).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import chain
from operator import itemgetter
from typing import TypeVar

from docshelf.chunking.markup_inline import ANGLE, BRACES, BRACES_TEMPLATE, Cut, Finder
from docshelf.chunking.markup_lines import (
    MARKUP_LINE_PATTERN,
    MARKUP_LINE_STARTS,
    Ruled,
    dedent,
    depths,
    read_lines,
    ruled,
)
from docshelf.chunking.markup_title import plain_title

__all__ = ["MARKUP_LINE_PATTERN", "MARKUP_LINE_STARTS", "plain_title", "visible_text"]

_S = TypeVar("_S", bound=tuple[int, int, int, str])
_Edit = tuple[int, int, str]  # text[a:b] becomes the string
_END = itemgetter(2)
_NO_RULED = Ruled([], [], [])


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
    # (A search for one character is a memchr: far cheaper than a pattern's scan of the text.)
    angle = ANGLE.search(text, body_start) if "<" in text else None
    braces = (
        (BRACES_TEMPLATE if template else BRACES).search(text, body_start) if "{" in text else None
    )
    if not lines and angle is None and braces is None:
        return None  # the common case of a page without markup: no more work
    finder = Finder(text, fences)
    rules, bodies = read_lines(finder, lines) if lines else (_NO_RULED, [])
    if angle is not None:
        finder.angles(angle)
    if braces is not None:
        finder.braces(braces)
    cuts = finder.cuts
    if cuts:
        cuts.sort()
    if bodies or (cuts and rules.starts and _collide(cuts, rules)):
        edits = _edits(text, cuts, rules, bodies, sections)
    else:  # every cut is made where it stands, every ruled line as its rule says
        edits = [
            (s, e, new)
            for s, e, new in zip(rules.starts, rules.ends, rules.news, strict=True)
            if new is not None
        ]
        if cuts:
            edits = _cut_edits(text, cuts, edits)
    if not edits:
        return None
    return _moved(text, edits, sections)


def _collide(cuts: list[Cut], rules: Ruled) -> bool:
    """Whether a cut (in order) falls in a line a rule rewrites."""
    starts, ends = rules.starts, rules.ends
    j, count = 0, len(starts)
    for a, _, _ in cuts:
        while j < count and ends[j] <= a:
            j += 1
        if j == count:
            return False
        if starts[j] <= a:
            return True
    return False


def _cut_edits(text: str, cuts: list[Cut], lines: list[_Edit]) -> list[_Edit]:
    """The edits of the cuts (in order) made where they stand, a cut inside one made before (a
    shortcode in a comment) skipped, a cut without words that ends its line taking the blanks
    before it too; with the edits of whole `lines` (in order, none holding a cut)."""
    n = len(text)
    edits: list[_Edit] = []
    at = 0
    for cut in cuts:
        a, b, words = cut
        if a < at:
            continue  # inside a construct already cut (a shortcode in a comment)
        if not words and a > at and (b == n or text[b] == "\n") and text[a - 1] in " \t":
            a -= 1  # it ends its line: the blanks before it go too
            while a > at and text[a - 1] in " \t":
                a -= 1
            edits.append((a, b, words))
        else:
            edits.append(cut)
        at = b
    if lines:
        edits += lines
        edits.sort()
    return edits


def _moved(text: str, edits: list[_Edit], sections: list[_S]) -> tuple[str, list[_S]]:
    """The text with the `edits` (in order) made, and the sections moved with their lines. A line
    starting at an edit's start was moved only by the edits before it; sections that end before
    the first edit stay; each other one ends where the next one starts."""
    pieces: list[str] = []
    starts: list[int] = []
    shifts = [0]  # how far the text after the first k edits moved
    at = shift = 0
    for a, b, new in edits:
        pieces += (text[at:a], new)
        starts.append(a)
        shift += len(new) - (b - a)
        shifts.append(shift)
        at = b
    pieces.append(text[at:])
    visible = "".join(pieces)
    k = bisect_right(sections, starts[0], key=_END)
    if k == len(sections):
        return visible, sections
    moved = sections[:k]
    make, kind = tuple.__new__, type(sections[k])
    j, count = 0, len(starts)
    last_start = last_body = -1
    last_heading = ""
    for i in range(k, len(sections)):
        start, body, _, heading = sections[i]
        while j < count and starts[j] < start:
            j += 1
        start += shifts[j]
        while j < count and starts[j] < body:
            j += 1
        body += shifts[j]
        if last_start >= 0:
            moved.append(make(kind, (last_start, last_body, start, last_heading)))
        last_start, last_body, last_heading = start, body, heading
    moved.append(make(kind, (last_start, last_body, len(visible), last_heading)))
    return visible, moved


def _line_end(text: str, s: int) -> int:
    e = text.find("\n", s)
    return e if e >= 0 else len(text)


def _edits(
    text: str, cuts: list[Cut], rules: Ruled, bodies: list[tuple[int, int]], sections: list[_S]
) -> list[_Edit]:
    """The edits, in order, when lines are rewritten whole: a line a rule rewrites, or one in a
    container's body, which first loses its cuts (in order), then its indentation, then goes
    through the rules. The other lines of a body lose their indentation by one substitution per
    stretch (cut where a section or its body starts, so each such offset starts an edit); the
    other cuts are made where they stand (as _cut_edits)."""
    n = len(text)
    stretches = depths(bodies) if bodies else []
    stretch_starts = [a for a, _, _ in stretches]
    ruled_lines = rules.starts
    rewrites: dict[int, list[Cut]] = {s: [] for s in ruled_lines}
    edits: list[_Edit] = []
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
            if k >= 0 and a < rules.ends[k]:
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
            for a, b, words in line_cuts:
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
    if stretches:
        # Only a container's body, dedented by stretches, can hold a section's start.
        marks = list(chain.from_iterable(map(itemgetter(0, 1), sections)))
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
    return edits


def _dedented(text: str, a: int, b: int, depth: int, marks: list[int], edits: list[_Edit]) -> None:
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
