"""The in-line markup of a Markdown page's visible text (markup.visible_text): HTML comments,
component tags, Hugo shortcodes, mdBook directives and trimmed Go template actions, found by two
searches over the text, each of which jumps over a fence it lands in.

Constraints:
- A construct is cut only when it closes before a blank line, the next fence and the end of the
  text, and does not start inside a code span of its line; else it is text (never a guess).
- Each cut lies on one line: a construct over several lines is cut line by line, each line keeping
  the words of the text attributes it held (a tag's, a shortcode's).
- Linear time: each search for a construct's end (a comment's `-->`, a shortcode's `>}}`, a blank
  line, a backtick) is remembered as (searched from, found at), so a scan going forward reads each
  stretch of text once per kind of end; a tag's pattern is possessive and never crosses a blank
  line.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right

# Attributes whose value is words a reader sees (a badge's text, a details block's summary, a
# figure's caption or alt text), kept when their tag or shortcode goes.
TEXT_ATTRIBUTES = frozenset({"title", "text", "label", "summary", "caption", "alt", "description"})

# An attribute's value: a string, an `{expression}` one level deep, or a bare value.
VALUE = r"(?:\"[^\"\n]*+\"|'[^'\n]*+'|\{[^{}\n]*+(?:\{[^{}\n]*+\}[^{}\n]*+)*+\}|[^\s\"'=<>`{}/]++)"

# A comment's start (group 1), or a whole component tag (a capitalised name, or a custom element's
# kebab-case one; not right after a word: `Vec<T>` is a type): the slash of a closing tag (group
# 2), its name (3), its attributes (4) and the slash of a self-closing one (5). Attributes are
# strings, `{expressions}` one level deep, bare values, on one line or a few, never across a blank
# line. All possessive: a tag that does not close fails without trying other splits. The search
# starts with a literal, so the text between two `<` is skipped at C speed.
_SEP = r"(?:[ \t]++\n?+|\n)[ \t]*+"
ANGLE = re.compile(
    r"<(?:(!--)|(?:(/)|(?<![\w<]<))([A-Z][\w.]*+|[a-z][a-z0-9]*+(?:-[a-z0-9]++)++)"
    rf"((?:{_SEP}[:@#]?+[A-Za-z_][\w.:-]*+(?:[ \t]*+=[ \t]*+{VALUE})?+)*+)(?:{_SEP})?+(/?+)>)"
)
# A `{{` that may open a shortcode, an mdBook directive or a trimmed template action.
BRACES = re.compile(r"\{\{[<%#-]")
BRACES_TEMPLATE = re.compile(r"\{\{")  # in a .tmpl file, every action

# A text attribute and its value, after the blank before it (what a tag's attributes start with).
_TEXT_ATTRIBUTE = re.compile(
    r"[ \t\n](?i:" + "|".join(sorted(TEXT_ATTRIBUTES)) + r")[ \t]*+=[ \t]*+"
    r"(?:\"([^\"\n]*+)\"|'([^'\n]*+)')"
)
_BLANK_LINE = re.compile(r"\n[ \t]*+(?=\n|\Z)")
_BACKTICKS = re.compile(r"`++")
# What closes a shortcode, by its kind and whether it is escaped (`{{</* x */>}}`).
_CLOSES = {("<", False): ">}}", ("%", False): "%}}", ("<", True): "*/>}}", ("%", True): "*/%}}"}

Cut = tuple[int, int, str]  # text[a:b] becomes the string; a and b on one line


def words_of(attributes: str) -> str:
    """The values of the text attributes in `attributes`, joined by a space."""
    if "=" not in attributes:
        return ""
    return " ".join(a or b for a, b in _TEXT_ATTRIBUTE.findall(attributes) if a or b)


class Finder:
    """One text's cuts, and what finding them remembers.

    `fences` is flat: each fenced code block's start (of its opening line) and end (of its closing
    line), in order, then the text's length; an offset lies in a fence when the number of entries
    at or before it is odd, and the entry there is where the fence ends (or, when even, where the
    next one starts)."""

    # What was searched for, as (searched from, found at): a backtick, a newline, a blank line.
    tick = newline = blank = (sys.maxsize, -1)
    # The last line whose code spans were read: its start and end, and the spans.
    line_start = line_end = -1
    code: tuple[list[int], list[int]] = ([], [])

    def __init__(self, text: str, fences: list[int]) -> None:
        self.text, self.n = text, len(text)
        self.fences = fences
        self.cuts: list[Cut] = []
        self.opened: set[str] = set()  # the names of the component tags cut so far
        # By a tag's name, the last search for its closing tag: (searched from, found at).
        self.closings: dict[str, tuple[int, int]] = {}

    def next_fence(self, p: int) -> int:
        """Where the first fence after offset `p` (outside fences) starts, or the end."""
        fences = self.fences
        k = bisect_right(fences, p)
        return fences[k] if k < len(fences) else self.n

    def hide(self, a: int, b: int) -> None:
        """Cut text[a:b] out, line by line."""
        text, cuts = self.text, self.cuts
        while a < b:
            e = text.find("\n", a, b)
            e = e if e >= 0 else b
            if e > a:
                cuts.append((a, e, ""))
            a = e + 1

    def split(self, a: int, b: int, keep_words: bool) -> None:
        """Cut text[a:b] out, line by line; with `keep_words`, each line keeps the values of the
        text attributes it held."""
        text, cuts = self.text, self.cuts
        while True:
            e = text.find("\n", a, b)
            end = e if e >= 0 else b
            cuts.append((a, end, words_of(" " + text[a:end]) if keep_words else ""))
            if e < 0:
                return
            a = e + 1

    def angles(self, m: re.Match[str] | None) -> None:
        """Cut the comments and component tags from the hit `m` of ANGLE on."""
        text, fences, cuts, search = self.text, self.fences, self.cuts, ANGLE.search
        comment = (sys.maxsize, -1)  # "-->": (searched from, found at)
        while m is not None:
            p = m.start()
            k = bisect_right(fences, p)
            if k & 1:  # inside a fence: go on after it
                m = search(text, fences[k])
                continue
            if m.group(1) is None:  # a tag
                stop = m.end()
                if stop > fences[k] or not self._component(m, stop) or self.in_code(p):
                    m = search(text, p + 1)
                    continue
                if text.find("\n", p, stop) >= 0:
                    self.split(p, stop, True)
                else:
                    attributes = m.group(4)
                    cuts.append((p, stop, words_of(attributes) if "=" in attributes else ""))
                m = search(text, stop)
                continue
            searched_from, end = comment
            if not (searched_from <= p + 4 and (end < 0 or end >= p + 4)):
                end = text.find("-->", p + 4)
                comment = (p + 4, end)
            stop = end + 3
            if end < 0 or stop > fences[k] or not self._comment(p, end):
                m = search(text, p + 4)
                continue
            if text.find("\n", p, stop) < 0:
                cuts.append((p, stop, ""))
            else:
                self.split(p, stop, False)
            m = search(text, stop)

    def _component(self, m: re.Match[str], stop: int) -> bool:
        """Whether the tag `m` (ending at `stop`) is a component's: one with attributes, or that
        closes itself, or whose closing tag follows; a closing tag when its opening one was.
        Else it is a placeholder written as a tag (`replace <Region> with`), which is text."""
        name = m.group(3)
        if m.group(2):
            return name in self.opened
        if not (m.group(4) or m.group(5)):
            searched_from, found = self.closings.get(name, (sys.maxsize, -1))
            if not (searched_from <= stop and (found < 0 or found >= stop)):
                found = self.text.find(f"</{name}", stop)
                self.closings[name] = (stop, found)
            if found < 0:
                return False
        self.opened.add(name)
        return True

    def _comment(self, p: int, end: int) -> bool:
        """Whether the comment opening at `p` and closing at `end` is one (not text)."""
        if self._next_blank(p) < end:
            text = self.text
            line_start = text.rfind("\n", 0, p) + 1
            if p - line_start > 3 or text[line_start:p].strip():
                return False  # an inline comment never runs past a blank line
        return not self.in_code(p)

    def braces(self, m: re.Match[str] | None) -> None:
        """Cut the shortcodes, directives and template actions from the hit `m` of BRACES (or
        BRACES_TEMPLATE) on."""
        if m is None:
            return
        text, fences, cuts, search = self.text, self.fences, self.cuts, m.re.search
        closes: dict[str, tuple[int, int]] = {}  # an end -> (searched from, found at)
        nowhere = (sys.maxsize, -1)
        while m is not None:
            p = m.start()
            k = bisect_right(fences, p)
            if k & 1:  # inside a fence: go on after it
                m = search(text, fences[k])
                continue
            kind = text[p + 2 : p + 3]
            shortcode = kind in {"<", "%"}
            escaped = shortcode and text.startswith("/*", p + 3)
            close = _CLOSES[kind, escaped] if shortcode else "}}"
            searched_from, end = closes.get(close, nowhere)
            if not (searched_from <= p + 3 and (end < 0 or end >= p + 3)):
                end = text.find(close, p + 3)
                closes[close] = (p + 3, end)
            stop = end + len(close)
            if end < 0 or stop > fences[k] or self._next_blank(p) < end or self.in_code(p):
                m = search(text, p + 2)
                continue
            if escaped:  # shown as Hugo renders it: the shortcode's syntax, without the comments
                cuts += ((p + 3, p + 5, ""), (end, end + 2, ""))
            else:
                self.split(p, stop, shortcode)
            m = search(text, stop)

    def _next_blank(self, p: int) -> int:
        """Where the first blank line at or after `p` starts (its newline), or the end."""
        searched_from, found = self.blank
        if not (searched_from <= p and found >= p):
            m = _BLANK_LINE.search(self.text, p)
            found = m.start() if m is not None else self.n
            self.blank = (p, found)
        return found

    def in_code(self, p: int) -> bool:
        """Whether offset `p` lies inside a code span of its line (CommonMark: a run of backticks
        opens one that the next run of the same length closes)."""
        text = self.text
        searched_from, tick = self.tick
        if not (searched_from <= p and (tick < 0 or tick >= p)):
            tick = text.find("`", p)
            self.tick = (p, tick)
        if tick < 0:
            return False
        searched_from, newline = self.newline
        if not (searched_from <= p and (newline < 0 or newline >= p)):
            newline = text.find("\n", p)
            self.newline = (p, newline)
        if 0 <= newline < tick:
            return False  # no backtick after it on its line: no span holds it
        if not self.line_start <= p < self.line_end:  # read the line's spans once
            start = text.rfind("\n", 0, p) + 1
            end = newline if newline >= 0 else self.n
            opens: list[int] = []
            closes: list[int] = []
            runs: dict[int, list[int]] = {}
            found = [
                (r.start(), r.end() - r.start()) for r in _BACKTICKS.finditer(text, start, end)
            ]
            for at, size in found:
                runs.setdefault(size, []).append(at)
            after = start
            for at, size in found:
                if at < after:
                    continue
                same = runs[size]
                later = bisect_right(same, at)
                if later < len(same):
                    after = same[later] + size
                    opens.append(at)
                    closes.append(after)
            self.line_start, self.line_end, self.code = start, end, (opens, closes)
        opens, closes = self.code
        k = bisect_right(opens, p) - 1
        return k >= 0 and p < closes[k]
