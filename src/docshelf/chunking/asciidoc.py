"""The AsciiDoc chunker: a file cut at its section titles as Asciidoctor reads them, then packed
by the section packer (outline.split_outline), which gives every chunk its guarantees. Here: the
scanner's readers of what lies between delimited blocks (paragraphs, lists, block metadata,
section titles, the document header); its state and its delimited blocks are in
asciidoc_blocks.py, what a single line is in asciidoc_lines.py, inline markup and breadcrumb
titles in asciidoc_inline.py.

Constraints:
- Pure and deterministic, no I/O: an include directive is never followed (its line shows
  nothing); the lines between conditional directives are kept whatever the condition.
- Linear in the input: each line is visited once, with checks that are plain string tests or
  patterns that cannot backtrack over a line more than a bounded number of times; a delimited
  block's closing line is found by a dictionary of the open delimiters, however deep they nest.
  Inline markup is taken out by a few searches over the lines of prose that may hold it (a "["
  or a "<<"), joined: none reaches over a line.
- A chunk's text is the page's visible text, and keeps every line of the file, one for one, so
  line numbers stay the file's. A line of markup becomes an empty line: the document header's
  author, revision and attribute lines, an attribute entry, a comment line or block, a
  conditional or include directive (in a listing too), a block anchor or attribute line (but an
  admonition's, which shows its label: "NOTE"), a list continuation ("+"), a block macro (but an
  image's, which shows its alternative text), a delimiter (example, sidebar, quote, open, table,
  passthrough, tabs). A block title shows its words ("Title" of ".Title"), a description list's
  term its own ("Java" of the tab label "Java::"). Code stays code: a listing's or a literal
  block's delimiters show as a Markdown fence, the opening one with the language of its source
  attribute line ("```java" of "[source,java]" and "----"); a block of code that shows no line
  (nothing but include directives) shows no fence either. Inside a line, outside code and literal
  text, a macro or a cross reference shows its text (or, without text, its target), and inline
  anchors go; formatting marks stay, as Markdown's do.
- Section titles are found where Asciidoctor looks for them, at a block boundary outside every
  delimited block: "== Title" (one '=' per level, up to six, or Markdown's '#'), or a line with
  an underline of '=', '-', '~', '^' or '+' as long as it, give or take one. A line inside a
  delimited block (listing, literal, example, sidebar, quote, table, passthrough, open, comment,
  fenced code), a literal paragraph, a list item or a paragraph is never a title; a title after
  [discrete] or [float] is a heading of its own section's content, not a section.
- The block metadata just above a title (attribute lines, anchors, block titles, and the blank
  lines and comments between them) belongs to its section, which starts at the first of those
  lines that shows (the title itself when none does); a block title is never a section title.
- A breadcrumb's titles are plain words (asciidoc_inline.plain_title), with {name} references
  resolved by the attribute entries defined above the title.
- A description list's items are reference entries (found in asciidoc_blocks.py): sections below
  every title level, named by their terms, merged with the titles here; the text after a list is
  a section of its own named as the title or entry the list sits in.
"""

from __future__ import annotations

import re

from docshelf.chunking.asciidoc_blocks import (
    BOUNDARY,
    COMMENT_PARAGRAPH,
    LIST_GAP,
    PARAGRAPH,
    REGION,
    VERBATIM_PARAGRAPH,
    BlockScanner,
    Entry,
)
from docshelf.chunking.asciidoc_inline import (
    TITLE_INPUT_CHARS,
    plain_title,
    resolve,
    take_out_inline_markup,
)
from docshelf.chunking.asciidoc_lines import (
    BLOCK_ANCHOR,
    BLOCK_ATTRIBUTES,
    COMMENT,
    DELIMITER_HEADS,
    ITEM_FIRST,
    SETEXT_LEVELS,
    TERM,
    Title,
    block_style,
    breaks_paragraph,
    delimiter,
    is_attribute_line,
    is_comment,
    list_marker,
    macro_words,
    section_title,
    source_language,
)
from docshelf.chunking.markdown import Chunk
from docshelf.chunking.outline import Heading, Outline, outline, split_outline
from docshelf.chunking.text import prepare

# First characters of a line that may end a paragraph or be more than its text: a comment, an
# attribute line, a preprocessor directive (any delimiter is found by its first two characters).
_MAY_END_PARAGRAPH = frozenset("/[ie")
# Styles that make a paragraph verbatim: its lines are content, whatever they look like.
_VERBATIM_STYLES = frozenset({"literal", "listing", "source", "verse"})
_DISCRETE_STYLES = frozenset({"discrete", "float"})
# An attribute line naming an admonition shows its label, the admonition's title.
_ADMONITIONS = frozenset({"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"})

# Asciidoctor's patterns for lines, each matched against a whole stripped line (fullmatch) or at
# its start (match).
_ATTRIBUTE_ENTRY = re.compile(r":(!?\w[^:]*+):(?:[ \t]+(.*))?")
_BLOCK_TITLE = re.compile(r"\.\.?[^ \t.]")
_BREAK_FIRST = frozenset("'< -*_")
_BREAK = re.compile(r"'{3,}+|<{3,}+| {0,3}+([-*_])( *+)\1\2\1")
_BLOCK_MACRO = re.compile(r"(?:image|video|audio)::\S(?:.*\S)?\[.*\]|toc::\[.*\]")
_CONDITIONAL = re.compile(r"(?:ifn?def|endif)::[^\s\[]*+\[\]|ifeval::\[.+\]")
# A one-line conditional: the text it holds shows (the lines of every condition are kept).
_CONDITIONAL_TEXT = re.compile(r"ifn?def::[^\s\[]*+\[(.+)\]")
# Any block macro ("include-code::./Sample[tag=a]", "plantuml::a.puml[]"): no prose.
_ANY_BLOCK_MACRO = re.compile(r"[a-zA-Z][\w-]*+::[^\s\[]*+\[.*\]")
_REVISION_COMMA = re.compile(r",(?!:)")
_CONTINUATIONS = (" \\", " +")
# An entry's level: below every title's (Asciidoctor's deepest, "======", is 5), so that any
# title after an entry ends it; an entry inside another is one deeper.
_ENTRY_LEVEL = 6


def split_asciidoc(path: str, text: str) -> list[Chunk]:
    """Cut an AsciiDoc file into chunks: one section per section title and per reference entry
    (and one for the text after a description list, under the title or entry it sits in),
    sections without a body dropped, each kept section packed into pieces of at most
    MAX_CHUNK_BYTES bytes of UTF-8."""
    return split_outline(path, outline_asciidoc(text))


def outline_asciidoc(text: str, *, entries: bool = True, resume: bool = True) -> Outline:
    """The visible lines and the sections of an AsciiDoc file (raw text, prepared here): its
    titles' and its reference entries' (the chunks'). The text after a description list is a
    section of its own, named as the title or entry the list sits in; with `resume` False, it
    stays in the last entry's section, as an outline of headings would list it (a section named
    as its parent is no heading). With `entries` False, the sections are the titles alone (the
    sections Asciidoctor sees)."""
    scanner = _Scanner(prepare(text).split("\n"))
    scanner.run()
    take_out_inline_markup(scanner.visible, scanner.marked)
    headings = scanner.headings
    if entries and scanner.entries:
        headings = _with_entries(headings, scanner.entries, scanner.visible, resume)
    return outline(scanner.visible, headings)


def _with_entries(
    titles: list[Heading], entries: list[Entry], visible: list[str], resume: bool
) -> list[Heading]:
    """The titles' headings with the entries' among them (both in line order), an entry below
    every title level and one deeper for each entry it sits in, so that it nests under the title
    above it and any title ends it. A term alone on its line is its entry's heading, unless
    nothing shows after it in its section: then it is the entry's text."""
    merged: list[Heading] = []
    append = merged.append
    at, count = 0, len(titles)
    for line, body, depth, name in entries:
        if not name and not resume:
            continue
        while at < count and titles[at][0] < line:
            append(titles[at])
            at += 1
        append((line, body, _ENTRY_LEVEL + depth, name))
    merged.extend(titles[at:])
    last = len(visible)
    kept: list[Heading] = []
    for k, (line, body, level, name) in enumerate(merged):
        shows = True
        if level >= _ENTRY_LEVEL:
            end = merged[k + 1][0] if k + 1 < len(merged) else last
            shows = any(shown.strip() for shown in visible[body:end])
            if not (shows or name):
                continue  # a resume that nothing shows in: its blank lines stay above
        kept.append((line, body if shows else line, level, name))
    return kept


class _Scanner(BlockScanner):
    """One pass over the lines, keeping what Asciidoctor's parser would know at each: the open
    delimited blocks, whether a block boundary, a paragraph or a list is under way, and the
    block metadata (attribute lines, anchors, block titles) waiting for the next block."""

    def run(self) -> None:
        lines, n = self.lines, len(self.lines)
        styled = self._styled_paragraph
        modes = (self._boundary, self._paragraph, self._list_gap, styled, styled)
        open_at, visible = self.open_at, self.visible
        i = 0
        while i < n:
            s = lines[i]
            if not s and self.mode == BOUNDARY and REGION not in open_at:
                i += 1  # a blank line between blocks, the commonest line there is
            elif (
                self.stack
                and not (self.compound and s not in open_at)
                and (after := self._in_block(i, s)) >= 0
            ):
                i = after
            elif s[:1] in ("i", "e") and self._directive(i, s):
                i += 1  # the preprocessor takes the line out: nothing changes
            elif (after := modes[self.mode](i, s)) >= 0:
                if ("[" in s or "<<" in s) and visible[i]:
                    self._mark(i)
                i = after
            else:  # the line ends what was under way and starts a block
                self.mode = BOUNDARY
                after = self._boundary(i, s)
                if ("[" in s or "<<" in s) and visible[i]:
                    self._mark(i)
                i = after
        if self.meta_start >= 0:  # metadata that no block follows: nothing to show
            self.visible[self.meta_start :] = [""] * (n - self.meta_start)

    def _mark(self, i: int) -> None:
        """Note the line at `i`, just read and shown, for inline markup: unless it is literal."""
        mode = self.mode
        if not ((mode == PARAGRAPH and self.literal) or mode == VERBATIM_PARAGRAPH):
            self.marked.append(i)

    def _directive(self, i: int, s: str) -> bool:
        """Whether the line at `i` is a conditional directive, which the preprocessor takes out;
        an include directive shows as nothing and is read as the line it stands on."""
        if _CONDITIONAL.fullmatch(s):
            self.visible[i] = ""
            return True
        if s.startswith("include::") and s.endswith("]"):
            self.visible[i] = ""
        elif s.startswith("if") and (m := _CONDITIONAL_TEXT.fullmatch(s)) is not None:
            shown = m.group(1)
            self.visible[i] = "" if _ATTRIBUTE_ENTRY.fullmatch(shown) else shown
        return False

    def _styled_paragraph(self, i: int, s: str) -> int:
        """A verbatim paragraph takes every line up to a blank one or a list continuation; a
        [comment] paragraph takes what a paragraph takes, and blanks it."""
        if not s or s == "+":
            return -1
        if self.mode == VERBATIM_PARAGRAPH:
            return i + 1
        if breaks_paragraph(s):
            return -1
        self.visible[i] = ""
        return i + 1

    def _paragraph(self, i: int, s: str) -> int:
        """Take the line at `i` into the paragraph or list under way and return the next line to
        read; -1 when the line ends the paragraph and starts a block there."""
        if not s:
            self.gap += 1
            if not self.continued or self.gap > 1:  # a continuation reaches over one blank
                self.mode, self.continued = LIST_GAP if self.in_list else BOUNDARY, False
            return i + 1
        self.gap = 0
        if not self.literal and s[0] == "/" and is_comment(s):
            self.visible[i] = ""
            return i + 1
        if not self.in_list:
            if breaks_paragraph(s):
                return -1
            return i + 1 if self.literal else self._plain_lines(i + 1)
        terminator = delimiter(s) if s[:2] in DELIMITER_HEADS else None
        if self.continued and list_marker(s) == self.marker:  # the next item ends it
            self.continued, self.wants_text = False, self._item(i, s)
        elif self.continued:  # the line belongs to the list item, a block's first line included
            if terminator is not None:
                style = "tabs" if self.attached_tabs else ""
                self._open(i, terminator, style, attached=True, language=self.language)
                self.language, self.attached_tabs = None, False
            elif s[0] in " \t":
                self._open(i, REGION, "", attached=True)
                self.mode, self.literal = PARAGRAPH, True
            elif s[0] == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
                self._entry(i, m)  # the attached block's metadata: the list reads on from i + 1
            elif s == "+":
                self.visible[i] = ""
            elif _BLOCK_TITLE.match(s):
                self.visible[i] = s[1:]
            elif is_attribute_line(s):
                style = self._attribute_line(i, s)
                self.attached_tabs = self.attached_tabs or style == "tabs"
            else:
                self.continued, self.wants_text, self.language = False, self._item(i, s), None
                self.attached_tabs = False
                if s.endswith("]") and _ANY_BLOCK_MACRO.fullmatch(s):
                    self.visible[i] = macro_words(s)  # a block macro attached to the item
            return i + 1
        if s == "+":
            self.continued, self.visible[i] = True, ""
        elif terminator is not None or (self.marker.endswith(TERM) and is_attribute_line(s)):
            self.in_list = False  # a delimited block right after an item ends the list
            return -1
        self.wants_text = ("::" in s or ";;" in s) and self._item(i, s)
        return i + 1

    def _plain_lines(self, i: int) -> int:
        """Skip the paragraph's lines from `i` that can be nothing but its text (one loop for
        what is most of the prose); returns the first line that may be more."""
        lines, n, heads, marked = self.lines, len(self.lines), DELIMITER_HEADS, self.marked
        if REGION in self.open_at:
            return i
        while i < n and (s := lines[i]) and s[0] not in _MAY_END_PARAGRAPH and s[:2] not in heads:
            if "[" in s or "<<" in s:
                marked.append(i)
            i += 1
        return i

    def _list_gap(self, i: int, s: str) -> int:
        """Read the line at `i` after blank lines in a list: an item, a continuation, a literal
        paragraph or a term's text goes on with the list; anything else ends it (-1)."""
        if not s:
            self.gap += 1
            return i + 1
        if self.gap == 1 and (
            delimiter(s) is not None or (self.marker.endswith(TERM) and is_attribute_line(s))
        ):
            pass  # Asciidoctor looks for these right after one blank line only
        elif s == "+" or self.wants_text or list_marker(s):
            self.mode, self.continued, self.literal = PARAGRAPH, s == "+", False
            self.wants_text, self.gap = s != "+" and self._item(i, s), 0
            if s == "+":
                self.visible[i] = ""
            return i + 1
        elif s[0] in " \t":
            self._open(i, REGION, "", attached=True)
            self.mode, self.literal = PARAGRAPH, True
            return i + 1
        self.in_list = False
        return -1

    def _boundary(self, i: int, s: str) -> int:
        """Read the line at `i` where a block may start: metadata for the next block, a section
        title, a delimited block, a list or a paragraph. Returns the next line to read."""
        if not s:
            return i + 1  # blank lines, comments and entries may separate metadata from its block
        first = s[0]
        if first == "/" and s.startswith("//"):
            if s[2:3] != "/":
                self.visible[i] = ""
                return i + 1
            if len(s) > 3 and s.count("/") == len(s):
                self._open(i, s, "", attached=False)
                return i + 1
        elif first == "[":
            if s.startswith("[["):
                if BLOCK_ANCHOR.fullmatch(s):
                    self.visible[i] = ""
                    return self._metadata(i)
            elif s.endswith("]") and BLOCK_ATTRIBUTES.fullmatch(s):
                self.style = self._attribute_line(i, s) or self.style
                return self._metadata(i)
        elif first == "." and _BLOCK_TITLE.match(s):
            self.block_title, self.visible[i] = True, s[1:]
            return self._metadata(i)
        elif first == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
            return self._entry(i, m)
        after = self.lines[i + 1] if i + 1 < len(self.lines) else ""
        title = section_title(s, after) if first in "=#" or after[:1] in SETEXT_LEVELS else None
        style, language = self.style, self.language
        discrete = style in _DISCRETE_STYLES
        if title is not None and not discrete and not self.stack:
            return self._heading(i, title)
        meta = self.meta_start if self.meta_start >= 0 else i
        if self.named:  # a block starts: the entries of the lists at its depth end
            start = meta
            while start < i and not self.visible[start].strip():
                start += 1
            self._resume(start, len(self.stack))
        self.meta_start, self.style, self.block_title, self.started = -1, "", False, True
        self.language = None
        terminator = delimiter(s) if s[:2] in DELIMITER_HEADS else None
        comment = False  # a comment block or paragraph: its metadata is no content either
        if terminator is not None:
            self._open(i, terminator, style, attached=False, language=language)
            comment = self.stack[-1].kind == COMMENT
        elif style in _VERBATIM_STYLES:
            self.mode = VERBATIM_PARAGRAPH
        elif first in _BREAK_FIRST and _BREAK.fullmatch(s):
            self.visible[i] = ""  # a block of one line: the next line starts another
        elif s.endswith("]") and _BLOCK_MACRO.fullmatch(s):
            self.visible[i] = macro_words(s)
        elif (first in ITEM_FIRST or s[1:2] == "." or "::" in s or ";;" in s) and (
            marker := list_marker(s)
        ):
            self.mode, self.in_list, self.continued, self.literal = PARAGRAPH, True, False, False
            self.marker, self.gap = marker, 0
            self.wants_text = self._item(i, s)
        elif title is not None and discrete:
            return i + title[2]  # a discrete heading: content of the section it is in
        elif style == "comment":
            self.mode, comment = COMMENT_PARAGRAPH, True
        else:
            self.mode, self.literal = PARAGRAPH, first in " \t"
            if self.literal:
                return i + 1
            if s.endswith("]") and _ANY_BLOCK_MACRO.fullmatch(s):
                self.visible[i] = ""  # an extension's block macro: no words of its own
            return self._plain_lines(i + 1)
        if comment:
            self.visible[meta : i + 1] = [""] * (i + 1 - meta)
        return i + 1

    def _metadata(self, i: int) -> int:
        self.meta_start = i if self.meta_start < 0 else self.meta_start
        return i + 1

    def _attribute_line(self, i: int, s: str) -> str:
        """Show the block attribute line at `i` as an admonition's label or as nothing, and
        note the source language it names. Returns the style it sets."""
        inner = s[1:-1]
        style = block_style(inner)
        self.visible[i] = style if style in _ADMONITIONS else ""
        if style == "source" or inner[:1] == ",":
            self.language = source_language(inner)
        return style

    def _heading(self, i: int, title: Title) -> int:
        level, text, count = title
        start = self.meta_start if self.meta_start >= 0 else i
        while start < i and not self.visible[start].strip():
            start += 1  # metadata that shows nothing: the section starts at what shows
        body = i + count
        self.headings.append((start, body, level, plain_title(text, self.attributes)))
        self.terms.clear()  # a title ends every entry
        self.named = 0
        while self.entries and self.entries[-1][0] >= start and not self.entries[-1][3]:
            self.entries.pop()  # a resume that no text follows
        document_title = level == 0 and not self.started and not self.block_title
        self.meta_start, self.style, self.block_title, self.started = -1, "", False, True
        self.language = None
        return self._header(body) if document_title else body

    def _header(self, i: int) -> int:
        """Blank the document header after its title: attribute entries and comments, then an
        author line, more of them, a revision line and more of them, as Asciidoctor reads it
        (any line that is not blank after the title is the author line)."""
        lines, n = self.lines, len(self.lines)
        i = self._header_entries(i)
        if i < n and lines[i]:
            self.visible[i] = ""  # the author line
            i = self._header_entries(i + 1)
            # Asciidoctor's revision pattern takes any line but one that starts with ':' and has
            # no comma that is not followed by ':'.
            revision = lines[i] if i < n else ""
            if revision and (revision[0] != ":" or _REVISION_COMMA.search(revision)):
                self.visible[i] = ""
                i = self._header_entries(i + 1)
        return i

    def _header_entries(self, i: int) -> int:
        """Blank the attribute entries, comment lines and comment blocks from `i` on."""
        lines, n = self.lines, len(self.lines)
        while i < n and (s := lines[i]):
            if is_comment(s):
                self.visible[i] = ""
                i += 1
            elif s.startswith("////") and s.count("/") == len(s):
                try:
                    end = lines.index(s, i + 1) + 1
                except ValueError:
                    end = n  # an unclosed comment block runs to the end
                self.visible[i:end] = [""] * (end - i)
                i = end
            elif s[0] == ":" and (m := _ATTRIBUTE_ENTRY.fullmatch(s)) is not None:
                i = self._entry(i, m)
            else:
                break
        return i

    def _entry(self, i: int, m: re.Match[str]) -> int:
        """Record the attribute entry at `i` and blank it, with the lines its value continues on
        (a value ending in " \\" or " +"). Returns the line after it."""
        lines, n = self.lines, len(self.lines)
        name, value = m.group(1), m.group(2) or ""
        self.visible[i] = ""
        i += 1
        continuation = value[-2:] if value.endswith(_CONTINUATIONS) else ""
        if continuation:
            parts = [value[:-2].rstrip()]
            while i < n and lines[i]:
                self.visible[i] = ""
                part = lines[i].lstrip()
                i += 1
                if not part.endswith(continuation):
                    parts.append(part)
                    break
                parts.append(part[:-2].rstrip())
            value = " ".join(parts)
        if name.startswith("!") or name.endswith("!"):
            self.attributes.pop(name.strip("!").lower(), None)
        else:
            value = resolve(value[:TITLE_INPUT_CHARS], self.attributes)
            self.attributes[name.lower()] = value[:TITLE_INPUT_CHARS]
        return i
