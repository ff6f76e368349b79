"""Reading JavaScript, TypeScript and Python configs by pattern: string literals, bracketed
blocks and the keys of an object literal, found in the text and never run.

Constraints:
- Only literals are read. A value that is computed (a variable, a call without a string literal
  in it, a spread) is not known, and the caller keeps its default for it.
- Comments are blanked first (their length kept, so positions still point into the text); a
  string literal is never mistaken for a comment or a bracket. Regular-expression literals are
  not recognised: a config rarely holds one where a key of ours is.
- A block whose brackets do not close raises ValueError (the config is malformed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A string literal (single, double or back quotes; escapes kept) or a comment, in one pass.
_JS_TOKENS = re.compile(
    r"""(?P<s>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)"""
    r"""|(?P<c>//[^\n]*|/\*.*?(?:\*/|\Z))""",
    re.DOTALL,
)
_PY_TOKENS = re.compile(
    r"""(?P<s>'''.*?'''|\"\"\".*?\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<c>\#[^\n]*)""",
    re.DOTALL,
)
_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.)*`""")
_BRACKETS = re.compile(r"""[\[\]{}()]|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""")
_CLOSER = {"[": "]", "{": "}", "(": ")"}
# An object literal's key at the top of a block: a name or a quoted string before a colon.
_OBJECT_KEY = re.compile(r"""(?:^|[{,])\s*(?:(['"])(.*?)\1|([A-Za-z_$][\w$-]*))\s*:""")


def uncommented(text: str, *, python: bool = False) -> str:
    """The text with each comment blanked to spaces (newlines kept)."""

    def blank(match: re.Match[str]) -> str:
        if match.group("c") is None:
            return match.group(0)
        return re.sub(r"[^\n]", " ", match.group(0))

    return (_PY_TOKENS if python else _JS_TOKENS).sub(blank, text)


def literal(token: str) -> str:
    """A quoted string literal's text, its simple escapes undone."""
    body = token[3:-3] if token[:3] in ("'''", '"""') else token[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


def strings(text: str) -> list[str]:
    """Every string literal of `text`, in order (template literals with ${} left out)."""
    return [literal(m.group(0)) for m in _STRING.finditer(text)]


def block(text: str, start: int) -> str:
    """The bracketed block opening at text[start], brackets included. Raises ValueError."""
    stack: list[str] = []
    for match in _BRACKETS.finditer(text, start):
        token = match.group(0)
        if token in _CLOSER:
            stack.append(_CLOSER[token])
        elif token in ("]", "}", ")"):
            if not stack or stack.pop() != token:
                raise ValueError(f"a bracket at offset {match.start()} does not match")
            if not stack:
                return text[start : match.end()]
    raise ValueError(f"the bracket at offset {start} is not closed")


def blocks_after(text: str, key: str) -> Iterator[tuple[int, str]]:
    """Each `{...}`/`[...]` that follows `key:` or `key =` (a regex), with where it starts."""
    for match in re.finditer(rf"(?:{key})\s*(?::|=|\+=)\s*(?=[\[{{(])", text):
        yield match.end(), block(text, match.end())


def top_level(block_text: str) -> str:
    """A block with the insides of its nested brackets blanked (same length, so an offset into
    it is an offset into the block): what the block's own keys say."""
    out: list[str] = []
    depth = 0
    position = 0
    for match in _BRACKETS.finditer(block_text):
        token = match.group(0)
        between = block_text[position : match.start()]
        out.append(_blank(between) if depth >= 2 else between)
        if token in _CLOSER:
            depth += 1
            out.append(token if depth <= 2 else _blank(token))
        elif token in ("]", "}", ")"):
            depth -= 1
            out.append(token if depth <= 1 else _blank(token))
        else:
            out.append(token if depth <= 1 else _blank(token))
        position = match.end()
    tail = block_text[position:]
    out.append(_blank(tail) if depth >= 2 else tail)
    return "".join(out)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def value(block_text: str, key: str) -> str | None:
    """The string that the block's own `key` is set to: a literal, or the last literal of a call
    such as `path.resolve(__dirname, '../docs')`; None when it is not written as either."""
    match = re.search(
        rf"""(?:^|[\s{{,])['"]?{re.escape(key)}['"]?\s*[:=]\s*""", top_level(block_text)
    )
    if not match:
        return None
    rest = block_text[match.end() :]
    head = re.match(r"""\s*('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`$]*`)""", rest)
    if head:
        return literal(head.group(1))
    call = re.match(r"\s*[\w$.]+\s*(?=\()", rest)
    if call:
        found = strings(block(rest, call.end()))
        return found[-1] if found else None
    return None


def keys(block_text: str) -> list[str]:
    """The keys of an object literal's own entries."""
    inner = top_level(block_text)[1:-1]
    return [m.group(2) if m.group(1) else m.group(3) for m in _OBJECT_KEY.finditer("," + inner)]


def entry(block_text: str, key: str) -> str | None:
    """The `{...}`/`[...]` block an object's own `key` is set to, or None."""
    top = top_level(block_text)
    match = re.search(rf"""(?:^|[\s{{,])['"]?{re.escape(key)}['"]?\s*:\s*(?=[\[{{])""", top)
    if not match:
        return None
    return block(block_text, match.end())
