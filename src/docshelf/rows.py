"""The rows that cross between the indexer, the search and the stores.

Plain frozen dataclasses with no behaviour, so that the stores need not import the modules that
consume them, and those modules need not import a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from docshelf.errors import StoreError

Vector = NDArray[np.float32]

# How far a stored vector's length may be from 1. Embedders return L2-normalised rows, correct to
# about 1e-7 in float32; a vector further off was built by hand, and would rank wrongly, since
# the stores compare vectors by their dot product or their angle.
UNIT_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One chunk of one document at one ref, as written to a store.

    `embedding` is an L2-normalised float32 vector of the store's width, or None when the store
    holds no embeddings (the `none` embedder: full-text search only).
    """

    path: str
    chunk: int
    heading: str
    content: str
    start_line: int
    end_line: int
    content_hash: str
    embedding: Vector | None

    def columns(self) -> tuple[str, int, str, str, int, int, str]:
        """path, chunk, heading, content, start_line, end_line, content_hash: in the order
        both stores' tables hold them, after workspace and ref and before the embedding."""
        return (
            self.path,
            self.chunk,
            self.heading,
            self.content,
            self.start_line,
            self.end_line,
            self.content_hash,
        )


@dataclass(frozen=True, slots=True)
class StoredHit:
    """One chunk found by a search; a higher score ranks first within one kind of search."""

    path: str
    chunk: int
    heading: str
    content: str
    start_line: int
    end_line: int
    score: float
    workspace: str = ""  # set by a search over several workspaces, to tell their chunks apart

    @classmethod
    def from_columns(cls, columns: Sequence[Any], score: float) -> StoredHit:
        """A hit from path, chunk, heading, content, start_line and end_line, in that order."""
        path, chunk, heading, content, start_line, end_line = columns
        return cls(path, chunk, heading, content, start_line, end_line, float(score))


@dataclass(frozen=True, slots=True)
class FileRow:
    """One documentation file of one ref, as written to a store beside its chunks: its path,
    its text exactly as the commit holds it (decoded UTF-8), `text_hash` (sha256 of that text's
    UTF-8 bytes, hex: the store keeps each distinct text once) and how many lines it has as the
    hits count them (its prepared text's lines). `title` is the embedding of its title
    (chunking.title_input), by `title_hash` (of the model and that input, as a chunk's
    content_hash); None without an embedder."""

    path: str
    text: str
    text_hash: str
    lines: int
    title_hash: str | None = None
    title: Vector | None = None


@dataclass(frozen=True, slots=True)
class StoredFile:
    """An indexed file of one ref, as a store lists it: path, lines and size in UTF-8 bytes."""

    path: str
    lines: int
    size: int


def check_unit(vector: Vector, row: ChunkRow) -> None:
    """Refuse a row whose embedding is not finite or not of length 1.

    Raises:
        StoreError: the embedding is not a finite unit vector.
    """
    length = float(np.linalg.norm(vector))
    if not np.isfinite(length) or abs(length - 1.0) > UNIT_TOLERANCE:
        raise StoreError(
            f"chunk {row.chunk} of {row.path} has an embedding of length {length:.4g}, not a "
            "finite unit vector; normalise it (embedders return L2-normalised rows)"
        )


def unit_query(vector: Vector, dim: int, model_id: str) -> Vector:
    """The query vector scaled to length 1, so that a dot product is its cosine similarity.

    Raises:
        StoreError: the vector has another width, or is zero or not finite.
    """
    if vector.shape != (dim,):
        raise StoreError(
            f"a query vector of shape {vector.shape} cannot search {dim}-dimensional "
            f"{model_id} vectors; embed the query with {model_id}"
        )
    query = np.asarray(vector, dtype=np.float32)
    length = float(np.linalg.norm(query))
    if not np.isfinite(length) or length == 0.0:
        raise StoreError("the query vector is zero or not finite; embed the query again")
    return query / np.float32(length)
