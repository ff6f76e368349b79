"""The text both chunkers cut, and its size in bytes.

Line endings become LF (CRLF and lone CR alike) and a leading byte order mark is dropped before
anything else, so line numbers and offsets mean the same thing in every chunk. Sizes count UTF-8
bytes; a lone surrogate (possible in a Python string, never in a decoded file) counts as the three
bytes it would take, rather than failing.
"""

from __future__ import annotations

import re

from docshelf.config import MAX_TITLE_CHARS

# Finds the first character that is not whitespace (as str.isspace() sees it).
NON_BLANK = re.compile(r"\S")


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def prepare(text: str) -> str:
    """The text chunks are cut from and counted in: newlines normalised, a byte order mark
    dropped."""
    text = normalize_newlines(text)
    return text[1:] if text.startswith("\ufeff") else text


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def from_utf8(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def utf8_size(text: str) -> int:
    """Bytes of UTF-8."""
    return len(text) if text.isascii() else len(utf8(text))


def text_lines(text: str) -> list[str]:
    """A file's lines as the chunks number them (line 1 is item 0): the prepared text cut at
    each newline, a last newline ending the last line rather than starting an empty one."""
    prepared = prepare(text)
    if not prepared:
        return []
    lines = prepared.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def cut_title(title: str) -> str:
    """A heading's title as a breadcrumb holds it: cut, with an ellipsis, past MAX_TITLE_CHARS."""
    if len(title) > MAX_TITLE_CHARS:
        return title[: MAX_TITLE_CHARS - 1] + "…"
    return title
