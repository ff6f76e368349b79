"""The tokenizer both stores rank by (stores/terms.py)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from docshelf.stores.terms import (
    MAX_CODE_CHARS,
    MAX_QUERY_TERMS,
    ChunkTerms,
    asked_terms,
    query_terms,
    stem,
    terms,
)


def test_words_are_lower_cased_and_stemmed_and_codes_are_one_term_beside_their_words() -> None:
    # The words in order, then the codes in order.
    assert terms("Retrying the Payments") == ["retri", "the", "payment"]
    assert terms("LEDGER-409 failed") == ["ledger", "409", "fail", "ledger-409"]
    assert terms("use --sync-interval 5") == ["us", "sync", "interv", "5", "sync-interval"]
    assert terms("allow s3:PutObject.") == ["allow", "s3", "putobject", "s3:putobject"]
    assert terms("max_connections=10") == ["max", "connect", "10", "max_connections"]
    assert terms("v1.2.3 or user@example.com") == [
        *("v1", "2", "3", "or", "user", "exampl", "com", "v1.2.3", "user@example.com"),
    ]


def test_a_slash_separates_and_edges_are_trimmed() -> None:
    assert terms("docs/runbooks/payments.md") == [
        *("doc", "runbook", "payment", "md", "payments.md"),
    ]
    assert terms("__init__ -x- (end).") == ["init", "x", "end"]
    assert terms("__init__.py a--b e.g.") == [
        "init",
        "py",
        "a",
        "b",
        "e",
        "g",
        "init__.py",
        "a--b",
        "e.g",
    ]


@given(st.text(alphabet=st.sampled_from("ab1_-.:@ /Ü\n"), max_size=80))
def test_codes_are_the_trimmed_spans_of_two_words_or_more(text: str) -> None:
    # The codes, found in one pass, are what the rule says: each run of words and joiners with
    # no space, trimmed of joiners, when it holds two words or more.
    spans = re.findall(r"[\w\-:.@]+", text.lower())
    want = [
        s.strip("-_:.@")
        for s in spans
        if len(re.findall(r"[^\W_]+", s)) > 1 and len(s.strip("-_:.@")) <= MAX_CODE_CHARS
    ]
    words = re.findall(r"[^\W_]+", text.lower())
    assert terms(text) == [stem(w) for w in words] + want


def test_short_and_long_words_are_not_stemmed() -> None:
    assert stem("is") == "is"
    assert stem("s") == "s"
    assert terms("30 s.") == ["30", "s"]
    long = "a" * 70 + "ing"
    assert stem(long) == long


def test_a_long_code_is_only_its_words() -> None:
    code = "-".join(["part"] * 20)
    assert len(code) > MAX_CODE_CHARS
    assert terms(code) == ["part"] * 20


def test_non_ascii_words_are_terms() -> None:
    assert terms("Größe der Datei") == ["größe", "der", "datei"]
    assert terms("東京 タワー") == ["東京", "タワー"]


def test_a_query_asks_for_distinct_terms_without_stop_words() -> None:
    assert query_terms("What is the LEDGER-409 error? The ledger!") == [
        *("ledger", "409", "ledger-409", "error"),
    ]
    assert query_terms("how do I do it") == []
    # A stop word inside a code stays in the code.
    assert query_terms("the-end") == ["end", "the-end"]
    many = " ".join(f"word{i}" for i in range(100))
    assert len(query_terms(many)) == MAX_QUERY_TERMS


def test_a_chunks_terms_are_weighted_by_column() -> None:
    made = ChunkTerms.of("docs/pay.md", "Payment timeout", "The payment timeout is 30 s")
    assert made.length == 4 + 2 + 6
    terms_, tfs = made.weighted()
    assert dict(zip(terms_, tfs, strict=True))["payment"] == 2.0 + 1.0
    assert dict(zip(terms_, tfs, strict=True))[stem("pay")] == 3.0
    assert terms_ == sorted(terms_)


def test_the_rarer_terms_are_asked_first() -> None:
    found = [("aws", 60), ("lambda", 5), ("missing", 0), ("half", 50)]
    assert asked_terms(found, 100) == [["lambda"], ["aws", "lambda", "half"]]
    assert asked_terms([("aws", 60)], 100) == [["aws"]]
    assert asked_terms([("lambda", 5)], 100) == [["lambda"]]
    assert asked_terms([("missing", 0)], 100) == []
