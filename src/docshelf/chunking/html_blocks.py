"""CommonMark's HTML blocks (4.6), for the Markdown section scanner: which line starts one, and
where it ends. Inside one, a heading-like line is HTML, not a heading.
"""

from __future__ import annotations

import re

# HTML blocks (CommonMark 4.6): inside one, a heading-like line is HTML, not a heading. Each group
# of the start pattern pairs with how its block ends (_HTML_END_OF).
_HTML_START = re.compile(
    r"<(?:(!--)|(\?)|(!\[CDATA\[)|(![A-Za-z])|((?:pre|script|style|textarea)(?:[ \t>]|$))"
    r"|(/?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd"
    r"|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset"
    r"|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol"
    r"|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr"
    r"|track|ul)(?:[ \t>]|/>|$)))",
    re.IGNORECASE,
)
# By the group that matched: a closing string, "</" for a raw block's closing tag, "" for a blank.
_HTML_END_OF = {1: "-->", 2: "?>", 3: "]]>", 4: ">", 5: "</", 6: ""}
_HTML_RAW_END = re.compile(r"</(?:pre|script|style|textarea)>", re.IGNORECASE)
# Any other complete tag alone on its line; unlike the others it cannot interrupt a paragraph.
_HTML_LONE_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:[ \t][^<>]*)?/?>[ \t]*")
_BLANK_LINE = re.compile(r"\n[^\S\n]*(?=\n|\Z)")


def html_end(text: str, e: int, ends: str) -> int:
    """The offset of the newline ending the HTML block that starts on the line ending at `e`."""
    if ends == "":
        m = _BLANK_LINE.search(text, e)
        return m.start() if m is not None else len(text)  # the blank line is visited next
    if ends == "</":
        m = _HTML_RAW_END.search(text, e)
        at = m.start() if m is not None else -1
    else:
        at = text.find(ends, e)
    if at < 0:
        return len(text)
    line_end = text.find("\n", at)
    return line_end if line_end >= 0 else len(text)


def html_block(stripped: str, in_paragraph: bool) -> str | None:
    """When `stripped` starts an HTML block, what ends it: "" for the next blank line, "</" for
    the closing tag of a raw block, else a closing string. None when it starts none."""
    m = _HTML_START.match(stripped)
    if m is not None:
        return _HTML_END_OF[m.lastindex or 0]
    if not in_paragraph and _HTML_LONE_TAG.fullmatch(stripped):
        return ""
    return None


def html_closed(stripped: str, ends: str) -> bool:
    """Whether an HTML block ends on the line that starts it."""
    if ends == "</":
        return _HTML_RAW_END.search(stripped) is not None
    return ends in stripped[2:]
