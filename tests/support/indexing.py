"""Test doubles for the indexer's bookkeeping: a deterministic embedder with faults on demand and
an in-memory workspace. The stores are always real (tests/stores has the fixtures' pattern)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

from docshelf.rows import Vector
from docshelf.workspace import DocFile, Docs, Layout, Selection, Skipped

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

    # No budget for the indexer's batches, unless a test sets one.
    batch_chars: int | None = None
    batch_text_chars: int | None = None
    batch_texts: int | None = None

    def __init__(self, model_id: str = MODEL, dim: int = DIM, *, titles: bool = False) -> None:
        self.model_id, self.dim = model_id, dim
        # Files' titles get one vector, unless `titles`: then each its own, as texts do. Random
        # vectors carry no meaning, so by default the title prior (search.title_prior) leaves the
        # rankings of the tests as their words and vectors make them.
        self.titles = titles
        self.calls: list[list[str]] = []
        self.title_calls: list[list[str]] = []
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

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if texts and not any("\n" in t for t in texts):
            # Files' titles (chunking.title_input: never a line break; a chunk's input always
            # has one), recorded apart so that `calls` and `texts` count the chunks embedded.
            self.title_calls.append(list(texts))
            return np.stack([fake_vector(t if self.titles else "", self.dim) for t in texts])
        return self.embed(texts)


class MemorySource:
    """A workspace whose refs are dicts of path -> text, given by the test. Its docs are the
    files under a selection's roots (None: every file) that its globs keep; `selection` given
    is `chosen`, as a workspace opened with --docs or a glob is."""

    def __init__(self, name: str = "ws", selection: Selection | None = None) -> None:
        self.name = name
        self.refs: dict[str, dict[str, str]] = {}
        self.skipped: dict[str, list[Skipped]] = {}
        self.reads: list[str] = []
        # The selection each read was given, in order.
        self.read_with: list[Selection] = []
        # The selection each sync was given, in order.
        self.synced_with: list[Selection] = []
        self.selection = selection or Selection()
        self.chosen = selection is not None

    def add(self, ref: str, files: dict[str, str], skipped: Sequence[Skipped] = ()) -> str:
        self.refs[ref] = dict(files)
        self.skipped[ref] = list(skipped)
        return ref

    def sync(self, rev: str | None = None, selection: Selection | None = None) -> str:
        """`rev` (default: the ref added last), recording the selection it was synced with."""
        self.synced_with.append(self.selection if selection is None else selection)
        return rev if rev is not None else list(self.refs)[-1]

    def read_docs(self, ref: str, selection: Selection | None = None) -> Docs:
        wanted = self.selection if selection is None else selection
        self.reads.append(ref)
        self.read_with.append(wanted)
        roots = self.layout_at(ref, wanted).roots
        under = [p for p in sorted(self.refs[ref]) if any(_under(p, root) for root in roots)]
        files = [
            DocFile(path, self.refs[ref][path], "text" if path.endswith(".txt") else "markdown")
            for path in under
            if wanted.keeps(path)
        ]
        return Docs(files, self.skipped[ref], roots, len(under) - len(files))

    def layout_at(self, ref: str, selection: Selection | None = None) -> Layout:
        return Layout((self.selection if selection is None else selection).docs or (".",))


def _under(path: str, root: str) -> bool:
    return root in (".", path) or path.startswith(root + "/")


def section_doc(title: str, sections: int, words: str = "alpha beta") -> str:
    """A Markdown file of `sections` sections, each one chunk."""
    return "\n\n".join(
        f"# {title} {i}\n\n{words} paragraph {i} of {title}." for i in range(sections)
    )
