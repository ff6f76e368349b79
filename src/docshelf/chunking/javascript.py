"""JavaScript read for its structure only, for the MDX chunker: where an ESM statement or an
`{expression}` ends.

Constraints:
- One depth for all brackets, strings, template literals, comments. A quote left open at the end
  of its line closes there; a `/` is division, never a regular expression.
- Linear time: `ends` remembers where each `{` read in code closed, shared by every lexer of a
  text, so a later read that comes to that brace steps over its group at once; brackets in a row
  are taken in one step, in a bounded window, so that little is read past a brace read before.
"""

from __future__ import annotations

import re

# The next event in code: a bracket, a backquote, a slash, or a whole string (a template literal
# without `\` or `$` too: read as its own events, it leaves the same state).
_STRING = r"""'(?:[^'\\\n]++|\\[\s\S])*+'?|"(?:[^"\\\n]++|\\[\s\S])*+"?"""
_CODE_EVENT = re.compile(rf"`[^`\\$]*+`|[{{}}()\[\]`/]|{_STRING}")
_TEMPLATE_EVENT = re.compile(r"\\[\s\S]|`|\$\{")
_NO_EVENT = r"""[^{}()\[\]"'`/]"""
# A string with no bracket in it, read whole as _STRING reads it (to its quote or its line's end).
_BARE = r"(){}\[\]"
_STRING_WITHOUT_BRACKETS = (
    rf"""'(?:[^'\\\n{_BARE}]++|\\[^{_BARE}])*+(?:'|(?=\n))"""
    rf"""|"(?:[^"\\\n{_BARE}]++|\\[^{_BARE}])*+(?:"|(?=\n))"""
)


def _brackets(chars: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Brackets of `chars` in a row: two or more, with only strings without brackets and what is
    no event between them; and one of them."""
    no_event = rf"{_STRING_WITHOUT_BRACKETS}|{_NO_EVENT}++"
    return re.compile(rf"(?:[{chars}](?:{no_event})*+){{2,}}+"), re.compile(rf"[{chars}]")


_OPENING, _CLOSING = _brackets(r"(\[{"), _brackets(r")\]}")
_START = re.Match.start
# How far brackets in a row are read at once: a brace read before may cut the row short, and
# what was read past it (which a later read steps over) is read again.
_WINDOW = 256


class Lexer:
    """A read of JavaScript from `pos`, on to a limit at a time (see the module's constraints)."""

    __slots__ = ("comment", "ends", "pos", "stack", "templates", "text")

    def __init__(self, text: str, pos: int, ends: dict[int, int]) -> None:
        self.text, self.pos, self.ends = text, pos, ends
        self.stack: list[int] = []  # where each open bracket is
        self.templates: list[int] = []  # the stack depth inside each open template literal
        self.comment = False  # inside /* */

    def complete(self) -> bool:
        return not self.stack and not self.templates and not self.comment

    def run(self, limit: int, close: bool) -> int:
        """Read on to `limit`. With `close`, stop just after the bracket that empties the stack
        and return that offset; else (or when it never comes) return -1."""
        text, stack, templates, ends = self.text, self.stack, self.templates, self.ends
        pos, comment = self.pos, self.comment
        code_event, template_event = _CODE_EVENT.search, _TEMPLATE_EVENT.search
        while pos < limit:
            if comment:
                end = text.find("*/", pos, limit)
                if end < 0:
                    pos = limit
                    break
                comment, pos = False, end + 2
                continue
            if templates and templates[-1] == len(stack):
                m = template_event(text, pos, limit)
                if m is None:
                    pos = limit
                    break
                pos = m.end()
                event = text[m.start()]
                if event == "`":
                    templates.pop()
                elif event == "$":
                    stack.append(pos - 1)
                continue
            m = code_event(text, pos, limit)
            if m is None:
                pos = limit
                break
            at = m.start()
            pos = at + 1
            event = text[at]
            if event in "([{" and at not in ends and (opened := _row(_OPENING, text, at, limit)):
                known = next(filter(ends.__contains__, opened), None)  # a `{` read before
                if known is not None:
                    opened = opened[: opened.index(known)]
                stack += opened
                pos = opened[-1] + 1 if known is None else known
            elif event in "([":
                stack.append(at)
            elif event == "{":
                known = ends.get(at)
                if known is not None and known <= limit:
                    pos = known  # a group read before: the same state after it
                else:
                    stack.append(at)
            elif event in ")]}":
                for shut in _row(_CLOSING, text, at, limit) or (at,):
                    pos = shut + 1
                    if not stack:
                        continue
                    opener = stack.pop()
                    if text[opener] == "{":
                        ends[opener] = pos
                    if close and not stack:
                        self.pos, self.comment = pos, comment
                        return pos
                    if templates and templates[-1] == len(stack):
                        break  # back in a template literal: what follows is its text
            elif event == "`" and m.end() == pos:
                templates.append(len(stack))
            elif event == "/":
                after = text[pos : pos + 1]
                if after == "/":
                    end = text.find("\n", pos, limit)
                    pos = end if end >= 0 else limit
                elif after == "*":
                    comment, pos = True, pos + 1
            else:  # a string
                pos = m.end()
        self.pos, self.comment = pos, comment
        return -1


def _row(
    patterns: tuple[re.Pattern[str], re.Pattern[str]], text: str, at: int, limit: int
) -> list[int]:
    """Where the brackets of a row that starts at `at` are, in a window of _WINDOW characters;
    [] when fewer than two come so."""
    row, one = patterns
    found = row.match(text, at, min(limit, at + _WINDOW))
    return [] if found is None else list(map(_START, one.finditer(text, at, found.end())))
