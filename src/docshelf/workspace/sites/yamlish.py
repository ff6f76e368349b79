"""A small reader for the YAML that site configs are written in (mkdocs.yml, antora.yml,
_config.yml, hugo.yaml, .readthedocs.yaml): enough of YAML to find a few keys, never more.

Constraints:
- Data only, and only this subset: block mappings and sequences (a sequence may sit at its key's
  indentation, as mkdocs.yml writes `nav:`), flow sequences and mappings (also over several
  lines), quoted and plain scalars, literal and folded block scalars, comments. Every scalar is a
  str; tags (`!!python/name:x`, `!ENV`) are dropped, anchors are dropped and aliases read as None.
  Nothing is constructed, imported or run.
- Only the first document is read. What this subset cannot read (a tab in the indentation, an
  indentation that matches no open block, an unclosed quote or bracket, a complex key) raises
  ValueError with the line number, so a caller can say why it fell back to the default layout.
"""

from __future__ import annotations

import re
from typing import TypeAlias

Data: TypeAlias = str | list["Data"] | dict[str, "Data"] | None

# A mapping key and the rest of its line: a quoted key, or plain text up to the first ": ".
_KEY = re.compile(
    r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|(?!-(?:\s|$))[^\s#'"{}\[\],&*!|>%@`][^#]*?)"""
    r""":(?:[ \t]+|$)"""
)
_ANCHOR = re.compile(r"^&\S+\s*")
_TAG = re.compile(r"^!\S*\s*")
# What _peek makes of a line with no content, and of the end of the first document.
_BLANK = (-1, "")
_END = (-2, "")
_PLAIN_END = re.compile(r"[,\]}]|:(?=[\s,\]}])|:$")


def parse(text: str) -> Data:
    """The first document of `text` as dicts, lists and strs. Raises ValueError."""
    try:
        return _Reader(text).document()
    except RecursionError as e:
        raise ValueError("nested too deeply") from e


def get(data: Data, *keys: str) -> Data:
    """The value at a path of mapping keys, or None where one is missing."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def text(data: Data) -> str | None:
    return data if isinstance(data, str) else None


def texts(data: Data) -> list[str]:
    """A scalar or a sequence of scalars as a list of strs (others left out)."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [item for item in data if isinstance(item, str)]
    return []


class _Reader:
    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self._lines: dict[int, tuple[int, str]] = {}  # each line's indent and content, once
        self.i = 0
        while self.i < len(self.lines) and (
            not _uncomment(self.lines[self.i]).strip() or self.lines[self.i].startswith("%")
        ):
            self.i += 1
        if self.i < len(self.lines) and self.lines[self.i].startswith("---"):
            if _uncomment(self.lines[self.i])[3:].strip():
                raise ValueError(f"line {self.i + 1}: content after the document marker")
            self.i += 1
        self.start = self.i

    def document(self) -> Data:
        node = self._peek()
        if node is None:
            return None
        value = self._node(node[0])
        if self._peek() is not None:
            raise ValueError(f"line {self.i + 1}: indentation matches no open block")
        return value

    def _peek(self) -> tuple[int, str] | None:
        """The next line with content: its indentation and its text without a comment."""
        while self.i < len(self.lines):
            line = self._lines.get(self.i)
            if line is None:
                line = self._lines[self.i] = self._content(self.i)
            if line == _BLANK:
                self.i += 1
                continue
            if line == _END:
                self.lines = self.lines[: self.i]  # the second document is not read
                return None
            return line
        return None

    def _content(self, i: int) -> tuple[int, str]:
        raw = self.lines[i]
        if raw.startswith(("---", "...")) and i >= self.start:
            return _END
        body = _uncomment(raw)
        stripped = body.strip()
        if not stripped or stripped.startswith("%"):
            return _BLANK
        indent = len(body) - len(body.lstrip(" "))
        if body[indent : indent + 1] == "\t":
            raise ValueError(f"line {i + 1}: a tab in the indentation")
        return indent, stripped

    def _node(self, indent: int) -> Data:
        line = self._peek()
        if line is None or line[0] < indent:
            return None
        if _is_item(line[1]):
            return self._sequence(line[0])
        if _KEY.match(line[1]):
            return self._mapping(line[0])
        self.i += 1
        return self._inline(line[1], line[0])

    def _sequence(self, indent: int) -> list[Data]:
        items: list[Data] = []
        while (line := self._peek()) is not None and line[0] == indent and _is_item(line[1]):
            rest = line[1][1:].lstrip(" ")
            if not rest:
                self.i += 1
                items.append(self._node(indent + 1))
            elif _KEY.match(rest):
                # "- key: value" opens a mapping at the column of its key.
                column = indent + len(line[1]) - len(rest)
                self.lines[self.i] = " " * column + rest
                self._lines[self.i] = (column, rest)
                items.append(self._mapping(column))
            else:
                self.i += 1
                items.append(self._inline(rest, indent))
        return items

    def _mapping(self, indent: int) -> dict[str, Data]:
        out: dict[str, Data] = {}
        while (line := self._peek()) is not None and line[0] == indent:
            if _is_item(line[1]):
                break
            if line[1].startswith("? "):
                raise ValueError(f"line {self.i + 1}: a complex key")
            match = _KEY.match(line[1])
            if not match:
                raise ValueError(f"line {self.i + 1}: expected 'key: value'")
            key = _scalar(match.group(1).strip())
            rest = _TAG.sub("", _ANCHOR.sub("", line[1][match.end() :].strip(), 1), 1).strip()
            self.i += 1
            if rest[:1] in ("|", ">"):
                out[key] = self._block_scalar(indent, rest[0] == ">")
            elif rest:
                out[key] = self._inline(rest, indent)
            else:
                after = self._peek()
                if after is not None and (
                    after[0] > indent or (after[0] == indent and _is_item(after[1]))
                ):
                    out[key] = self._node(after[0])
                else:
                    out[key] = None
        if (line := self._peek()) is not None and line[0] > indent:
            raise ValueError(f"line {self.i + 1}: indentation matches no open block")
        return out

    def _block_scalar(self, indent: int, folded: bool) -> str:
        kept: list[str] = []
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            if raw.strip() and len(raw) - len(raw.lstrip(" ")) <= indent:
                break
            kept.append(raw)
            self.i += 1
        body = [k for k in kept if k.strip()]
        cut = min((len(k) - len(k.lstrip(" ")) for k in body), default=0)
        lines = [k[cut:] for k in kept]
        return (" " if folded else "\n").join(lines).strip("\n ") + "\n"

    def _inline(self, value: str, indent: int) -> Data:
        value = _TAG.sub("", _ANCHOR.sub("", value, 1), 1).strip()
        if value.startswith("*"):
            return None
        if value[:1] in ("[", "{"):
            while _depth(value) > 0 and self.i < len(self.lines):
                value += " " + _uncomment(self.lines[self.i]).strip()
                self.i += 1
            parsed, end = _flow(value, 0)
            if value[end:].strip():
                raise ValueError(f"line {self.i}: text after a flow collection")
            return parsed
        if value[:1] in ('"', "'"):
            return _scalar(value)
        # A plain scalar may go on over more-indented lines.
        while (line := self._peek()) is not None and line[0] > indent and not _KEY.match(line[1]):
            value += " " + line[1]
            self.i += 1
        return value


def _is_item(line: str) -> bool:
    return line == "-" or line.startswith("- ")


def _uncomment(line: str) -> str:
    """The line without its comment: a # at the start or after a space, outside quotes."""
    if "#" not in line:
        return line.rstrip()
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in ("'", '"') and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _depth(value: str) -> int:
    depth, quote = 0, ""
    for ch in value:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in ("'", '"'):
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
    if quote:
        raise ValueError("an unclosed quote")
    return depth


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), value[1:-1])
    if value[:1] in ("'", '"'):
        raise ValueError("an unclosed quote")
    return value


def _flow(value: str, i: int) -> tuple[Data, int]:
    """The flow collection or scalar at value[i:], and where it ends."""
    while i < len(value) and value[i] == " ":
        i += 1
    if i >= len(value):
        raise ValueError("an unclosed flow collection")
    opener = value[i]
    if opener in "[{":
        closer = "]" if opener == "[" else "}"
        seq: list[Data] = []
        mapping: dict[str, Data] = {}
        i += 1
        while True:
            while i < len(value) and value[i] in " ,":
                i += 1
            if i >= len(value):
                raise ValueError("an unclosed flow collection")
            if value[i] == closer:
                return (seq if opener == "[" else mapping), i + 1
            item, i = _flow(value, i)
            while i < len(value) and value[i] == " ":
                i += 1
            if value[i : i + 1] == ":":
                inner, i = _flow(value, i + 1)
                mapping[str(item)] = inner
                if opener == "[":
                    seq.append({str(item): inner})
            elif opener == "[":
                seq.append(item)
            else:
                mapping[str(item)] = None
            while i < len(value) and value[i] == " ":
                i += 1
            if i < len(value) and value[i] not in (",", closer):
                raise ValueError(f"{value[i]!r} where a flow collection goes on or ends")
    if opener in ("'", '"'):
        end = i + 1
        while end < len(value):
            if value[end] == opener:
                if opener == "'" and value[end + 1 : end + 2] == "'":
                    end += 2
                    continue
                return _scalar(value[i : end + 1]), end + 1
            end += 2 if opener == '"' and value[end] == "\\" else 1
        raise ValueError("an unclosed quote")
    match = _PLAIN_END.search(value, i)
    end = match.start() if match else len(value)
    return value[i:end].strip(), end
