from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.chunking import chunk_text, estimate_tokens
from tests.chunking.invariants import check_paragraphs, fence_balanced


def test_splits_on_blank_lines_and_merges_small_neighbours() -> None:
    text = "First paragraph.\n\nSecond paragraph.\n\n\nThird."
    chunks = chunk_text(text, max_chars=40, overlap_chars=0)
    assert [c.text for c in chunks] == ["First paragraph.\n\nSecond paragraph.", "Third."]
    assert [(c.char_start, c.char_end) for c in chunks] == [(0, 35), (38, 44)]
    assert all(text[c.char_start : c.char_end] == c.text for c in chunks)


def test_blank_lines_inside_a_fence_do_not_split_it() -> None:
    text = "Intro.\n\n```py\na = 1\n\n\nb = 2\n```\n\nAfter."
    chunks = chunk_text(text, max_chars=24, overlap_chars=0)
    assert [c.text for c in chunks] == ["Intro.", "```py\na = 1\n\n\nb = 2\n```", "After."]


def test_oversized_paragraph_is_cut_on_word_boundaries() -> None:
    text = " ".join(f"word{i}" for i in range(100))
    chunks = chunk_text(text, max_chars=50, overlap_chars=0)
    assert len(chunks) > 1
    for c in chunks:
        assert len(c.text) <= 50
        assert text[c.char_start : c.char_end] == c.text
        assert not c.text.startswith(" ") and not c.text.endswith(" ")
    assert " ".join(c.text for c in chunks) == text


def test_word_without_spaces_is_cut_at_the_budget() -> None:
    chunks = chunk_text("x" * 250, max_chars=100, overlap_chars=0)
    assert [len(c.text) for c in chunks] == [100, 100, 50]


def test_overlap_copies_the_previous_tail_at_a_word_boundary() -> None:
    text = "alpha beta gamma delta epsilon.\n\nzeta eta theta iota kappa."
    chunks = chunk_text(text, max_chars=40, overlap_chars=10)
    assert chunks[1].text == "epsilon.\nzeta eta theta iota kappa."
    assert text[chunks[1].char_start : chunks[1].char_end] == "zeta eta theta iota kappa."


def test_overlap_is_clamped_to_a_quarter_of_the_budget() -> None:
    text = ("a " * 25).strip() + "\n\n" + ("b " * 20).strip()
    chunks = chunk_text(text, max_chars=60, overlap_chars=1_000)
    tail = chunks[1].text[: chunks[1].text.index("\n")]
    assert 0 < len(tail) <= 15


def test_overlap_never_carries_a_fence_line() -> None:
    text = "```\ncode\n```\n\nplain words after the fence"
    chunks = chunk_text(text, max_chars=30, overlap_chars=7)
    assert chunks[1].text == "plain words after the fence"


def test_overlap_never_carries_a_fence_marker_that_stripping_brings_to_a_line_start() -> None:
    # "\u2028```" is text, not a fence line; the tail stripped of the U+2028 would open a fence.
    text = "```\n```\n\u2028```\n\nword word word word word"
    chunks = chunk_text(text, max_chars=32, overlap_chars=8)
    assert [c.text for c in chunks] == ["```\n```\n\u2028```", "word word word word word"]
    check_paragraphs(text, chunks, 32, 8)


def test_overlap_after_a_line_separator_before_a_fence_marker_holds_no_fence_line() -> None:
    para = "\tfoo\tbaz\t\tbim\n\n"
    text = f"{para}```ruby\ndef foo(x)\n  return 3\nend\n```\n\n\u2028\n\u2028```\n\n{para * 9}"
    chunks = chunk_text(text, max_chars=61, overlap_chars=11)
    assert chunks[1].text.startswith("foo\tbaz")
    assert all(fence_balanced(c.text) for c in chunks)
    check_paragraphs(text, chunks, 61, 11)


def test_oversized_fence_pieces_each_carry_the_fence_lines() -> None:
    body = "\n".join(f"    line_{i} = compute({i})" for i in range(60))
    text = f"Setup:\n\n```python title=demo\n{body}\n```\n\nDone."
    chunks = chunk_text(text, max_chars=300, overlap_chars=60)
    fenced = [c for c in chunks if "line_" in c.text]
    assert len(fenced) > 2
    for c in fenced:
        assert c.text.startswith("```python title=demo\n") or c.text.split("\n")[1].startswith(
            "```python"
        )
        assert c.text.endswith("\n```")
        assert fence_balanced(c.text)
        assert len(c.text) <= 300
    # Code keeps its indentation in every piece.
    assert all(
        line.startswith("    line_")
        for c in fenced
        for line in c.text.split("\n")[1:-1]
        if "line_" in line and not c.text.startswith(line)
    )
    check_paragraphs(text, chunks, 300, 60)


def test_overlap_after_a_split_fence_goes_inside_the_repeated_opening_line() -> None:
    body = "\n".join(f"x{i} = {i}" for i in range(40))
    chunks = chunk_text(f"~~~\n{body}\n~~~", max_chars=120, overlap_chars=30)
    for c in chunks[1:]:
        first, second = c.text.split("\n")[:2]
        assert first == "~~~"
        assert second.startswith("x")


def test_offsets_index_the_text_with_normalised_newlines() -> None:
    text = "one\r\n\r\ntwo\r\n"
    chunks = chunk_text(text, max_chars=4, overlap_chars=0)
    normalised = text.replace("\r\n", "\n")
    assert [normalised[c.char_start : c.char_end] for c in chunks] == ["one", "two"]


def test_a_byte_order_mark_is_dropped_before_offsets_are_counted() -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(80))
    text = f"\ufeff```python\n{code}\n```\n"
    chunks = chunk_text(text, max_chars=300, overlap_chars=0)
    assert len(chunks) > 1
    assert all(fence_balanced(c.text) for c in chunks)
    assert chunks[0].char_start == 0 and chunks[0].text.startswith("```python")
    assert chunk_text("\ufeff") == []
    check_paragraphs(text, chunks, 300, 0)


def test_tokens_count_the_chunk_before_its_overlap() -> None:
    text = "one two three four five six.\n\nseven eight."
    chunks = chunk_text(text, max_chars=30, overlap_chars=7)
    assert chunks[1].text == "six.\nseven eight."
    assert chunks[1].tokens == estimate_tokens("seven eight.")


def test_tokens_are_words_over_three_quarters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("one") == 2
    assert estimate_tokens("one two three") == 4
    assert estimate_tokens("a b c d") == 6
    assert chunk_text("one two three")[0].tokens == 4


def test_empty_text_gives_no_chunks_and_a_zero_budget_is_refused() -> None:
    assert chunk_text("") == []
    assert chunk_text(" \n\n \t") == []
    with pytest.raises(ValueError, match="max_chars"):
        chunk_text("x", max_chars=0)


# --- properties --------------------------------------------------------------------------------

PIECES = st.one_of(
    st.sampled_from(["", " ", "```", "```js", "~~~", "````", "    ```", "#", "word"]),
    st.text(max_size=60),
    st.builds(lambda n: "long " * n, st.integers(20, 200)),
    st.builds(lambda n: "x" * n, st.integers(50, 900)),
)


@given(
    st.lists(PIECES, max_size=40).map("\n".join),
    st.integers(1, 900),
    st.integers(-5, 400),
)
def test_every_invariant_holds(text: str, max_chars: int, overlap: int) -> None:
    chunks = chunk_text(text, max_chars, overlap)
    check_paragraphs(text, chunks, max_chars, overlap)
    assert chunk_text(text, max_chars, overlap) == chunks


@given(st.text(max_size=2_000), st.integers(1, 500), st.integers(0, 200))
def test_every_invariant_holds_on_arbitrary_text(text: str, max_chars: int, overlap: int) -> None:
    check_paragraphs(text, chunk_text(text, max_chars, overlap), max_chars, overlap)


@st.composite
def closed_fence_documents(draw: st.DrawFn) -> str:
    blocks = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            blocks.append(draw(st.sampled_from(["Prose here.", "a b c d e f g", "x" * 300])))
        else:
            marker = draw(st.sampled_from(["```", "~~~", "````"]))
            lines = draw(
                st.lists(st.sampled_from(["code()", "", "  indented", "y" * 150]), max_size=30)
            )
            blocks.append("\n".join([marker + "lang", *lines, marker]))
    return "\n\n".join(blocks)


@given(closed_fence_documents(), st.integers(40, 600), st.integers(0, 150))
def test_every_chunk_of_closed_fences_is_balanced(text: str, max_chars: int, overlap: int) -> None:
    chunks = chunk_text(text, max_chars, overlap)
    check_paragraphs(text, chunks, max_chars, overlap)
    for c in chunks:
        assert fence_balanced(c.text), c.text
