"""What an answer shows, and what it costs: its excerpts (Hit, Answer), chosen from a ranking
(distinct passages, neighbours of one file joined, at most per_file of one file), and the answer
as text and JSON, fitted to a budget of tokens. search.py ranks; this module makes the ranking an
answer; the faces (the MCP tools, the command line, the web API) show it.

Constraints:
- An excerpt cites exact lines (`path:start-end`): a join is made only where the joined lines can
  be told exactly (the same text where two excerpts overlap, only blank lines of the file between
  them, no line longer than a chunk), and stays within a read's bounds.
- A file's passages the answer leaves out are counted on its hits (`more`), never silently lost.
- A fitted answer never passes its budget, whatever the docs hold (20 hits, a chunk of one long
  line, a path of 4 KB, a query of 4,000 characters): excerpts past it keep their citation and
  lose their text, then whole excerpts are left out, each said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from docshelf.chunking.text import utf8_size
from docshelf.config import MAX_CHUNK_BYTES, READ_MAX_BYTES, READ_MAX_LINES
from docshelf.shown import plural, short_ref

if TYPE_CHECKING:
    from docshelf.rows import StoredHit

Mode = Literal["hybrid", "vector", "text"]
MODES: tuple[Mode, ...] = ("hybrid", "vector", "text")

# At most so many excerpts of one file in an answer when the call asks for a number (1..top_k),
# so that one long file cannot fill it; a file's other passages are counted on its hits (`more`),
# so a reader knows to read it. By default, no bound (top_k): measured on the three shared sets
# (bench/answers.py, BENCHMARKS.md "Answers sized for an agent"), a bound costs span recall where
# the answer is several passages of one file (chroma-chunking 0.886 without one, 0.872 at 4,
# 0.741 at 1, with the joins and budget below), and it finds no more answering files on AWS
# unless it is 1 (Hit@5 0.860 against 0.840). Joins, which make a file's neighbouring passages
# one excerpt, are what give other files places by default.
DEFAULT_PER_FILE: int | None = None
MIN_PER_FILE = 1

# Excerpts of one file whose lines overlap or lie within so many lines of each other (blank lines
# only between them) are one excerpt over the joined lines, scored as the best of them, bounded
# by a read's lines (READ_MAX_LINES) and JOIN_MAX_BYTES. 1, the blank line between two sections:
# every fold chose it (2, 3 and 5 score the same, 0 less: chroma span recall at per_file 4 is
# 0.918 at 0, 0.929 at 1, joins bounded by a read's bytes, no budget).
MERGE_LINES = 1

# A joined excerpt holds at most so many bytes (of its text), so that joins cannot grow an answer
# past what its excerpts would cost one by one: a candidate that would pass it stays a passage of
# its own (or, overlapping one shown, is not shown again in part). 4,000, two chunks
# (MAX_CHUNK_BYTES), chosen with the budget below and per_file (bench/answers.py, with the title
# prior): the choice of the fold that held AWS out, and the only fold's choice no worse than
# before on every set; each other fold, trained on one set with spans, chose a setting that cost
# its held-out set span recall or tokens.
JOIN_MAX_BYTES = 4_000

# The most tokens a rendered answer (docs_search's text, `docshelf search`, the web page's) may
# take, counted as its UTF-8 bytes / 4, rounded up: excerpts past it keep their citation and
# heading and lose their text, then whole excerpts are left out, each said. An agent pays for
# every token; Claude Code refuses a tool result over 25,000 by default. The default is
# TOKENS_PER_EXCERPT for each excerpt asked for (top_k), at least MIN_MAX_TOKENS: 2,250 at the
# default top_k of 5, 9,000 at 20, a little less than as many chunks of MAX_CHUNK_BYTES cost, so
# that joins, long headings and headers cannot make an answer cost more than its excerpts would
# one by one. Chosen by measurement (bench/answers.py, BENCHMARKS.md "Answers sized for an
# agent"): with it and the joins above, no shared set scores worse than before this bound on
# Hit@5, MRR@10 or span recall@5 of the text shown, and each set's p95 tokens at top_k 5 fall
# (450 with JOIN_MAX_BYTES, the AWS fold's choice; 500 passed the anthropic set's p95). The
# least is one excerpt of the largest chunk (2,000 bytes) with its citation and the header.
TOKENS_PER_EXCERPT = 450
MIN_MAX_TOKENS = 1_000
MAX_MAX_TOKENS = 25_000


def default_max_tokens(top_k: int) -> int:
    """The budget of an answer of `top_k` excerpts that names none."""
    return min(MAX_MAX_TOKENS, max(MIN_MAX_TOKENS, TOKENS_PER_EXCERPT * top_k))


# An excerpt names at most so many of the other workspaces holding its text in an answer's text
# (all of them in its data, `Hit.copies`), then counts the rest.
COPIES_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Copy:
    """Where another workspace holds the text an excerpt started from (a vendored copy of shared
    docs, a fork): its workspace (as shown), path and lines."""

    workspace: str
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Hit:
    """One excerpt of an answer: `workspace` (its name as shown) and `ref` (the commit) say
    where it comes from. `score` orders hits within one answer only."""

    path: str
    heading: str
    start_line: int
    end_line: int
    score: float
    content: str
    workspace: str = ""
    ref: str = ""
    # How many more passages of the file matched the query than the answer shows of it.
    more: int = 0
    # The text was left out to keep the answer within its max_tokens (read the lines instead).
    cut: bool = False
    # The text was left out: this session was shown these lines earlier (repeat: true shows it).
    repeated: bool = False
    # The same text in other workspaces, best first: each copy one place, not another excerpt.
    copies: tuple[Copy, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """The excerpts for a query at one ref; `note` says why the ref is not the one asked for.
    An answer from several workspaces has `refs` (each workspace's commit, by its shown name),
    and its `workspace` and `ref` are empty: each hit names its own."""

    workspace: str
    ref: str
    query: str
    mode: Mode
    note: str | None
    hits: list[Hit]
    refs: dict[str, str] = field(default_factory=dict)
    # The budget the answer was fitted to (fit_answer), and how many excerpts it left out.
    max_tokens: int | None = None
    left_out: int = 0
    # Its text's header counts the workspaces instead of naming each one's commit (`refs` does).
    brief: bool = False


def tokens_of(text: str) -> int:
    """Tokens as max_tokens counts them: UTF-8 bytes / 4, rounded up."""
    return -(-utf8_size(text) // 4)


# A file's lines at the ranked ref, by its workspace (the store's name) and path: what a gap
# between two excerpts holds; None when the store keeps no text of it.
LinesOf = Callable[[str, str], "Sequence[str] | None"]


@dataclass(slots=True, eq=False)  # compared by identity: two excerpts are never the same one
class _Excerpt:
    """An excerpt being made: the best candidate it started from, and its lines (start..end)."""

    hit: StoredHit
    score: float
    start: int
    end: int
    lines: list[str]
    copies: list[Copy] = field(default_factory=list)


def distinct(
    ranked: Sequence[tuple[StoredHit, float]],
    k: int,
    per_file: int | None = None,
    merge_lines: int = MERGE_LINES,
    lines_of: LinesOf | None = None,
    join_bytes: int = JOIN_MAX_BYTES,
) -> list[Hit]:
    """The answer's excerpts from `ranked` (best first): at most `k`, at most `per_file` of one
    file (None: no bound), no two the same passage.

    A candidate of another workspace whose text is the text an excerpt started from is one of
    its `copies` (a vendored copy, a fork), not another excerpt: an answer over many workspaces
    shows each text once, and names where else it is.

    A candidate whose lines overlap an excerpt of its file, or lie within `merge_lines` lines of
    it with only blank lines between (`lines_of` says), joins it: one excerpt over the joined
    lines, scored as the best, when the lines can be told exactly (the same text where they
    overlap, no line longer than a chunk) and the whole stays within a read's lines and
    `join_bytes` (at most a read's bytes); else a
    candidate overlapping an excerpt is dropped as the same passage. A file's candidates the
    answer leaves out (past `per_file`, or once it is full) are counted on its hits (`more`)."""
    kept: list[_Excerpt] = []
    of_file: dict[tuple[str, str], list[_Excerpt]] = {}
    counted: dict[tuple[str, str], list[tuple[int, int]]] = {}  # the passages left out, by file
    waiting: dict[tuple[str, str], list[tuple[StoredHit, float]]] = {}  # left out by per_file
    known: dict[tuple[str, str], Sequence[str] | None] = {}
    shown: dict[str, _Excerpt] = {}  # the first excerpt started from each text
    reach = merge_lines + 1

    def consider(hit: StoredHit, score: float) -> None:
        key = (hit.workspace, hit.path)
        first = shown.get(hit.content)
        if first is not None and first.hit.workspace != hit.workspace:
            copy = Copy(hit.workspace, hit.path, hit.start_line, hit.end_line)
            if copy not in first.copies:
                first.copies.append(copy)
            return
        mine = of_file.setdefault(key, [])
        full = len(kept) == k
        near = [
            e for e in mine if hit.start_line <= e.end + reach and e.start <= hit.end_line + reach
        ]
        if near:
            if not full and lines_of is not None:
                if key not in known:
                    known[key] = lines_of(*key)
                if _join(near[0], hit, known[key], join_bytes):
                    if _absorb(near[0], mine, kept, known[key], reach, join_bytes):
                        # A place of the file came free: its best passage left out takes it.
                        for held in waiting.pop(key, []):
                            consider(*held)
                    return
            if any(hit.start_line <= e.end and e.start <= hit.end_line for e in near):
                # The same passage as one shown, or in part: counted if it holds lines unshown.
                counted.setdefault(key, []).append((hit.start_line, hit.end_line))
                return
            if full:
                return  # beside one shown: its context, not another passage
        if full or (per_file is not None and len(mine) >= per_file):
            if mine:  # a passage of a file shown, left out
                counted.setdefault(key, []).append((hit.start_line, hit.end_line))
                if not full:
                    waiting.setdefault(key, []).append((hit, score))
            return
        excerpt = _Excerpt(hit, score, hit.start_line, hit.end_line, hit.content.split("\n"))
        kept.append(excerpt)
        mine.append(excerpt)
        shown.setdefault(hit.content, excerpt)

    for hit, score in ranked:
        consider(hit, score)
    kept.sort(key=lambda e: -e.score)  # a passage taken back ranks where its score says
    return [
        Hit(
            e.hit.path,
            e.hit.heading,
            e.start,
            e.end,
            float(e.score),
            "\n".join(e.lines),
            e.hit.workspace,
            more=_left_out_passages(counted.get(key, []), of_file[key]),
            copies=tuple(e.copies),
        )
        for e in kept
        for key in [(e.hit.workspace, e.hit.path)]
    ]


def _left_out_passages(ranges: list[tuple[int, int]], shown: list[_Excerpt]) -> int:
    """How many distinct passages of `ranges` (in rank order) no excerpt shown holds."""
    passages: list[tuple[int, int]] = []
    for a, b in ranges:
        if any(e.start <= a and b <= e.end for e in shown):
            continue
        if not any(a <= y and x <= b for x, y in passages):
            passages.append((a, b))
    return len(passages)


def _join(excerpt: _Excerpt, hit: StoredHit, raw: Sequence[str] | None, limit: int) -> bool:
    """Join `hit` to `excerpt` (in place) when their joined lines can be told exactly: lines
    each holds in full (none of the file's lines longer than a chunk), the same text where they
    overlap, only blank lines of the file between; within a read's lines and `limit` bytes (at
    most a read's)."""
    first, last = min(excerpt.start, hit.start_line), max(excerpt.end, hit.end_line)
    theirs = hit.content.split("\n")
    if (
        raw is None
        or last > len(raw)
        or last - first + 1 > READ_MAX_LINES
        or len(theirs) != hit.end_line - hit.start_line + 1
        or any(utf8_size(line) > MAX_CHUNK_BYTES for line in raw[first - 1 : last])
    ):
        return False
    joined: list[str] = []
    for number in range(first, last + 1):
        mine = (
            excerpt.lines[number - excerpt.start]
            if excerpt.start <= number <= excerpt.end
            else None
        )
        other = (
            theirs[number - hit.start_line] if hit.start_line <= number <= hit.end_line else None
        )
        if mine is not None and other is not None and mine != other:
            return False
        line = mine if mine is not None else other
        if line is None:
            if raw[number - 1].strip():
                return False  # text between them: two passages
            line = ""
        joined.append(line)
    if utf8_size("\n".join(joined)) > min(limit, READ_MAX_BYTES):
        return False
    excerpt.start, excerpt.end, excerpt.lines = first, last, joined
    return True


def _absorb(
    excerpt: _Excerpt,
    mine: list[_Excerpt],
    kept: list[_Excerpt],
    raw: Sequence[str] | None,
    reach: int,
    limit: int,
) -> bool:
    """After `excerpt` grew: join to it the other excerpts of its file it now reaches (a
    candidate between two shown ones). Two joined keep the better one's place and score; the
    other gives its place in the answer back. Whether a place came free."""
    grown, freed = excerpt, False
    for other in list(mine):
        if (
            other is grown
            or other not in mine
            or not (other.start <= grown.end + reach and grown.start <= other.end + reach)
        ):
            continue
        first, second = (other, grown) if kept.index(other) < kept.index(grown) else (grown, other)
        if _join(first, _as_hit(second), raw, limit):
            mine.remove(second)
            kept.remove(second)
            grown, freed = first, True
    return freed


def _as_hit(excerpt: _Excerpt) -> StoredHit:
    return dataclasses.replace(
        excerpt.hit,
        start_line=excerpt.start,
        end_line=excerpt.end,
        content="\n".join(excerpt.lines),
    )


# -- as text and JSON ------------------------------------------------------------------------


def render_answer(answer: Answer) -> str:
    """The answer as text: a header, then each excerpt with its path, line range and heading
    (and its workspace, when the answer comes from several), then its text, or the line that
    says its text was left out for the answer's max_tokens; then what was left out whole."""
    lines = [_header(answer, answer.query)]
    several = len(answer.refs) > 1
    for i, hit in enumerate(answer.hits, start=1):
        lines += _excerpt(i, hit, several, answer.max_tokens)
    if answer.left_out:
        lines += ["", _left_out(answer.left_out, answer.max_tokens)]
    return "\n".join(lines) + "\n"


def _header(answer: Answer, query: str) -> str:
    """The note, if any, and the line naming the count, the query and the commits; a brief one
    (an answer fitted to a budget its whole header would pass) counts the workspaces instead of
    naming each commit, and cuts the note."""
    several = len(answer.refs) > 1
    if several and answer.brief:
        at = f"of {len(answer.refs)} workspaces (each excerpt names its commit)"
    elif several:
        at = "of " + ", ".join(
            f"{name} at commit {short_ref(ref)}" for name, ref in answer.refs.items()
        )
    else:
        at = f"at commit {short_ref(answer.ref)}"
    count = len(answer.hits) + answer.left_out
    header = f"{plural(count, 'excerpt')} for {query!r} from the documentation {at}" + (
        "" if count else ": nothing matched; try other words"
    )
    note = answer.note
    if note and answer.brief and len(note) > _SHORT_QUERY_CHARS:
        note = note[: _SHORT_QUERY_CHARS - 1] + "…"
    return f"{note}\n\n{header}" if note else header


def _excerpt(i: int, hit: Hit, several: bool, max_tokens: int | None) -> list[str]:
    where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
    if several:
        where = f"{hit.workspace}: {where}"
    heading = f" ({hit.heading})" if hit.heading else ""
    more = f" [{plural(hit.more, 'more passage')} of this file matched]" if hit.more else ""
    if hit.repeated:
        text = "[shown earlier in this session; ask with repeat: true to see it again]"
    elif hit.cut:
        text = (
            f"[text left out to keep this answer within {max_tokens} tokens: read lines "
            f"{hit.start_line}-{hit.end_line} of {hit.path}]"
        )
    else:
        text = hit.content.rstrip()
    cited = ["", f"[{i}] {where}{heading}{more}"]
    if hit.copies:
        places = [f"{c.workspace}: {c.path}:{c.start_line}-{c.end_line}" for c in hit.copies]
        rest = len(places) - COPIES_SHOWN
        cited.append(
            "[the same text is also in "
            + "; ".join(places[:COPIES_SHOWN])
            + (f"; and {plural(rest, 'more place')}" if rest > 0 else "")
            + "]"
        )
    return [*cited, text]


def _left_out(count: int, max_tokens: int | None) -> str:
    return (
        f"[{plural(count, 'more excerpt')} left out to keep this answer within {max_tokens} "
        "tokens: ask for fewer, or search a narrower path]"
    )


# A query echoed in the header of an answer that would not fit its budget is cut to this many
# characters (a query may hold 4,000).
_SHORT_QUERY_CHARS = 200


def fit_answer(answer: Answer, max_tokens: int) -> Answer:
    """`answer` made to render within `max_tokens` (search.tokens_of): its excerpts in order,
    each whole while the whole answer fits, else its citation alone (text cut), and from the
    first whose citation does not fit, the rest left out (counted). A query too long to echo is
    cut (in the header and in `query`). Never more than the budget, whatever the docs hold."""
    query = answer.query
    fitted = dataclasses.replace(answer, hits=[], max_tokens=max_tokens, left_out=0)
    several = len(answer.refs) > 1

    def frame(q: str) -> int:
        """What the answer costs around its excerpts: the header, and its last line at worst."""
        closing = _left_out(len(answer.hits), max_tokens)
        return tokens_of(_header(fitted, q) + "\n\n" + closing + "\n") + 1

    if frame(query) > max_tokens and len(query) > _SHORT_QUERY_CHARS:
        query = query[: _SHORT_QUERY_CHARS - 1] + "…"
    if frame(query) > max_tokens:  # many workspaces, a long note: a brief header
        fitted = dataclasses.replace(fitted, brief=True)
    used = frame(query) * 4  # in bytes, as tokens_of counts them
    budget = max_tokens * 4
    kept: list[Hit] = []
    for i, found in enumerate(answer.hits, start=1):
        hit = found
        size = 1 + utf8_size("\n".join(_excerpt(i, hit, several, max_tokens)))
        if used + size > budget:
            hit = dataclasses.replace(found, content="", cut=True)
            size = 1 + utf8_size("\n".join(_excerpt(i, hit, several, max_tokens)))
            if used + size > budget:
                break
        kept.append(hit)
        used += size
    return dataclasses.replace(
        answer,
        query=query,
        hits=kept,
        max_tokens=max_tokens,
        left_out=len(answer.hits) - len(kept),
        brief=fitted.brief,
    )


def answer_data(answer: Answer) -> dict[str, Any]:
    """An answer as JSON (docs_search's structured content, /api/search, `docshelf search
    --json`): with several workspaces `workspace` and `ref` are null and `refs` names each
    workspace's commit."""
    data: dict[str, Any] = {
        "workspace": answer.workspace or None,
        "ref": answer.ref or None,
        "query": answer.query,
        "mode": answer.mode,
        "note": answer.note,
        "hits": [dataclasses.asdict(hit) for hit in answer.hits],
    }
    if answer.refs:
        data["refs"] = dict(answer.refs)
    if answer.max_tokens is not None:
        data["max_tokens"] = answer.max_tokens
        data["left_out"] = answer.left_out
    return data
