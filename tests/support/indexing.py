"""Test doubles for the indexer's bookkeeping: a deterministic embedder with faults on demand and
an in-memory workspace. The stores are always real (tests/stores has the fixtures' pattern)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

from docshelf.rows import Vector
from docshelf.workspace import DocFile, Docs, Selection, Skipped

MODEL = "fake-model"
DIM = 16


def fake_vector(text: str, dim: int = DIM) -> Vector:
    """A unit vector that depends only on the text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8])
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


class FakeEmbedder:
    """Embeds deterministically and records every text it is given. Faults: `fail` raises,
    `short` returns one vector too few, `hang` blocks until `release` is set."""

    def __init__(self, model_id: str = MODEL, dim: int = DIM) -> None:
        self.model_id, self.dim = model_id, dim
        self.calls: list[list[str]] = []
        self.fail = False
        self.short = False
        self.hang = False
        self.entered = threading.Event()
        self.release = threading.Event()

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        self.entered.set()
        if self.hang:
            self.release.wait(30)
        if self.fail:
            raise RuntimeError("the embeddings endpoint is down")
        rows = [fake_vector(t, self.dim) for t in texts]
        if self.short:
            rows = rows[:-1]
        return np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)


class MemorySource:
    """A workspace whose refs are dicts of path -> text, given by the test."""

    def __init__(self, name: str = "ws") -> None:
        self.name = name
        self.refs: dict[str, dict[str, str]] = {}
        self.skipped: dict[str, list[Skipped]] = {}
        self.reads: list[str] = []
        self.selection = Selection()

    def add(self, ref: str, files: dict[str, str], skipped: Sequence[Skipped] = ()) -> str:
        self.refs[ref] = dict(files)
        self.skipped[ref] = list(skipped)
        return ref

    def read_docs(self, ref: str) -> Docs:
        self.reads.append(ref)
        files = [
            DocFile(path, text, "text" if path.endswith(".txt") else "markdown")
            for path, text in sorted(self.refs[ref].items())
        ]
        return Docs(files, self.skipped[ref])


def section_doc(title: str, sections: int, words: str = "alpha beta") -> str:
    """A Markdown file of `sections` sections, each one chunk."""
    return "\n\n".join(
        f"# {title} {i}\n\n{words} paragraph {i} of {title}." for i in range(sections)
    )
