"""The MDX chunker: MDX read line by line into an outline, cut by the section packer.

MDX is Markdown with JavaScript: ESM `import`/`export` statements, JSX tags and `{expressions}`.
Its headings and fences are Markdown's, so the Markdown scanner finds them, in a scan text where
what is not Markdown became blank (lines of code) or a neutral letter (constructs inside prose).
Here: the reader, which finds the spans of those constructs line by line; the JSX tag syntax and
the prose patterns built on it are in mdx_tags.py, the outline built from the spans (visible
lines, scan text, headings and their titles) in mdx_outline.py.

Constraints:
- Pure and deterministic, no I/O; the packer's guarantees hold (markdown.pack_sections): the
  visible lines are the file's own lines one for one, so line numbers are the file's.
- ESM statements at the top level (column 1, not continuing a paragraph, outside fences) are the
  page's code: their lines are blank in the visible text, multi-line ones to their end (a blank
  line ends one once its brackets, strings and comments are closed, as remark-mdx's acorn check
  does). Front matter (YAML `---` or TOML `+++`) is blank too; its `title` tops the breadcrumb.
- The visible lines are the text a reader sees: generator syntax never reaches a chunk. A JSX
  tag (a component's or an HTML element's, opening or closing) is taken out, and of it only the
  string values of its text attributes (mdx_tags: a title, a label, an alt text) stay,
  as words; its children are text where they stand. A line of tags alone becomes an empty line,
  so does `<Note />` rendering an imported partial (the partial is a file of its own). A
  Docusaurus container line (`:::tip Title`, `:::tip[Title]`, a closing `:::`) becomes its
  title's words, or an empty line. `{expressions}`, `{/* comments */}` and `<!-- comments -->`
  (invalid MDX, read as comments) are taken out. Braces and `<` inside code spans, link
  destinations and fences are text: code stays code. A construct that does not close is text.
- There are no HTML blocks and no indented code in MDX: a heading between JSX tags or indented
  inside a JSX block is a heading. Breadcrumb titles are the heading's visible text as plain
  words (no tags, links' targets, backticks or emphasis; text attributes' words stay), never
  empty when the heading has a word.
- Linear time: lines and constructs are found by searching, the end of each `{` is remembered,
  and a construct that runs off the end of its paragraph (or of the file) stops the search for
  more of its kind there, so no stretch of the text is read more than a few times. Runs of the
  plainest constructs in prose, and of lines of tags cut short, are read in one step each. The
  text attributes of a tag are read once more, when the visible text is built (spans do not
  overlap), and a container line once.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from docshelf.chunking.fences import fence_open
from docshelf.chunking.front_matter import front_matter, front_matter_lead
from docshelf.chunking.javascript import Lexer
from docshelf.chunking.markdown import Chunk
from docshelf.chunking.mdx_outline import ATX, build_outline
from docshelf.chunking.mdx_tags import (
    ATTRIBUTES,
    DESTINATION,
    FAILING_TAG_LINES,
    OPENING_TAG,
    PROSE,
    SPACE,
    TAG_HEAD,
    TAG_START,
    Span,
    tag_spans,
)
from docshelf.chunking.outline import Outline, split_outline
from docshelf.chunking.text import cut_title, prepare

# A line the block reader must look at: blank, or starting (after any indentation) with what may
# begin a fence, a list item, a quote, a heading, an underline or break, a tag or an expression;
# or an ESM statement. Any other line continues or opens a paragraph.
_LINE_EVENT = re.compile(
    rf"^[ \t]*+(?:$|[#{{`~>=_*+0-9:-]|(?:import|export) |{TAG_START})", re.MULTILINE
)
# Once an expression ran off the end of the text, a line starting with `{` is a paragraph's line.
_LINE_EVENT_NO_BRACE = re.compile(
    rf"^[ \t]*+(?:$|[#`~>=_*+0-9:-]|(?:import|export) |{TAG_START})", re.MULTILINE
)
_ESM_KEYWORDS = ("import ", "export ")
_BLANK_LINE = re.compile(r"\n[ \t]*+(?=\n|\Z)")
# A line that ends an open paragraph where it stands: a setext underline or a thematic break.
_UNDERLINE_OR_BREAK = re.compile(r"(?:=+|-+)[ \t]*|([-*_])[ \t]*(?:\1[ \t]*){2,}")
_THEMATIC_BREAK = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}")
# A list item or a block quote starts a paragraph of its own.
_CONTAINER_START = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)|>")
# A fence closes, at any indentation (MDX has no indented code), on a run at least as long.
_FENCE_CLOSE = {
    "`": re.compile(r"\n[ \t]*+(`{3,}+)[ \t]*+(?=\n|\Z)"),
    "~": re.compile(r"\n[ \t]*+(~{3,}+)[ \t]*+(?=\n|\Z)"),
}
# A Docusaurus container line: three colons or more, the container's kind, then its title
# (`:::tip Title`, `:::tip[Title]`), and an attribute block `{...}` at the end of the line.
_CONTAINER_HEAD = re.compile(r":{3,}+[ \t]*+[\w-]*+")
_CONTAINER_ATTRIBUTES = re.compile(r"\{[^{}\n]*+\}[ \t]*+")
# Containers with no title of their own: the rest of their line is options, not words.
_UNTITLED_CONTAINERS = frozenset({"code-group", "tabs", "v-pre", "raw"})
_TOML_END = re.compile(r"\n\+\+\+[ \t]*(?=\n|\Z)")
_TOML_TITLE = re.compile(r"^title[ \t]*=(.*)$", re.MULTILINE)

# Inside prose: an escape, a code span, a tag or comment, an expression, a link destination.
_INLINE_EVENT = re.compile(rf"[\\`{{]|\]\(|{TAG_START}")
_INLINE_EVENT_NO_BRACE = re.compile(rf"[\\`]|\]\(|{TAG_START}")  # once expressions ran off
_BACKTICKS = re.compile(r"`++")
_SIMPLE_EXPRESSION = re.compile(r"\{[^{}()\[\]\"'`/]*+\}")


def split_mdx(path: str, text: str) -> list[Chunk]:
    """Cut an MDX file into chunks: one section per heading, as the Markdown chunker cuts, with
    its code (ESM, expressions, front matter) and markup (JSX tags, `:::` lines) left out of
    the content."""
    return split_outline(path, outline_mdx(text))


def outline_mdx(text: str) -> Outline:
    """The outline of an MDX file: its visible lines and its sections."""
    return _Reader(prepare(text)).outline()


class _Reader:
    """One MDX text: the spans its constructs take, found line by line, then the outline."""

    def __init__(self, text: str) -> None:
        self.text, self.n = text, len(text)
        self.spans: list[Span] = []  # in order, not overlapping
        self.blank: list[tuple[int, int]] = []  # offsets of lines of no prose: front matter, ESM
        self.flow: list[tuple[int, int]] = []  # offsets of lines of JSX tags and expressions alone
        self.ends: dict[int, int] = {}  # where each `{` read in code closes
        self.dead = 0  # no expression starts before this offset: one ran off the end there
        self.comment_search = (self.n + 1, -1)  # the last search for "-->": from, found at
        self.not_tags: dict[int, int] = {}  # where a `<` read to the end of the text stopped

    def outline(self) -> Outline:
        top, body = self._front_matter()
        lead = front_matter_lead(self.text, body) if body else []
        if body:
            at = 0  # the front matter shows its description's words only (its lead)
            for a, b in lead:
                line = self.text.rfind("\n", 0, a) + 1
                if line > at:
                    self.blank.append((at, line - 1))
                self.spans.append((line, a, True))
                stop = self.text.find("\n", b)
                stop = stop if 0 <= stop < body else body
                if stop > b:
                    self.spans.append((b, stop, True))
                at = stop + 1
            if at < body:
                self.blank.append((at, body - 1))
        self._blocks(body)
        found = build_outline(self.text, self.spans, self.blank, self.flow, top)
        if lead and top and not found.sections[0].heading:  # the lead is the titled page's
            found.sections[0] = found.sections[0]._replace(heading=cut_title(" ".join(top.split())))
        return found

    def _front_matter(self) -> tuple[str, int]:
        """The front matter's title and the offset of the first line after it (0 when none)."""
        text = self.text
        end, title = front_matter(text)
        if end == 0 and text[: text.find("\n") + 1].rstrip() == "+++":
            m = _TOML_END.search(text)
            if m is not None:
                end = min(m.end() + 1, self.n)
                found = _TOML_TITLE.search(text, 0, m.start() + 1)
                if found is not None:
                    title = found.group(1).strip().strip("\"'").strip()
        return title, end

    def _blocks(self, pos: int) -> None:
        """Read the lines from offset `pos`: fences, ESM, headings, lines of JSX and expressions,
        and paragraphs, whose prose is read for constructs once their end is known."""
        text, n = self.text, self.n
        paragraph = -1  # the offset where the open paragraph starts, -1 when none is open
        next_event = _LINE_EVENT.search
        while pos <= n:
            if self.dead >= n:  # an expression ran off the end: `{` starts no flow line any more
                next_event = _LINE_EVENT_NO_BRACE.search
            m = next_event(text, pos)
            s = m.start() if m is not None else n + 1
            if s > pos and paragraph < 0:
                paragraph = pos  # the lines skipped are prose
            if m is None:
                break
            e = text.find("\n", s)
            e = e if e >= 0 else n
            body = text[s:e].lstrip(" \t")
            pos = e + 1
            if not body:
                paragraph = self._close(paragraph, s)
                continue
            c = body[0]
            if c in "`~-+*0123456789" and (fence := fence_open(body)) is not None:
                paragraph = self._close(paragraph, s)
                closes = _FENCE_CLOSE[fence.marker[0]].search
                while (found := closes(text, e)) is not None:
                    e = found.end()
                    if len(found.group(1)) >= len(fence.marker):
                        break
                else:
                    e = n
                pos = e + 1
            elif paragraph < 0 and c in "ie" and text.startswith(_ESM_KEYWORDS, s):
                pos = self._esm_end(s)
                self.blank.append((s, pos - 1))
            elif c == "#" and ATX.match(body):
                paragraph = self._close(paragraph, s)
                self._inline(s, e)
            elif c == ":" and (title := _container_title(text, e - len(body), e)) is not None:
                paragraph = self._close(paragraph, s)
                a, b = title
                if b > a:
                    self.spans.append((s, a, True))
                    self._inline(a, b)
                    if e > b:
                        self.spans.append((b, e, True))
                else:
                    self.spans.append((s, e, True))
                self.flow.append((s, e))
            elif c == "<" and (run := FAILING_TAG_LINES.match(text, e - len(body))) is not None:
                if paragraph < 0:  # none of these lines is a flow line: all are prose
                    paragraph = s
                pos = text.rfind("\n", 0, run.end()) + 1
            elif (c == "<" or (c == "{" and s >= self.dead)) and (
                flow := self._flow(e - len(body))
            ) is not None:
                paragraph = self._close(paragraph, s)
                self.spans += flow[1]
                self.flow.append((s, flow[0]))
                pos = flow[0] + 1
            elif c in "<{":  # nothing below starts with them
                if paragraph < 0:
                    paragraph = s
            elif paragraph >= 0 and c in "=-*_" and _UNDERLINE_OR_BREAK.fullmatch(body):
                paragraph = self._close(paragraph, s)
            elif paragraph < 0 and c in "-*_" and _THEMATIC_BREAK.fullmatch(body):
                pass
            elif _CONTAINER_START.match(body):
                self._close(paragraph, s)
                paragraph = s
            elif paragraph < 0:
                paragraph = s
        self._close(paragraph, n + 1)

    def _close(self, paragraph: int, s: int) -> int:
        """Read the prose of the paragraph open since offset `paragraph`, which ends before the
        line starting at `s`. Returns -1: no paragraph is open after it."""
        if paragraph >= 0:
            self._inline(paragraph, s - 1)
        return -1

    def _esm_end(self, s: int) -> int:
        """Where the line after the ESM block starting at offset `s` starts: the first blank
        line at which its code is complete, else the end of the text (plus one)."""
        text = self.text
        lexer = Lexer(text, s, self.ends)
        pos = s
        while (blank := _BLANK_LINE.search(text, pos)) is not None:
            lexer.run(blank.start(), close=False)
            if lexer.complete():
                return blank.start() + 1
            pos = blank.end()
        return self.n + 1

    def _flow(self, p: int) -> tuple[int, list[Span]] | None:
        """The line of JSX tags, comments and expressions alone starting at offset `p` (it may
        take more lines): where it ends (its newline, or the end of the text) and its spans;
        None when the line holds anything else, or a construct that does not close."""
        text, n = self.text, self.n
        spans: list[Span] = []
        while True:
            if text.startswith("<!--", p):
                end = self._comment(p, n)
                if end < 0:
                    return None
                spans.append((p, end, True))
            elif text[p] == "<":
                end, hidden = self._tag(p, n)
                if end < 0:
                    self.not_tags[p] = -end - 1
                    return None
                spans += tag_spans(p, end, hidden)
            elif text[p] == "{":
                end = self._expression(p, n)
                if end < 0:
                    return None
                spans.append((p, end, True))
            else:
                return None
            while end < n and text[end] in " \t":
                end += 1
            if end >= n or text[end] == "\n":
                return end, spans
            p = end

    def _inline(self, a: int, b: int) -> None:
        """Find the constructs in the prose text[a:b]: escapes and code spans are text, tags and
        comments are spans, expressions are hidden spans."""
        text, spans, not_tags = self.text, self.spans, self.not_tags
        runs: dict[int, list[int]] | None = None  # the backtick runs of text[a:b], by length
        code = True  # code spans are read in _prose, until one does not close
        pos = a
        while True:
            if pos < self.dead:  # no expression starts here: skip the braces at once
                m = _INLINE_EVENT_NO_BRACE.search(text, pos, min(self.dead, b))
                if m is None:
                    if self.dead >= b:
                        return
                    pos = self.dead
                    continue
            elif (m := _INLINE_EVENT.search(text, pos, b)) is None:
                return
            p = m.start()
            c = text[p]
            if c != "{":
                no_brace = p < self.dead
                after = self._prose(p, min(self.dead, b) if no_brace else b, no_brace, code)
                if after > p:
                    pos = after
                    continue
            if c == "<" and not text.startswith("<!--", p):
                stop = not_tags.get(p, b + 1)  # a stop before b is one here too
                if stop <= b:
                    pos = stop if stop > p else p + 1
                    continue
                end, hidden = self._tag(p, b)
                if end >= 0:
                    spans += tag_spans(p, end, hidden)
                pos = end if end >= 0 else max(-end - 1, p + 1)
            elif c == "<":
                end = self._comment(p, b)
                if end >= 0:
                    spans.append((p, end, True))
                pos = end if end >= 0 else p + 1
            elif c == "\\":
                pos = p + 2
            elif c == "`":
                size = _BACKTICKS.match(text, p, b).end() - p  # type: ignore[union-attr]
                if runs is None:
                    runs = {}
                    for run in _BACKTICKS.finditer(text, a, b):
                        runs.setdefault(run.end() - run.start(), []).append(run.start())
                same = runs.get(size, [])
                at = bisect_right(same, p)
                pos = same[at] + size if at < len(same) else p + size
                code = code and at < len(same)
            elif c == "]":
                dest = DESTINATION.match(text, p + 1, b)
                pos = dest.end() if dest is not None else p + 1
            else:  # an expression
                end = self._expression(p, b)
                if end >= 0:
                    spans.append((p, end, True))
                pos = end if end >= 0 else p + 1

    def _prose(self, p: int, limit: int, no_brace: bool, code: bool) -> int:
        """Read the pieces of PROSE from `p` to `limit`, keeping tags' spans: where they end
        (before a `<` whose read was kept: what it says goes, as in _inline)."""
        text, not_tags, spans = self.text, self.not_tags, self.spans
        match = PROSE[no_brace, code].match
        at = p
        while at not in not_tags and (piece := match(text, at, limit)) is not None:
            if piece.lastgroup:
                spans.append((at, piece.end(), False))
            at = piece.end()
        return at

    def _comment(self, p: int, limit: int) -> int:
        """The offset after the `-->` closing the comment at `p`, or -1."""
        searched_from, found = self.comment_search
        if not (searched_from <= p + 4 and (found < 0 or found >= p + 4)):
            found = self.text.find("-->", p + 4)
            self.comment_search = (p + 4, found)
        return found + 3 if 0 <= found <= limit - 3 else -1

    def _expression(self, p: int, limit: int) -> int:
        """The offset after the `}` closing the expression at `p`, or -1 when it does not close
        before `limit` (then no expression starts before `limit`: MDX would reject the file)."""
        if p < self.dead:
            return -1
        known = self.ends.get(p)
        if known is not None and known <= limit:
            return known  # read before, inside another expression
        simple = _SIMPLE_EXPRESSION.match(self.text, p, limit)
        if simple is not None:
            return simple.end()
        lexer = Lexer(self.text, p + 1, self.ends)
        lexer.stack.append(p)
        end = lexer.run(limit, close=True)
        if end < 0:
            self.dead = max(self.dead, limit)
            return -1
        return end

    def _tag(self, p: int, limit: int) -> tuple[int, list[tuple[int, int]]]:
        """The JSX tag at `p`: the offset after its `>` and its expression attributes' spans;
        else minus one minus the offset where it stopped being a tag."""
        text = self.text
        hidden: list[tuple[int, int]] = []
        opening = OPENING_TAG.match(text, p, limit)
        if opening is None:  # a fragment, or a closing tag
            q = TAG_HEAD.match(text, p, limit).end()  # type: ignore[union-attr]
            q = SPACE.match(text, q, limit).end()  # type: ignore[union-attr]
            return (q + 1, hidden) if text.startswith(">", q) and q < limit else (-q - 1, [])
        q = opening.end()
        while True:
            c = text[q] if q < limit else ""
            if c == ">":
                return q + 1, hidden
            if c == "/":
                r = SPACE.match(text, q + 1, limit).end()  # type: ignore[union-attr]
                return (r + 1, hidden) if text.startswith(">", r) and r < limit else (-r - 1, [])
            if c == "=":  # a value that is no string: an expression, or nothing valid
                q += 1
                if text[q : q + 1] in (" ", "\t", "\n"):
                    q = SPACE.match(text, q, limit).end()  # type: ignore[union-attr]
                c = text[q] if q < limit else ""
            if c != "{":
                return -q - 1, []
            end = self._expression(q, limit)
            if end < 0:
                return -q - 1, []
            hidden.append((q, end))
            q = ATTRIBUTES.match(text, end, limit).end()  # type: ignore[union-attr]


def _container_title(text: str, a: int, b: int) -> tuple[int, int] | None:
    """Where the title of the container line text[a:b] (from its first colon) starts and ends
    (an empty range when it has none); None when the line is no container."""
    head = _CONTAINER_HEAD.match(text, a, b)
    if head is None:
        return None
    p = head.end()
    if text[a:p].lstrip(":").strip(" \t").lower() in _UNTITLED_CONTAINERS:
        return p, p
    while b > p and text[b - 1] in " \t":
        b -= 1
    if p < b and text[p] not in " \t[{":  # `:::tip!` is prose
        return None
    brace = text.rfind("{", p, b)
    if brace >= 0 and _CONTAINER_ATTRIBUTES.fullmatch(text, brace, b) is not None:
        b = brace  # a trailing `{#id .class}` is the container's attributes
    while p < b and text[p] in " \t":
        p += 1
    while b > p and text[b - 1] in " \t":
        b -= 1
    if p < b and text[p] == "[" and text[b - 1] == "]":
        p, b = p + 1, b - 1
    return p, b
