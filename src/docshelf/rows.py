"""The rows that cross between the indexer, the search and the stores.

Plain frozen dataclasses with no behaviour, so that the stores need not import the modules that
consume them, and those modules need not import a store.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Vector = NDArray[np.float32]


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
