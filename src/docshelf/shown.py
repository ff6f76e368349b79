"""How docshelf writes a value into a message or an answer: a path or a client's text escaped to
one printable line and cut, a refused value cut, a commit id shortened, a count with its noun.

Every layer's messages use these (a refusal in search.py, a skip in workspace/), so they sit at
the bottom of the layout; present.py, what the faces call, hands them on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# How many characters of a commit id an answer or a message shows: as git's short ids, long
# enough never to be ambiguous in one repository's history.
SHORT_REF = 12

# A client's text (a path, a name) is shown up to this many characters; a refused value of
# another type up to SHOWN_VALUE_CHARS, and a whole number in digits up to SHOWN_INT_DIGITS:
# enough to recognise it, never a flood of text.
CLIPPED_CHARS = 80
SHOWN_VALUE_CHARS = 40
SHOWN_INT_DIGITS = 40


def shown(path: Path | str) -> str:
    """A path as one printable line: control characters and undecodable bytes escaped."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def clip(text: str) -> str:
    """A client's text as logs and answers show it: escaped, and cut at CLIPPED_CHARS."""
    text = shown(text)
    return text if len(text) <= CLIPPED_CHARS else text[: CLIPPED_CHARS - 3] + "..."


def shown_value(value: object) -> str:
    """A refused value: a string clipped and quoted, anything else as its repr, cut short."""
    if isinstance(value, str):
        return repr(clip(value))
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4,300-digit limit on conversion to text
        return f"a {type(value).__name__}"
    return text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "..."


def shown_int(value: int) -> str:
    """`value` in digits when short; Python cannot even write ints past 4,300 digits."""
    if abs(value) < 10**SHOWN_INT_DIGITS:
        return str(value)
    return f"a number of more than {SHOWN_INT_DIGITS} digits"


def short_ref(ref: str) -> str:
    return ref[:SHORT_REF]


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and its noun: 1 file, 2 files (or `nouns` for an irregular plural)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


# A message names at most this many workspaces (or other names), then says how many more.
LISTED_NAMES = 20


def listed(names: Sequence[str], limit: int = LISTED_NAMES) -> str:
    """`names` joined with commas: the first `limit` of them, then how many more."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
