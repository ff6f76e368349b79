"""The SQLite store's vector search: each ref's matrix of float32 rows, loaded once and kept in
memory, and an exact top k with numpy, of all its rows or of the rows of a set of paths (each
row's path is kept beside it as a small integer).

Constraints:
- Never imports torch: a server that only answers holds no torch (about 200 MiB resident). A
  float16 first pass with torch was faster on large refs (7.0 ms against numpy's 14.7 ms at
  100k rows) but numpy has no fast float16 product, and ONNX Runtime's on this CPU was slower
  than numpy's float32 (BENCHMARKS.md).

The ref's largest row id (ids are never reused) tells when its matrix changed, also when another
process wrote it, so a stale matrix is never served.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from docshelf.rows import Vector

# The vector matrices kept in memory: those of the refs searched last, up to this many bytes of
# vectors (a search over a hundred workspaces ranks each one's current ref), and always the last
# MATRIX_CACHE_REFS of them. 100k chunks of 384 dimensions take 150 MB.
MATRIX_CACHE_BYTES = 384 * 1024 * 1024
MATRIX_CACHE_REFS = 4

Key = tuple[str, str]  # (workspace, ref)

Positions = np.ndarray[Any, np.dtype[np.intp]]


@dataclass(frozen=True, slots=True)
class Matrix:
    token: int  # the ref's largest row id when loaded
    ids: np.ndarray[Any, np.dtype[np.int64]]
    # Each row's path, as its number in `path_numbers` (the ref's paths, numbered from 0).
    path_of_row: np.ndarray[Any, np.dtype[np.int32]]
    path_numbers: Mapping[str, int]
    vectors: Vector

    def rows_of(self, paths: Collection[str]) -> Positions:
        """The positions, in the matrix, of the rows of these paths, in order."""
        wanted = np.zeros(len(self.path_numbers), dtype=bool)
        wanted[[self.path_numbers[p] for p in paths if p in self.path_numbers]] = True
        return np.flatnonzero(wanted[self.path_of_row])


class MatrixCache:
    """The matrices of the MATRIX_CACHE_REFS refs searched last. Thread-safe.

    Reads as a mapping from (workspace, ref) to its Matrix, least recently searched first.
    """

    def __init__(self) -> None:
        self._matrices: OrderedDict[Key, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def __getitem__(self, key: Key) -> Matrix:
        with self._lock:
            return self._matrices[key]

    def __iter__(self) -> Iterator[Key]:
        with self._lock:
            return iter(list(self._matrices))

    def load(
        self,
        conn: sqlite3.Connection,
        workspace: str,
        ref: str,
        dim: int,
        token: int | None = -1,
    ) -> Matrix:
        """The ref's ids and vectors, from the cache while the ref is unchanged; call inside a
        read snapshot. `token`: the ref's largest row id when the caller read it already (None:
        the ref has no rows)."""
        key = (workspace, ref)
        if token == -1:
            # The largest id alone: one step down chunks_by_ref (4 us on the AWS guides' 19,347
            # rows, where counting them too took 1.7 ms a search); counted only to load.
            (token,) = conn.execute(
                "SELECT max(id) FROM chunks WHERE workspace = ? AND ref = ?", key
            ).fetchone()
        if token is None:  # nothing indexed: not worth a place in the cache
            nothing = np.zeros(0, dtype=np.int64)
            return Matrix(-1, nothing, nothing.astype(np.int32), {}, np.zeros((0, dim), np.float32))
        with self._lock:
            cached = self._matrices.get(key)
            if cached is not None and cached.token == token:
                self._matrices.move_to_end(key)
                return cached
        # Row by row into arrays made to size: holding every row first, then joining their
        # blobs, took three times the matrix at once, and the heap kept it after the load.
        (count,) = conn.execute(
            "SELECT count(*) FROM chunks WHERE workspace = ? AND ref = ?", key
        ).fetchone()
        ids = np.empty(count, dtype=np.int64)
        path_of_row = np.empty(count, dtype=np.int32)
        vectors = np.empty((count, dim), dtype=np.float32)
        numbers: dict[str, int] = {}
        rows = conn.execute(
            "SELECT id, path, embedding FROM chunks WHERE workspace = ? AND ref = ? ORDER BY id",
            key,
        )
        for i, (row_id, path, blob) in enumerate(rows):
            ids[i] = row_id
            path_of_row[i] = numbers.setdefault(path, len(numbers))
            vectors[i] = np.frombuffer(blob, dtype="<f4")
        matrix = Matrix(int(token), ids, path_of_row, numbers, vectors)
        with self._lock:
            self._matrices[key] = matrix
            self._matrices.move_to_end(key)
            held = sum(m.vectors.nbytes for m in self._matrices.values())
            while len(self._matrices) > MATRIX_CACHE_REFS and held > MATRIX_CACHE_BYTES:
                held -= self._matrices.popitem(last=False)[1].vectors.nbytes
        return matrix

    def forget(self, workspace: str, ref: str) -> None:
        with self._lock:
            self._matrices.pop((workspace, ref), None)

    def clear(self) -> None:
        with self._lock:
            self._matrices.clear()


def top_k(
    matrix: Matrix,
    query: Vector,
    k: int,
    rows: Positions | None = None,
) -> dict[int, float]:
    """The row ids of the k rows of `matrix` nearest to the unit `query`, with their exact
    scores; of the rows at positions `rows` only (`Matrix.rows_of`) when given; k >= 1.

    The whole matrix is multiplied by the query either way, so a row scores exactly as it does
    in a search of all rows; only the ranking is limited to `rows`.
    """
    scores = matrix.vectors @ query
    ids = matrix.ids
    if rows is not None:
        scores, ids = scores[rows], ids[rows]
    n = len(ids)
    top = np.argpartition(scores, -k)[-k:] if k < n else np.arange(n)
    return {int(ids[i]): float(scores[i]) for i in top}
