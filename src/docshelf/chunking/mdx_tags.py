"""JSX in MDX prose: the syntax of a tag and its attributes, the prose patterns built on it, and
what a reader sees of a tag (its text attributes' words).

Constraints:
- Pure patterns and functions, no state: the reader (mdx.py) keeps the spans and the offsets it
  remembers, and calls these once per construct.
- Every pattern is possessive or atomic where it repeats, so a tag that does not close fails
  without backtracking: an opening tag is read up to its first expression attribute at once
  (OPENING_TAG), and the expression itself by the reader's JavaScript lexer.
- Of a tag's syntax only the string values of its text attributes (_TEXT_ATTRIBUTES: a title, a
  label, an alt text) show, as words, with the tag's newlines kept in place so every visible line
  stays its file line. They are read once, when the visible text is built.
"""

from __future__ import annotations

import re

# Where a tag or a comment may start: "<" before a name, "/", ">" or "!--".
TAG_START = r"<(?:!--|(?=[ \t\n]*+(?:[^\W\d]|[$/>])))"
# A link destination, after its `]`.
DESTINATION = re.compile(
    r"\(\s*+(?:<[^<>\n]*+>|[^\s()<]*+)(?:\s++(?:\"[^\"\n]*+\"|'[^'\n]*+'))?\s*+\)"
)
# JSX: whitespace (line endings too), names, a tag's start and its attributes.
_S = r"[ \t\n]*+"
SPACE = re.compile(_S)
_NAME = r"(?:[^\W\d]|\$)[\w$-]*+"
# A tag's start: "<", "/" when it closes, its name (a member a.b.c, or a namespace a:b).
_NAME_PATH = rf"{_NAME}(?:{_S}\.{_S}{_NAME})*+(?:{_S}:{_S}{_NAME})?"
TAG_HEAD = re.compile(rf"<{_S}(/{_S})?({_NAME_PATH})?")
# Attributes up to the first one whose value is an expression (or the end of the tag).
ATTRIBUTES = re.compile(
    rf"(?:{_S}{_NAME}(?:{_S}:{_S}{_NAME})?(?:{_S}={_S}(?:\"[^\"]*+\"|'[^']*+'))?)*+{_S}"
)
# An opening tag's start and its attributes up to the first expression value, at once.
# Atomic, as a match of TAG_HEAD then one of ATTRIBUTES: no other split of the two is tried.
OPENING_TAG = re.compile(rf"(?><{_S}{_NAME_PATH}{ATTRIBUTES.pattern})")
# Prose read in one step, piece by piece, as mdx._Reader._inline would read it event by event (a
# run of text, escapes, link destinations and code spans of one backquote; a `<` that starts no
# tag; an opening tag cut short where a character stops it; a tag without expressions, a span),
# with or without `{` as an event. Each `<` is a piece, checked against mdx._Reader.not_tags.
_ESCAPE_OR_DESTINATION = rf"\\[\s\S]|\]{DESTINATION.pattern}|\](?!\()"
_CODE_SPAN = r"`(?!`)(?:[^`]++|``++)*+`"
_NOT_A_TAG = r"<(?!!--|[ \t\n]*+(?:[^\W\d]|[$/>]))"
_WHOLE_TAG = rf"(?>{OPENING_TAG.pattern}(?:/{_S})?>|<{_S}(?:/{_S})?+(?:{_NAME_PATH})?{_S}>)"


def _prose_pieces(no_brace: bool, code: bool) -> re.Pattern[str]:
    text = r"[^\\`\]<]++" if no_brace else r"[^\\`\]<{]++"
    run = f"{text}|{_ESCAPE_OR_DESTINATION}" + (f"|{_CODE_SPAN}" if code else "")
    if no_brace:  # an expression attribute cannot start: the tag stops at its `{`
        cut = rf"{OPENING_TAG.pattern}(?:(?=[^>/=])|={_S}(?=[^ \t\n]))"
    else:
        cut = rf"{OPENING_TAG.pattern}(?:(?=[^>/={{])|={_S}(?=[^{{ \t\n]))"
    return re.compile(rf"(?:{run})++|{_NOT_A_TAG}|{cut}|(?P<tag>{_WHOLE_TAG})")


PROSE = {(b, code): _prose_pieces(b, code) for b in (False, True) for code in (False, True)}
# Opening tags each cut short at the `<` of the next line's: a run of lines that are no flow line.
_B = r"[ \t]*+"
FAILING_TAG_LINES = re.compile(
    rf"(?:(?><{_B}{_NAME}(?:{_B}\.{_B}{_NAME})*+(?:{_B}:{_B}{_NAME})?"
    rf"(?:{_B}{_NAME}(?:{_B}:{_B}{_NAME})?(?:{_B}={_B}(?:\"[^\"\n]*+\"|'[^'\n]*+'))?)*+)"
    rf"{_B}\n{_B}(?=<))++"
)

# The attributes whose string values a reader sees as text, so they stay as words (the same as
# the Markdown pages' components and shortcodes keep): titles and labels of components
# (Docusaurus `<TabItem label>`, `<Admonition title>`, Starlight's and Mintlify's `<Card title>`,
# `<LinkCard description>`), a badge's `text`, a details block's `summary`, a figure's `caption`
# or an image's `alt`. The others are for the machine (`id`, `value`, `groupId`, `className`,
# `href`, `src`, `type`); `name` too, an identifier far more often than words
# (`<Icon name="github">`, `<MDXTag name="h1">`).
_TEXT_ATTRIBUTES = ("alt", "caption", "description", "label", "summary", "text", "title")
# In the syntax of a tag (outside its expressions): a text attribute with its string value, or
# any other string, read whole so that a name inside another attribute's value is no attribute.
_TEXT_ATTRIBUTE = re.compile(
    rf"(?<![\w$:.-])(?:{'|'.join(map(re.escape, _TEXT_ATTRIBUTES))})"
    rf"{_S}={_S}(?:\"([^\"]*+)\"|'([^']*+)')|\"[^\"]*+\"|'[^']*+'"
)


# (start, end, hidden): hidden leaves the visible text (an expression, a comment, markup); a
# span that is not hidden is a tag's syntax, of which only its text attributes' values stay.
Span = tuple[int, int, bool]


def tag_text(text: str, a: int, b: int, spaced: bool, newlines: str) -> str:
    """What a reader sees of the tag syntax text[a:b] (its `newlines`, counted by the caller):
    the values of its text attributes, each after a space from the tag unless the visible text
    ends in a space (`spaced`) or a line's start, with the newlines in place."""
    if text.find("=", a, b) < 0:
        return newlines
    out: list[str] = []
    at = a
    for m in _TEXT_ATTRIBUTE.finditer(text, a, b):
        group = m.lastindex
        if group is None:
            continue  # another attribute's string
        value_start, value_end = m.span(group)
        if text[value_start:value_end].isspace() or value_start == value_end:
            continue
        breaks = text.count("\n", at, value_start)
        if breaks:
            out.append("\n" * breaks)
        name = m.start()
        if not (spaced or breaks) and name > a and text[name - 1] in " \t":
            out.append(text[name - 1])
        out.append(text[value_start:value_end])
        spaced = text[value_end - 1].isspace()
        at = value_end
    if not out:
        return newlines
    out.append("\n" * text.count("\n", at, b))
    return "".join(out)


def tag_spans(p: int, end: int, hidden: list[tuple[int, int]]) -> list[Span]:
    """A tag's spans: the tag, broken by its hidden expression attributes."""
    spans: list[Span] = []
    for a, b in hidden:
        spans += ((p, a, False), (a, b, True))
        p = b
    spans.append((p, end, False))
    return spans
