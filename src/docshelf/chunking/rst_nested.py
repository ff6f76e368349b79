"""Markup inside the top level's indented blocks of a reStructuredText file (rst.py): a note's
body, a list item, an entry's description may hold directives, comments, targets, footnotes and
literal blocks of their own, which change their lines as at the top level (rst_visible.py).

Constraints:
- Only the lines the scanner marked while it read the block (`_Scan.marks`: indented explicit
  markup, a line ending in "::" before a blank line) are read; a block without one is never
  read again.
- The blocks that change what their lines are (code, hidden bodies, entries, a toctree) are
  kept on a stack, innermost last; where each ends (its first non-blank line indented no deeper
  than the line that opened it) is looked for from the line where the last look stopped, so no
  line is read twice but where it closes a block: linear time however deep the nesting.
"""

from __future__ import annotations

from typing import Any

from docshelf.chunking.rst_syntax import (
    _CONTENT_MARKUP,
    _DIRECTIVE,
    _EXPLICIT_AT,
    _TARGET,
    _content_indent,
    _indent,
)
from docshelf.chunking.rst_visible import (
    _IS_CODE,
    _IS_ENTRY,
    _IS_HIDDEN,
    _IS_TOC,
    _describes_object,
    _entry_name,
    _head,
    _language,
    _next_text,
    _Scanned,
    _show_literal_mark,
    _show_toc,
    _shows,
)

# What an open block is: code (fenced), a hidden body (no prose), an entry's body or a toctree.
_IN_CODE, _IN_HIDDEN, _IN_ENTRY, _IN_TOC = 0, 1, 2, 3


class _Nested:
    """Explicit markup and literal blocks inside one of the top level's indented blocks (a
    note's body, a list item, an entry's description), read at the lines the scanner marked in
    it (`marks`), with a stack of the blocks open among them."""

    def __init__(self, scan: _Scanned, start: int, end: int, marks: list[int], outer: int) -> None:
        self.scan = scan
        self.lines = scan.lines
        self.visible = scan.visible
        self.start, self.end = start, end
        self.marks = marks  # the lines in [start, end) where markup may start, in order
        self.outer = outer  # 1 when this block is a top-level entry's description, else 0
        # Open blocks, innermost last: [kind, the indentation their lines are deeper than, ...].
        self.stack: list[list[Any]] = []
        self.searched = start  # no open block ends before this line
        self.explicit_end = -1  # the line after the last explicit construct's head

    def run(self) -> None:
        lines, visible, stack, previous = self.lines, self.visible, self.stack, -1
        for i in self.marks:
            if i == previous:
                continue  # marked twice: explicit markup that ends in "::"
            previous = i
            if stack:
                self.close_before(i)
            # Read unless hidden already, code, or in a hidden body.
            if visible[i] and not (stack and stack[-1][0] != _IN_ENTRY):
                if _EXPLICIT_AT.match(lines[i]) is not None:
                    self.explicit(i)
                else:
                    self.literal(i)
        if stack:
            self.close_before(self.end)

    def close_before(self, line: int) -> None:
        """Close the open blocks that end before `line`, or at it (at the block's end, all)."""
        stack, lines = self.stack, self.lines
        while stack and self.searched < line:
            # The first line from `searched` on that is not blank and is indented no deeper
            # than the innermost block's line.
            deeper = " " * (stack[-1][1] + 1)
            found = self.searched
            while found < line and (not lines[found] or lines[found].startswith(deeper)):
                found += 1
            self.searched = found
            if found == line:
                break
            self.close(stack.pop(), found)
        if line >= self.end:
            while stack:
                self.close(stack.pop(), self.end)
            return
        if stack:
            s = lines[line]
            indent = len(s) - len(s.lstrip(" "))
            while stack and indent <= stack[-1][1]:
                self.close(stack.pop(), line)

    def close(self, block: list[Any], end: int) -> None:
        """Close a block whose lines end before line `end`."""
        kind = block[0]
        if kind == _IN_CODE:
            _, _, opener, body, lead, language = block
            self.scan.code(opener, body, end, lead, language)
        elif kind == _IN_HIDDEN:
            start = block[2]
            if end > start:
                self.visible[start:end] = [""] * (end - start)
        elif kind == _IN_TOC:
            _show_toc(self.lines, self.visible, block[2], block[3], end)

    def starts_block(self, i: int, k: int) -> bool:
        """Whether explicit markup on line i, indented by k, starts a construct (rather than
        going on with the paragraph above it)."""
        if i in (0, self.explicit_end):
            return True
        prev = self.lines[i - 1]
        if not prev:
            return True
        pk = len(prev) - len(prev.lstrip(" "))
        if k < pk or prev.startswith("..", pk):
            return True
        return k > pk and k != _content_indent(prev, pk)

    def explicit(self, i: int) -> None:
        """Explicit markup on line i."""
        lines, visible = self.lines, self.visible
        s = lines[i]
        k = len(s) - len(s.lstrip(" "))
        if not self.starts_block(i, k):
            return
        self.searched = max(self.searched, i + 1)
        self.explicit_end = i + 1
        shown = visible[i]
        lead = shown[: len(shown) - len(shown.lstrip())]
        m = _DIRECTIVE.match(s, k)
        if m is None and _TARGET.match(s, k):  # a hyperlink target, with its indented lines
            j = i + 1
            while j < self.end and lines[j][: k + 1].isspace():
                j += 1
            visible[i:j] = [""] * (j - i)
            self.explicit_end = j
            return
        if m is not None:
            directive: str | None = m.group(1)
        else:
            m = _CONTENT_MARKUP.match(s, k)
            directive = m.group("directive") if m is not None else None
        if directive is None:
            if m is not None and s[k + 2 :].lstrip(" ")[:1] != "|":
                visible[i] = lead + shown.lstrip()[2:].lstrip()  # a footnote keeps its label
            else:  # a comment or a substitution definition, with its indented block
                visible[i] = ""
                self.stack.append([_IN_HIDDEN, k, i + 1])
            return
        name = directive.lower()
        argument = shown[shown.find("::", len(lead)) + 2 :].strip()  # its roles shown as text
        shows = _shows(name, argument)
        head = _head(lines, visible, i, k, shows is _IS_ENTRY)
        self.explicit_end = head
        visible[i] = ""
        if shows is _IS_CODE:
            body = _next_text(lines, head)
            if body < self.end and _indent(lines[body]) > k:
                language = _language(name, argument)
                self.stack.append([_IN_CODE, k, i, body, lead, language])
        elif shows is _IS_HIDDEN:
            self.stack.append([_IN_HIDDEN, k, i + 1])
        elif shows is _IS_TOC:
            self.stack.append([_IN_TOC, k, i, head])
        elif shows is _IS_ENTRY:
            body = _next_text(lines, head)
            if body < self.end and _indent(lines[body]) > k:
                title = _entry_name(name, argument)
                depth = sum(block[0] == _IN_ENTRY for block in self.stack) + self.outer
                self.scan.entries.append((i, head, depth, title))
                self.stack.append([_IN_ENTRY, k, title])
                visible[i] = lead + argument
            elif _describes_object(name):
                visible[i] = lead + argument
            else:
                self.scan.bodiless.append((i, body, lead + argument))
        elif shows:
            visible[i] = lead + shows

    def literal(self, i: int) -> None:
        """Line i ends in "::": when it ends a paragraph and an indented block follows after a
        blank line, that is a literal block, fenced from the blank line on."""
        lines, visible = self.lines, self.visible
        if i + 1 >= self.end or lines[i + 1]:
            return  # no blank line after it
        s = lines[i]
        if (len(s) - 2 - len(s[:-2].rstrip("\\"))) % 2:
            return  # an escaped colon
        base = _content_indent(s, _indent(s))
        body = _next_text(lines, i + 1)
        if body >= self.end or _indent(lines[body]) <= base:
            return
        _show_literal_mark(visible, i)
        self.searched = max(self.searched, i + 1)
        self.stack.append([_IN_CODE, base, i + 1, body, " " * _indent(s), ""])
