"""What both stores check alike, written once so that they answer alike, in the same words.

- Opening: model and width come together or not at all; a place without a store is refused
  where none may be made; a schema newer than this docshelf is refused; a store made for
  another model or width is refused, saying how to start over.
- Rows: a store with a model takes only rows with a float32 unit vector of its width; a store
  made without embeddings (the none embedder: width 0) takes only rows without one.
- Queries: a store without embeddings refuses a vector search; a query vector of another width
  is refused.
- Pins and the indexing lock. A pin is a row with a lease: its holder renews it while it runs; a
  holder that dies stops renewing, and its pins expire, so no ref stays pinned by a process that
  is gone. The indexing lock is held by the operating system (SQLite: flock) or by the server
  (PostgreSQL: a session's advisory lock), so it too ends with its holder, however it ends; a
  waiter tries it every LOCK_POLL_SECONDS.

Every message names the store by its `location` (a path, or a URL without its password).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from docshelf.errors import ConfigError, StoreError
from docshelf.rows import ChunkRow, FileRow, StoredFile, Vector, check_unit, unit_query

# Random bytes of a pin's id: 128 bits, so ids made by any number of processes never collide.
PIN_ID_BYTES = 16

# The longest lease: a pin is meant to be renewed by a running holder. A year keeps every expiry
# far inside both stores' ranges of time (PostgreSQL's timestamps end in the year 294276).
MAX_LEASE_SECONDS = 366 * 24 * 3600.0

# Seconds between tries of an indexing lock that another holder has: a waiter starts within this
# of the holder's end, and 20 tries a second cost the database nothing.
LOCK_POLL_SECONDS = 0.05


# -- opening ----------------------------------------------------------------------------------


def check_open_arguments(model_id: str | None, dim: int | None) -> None:
    """Raises ValueError unless both or neither of `model_id` and `dim` are given."""
    if (model_id is None) != (dim is None):
        raise ValueError("give both model_id and dim, or neither")


def no_store(where: str) -> StoreError:
    """The error for opening a place that holds no store where none may be made (no model
    given, or `create` false), naming the command that makes one: `where` is "at PATH" or "in
    the database at URL"."""
    return StoreError(
        f"no docshelf store {where}: nothing is indexed there yet. Check --store and "
        "DOCSHELF_STORE, or index into this store first with docshelf index"
    )


def check_schema(location: str, applied: Collection[int], known: Sequence[int]) -> None:
    """Refuse a store with a migration this docshelf does not know: a newer docshelf made it.

    Raises:
        StoreError: `applied` holds a version that `known` lacks.
    """
    newer = sorted(set(applied) - set(known))
    if newer:
        raise StoreError(
            f"the store at {location} has schema version {newer[-1]}, newer than this "
            f"docshelf knows ({max(known, default=0)}): upgrade docshelf to use it"
        )


def check_model(
    location: str,
    stored: tuple[str, int],
    configured: tuple[str | None, int | None],
    *,
    new_store: str,
    start_over: str,
) -> None:
    """Refuse to open a store made for another model or width than the configured one.

    `new_store` says how to give another store ("--store PATH"), `start_over` how to empty this
    one ("delete this file").

    Raises:
        StoreError: a model is configured, and it or its width is not the stored one.
    """
    (stored_model, stored_dim), (model_id, dim) = stored, configured
    if model_id is None or (stored_model, stored_dim) == (model_id, dim):
        return
    raise StoreError(
        f"the store at {location} holds embeddings of {stored_model} ({stored_dim} "
        f"dimensions), but the configured embedder is {model_id} ({dim} dimensions). "
        f"Use a new store ({new_store}) for the new model, or {start_over} and index again "
        f"with it; or configure {stored_model} again"
    )


# -- rows and queries -------------------------------------------------------------------------


def row_embedding(row: ChunkRow, *, location: str, model_id: str, dim: int) -> Vector | None:
    """The row's embedding, checked against the store's model and width (0: no embeddings).

    Raises:
        StoreError: a store with a model got a row without a vector, or one of another type or
            width, or not a finite unit vector; or a store without embeddings got a vector.
    """
    vector = row.embedding
    if vector is None:
        if dim:
            raise StoreError(
                f"chunk {row.chunk} of {row.path} has no embedding, but the store at "
                f"{location} holds {dim}-dimensional {model_id} vectors; embed it with "
                f"{model_id} first"
            )
        return None
    if not dim:
        raise StoreError(
            f"chunk {row.chunk} of {row.path} has an embedding, but the store at {location} "
            f"holds none: it was made with the none embedder (model {model_id!r}, width 0), for "
            "full-text search only. Index into it with --embedder none, or give a new store "
            "(--store) for this model"
        )
    if vector.dtype != np.float32 or vector.shape != (dim,):
        raise StoreError(
            f"chunk {row.chunk} of {row.path} has an embedding of {vector.dtype} and shape "
            f"{vector.shape}, but the store at {location} holds {dim}-dimensional float32 "
            f"{model_id} vectors; embed it with {model_id}"
        )
    check_unit(vector, row)
    return vector


def query_vector(vector: Vector, *, location: str, model_id: str, dim: int) -> Vector:
    """The query vector of a vector search, scaled to length 1.

    Raises:
        StoreError: the store holds no embeddings, or the vector has another width, or is zero
            or not finite.
    """
    if not dim:
        raise StoreError(
            f"the store at {location} holds no embeddings (it was made with the none "
            "embedder); search it by text"
        )
    return unit_query(vector, dim, model_id)


# -- pins and the indexing lock ---------------------------------------------------------------


def new_pin_id() -> str:
    return secrets.token_hex(PIN_ID_BYTES)


def check_lease(lease_seconds: float) -> float:
    """The lease as a float.

    Raises:
        ConfigError: it is not a positive, finite number of seconds of at most a year.
    """
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, int | float)
        or not math.isfinite(lease_seconds)
        or not 0 < lease_seconds <= MAX_LEASE_SECONDS
    ):
        raise ConfigError(
            f"a pin's lease must be a number of seconds above 0 and at most "
            f"{MAX_LEASE_SECONDS:.0f} (a year): {lease_seconds!r}; renew a pin to keep it longer"
        )
    return float(lease_seconds)


def check_timeout(timeout_seconds: float) -> float:
    """The wait for the indexing lock as a float (inf: wait as long as it takes).

    Raises:
        ConfigError: it is negative or not a number.
    """
    if (
        isinstance(timeout_seconds, bool)
        or not isinstance(timeout_seconds, int | float)
        or not timeout_seconds >= 0  # also NaN
    ):
        raise ConfigError(
            f"the wait for the indexing lock must be 0 or more seconds: {timeout_seconds!r}"
        )
    return float(timeout_seconds)


def poll_until(try_once: Callable[[], bool], deadline: float) -> bool:
    """Call `try_once` every LOCK_POLL_SECONDS until it succeeds or the `time.monotonic()`
    deadline passes (it is tried at least once); whether it succeeded."""
    while True:
        if try_once():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(LOCK_POLL_SECONDS, left))


def lock_busy(workspace: str, location: str, waited: float) -> StoreError:
    return StoreError(
        f"another docshelf process is indexing workspace {workspace!r} in {location} "
        f"(waited {waited:g} s); wait for it to finish, or stop it, then index again"
    )


def iso_utc(moment: datetime) -> str:
    """A time as both stores report it: UTC, ISO 8601, in seconds (as SQLite's columns hold)."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def title_blob(file: FileRow, *, location: str, model_id: str, dim: int) -> bytes | None:
    """The file's title vector as stored (little-endian float32), checked against the store's
    model and width; None for a file without one, or in a store without embeddings.

    Raises:
        StoreError: a title vector of another width, or not finite.
    """
    vector = file.title
    if vector is None or not dim:
        return None
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dim,) or not np.isfinite(array).all():
        raise StoreError(
            f"the title of {file.path} has an embedding of shape {array.shape}, but the store at "
            f"{location} holds {dim}-dimensional finite {model_id} vectors"
        )
    return array.astype("<f4").tobytes()


def blob_vector(blob: bytes) -> Vector:
    """A stored vector (little-endian float32: a chunk's embedding, a title_blob) as an array."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def searched_scopes(
    scopes: Sequence[tuple[str, str, Collection[str] | None]],
) -> list[tuple[str, str, Collection[str] | None]]:
    """The scopes of a search over many refs that can find anything, one per (workspace, ref):
    an empty set of paths finds nothing, as in a search of one ref, and a ref named twice is
    searched once (whole if either names it whole, else the union of the paths)."""
    merged: dict[tuple[str, str], set[str] | None] = {}
    for workspace, ref, paths in scopes:
        if paths is not None and not paths:
            continue
        key = (workspace, ref)
        if key in merged and merged[key] is None:
            continue
        merged[key] = None if paths is None else {*(merged.get(key) or ()), *paths}
    return [(w, r, paths) for (w, r), paths in merged.items()]


def files_by_ref(rows: Iterable[Sequence[Any]]) -> dict[tuple[str, str], list[StoredFile]]:
    """Rows of (workspace, ref, path, lines, size), in order, as each ref's files
    (Store.files_refs)."""
    found: dict[tuple[str, str], list[StoredFile]] = {}
    for workspace, ref, path, lines, size in rows:
        found.setdefault((str(workspace), str(ref)), []).append(
            StoredFile(str(path), int(lines), int(size))
        )
    return found
