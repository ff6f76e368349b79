"""The line-level markup of a Markdown page's visible text (markup.visible_text): MkDocs
admonitions, content tabs and snippets, Docusaurus and VitePress containers, VitePress code
imports, GitHub alerts, ESM imports, `<script>` and `<style>` blocks, heading anchors.

Constraints:
- Only the lines the section scanner found (MARKUP_LINE_PATTERN, outside fences and HTML blocks)
  are read, each once; the rule a line goes through (ruled) only ever shortens it.
- A container's body (the lines after an admonition or a tab indented four columns deeper than
  it, and the blank lines among them) loses four leading spaces per level, by one substitution per
  stretch; a container indented sixteen levels deep opens none, which keeps the searches for the
  ends of nested bodies linear.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from docshelf.chunking.markup_inline import Finder

# Python-Markdown's admonitions and pymdownx's collapsible blocks and tabs indent bodies by four.
CONTAINER_INDENT = 4
# An admonition or tab indented this deep (sixteen levels) opens no body: no page nests so deep,
# and the bound keeps the searches for the ends of nested bodies linear.
MAX_CONTAINER_COLUMNS = 16 * CONTAINER_INDENT

# A line that may be line-level markup, for the section scanner to visit (after the newline):
# an admonition, a tab, a container, a snippet, a code import (indented; at most three spaces it
# is an HTML-like line the scanner visits anyway), an alert, an ESM import.
MARKUP_LINE_PATTERN = (
    r"[ \t]*+(?:!!!|\?\?\?|==(?:=|[ \t])|:::|--8<--|<<<[ \t]|>[ \t>]*+\[!)|import[ \t]"
)
# The characters such a line may start with (for a character class).
MARKUP_LINE_STARTS = " \\t!?=:<>i"

# Line-level markup, matched on a line once its indentation for containers is taken out.
_ADMONITION = re.compile(
    r"([ \t]*+)(?:!!!|\?\?\?\+?+)(?:[ \t]++[\w-]++)*+(?:[ \t]++\"([^\"\n]*+)\")?+[ \t]*+"
)
_TAB = re.compile(r"([ \t]*+)===[!+]?+[ \t]++\"([^\"\n]*+)\"[ \t]*+")
# A tab of vitepress-plugin-tabs, inside a `::: tabs` container: `== Title`.
_PLUGIN_TAB = re.compile(r"==[ \t]++(\S.*?)[ \t]*+")
_CONTAINER = re.compile(r"[ \t]*+:{3,}+[ \t]*+([\w-]*+)(.*+)")
_SNIPPET = re.compile(
    r"[ \t]*+--8<--[ \t]*+(?:\"[^\"\n]*+\"|'[^'\n]*+'|\[(?:start|end):[^\]\n]*+\])?+[ \t]*+"
)
_SNIPPET_BLOCK_END = re.compile(r"\n[ \t]*+--8<--[ \t]*+(?=\n|\Z)")
_CODE_IMPORT = re.compile(r"[ \t]*+<<<[ \t]++\S.*+")
_ALERT = re.compile(r"([ \t]*+(?:>[ \t]?+)++)[ \t]*+\[!([A-Za-z]++)\][+-]?+([ \t]*+)(.*+)")
# (The names before `from` hold no quote, so the lazy run stops at the first one.)
_ESM_IMPORT = re.compile(
    r"import[ \t](?:([^\"'\n]*?)[ \t]from[ \t]*+)?(?:\"[^\"\n]++\"|'[^'\n]++')[ \t]*+;?+[ \t]*+"
)
# The names an import binds (`X`, `{ A, B as C }`, `* as NS`), keywords left out.
_IMPORTED = re.compile(r"(?<![\w$])(?!(?:as|type)(?![\w$]))[A-Za-z_$][\w$]*+")
_RAW_START = re.compile(r"[ ]{0,3}+<(script|style)(?=[ \t>]|\n|\Z)", re.IGNORECASE)
_RAW_END = {
    "script": re.compile(r"</script[ \t]*+>", re.IGNORECASE),
    "style": re.compile(r"</style[ \t]*+>", re.IGNORECASE),
}
# Containers with no title of their own: what follows their kind is options, not words.
_UNTITLED_CONTAINERS = frozenset({"code-group", "tabs", "v-pre", "raw"})
_CONTAINER_OPTIONS = re.compile(r"\{[^{}]*+\}")
_ANCHOR = re.compile(r"[ \t]*+\{[ \t]*+:?+[ \t]*+[#.][^{}\n]*+\}[ \t]*+")
# Where a container's body ends: the first line, not blank, indented less than its body, by the
# body's indentation in columns (a tab counts as deep enough).
_BODY_ENDS: dict[int, re.Pattern[str]] = {}
# Up to so many leading spaces go, by the depth of the containers a line is in.
_DEDENTS: dict[int, re.Pattern[str]] = {}


class Ruled(NamedTuple):
    """The lines a rule rewrites, in order: their starts and ends, and each one's new text when
    it is outside containers' bodies and no cut falls in it (None when it stays as it is)."""

    starts: list[int]
    ends: list[int]
    news: list[str | None]


def read_lines(finder: Finder, lines: list[int]) -> tuple[Ruled, list[tuple[int, int]]]:
    """Read the lines starting at `lines` (in order), which may be line-level markup: a heading's
    anchor, a snippet block and a script or style block become the finder's cuts. The lines a
    rule rewrites, and the containers' bodies as (first line start, end)."""
    text, n, cuts = finder.text, finder.n, finder.cuts
    starts: list[int] = []
    ends: list[int] = []
    news: list[str | None] = []
    bodies: list[tuple[int, int]] = []
    in_bodies = 0  # the lines before it may be in a body
    opened = 0  # where the body of the line just read ends
    tabs = False  # inside a `::: tabs` container (vitepress-plugin-tabs)
    find = text.find
    for s in lines:
        e = find("\n", s)
        if e < 0:
            e = n
        c = text[s]
        body = s
        if c in " \t":
            body = e - len(text[s:e].lstrip(" \t"))
            if body == e:
                continue
            c = text[body]
        if c == "#":  # an ATX heading ending with `}`: an anchor goes
            k = text.rfind("{", body, e)
            if (
                k > 0
                and _ANCHOR.fullmatch(text, k, e) is not None
                and (find("`", k, e) < 0 or not finder.in_code(k))
            ):
                while k > body and text[k - 1] in " \t":
                    k -= 1
                cuts.append((k, e, ""))
            continue
        if c == ":" and s >= in_bodies and (m := _CONTAINER.fullmatch(text, s, e)) is not None:
            starts.append(s)  # a container: its title words are shorter than the line
            ends.append(e)
            kind, rest = m.groups()
            news.append(_container_title(kind, rest) if rest else "")
            tabs = kind == "tabs" or (tabs and bool(kind or rest.strip()))
            continue
        if tabs and c == "=" and body == s and (m := _PLUGIN_TAB.fullmatch(text, s, e)):
            starts.append(s)  # a tab inside `::: tabs`: its title
            ends.append(e)
            news.append(m.group(1))
            continue
        if c in "!?=":
            if not (_ADMONITION.fullmatch(text, s, e) or _TAB.fullmatch(text, s, e)):
                continue
            if e < n:  # its body, after it
                opened = _body(text, s, body, e, bodies)
        elif c == "-":
            if not text[body + 6 : e].strip():  # `--8<--` alone: the block form
                end = _SNIPPET_BLOCK_END.search(text, e, finder.next_fence(e))
                if end is not None:  # every line to the closing one names a file
                    finder.hide(s, end.end())
                    continue
        elif c == "<":
            raw = _RAW_START.match(text, s, e)
            if raw is not None:  # a script or a style, to its closing tag
                found = _RAW_END[raw.group(1).lower()].search(text, e, finder.next_fence(e))
                if found is not None:
                    finder.hide(s, found.end())
                continue
        elif c == "i" and (body != s or not _used_import(text, s, e)):
            continue  # an ESM import stands at a line's start, and the page uses what it imports
        starts.append(s)
        ends.append(e)
        if s < in_bodies:
            news.append(None)
        else:
            old = text[s:e]
            line = ruled(old).rstrip()
            news.append(line if line != old else None)
        if opened > in_bodies:
            in_bodies, opened = opened, 0
    return Ruled(starts, ends, news), bodies


def _used_import(text: str, s: int, e: int) -> bool:
    """Whether the line s..e is an ESM import whose names the page uses, as a tag (`<Tabs`) or in
    an expression (`{useBaseUrl(`), as a page rendered as MDX does; a side effect's import
    (`import './x.css'`) goes too. Else it is text: code pasted without a fence."""
    m = _ESM_IMPORT.fullmatch(text, s, e)
    if m is None:
        return True  # no import: whatever the line is, its rule says
    names = _IMPORTED.findall(m.group(1) or "")
    return not names or any(f"<{name}" in text or f"{{{name}" in text for name in names)


def _body(text: str, s: int, body: int, e: int, bodies: list[tuple[int, int]]) -> int:
    """Add the body of the container opening on the line s..e (not the last): the lines after it
    indented at least four columns deeper than it, and the blank lines among them. Where it ends
    (e + 1 when it has none)."""
    prefix = text[s:body]
    columns = len(prefix) if "\t" not in prefix else len(prefix.expandtabs(CONTAINER_INDENT))
    if columns >= MAX_CONTAINER_COLUMNS:
        return e + 1
    columns += CONTAINER_INDENT
    pattern = _BODY_ENDS.get(columns)
    if pattern is None:
        pattern = _BODY_ENDS[columns] = re.compile(rf"\n(?=[ ]{{0,{columns - 1}}}[^ \t\n])")
    end = pattern.search(text, e)
    stop = end.start() + 1 if end is not None else len(text)
    if stop > e + 1:
        bodies.append((e + 1, stop))
    return stop


def depths(bodies: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The stretches of text inside containers' bodies, each with how many it is inside."""
    events = sorted([(a, 1) for a, _ in bodies] + [(b, -1) for _, b in bodies])
    stretches: list[tuple[int, int, int]] = []
    depth, at = 0, 0
    for offset, step in events:
        if depth and offset > at:
            stretches.append((at, offset, depth))
        depth += step
        at = offset
    return stretches


def dedent(lines: str, depth: int) -> str:
    """`lines` (starting at a line's start) with up to four leading spaces per level gone from
    each line. (The pattern starts with a newline, a literal the search skips to at once.)"""
    columns = CONTAINER_INDENT * depth
    pattern = _DEDENTS.get(depth)
    if pattern is None:
        pattern = _DEDENTS[depth] = re.compile(rf"\n[ ]{{1,{columns}}}")
    first = lines[:columns]
    lead = len(first) - len(first.lstrip(" "))
    return pattern.sub("\n", lines[lead:] if lead else lines)


def ruled(line: str) -> str:
    """A line after the line-level rules: an admonition's or a tab's title, a container's title
    words, nothing for a snippet, a code import or an ESM import, an alert's quote and word."""
    stripped = line.lstrip(" \t")
    if not stripped:
        return line
    c = stripped[0]
    if c == ":":
        m = _CONTAINER.fullmatch(line)
        if m is not None:
            rest = m.group(2)
            return _container_title(m.group(1), rest) if rest else ""
    elif c in "!?":
        m = _ADMONITION.fullmatch(line)
        if m is not None:
            title = (m.group(2) or "").strip()
            return m.group(1) + title if title else ""
    elif c == "=":
        m = _TAB.fullmatch(line)
        if m is not None:
            return m.group(1) + m.group(2).strip()
    elif c == "-":
        if _SNIPPET.fullmatch(line):
            return ""
    elif c == "<":
        if _CODE_IMPORT.fullmatch(line):
            return ""
    elif c == ">":
        m = _ALERT.fullmatch(line)
        if m is not None:
            prefix, kind, blank, rest = m.groups()
            return prefix + kind + (blank + rest if rest.strip() else "")
    elif c == "i" and _ESM_IMPORT.fullmatch(line):
        return ""
    return line


def _container_title(kind: str, rest: str) -> str:
    """A container's title words: `:::tip Title`, `:::note[Title]`, `::: details Click me`."""
    if kind.lower() in _UNTITLED_CONTAINERS:
        return ""
    rest = rest.strip()
    if rest.startswith("[") and rest.endswith("]"):
        rest = rest[1:-1]
    if "{" in rest:
        rest = _CONTAINER_OPTIONS.sub("", rest)
    return rest.strip()
