"""A Markdown heading's title as plain words, for breadcrumbs (markup.visible_text's companion):
links become their text, images their alt text; code marks, emphasis, escapes, character
references, anchors, comments, tags (plain HTML too: a breadcrumb is words) and shortcodes go but
for their text attributes' values. Code keeps its characters.

Constraints: a title without markup characters is returned as it is after one search; a huge one
is cut before its markup is read, so every title costs time linear in at most
4 * MAX_TITLE_CHARS characters.
"""

from __future__ import annotations

import re
from html import unescape

from docshelf.chunking.markup_inline import VALUE, words_of
from docshelf.config import MAX_TITLE_CHARS

# Titles: a huge heading is cut before its markup is read.
_TITLE_SCAN_CHARS = 4 * MAX_TITLE_CHARS
_TITLE_MARKUP_BUT_CODE = re.compile(r"[\[*_~\\&{<]")
_TITLE_ANCHOR = re.compile(r"\{[ \t]*+:?+[ \t]*+[#.][^{}]*+\}[ \t]*+")
_TITLE_SHORTCODE = re.compile(
    r"\{\{<(?:/\*)?+([^{}]*?)(?:\*/)?+>\}\}|\{\{%(?:/\*)?+([^{}]*?)(?:\*/)?+%\}\}|\{\{[#-][^{}]*+\}\}"
)
_TITLE_COMMENT = re.compile(r"<!--.*?-->")
# Any tag, plain HTML too (a breadcrumb is words), but a type's parameters: `Vec<T>`. Right after
# a word, a tag with an attribute is one (`Step<a name="s1">`).
_TITLE_TAG = re.compile(
    r"(?:</|(?<![\w<])<|<(?=[A-Za-z][\w.-]*+[ \t]++[:@#]?+[A-Za-z_]))[A-Za-z][\w.-]*+"
    rf"((?:[ \t]++[:@#]?+[A-Za-z_][\w.:-]*+(?:[ \t]*+=[ \t]*+{VALUE})?+)*+)[ \t]*+/?+>"
)
_TITLE_CODE = re.compile(r"(`++)(.+?)\1")
_LINK = re.compile(r"!?\[([^\[\]\n]*)\](?:\([^()\n]*\)|\[[^\[\]\n]*\])?")
_EMPHASIS = re.compile(r"\*++|~~|(?<!\w)_++|_++(?!\w)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def plain_title(title: str) -> str:
    """A heading's title as plain words: links become their text, images their alt text; code
    marks, emphasis, escapes, character references, anchors, comments, tags and shortcodes (but
    for their text attributes) go. Code keeps its characters."""
    m = _TITLE_MARKUP_BUT_CODE.search(title)
    if m is None:  # at most code spans: their marks go
        return (
            title
            if "`" not in title
            else " ".join(title[:_TITLE_SCAN_CHARS].replace("`", "").split())
        )
    title = title[:_TITLE_SCAN_CHARS]
    if title[-1] == "}":
        brace = title.rfind("{")
        if _TITLE_ANCHOR.fullmatch(title, brace) is not None:
            title = title[:brace].rstrip(" \t")
            m = None  # the markup found may have been the anchor's
    if (m is None or m.start() >= _TITLE_SCAN_CHARS) and _TITLE_MARKUP_BUT_CODE.search(
        title
    ) is None:
        return " ".join(title.replace("`", "").split()) if "`" in title else title
    if "`" not in title:
        title = _plain_prose(title)
    else:
        parts: list[str] = []
        at = 0
        for code in _TITLE_CODE.finditer(title):
            parts += (_plain_prose(title[at : code.start()]), code.group(2))
            at = code.end()
        parts.append(_plain_prose(title[at:]))
        title = "".join(parts)
    return " ".join(title.split())


def _plain_prose(text: str) -> str:
    """Title text outside code spans as plain words."""
    if "{{" in text:
        text = _TITLE_SHORTCODE.sub(
            lambda m: words_of(" " + (m.group(1) or m.group(2) or "")), text
        )
    if "<" in text:
        text = _TITLE_TAG.sub(lambda m: words_of(m.group(1)), _TITLE_COMMENT.sub("", text))
    if "\\" not in text:
        return _plain_words(text)
    parts: list[str] = []  # an escaped character is itself, never markup
    at = 0
    for m in _ESCAPE.finditer(text):
        parts += (_plain_words(text[at : m.start()]), m.group(1))
        at = m.end()
    parts.append(_plain_words(text[at:]))
    return "".join(parts)


def _plain_words(text: str) -> str:
    if "[" in text:
        text = _LINK.sub(r"\1", text)
    if "*" in text or "_" in text or "~" in text:
        text = _EMPHASIS.sub("", text)
    return unescape(text) if "&" in text else text
