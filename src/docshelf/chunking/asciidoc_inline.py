"""AsciiDoc's inline markup: taken out of the chunk text where the words it carries stay, and
out of section titles for the breadcrumb, with attribute references resolved.

Constraints:
- Pure and deterministic, no I/O.
- In the chunk text, a macro or a cross reference shows its text (or, without text, its target)
  and inline anchors go; formatting marks stay, as Markdown's do. Every line stays one line: no
  pattern reaches over a line's end. Only the lines the scanner marked (prose that may hold a "["
  or a "<<") are read, joined, by a few searches that each start with a string rare in prose.
- A breadcrumb's titles are plain words: inline formatting marks, macros (kept: their text) and
  anchors are taken out, and {name} references are replaced by the attribute entries defined
  above the title and Asciidoctor's built-in character attributes; any other reference stays as
  written, as Asciidoctor leaves it. Never empty when the title has words. Only the first
  TITLE_INPUT_CHARS of a title are read, so the cleaning stays cheap whatever a line's length.
"""

from __future__ import annotations

import re
from operator import itemgetter

from docshelf.config import MAX_TITLE_CHARS

# Only this much of a title is cleaned into breadcrumb words: the breadcrumb cuts it shorter, and
# the cleaning patterns then stay cheap whatever a title line's length.
TITLE_INPUT_CHARS = 2 * MAX_TITLE_CHARS

# Inline markup in titles, taken out for the breadcrumb. (Negated classes bound every scan by
# the next delimiter, so a title of markup characters costs linear time.)
_ATTRIBUTE_REFERENCE = re.compile(r"(\\)?\{(\w[\w-]*+)\}")
_PASSTHROUGH = re.compile(r"\+\+\+([^+]+)\+\+\+|\+\+([^+]+)\+\+|pass:[a-z,]*+\[([^\]]*)\]")
_MACRO = re.compile(
    r"\b(xref|link|mailto|kbd|btn|menu|icon|image|stem|latexmath|asciimath|footnote|footnoteref"
    r"|anchor|indexterm2?|(?:https?|ftp|irc|file)(?=://)):([^\s\[]*+)\[([^\]]*)\]"
)
_INLINE_ANCHOR = re.compile(r"\[\[\[?[^\[\]]*\]\]\]?|\(\(\([^()]*\)\)\)")
_INDEX_TERM = re.compile(r"\(\(([^()]*)\)\)")
_CROSS_REFERENCE = re.compile(r"<<([^<>,]*)(?:,([^<>]*))?>>")
_ROLE = re.compile(r"\[[^\[\]]*\](?=[#*_`])")
_UNCONSTRAINED = re.compile(r"\*\*([^*]+)\*\*|__([^_]+)__|``([^`]+)``|##([^#]+)##")
_CONSTRAINED = re.compile(
    r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?!\w)|(?<![\w_])_([^_\s](?:[^_]*[^_\s])?)_(?!\w)"
    r"|(?<![\w`])`([^`\s](?:[^`]*[^`\s])?)`(?!\w)|(?<![\w#])#([^#\s](?:[^#]*[^#\s])?)#(?!\w)"
    r"|(?<![\w+])\+([^+\s](?:[^+]*[^+\s])?)\+(?!\w)|\^([^\^\s]+)\^|~([^~\s]+)~"
)
_ESCAPE = re.compile(r"\\(?=[*_`#+^~{\[<(])")
_MARKUP = re.compile(r"[*_`#+^~{\[<(:\\]")
_WORD = re.compile(r"\w")

# Inline markup in the chunk text, taken out where the words it carries stay. Each pattern starts
# with a string rare in prose, which the search skips to, and none reaches over a line's end.
# A macro ("xref:page.adoc[Text]", "https://example.org[Text]", "javadoc:a.B[]") or a link whose
# target starts with an attribute reference ("{api-url}a/B.html[B]") is found in the reversed
# text: forwards, a pattern would try every word as a macro's name; backwards, only a "]". In the
# reversed text a name comes after its target (":rohcna" is "anchor:"). An anchor, an index term
# and an inline anchor ("[[id]]", reversed "]]di[[") show nothing; then a macro with text shows
# its text, one without its target (_macro_words_reversed).
_WORDLESS_REVERSED = re.compile(
    r"\](?:\]\]?[\w:.-]++\[\[\[?"
    r"|[^\[\]\n]*+\[[^\s\[\]:]*+:(?:rohcna|2?mretxedni|ferentoof)(?![\w-]))"
)
_MACRO_TEXT_REVERSED = re.compile(
    r"\]([^\[\]\n]++)\[(?:[^\s\[\]]*:[\w-]*[a-zA-Z](?![\w-])|[^\s\[\]{}]*\}[\w-]++\{)"
)
_MACRO_EMPTY_REVERSED = re.compile(
    r"\]\[(?:([^\s\[\]]*):([\w-]*[a-zA-Z])(?![\w-])|([^\s\[\]{}]*\}[\w-]++\{))"
)
# The replacement that keeps a match's first group (a C function: a template is Python per match).
_FIRST_GROUP = itemgetter(1)
_URL_SCHEMES = frozenset({"http", "https", "ftp", "irc", "file", "mailto"})
# "<<id,Text>>" shows Text, "<<id>>" its id. (Formatting marks, "*a*", "**a**b", "_a_", stay in
# the chunk text: they carry no words, and a search for them would stop at every asterisk and
# underscore of the prose.)
_TEXT_XREF = re.compile(r"<<(?:[^<>,\n]*+,[ \t]*+)?([^<>\n]*+)>>")

# Asciidoctor's built-in attributes that stand for a character (or a blank, or nothing).
_CHARACTER_NAMES = (
    "amp apos asterisk backslash backtick brvbar caret cpp deg endsb gt ldquo lsquo lt plus pp"
    " quot rdquo rsquo startsb tilde two-colons two-semicolons vbar"
)
_CHARACTERS = "& ' * \\ ` \u00a6 ^ C++ \u00b0 ] > \u201c \u2018 < + ++ \" \u201d \u2019 [ ~ :: ;; |"
_BUILT_IN_ATTRIBUTES = {
    **dict(zip(_CHARACTER_NAMES.split(), _CHARACTERS.split(), strict=True)),
    **dict.fromkeys(("nbsp", "sp"), " "),
    **dict.fromkeys(("blank", "empty", "wj", "zwsp"), ""),
}


def take_out_inline_markup(lines: list[str], marked: list[int]) -> None:
    """Take the inline markup out of the `marked` lines: a macro or a cross reference shows its
    text, an inline anchor goes. No pattern reaches over a line's end, so each line stays one."""
    if not marked:
        return
    text = _WORDLESS_REVERSED.sub("", "\n".join([lines[i] for i in marked])[::-1])
    text = _MACRO_TEXT_REVERSED.sub(_FIRST_GROUP, text)
    text = _MACRO_EMPTY_REVERSED.sub(_macro_words_reversed, text)[::-1]
    for i, line in zip(marked, _TEXT_XREF.sub(_FIRST_GROUP, text).split("\n"), strict=True):
        lines[i] = line


def _macro_words_reversed(m: re.Match[str]) -> str:
    """The words a macro without text shows, reversed as _MACRO_EMPTY_REVERSED matched it: its
    target, with its scheme for a URL."""
    target, name = m.group(1), m.group(2)
    if name is None:  # a link whose target starts with an attribute reference
        return m.group(3)
    return f"{target}:{name}" if name[::-1] in _URL_SCHEMES else target


def resolve(text: str, attributes: dict[str, str]) -> str:
    """`text` with its attribute references replaced where the attribute is known."""
    if "{" not in text:
        return text

    def value(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(0)[1:]  # escaped: the reference itself, as written
        name = m.group(2).lower()
        found = attributes.get(name, _BUILT_IN_ATTRIBUTES.get(name))
        return m.group(0) if found is None else found

    return _ATTRIBUTE_REFERENCE.sub(value, text)


def _macro_text(m: re.Match[str]) -> str:
    name, target, text = m.group(1), m.group(2), m.group(3).strip()
    if name in ("image", "footnote", "footnoteref", "anchor", "indexterm"):
        return ""  # renders no words in the title (an image, a note's number, an anchor)
    if name == "menu":
        return f"{target} {text}"
    if text:
        return text.strip('"')
    return f"{name}:{target}" if name in ("https", "http", "ftp", "irc", "file") else target


def plain_title(title: str, attributes: dict[str, str]) -> str:
    """A section title as the plain words a breadcrumb shows: attribute references resolved,
    macros, anchors and formatting marks taken out. Never empty when the title has words."""
    raw = " ".join(title[:TITLE_INPUT_CHARS].split())
    if _MARKUP.search(raw) is None:
        return raw
    plain = _PASSTHROUGH.sub(lambda m: m.group(1) or m.group(2) or m.group(3) or "", raw)
    plain = resolve(plain, attributes)[:TITLE_INPUT_CHARS]
    if "[" in plain:
        plain = _MACRO.sub(_macro_text, plain)
        plain = _INLINE_ANCHOR.sub("", plain)
        plain = _ROLE.sub("", plain)
    if "((" in plain:
        plain = _INLINE_ANCHOR.sub("", plain)
        plain = _INDEX_TERM.sub(r"\1", plain)
    if "<<" in plain:
        plain = _CROSS_REFERENCE.sub(lambda m: (m.group(2) or "").strip() or m.group(1), plain)
    plain = _UNCONSTRAINED.sub(_first_group, plain)
    plain = _CONSTRAINED.sub(_first_group, _CONSTRAINED.sub(_first_group, plain))  # `+x+` too
    plain = " ".join(_ESCAPE.sub("", plain).split())
    if _WORD.search(plain) is None and _WORD.search(raw) is not None:
        return raw
    return plain


def _first_group(m: re.Match[str]) -> str:
    return next((g for g in m.groups() if g is not None), "")
