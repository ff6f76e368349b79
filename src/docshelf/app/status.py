"""What a running service reports of itself (the web page's status view, `Service.status`): per
workspace its current commit and when it was indexed, its refs and their chunks, its pins with
their leases, the files the current commit's read skipped and why, and the last sync's result.

Constraints:
- Read from the store (what every process sharing it sees) and from this process's last sync;
  nothing here loads a model or touches the workspace's files.
- A ref indexed before docshelf recorded when and what it skipped reports None for both, never a
  guess.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

from docshelf.workspace import Skipped, skipped_from_record

if TYPE_CHECKING:
    from docshelf.indexer import IndexResult

SyncOutcome = Literal["indexed", "already indexed", "failed"]


@dataclass(frozen=True, slots=True)
class PinState:
    """An unexpired pin: the ref it keeps, who holds it (host:pid) and when its lease ends
    unless renewed (unix seconds)."""

    ref: str
    holder: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class SyncState:
    """The result of a workspace's last background sync in this process."""

    at: str  # UTC, ISO 8601
    outcome: SyncOutcome
    ref: str | None = None
    chunks: int | None = None
    embedded: int | None = None
    reused: int | None = None
    seconds: float | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class WorkspaceState:
    label: str
    name: str
    current: str | None
    indexed_at: str | None  # when the current ref was indexed (UTC, ISO 8601)
    refs: dict[str, int]  # each indexed ref and its chunks
    pins: list[PinState]
    skipped: list[Skipped] | None  # the current ref's; None: not recorded
    syncs: bool  # whether this process syncs the workspace
    last_sync: SyncState | None = None


@dataclass(frozen=True, slots=True)
class ServiceState:
    store: str
    model_id: str
    dim: int
    text_only: bool
    workspaces: list[WorkspaceState] = field(default_factory=list)


class _Store(Protocol):
    def current(self, workspace: str) -> str | None: ...

    def ref_report(self, workspace: str, ref: str) -> tuple[str | None, str | None]: ...

    def pins(self, workspace: str) -> list[tuple[str, str, float]]: ...

    def ref_counts(self, workspace: str) -> dict[str, int]: ...


def workspace_state(
    store: _Store,
    name: str,
    label: str | None = None,
    *,
    syncs: bool = False,
    last_sync: SyncState | None = None,
) -> WorkspaceState:
    """A workspace's state as the store records it (`label`: its shown name, default `name`),
    with this process's part: whether it syncs the workspace and its last sync.

    Raises:
        StoreError: the store cannot be read.
    """
    current = store.current(name)
    indexed_at, skipped = (None, None) if current is None else store.ref_report(name, current)
    return WorkspaceState(
        label or name,
        name,
        current,
        indexed_at,
        store.ref_counts(name),
        live_pins(store.pins(name)),
        skipped_from_record(skipped),
        syncs,
        last_sync,
    )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def sync_state(result: IndexResult | None, failure: str | None) -> SyncState:
    """A sync's result as the status shows it; `failure` says why a sync that returned no
    result failed."""
    if result is None:
        return SyncState(now_iso(), "failed", error=failure or "the sync failed (see the log)")
    return SyncState(
        now_iso(),
        "already indexed" if result.already_indexed else "indexed",
        result.ref,
        result.chunks,
        result.embedded,
        result.reused,
        round(result.seconds, 3),
    )


def live_pins(rows: list[tuple[str, str, float]]) -> list[PinState]:
    now = time.time()
    return [PinState(ref, holder, expires) for ref, holder, expires in rows if expires > now]
