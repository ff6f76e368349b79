"""docutils' reStructuredText syntax as the chunker (rst.py) reads it, line by line: the body
patterns, indentation, field and option markers, enumerators, and a title's plain words.

Constraints:
- Pure functions and compiled patterns, no state: the scanner (rst.py), the visible text
  (rst_visible.py) and nested markup (rst_nested.py) share them.
- Every pattern is anchored at a known start (re.match), or searched for from a literal
  character, and can backtrack no further than a bounded distance or once over the line
  (possessive runs where a name or a title is read), so a megabyte line is read in linear time.
- Lines are read as docutils reads them (`_as_docutils_reads`): tabs expanded to stops of 8,
  vertical tabs and form feeds as spaces, trailing whitespace dropped.
- A title's breadcrumb (`_plain`) is its plain words: inline literals, roles, references,
  emphasis, substitutions and escapes lose their markup, but a title with words never becomes
  empty; only its first `_TITLE_SCAN` characters are read.
"""

from __future__ import annotations

import re
import unicodedata

from docshelf.config import MAX_TITLE_CHARS

# docutils expands tabs to stops every 8 columns before it reads indentation.
_TAB_WIDTH = 8
# docutils' bullets: a bullet list item starts with one and a blank (or nothing else).
_BULLETS = frozenset("-+*\u2022\u2023\u2043")
# Only this much of a title line is read for its breadcrumb, which keeps MAX_TITLE_CHARS.
_TITLE_SCAN = 4 * MAX_TITLE_CHARS
# Enumerators longer than this are no list item (Python's int() refuses 4300 digits).
_MAX_ENUMERATOR_DIGITS = 100

# docutils' body patterns, anchored at the start of a line (re.match); none can backtrack
# further than a bounded distance or once over the line.
_ENUM = r"(?:[0-9]+|[a-zA-Z]|[ivxlcdm]+|[IVXLCDM]+|#)"
_ENUMERATOR = re.compile(
    rf"(?:\((?P<parens>{_ENUM})\)|(?P<rparen>{_ENUM})\)|(?P<period>{_ENUM})\.)(?: +|$)"
)
_OPTARG = r"(?:[a-zA-Z][a-zA-Z0-9_-]*|<[^<>]+>)"
_OPTION = (
    rf"(?:[-+][a-zA-Z0-9](?: ?{_OPTARG})?"
    rf"|(?:--|/)[a-zA-Z0-9][a-zA-Z0-9_-]*(?:[ =]{_OPTARG})?)"
)
_OPTION_MARKER = re.compile(rf"{_OPTION}(?:, {_OPTION})*(?:  +| ?$)")
_SIMPLENAME = r"(?:(?!_)\w)+(?:[-._+:](?:(?!_)\w)+)*"
# Explicit markup that is not a comment: footnotes, citations, substitution definitions and
# directives (all content), and hyperlink targets (markup only).
_CONTENT_MARKUP = re.compile(
    rf"\.\. +(?:\[(?:[0-9]+|#(?:{_SIMPLENAME})?|\*|{_SIMPLENAME})\](?: +|$)"
    rf"|\|(?! |$)|(?P<directive>{_SIMPLENAME}) ?::(?: +|$))"
)
_TARGET = re.compile(r"\.\. +_(?! |$)")
# A field marker as _is_field_marker reads it (possessive: the name is read once).
_FIELD_MARKER = re.compile(r":(?![: ])(?:[^:\\]|\\.|:(?![ `]|\Z))*+(?<! ):(?: |\Z)")
# A directive whose name is ASCII, as _CONTENT_MARKUP reads it: one search for the most common
# explicit markup (a name starts with no "_", so this is no target).
_DIRECTIVE = re.compile(r"\.\. +([A-Za-z0-9]+(?:[-._+:][A-Za-z0-9]+)*) ?::(?: +|$)")
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_ROMAN_DIGITS = (
    ("M", 1000), ("CM", 900), ("D", 500), ("CD", 400), ("C", 100), ("XC", 90), ("L", 50),
    ("XL", 40), ("X", 10), ("IX", 9), ("V", 5), ("IV", 4), ("I", 1),
)  # fmt: skip
# A character that may start or end inline markup in a title.
_MARKUP = re.compile(r"[\\`*|:_]")
# What _plain reads one by one (blanks start a word), and a run of the other characters.
_READ = "\\`*|:_"
_PLAIN_RUN = re.compile(r"[^\s\\`*|:_]+")
# A title whose only markup is inline literals, each not empty.
_LITERALS_ONLY = re.compile(r"[^\\`*|:_]*+(?:``[^`]++``[^\\`*|:_]*+)*+")
# A character str.isalnum() accepts (\w is that or "_").
_ALNUM = re.compile(r"[^\W_]")
# A role's name, as `:py:func:` before or after interpreted text (bounded: role names are short).
_ROLE = re.compile(r":((?:(?!_)\w)(?:[-._+:]?(?:(?!_)\w)){0,60}):")

# Explicit markup after a line's indentation ("   .. note::"), the line read as docutils does.
_EXPLICIT_AT = re.compile(r" *\.\.(?= |\n|\Z)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content_indent(line: str, indent: int) -> int:
    """Where the text of a line indented by `indent` starts: after a bullet or an enumerator."""
    first = line[indent : indent + 1]
    if first in _BULLETS and line[indent + 1 : indent + 2] in ("", " "):
        return indent + 1 + _indent(line[indent + 1 :])
    if first.isalnum() or first in "(#":
        m = _ENUMERATOR.match(line, indent)
        if m is not None:
            return m.end()
    return indent


def _is_option(line: str) -> bool:
    """Whether a line is a field marker, as a directive's option is."""
    option = line.lstrip(" ")
    return option[:1] == ":" and _is_field_marker(option)


def _as_docutils_reads(line: str) -> str:
    """A line as docutils' string2lines gives it: vertical tabs and form feeds as spaces, tabs
    expanded, trailing whitespace dropped."""
    if "\v" in line or "\f" in line:
        line = line.replace("\v", " ").replace("\f", " ")
    if "\t" in line:
        line = line.expandtabs(_TAB_WIDTH)
    return line.rstrip()


def _width(text: str) -> int:
    """docutils' column_width: wide East Asian characters count two, combining ones none."""
    if text.isascii():
        return len(text)
    width = 0
    for c in text:
        if unicodedata.combining(c):
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


def _is_grid_border(s: str) -> bool:
    """docutils' grid table top, `+-[-+]+-+`."""
    return len(s) >= 5 and s[1] == s[-2] == "-" and s[-1] == "+" and not s.strip("+-")


def _is_field_marker(s: str) -> bool:
    """docutils' field marker `:name: ` at the start of `s`: the name is not empty, starts with no
    colon or space, ends with no space, and ends at the first colon followed by a space or the
    end of the line; a backslash escapes the next character, and a colon before a backquote ends
    the search."""
    return _FIELD_MARKER.match(s) is not None


def _ordinal(text: str) -> tuple[int | None, str]:
    """docutils' parse_enumerator: an enumerator's value and sequence (None when invalid)."""
    if text == "#":
        return 1, "#"
    if text in ("i", "I"):
        return 1, "lowerroman" if text == "i" else "upperroman"
    if text.isdigit():
        return (int(text) if len(text) <= _MAX_ENUMERATOR_DIGITS else None), "arabic"
    if len(text) == 1:
        lower = text.islower()
        return ord(text) - ord("a" if lower else "A") + 1, "loweralpha" if lower else "upperalpha"
    sequence = "lowerroman" if text.islower() else "upperroman"
    if not _ROMAN.fullmatch(text.upper()):
        return None, sequence
    value, at, upper = 0, 0, text.upper()
    for digit, worth in _ROMAN_DIGITS:
        while upper.startswith(digit, at):
            value, at = value + worth, at + len(digit)
    return value, sequence


def _enumerators(ordinal: int, sequence: str, kind: str) -> tuple[str, str] | None:
    """docutils' make_enumerator: the next item's enumerator and the auto-enumerator, each with
    the space after it; None when the sequence has no such item."""
    prefix = "(" if kind == "parens" else ""
    suffix = "." if kind == "period" else ")"
    if sequence == "#":
        label = "#"
    elif sequence == "arabic":
        label = str(ordinal)
    elif sequence.endswith("alpha"):
        if ordinal > 26:
            return None
        label = chr(ord("a") + ordinal - 1)
    else:
        if not 0 < ordinal < 5000:
            return None
        label = ""
        for digit, worth in _ROMAN_DIGITS:
            count, ordinal = divmod(ordinal, worth)
            label += digit * count
    label = label.lower() if sequence.startswith("lower") else label.upper()
    return f"{prefix}{label}{suffix} ", f"{prefix}#{suffix} "


def _plain(title: str) -> str:
    """A title's words without inline markup: ``literal`` and *emphasis* keep their text,
    :role:`text <target>` and `link <url>`_ their text, :role:`~a.b` its last part, |name| its
    name; escapes are resolved and a reference's trailing underscores dropped. A title with
    words is never left without them."""
    t = title[:_TITLE_SCAN]
    if _MARKUP.search(t) is None:
        return t.strip()
    if _LITERALS_ONLY.fullmatch(t) is not None:
        plain = t.replace("``", "").strip()  # inline literals alone (``broker_url``): as written
        return plain if _ALNUM.search(plain) is not None else title.strip()
    n = len(t)
    out: list[str] = []
    role = ""  # the role written before the interpreted text that follows
    token_start = 0  # where the current run of non-blank characters starts
    i = 0
    while i < n:
        c = t[i]
        if c.isspace():
            token_start = i + 1
        if c == "\\":
            if i + 1 < n and not t[i + 1].isspace():
                out.append(t[i + 1])
            i += 2
            continue
        if c == "`" and t.startswith("``", i):
            end = t.find("``", i + 2)
            if end > i + 2:
                out.append(t[i + 2 : end])
                i = end + 2
                continue
        elif c == "`":
            end = _closing(t, "`", i + 1)
            if end > i + 1:
                inner, i = t[i + 1 : end], end + 1
                if (m := _ROLE.match(t, i)) is not None:
                    role, i = m.group(1), m.end()
                elif t.startswith("_", i):
                    i += 2 if t.startswith("__", i) else 1
                out.append(_interpreted(inner, role))
                role = ""
                continue
        elif c == ":" and (m := _ROLE.match(t, i)) is not None and t.startswith("`", m.end()):
            role, i = m.group(1), m.end()
            continue
        elif c in "*|":
            mark = "**" if t.startswith("**", i) else c
            end = _closing(t, mark, i + len(mark))
            if end > i + len(mark) and not t[i + len(mark)].isspace() and not t[end - 1].isspace():
                out.append(_unescape(t[i + len(mark) : end]))
                i = end + len(mark)
                if c == "|" and t.startswith("_", i):
                    i += 2 if t.startswith("__", i) else 1
                continue
        elif c == "_" and t.startswith("_`", i):
            i += 1  # an inline target: `text` follows
            continue
        elif c == "_" and out and out[-1][-1:].isalnum() and t[token_start] != "_":
            k = i + (2 if t.startswith("__", i) else 1)
            if k >= n or not (t[k].isalnum() or t[k] == "_"):
                i = k  # a reference: `name_`
                continue
        if c in _READ or c.isspace():
            out.append(c)
            i += 1
        else:  # a run of characters that none of the above reads, as they are
            end = m.end() if (m := _PLAIN_RUN.match(t, i)) is not None else i + 1
            out.append(t[i:end])
            i = end
    plain = "".join(out).strip()
    if _ALNUM.search(plain) is None:
        return title.strip()
    return plain


def _closing(t: str, mark: str, start: int) -> int:
    """Where the next `mark` not escaped by a backslash starts, from `start`; -1 if none."""
    at = t.find(mark, start)
    while at > 0 and t[at - 1] == "\\":
        at = t.find(mark, at + 1)
    return at


def _interpreted(inner: str, role: str) -> str:
    """Interpreted text as Sphinx shows it: the explicit title of `title <target>`, else the
    target, its last dotted part after a `~`; :pep: and :rfc: name their document."""
    inner = _unescape(inner).strip()
    role = role.lower()
    lt = inner.rfind("<")
    if inner.endswith(">") and lt >= 0 and (lt == 0 or inner[lt - 1].isspace()):
        shown = inner[:lt].strip()
        if shown:
            return shown
        inner = inner[lt + 1 : -1].strip()
    if role in ("pep", "pep-reference"):
        return f"PEP {inner}"
    if role in ("rfc", "rfc-reference"):
        return f"RFC {inner}"
    if role:
        inner = inner.lstrip("!")
        if inner.startswith("~"):
            inner = inner[1:].rsplit(".", 1)[-1]
    return inner


def _unescape(text: str) -> str:
    """Backslash escapes resolved: an escaped character stays, an escaped blank goes."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            if i + 1 < n and not text[i + 1].isspace():
                out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
