"""The SQLite store's vector search: each ref's matrix of float32 rows, loaded once and kept in
memory, and an exact top k (through a float16 first pass for large refs), of all its rows or of
the rows of a set of paths (each row's path is kept beside it as a small integer).

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

# Refs whose vector matrices stay in memory: current and a few pinned ones. 100k chunks of 384
# dimensions take 150 MB, so the cache is bounded.
MATRIX_CACHE_REFS = 4

# Refs of at least this many chunks are searched through a float16 copy of their vectors, with
# torch: a search of float32 rows reads the whole matrix (150 MB at 100k chunks) and is bound by
# memory bandwidth; float16 halves what is read. The float16 scores are only a first pass: every
# chunk that could still be in the top k, given a bound on float16's rounding, is scored again
# exactly from its stored float32 vector, so the results are exact. Smaller refs are searched in
# float32 with numpy, and never load torch.
HALF_PRECISION_MIN_ROWS = 20_000

# Added to the bound on a float16 score's error, for the rounding of its float32 accumulation
# (at most about 384 * 2**-24 for unit vectors, 40 times less than this).
ACCUMULATION_SLACK = 1e-3

# Row ids per statement when rescoring candidates, well below SQLite's limit on parameters.
RESCORE_STEP = 500

Key = tuple[str, str]  # (workspace, ref)

Positions = np.ndarray[Any, np.dtype[np.intp]]


@dataclass(frozen=True, slots=True)
class Matrix:
    token: int  # the ref's largest row id when loaded
    ids: np.ndarray[Any, np.dtype[np.int64]]
    # Each row's path, as its number in `path_numbers` (the ref's paths, numbered from 0).
    path_of_row: np.ndarray[Any, np.dtype[np.int32]]
    path_numbers: Mapping[str, int]
    # float32 rows of a small ref; a large one keeps only `half`, a float16 torch tensor.
    vectors: Vector | None
    half: Any = None
    # The largest distance of a float16 row from its float32 original.
    half_error: float = 0.0

    def rows_of(self, paths: Collection[str]) -> Positions:
        """The positions, in the matrix, of the rows of these paths, in order."""
        wanted = np.zeros(len(self.path_numbers), dtype=bool)
        wanted[[self.path_numbers[p] for p in paths if p in self.path_numbers]] = True
        return np.flatnonzero(wanted[self.path_of_row])


class MatrixCache:
    """The matrices of the MATRIX_CACHE_REFS refs searched last. Thread-safe.

    Reads as a mapping from (workspace, ref) to its Matrix, least recently searched first.
    """

    def __init__(self, half_precision_rows: int = HALF_PRECISION_MIN_ROWS) -> None:
        self.half_precision_rows = half_precision_rows
        self._matrices: OrderedDict[Key, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def __getitem__(self, key: Key) -> Matrix:
        with self._lock:
            return self._matrices[key]

    def __iter__(self) -> Iterator[Key]:
        with self._lock:
            return iter(list(self._matrices))

    def load(self, conn: sqlite3.Connection, workspace: str, ref: str, dim: int) -> Matrix:
        """The ref's ids and vectors, from the cache while the ref is unchanged; call inside a
        read snapshot."""
        key = (workspace, ref)
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
        rows = conn.execute(
            "SELECT id, path, embedding FROM chunks WHERE workspace = ? AND ref = ? ORDER BY id",
            key,
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        numbers: dict[str, int] = {}
        path_of_row = np.fromiter(
            (numbers.setdefault(r[1], len(numbers)) for r in rows), dtype=np.int32, count=len(rows)
        )
        blob = b"".join(r[2] for r in rows)
        vectors = np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dim)
        if len(rows) >= self.half_precision_rows:
            matrix = _half_matrix(int(token), ids, path_of_row, numbers, vectors)
        else:
            matrix = Matrix(int(token), ids, path_of_row, numbers, vectors)
        with self._lock:
            self._matrices[key] = matrix
            self._matrices.move_to_end(key)
            while len(self._matrices) > MATRIX_CACHE_REFS:
                self._matrices.popitem(last=False)
        return matrix

    def forget(self, workspace: str, ref: str) -> None:
        with self._lock:
            self._matrices.pop((workspace, ref), None)

    def clear(self) -> None:
        with self._lock:
            self._matrices.clear()


def top_k(
    conn: sqlite3.Connection,
    matrix: Matrix,
    query: Vector,
    k: int,
    rows: Positions | None = None,
) -> dict[int, float]:
    """The row ids of the k rows of `matrix` nearest to the unit `query`, with their exact
    scores; of the rows at positions `rows` only (`Matrix.rows_of`) when given. Call inside the
    read snapshot `matrix` was loaded in, with k >= 1.

    The whole matrix is multiplied by the query either way, so a row scores exactly as it does
    in a search of all rows; only the ranking is limited to `rows`.
    """
    if matrix.vectors is None:
        return _half_precision_top(conn, matrix, query, k, rows)
    scores = matrix.vectors @ query
    ids = matrix.ids
    if rows is not None:
        scores, ids = scores[rows], ids[rows]
    n = len(ids)
    top = np.argpartition(scores, -k)[-k:] if k < n else np.arange(n)
    return {int(ids[i]): float(scores[i]) for i in top}


def _half_precision_top(
    conn: sqlite3.Connection, matrix: Matrix, query: Vector, k: int, rows: Positions | None
) -> dict[int, float]:
    """The exact top k of a large ref (of its `rows` when given): float16 scores pick the
    candidates, float32 rows score them."""
    import torch  # noqa: PLC0415 - only large refs need it; see HALF_PRECISION_MIN_ROWS

    query_half = query.astype(np.float16)
    approx = torch.mv(matrix.half, torch.from_numpy(query_half)).float().numpy()
    ids = matrix.ids
    if rows is not None:
        approx, ids = approx[rows], ids[rows]
    n = len(ids)
    # Every float16 score is within `margin` of the exact one, so a chunk of the exact top k
    # scores at least (k-th best float16 score - 2 * margin) in float16.
    query_error = float(np.linalg.norm(query.astype(np.float64) - query_half))
    margin = matrix.half_error + query_error * (1 + matrix.half_error) + ACCUMULATION_SLACK
    if k < n:
        kth = float(np.partition(approx, n - k)[n - k])
        candidates = ids[approx >= kth - 2 * margin]
    else:
        candidates = ids
    exact: dict[int, float] = {}
    for i in range(0, len(candidates), RESCORE_STEP):
        part = [int(c) for c in candidates[i : i + RESCORE_STEP]]
        for row_id, blob in conn.execute(
            f"SELECT id, embedding FROM chunks WHERE id IN ({','.join('?' * len(part))})",
            part,
        ):
            exact[row_id] = float(np.frombuffer(blob, dtype="<f4") @ query)
    best = sorted(exact.items(), key=lambda item: -item[1])[:k]
    return dict(best)


def _half_matrix(
    token: int,
    ids: np.ndarray[Any, np.dtype[np.int64]],
    path_of_row: np.ndarray[Any, np.dtype[np.int32]],
    path_numbers: Mapping[str, int],
    vectors: Vector,
) -> Matrix:
    import torch  # noqa: PLC0415 - see HALF_PRECISION_MIN_ROWS

    half = vectors.astype(np.float16)
    error = float(np.linalg.norm(vectors.astype(np.float64) - half, axis=1).max())
    return Matrix(token, ids, path_of_row, path_numbers, None, torch.from_numpy(half), error)
