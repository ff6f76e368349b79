"""A hypothesis strategy for Markdown glued from pieces of the robustness corpora
(../shared/data/robustness, read in place): whole examples, single lines, slices cut anywhere
(inside a fence marker, a tag, a multi-byte character's neighbours), and a few hostile atoms,
joined by any kind of line break or by nothing at all.

Shared by tests/chunking/test_fuzz.py (quick) and bench/fuzz.py (100k examples).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

ROBUSTNESS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "robustness"
SETS = ("commonmark-spec-examples.json", "gfm-spec-examples.json", "markdown-it-fixtures.json")

# Pieces no spec example holds on its own: control characters, a byte order mark, a lone
# surrogate, long runs of markers, and lines that only almost open or close a fence.
ATOMS = (
    "\x00",
    "\x1b[31m",
    "\ufeff",
    "\ud800",
    "\u2028",
    "\r",
    "\t",
    "- " * 200 + "```",
    "> " * 100,
    "#" * 7 + " not a heading",
    "`" * 40,
    "~" * 40 + " info",
    "   ```",
    "    ```",
    "<!--",
    "-->",
    "<pre>",
    "</pre>",
    "| --- |" + " " * 200 + "x",
    "---\ntitle: t\n---",
)
# Joints between pieces.
JOINTS = ("\n", "\r\n", "\r", "", "\n\n", " ")
# Most pieces a generated document has.
MAX_PIECES = 40


@cache
def examples() -> tuple[str, ...]:
    """Every example's Markdown in the three sets.

    Raises:
        AssertionError: ../shared/data is missing (a test that cannot read it fails).
    """
    assert ROBUSTNESS.is_dir(), f"{ROBUSTNESS} is missing: the tests read ../shared/data"
    texts: list[str] = []
    for name in SETS:
        data = json.loads((ROBUSTNESS / name).read_text(encoding="utf-8"))
        groups = [data] if isinstance(data, list) else list(data.values())
        texts += [example["markdown"] for group in groups for example in group]
    return tuple(texts)


@cache
def lines() -> tuple[str, ...]:
    return tuple(sorted({line for text in examples() for line in text.split("\n")}))


@st.composite
def _slice(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(examples()))
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, len(text)))
    return text[a:b]


@st.composite
def corpus_documents(draw: st.DrawFn) -> str:
    """A document glued from robustness-corpus pieces and hostile atoms."""
    piece = st.one_of(
        st.sampled_from(examples()),
        st.sampled_from(lines()),
        _slice(),
        st.sampled_from(ATOMS),
    )
    pieces = draw(st.lists(piece, max_size=MAX_PIECES))
    joints = st.sampled_from(JOINTS)
    out: list[str] = []
    for p in pieces:
        out += [p, draw(joints)]
    return "".join(out)
