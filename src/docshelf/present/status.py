"""What `docshelf status` and the page's status show: the store, and per workspace its current
ref, when that was indexed and what its read skipped, each ref's chunks, the live pins and the
last sync; a summary of them past STATUS_LISTED workspaces."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docshelf.shown import plural, short_ref, shown

if TYPE_CHECKING:
    from docshelf.app.status import ServiceState, WorkspaceState

# -- status -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerView:
    """What a running server adds to the status: the version, its pins (`--ref`: a commit per
    workspace's shown name), the MCP sessions' pins, how often it syncs (None: never) and the
    bounds of top_k."""

    version: str
    several: bool
    server_pins: Mapping[str, str]
    sessions: list[str]
    sync_interval: float | None
    top_k: Mapping[str, int]


def status_data(state: ServiceState, server: ServerView | None = None) -> dict[str, Any]:
    """The status as JSON: `docshelf status --json` (the store's workspaces by name, each
    ref's chunks by ref), or with `server`, /api/status (docs/web-api.md)."""
    data: dict[str, Any] = {"store": state.store, "model": state.model_id, "dim": state.dim}
    if server is None:
        data["workspaces"] = [
            {
                "workspace": ws.name,
                "current": ws.current,
                "pinned": sorted({p.ref for p in ws.pins}),
                "refs": dict(ws.refs),
                **_recorded_data(ws),
            }
            for ws in state.workspaces
        ]
        return data
    return {
        "version": server.version,
        **data,
        "text_only": state.text_only,
        "several": server.several,
        "top_k": dict(server.top_k),
        "sessions": server.sessions,
        "sync_interval": server.sync_interval,
        "workspaces": [
            {
                "workspace": ws.label,
                "name": ws.name,
                "current": ws.current,
                "server_pin": server.server_pins.get(ws.label),
                "refs": [{"ref": r, "chunks": n} for r, n in ws.refs.items()],
                **_recorded_data(ws),
                "syncs": ws.syncs and server.sync_interval is not None,
                "last_sync": None if ws.last_sync is None else dataclasses.asdict(ws.last_sync),
            }
            for ws in state.workspaces
        ],
    }


def _recorded_data(ws: WorkspaceState) -> dict[str, Any]:
    return {
        "indexed_at": ws.indexed_at,
        "pins": [dataclasses.asdict(p) for p in ws.pins],
        "skipped": None
        if ws.skipped is None
        else [{"path": shown(s.path), "reason": s.reason} for s in ws.skipped],
    }


# Past this many workspaces, `docshelf status` summarises them (--all lists every one).
STATUS_LISTED = 20


def render_status(state: ServiceState, *, every: bool = False) -> str:
    """`docshelf status`'s report: the store, and per workspace its current ref and when it was
    indexed, each ref's chunks and pins, the live pins' holders and leases, the skipped files;
    a summary of them past STATUS_LISTED workspaces, unless `every`."""
    lines = [f"store: {state.store}", f"model: {state.model_id} ({state.dim} dimensions)"]
    if not state.workspaces:
        lines.append("no workspace indexed yet")
    if len(state.workspaces) > STATUS_LISTED and not every:
        return "\n".join(lines + _status_summary(state.workspaces)) + "\n"
    now = time.time()
    for ws in state.workspaces:
        lines.append(f"workspace {shown(ws.name)}: current {ws.current or '(none)'}")
        if ws.current is not None:
            lines.append(f"  indexed {ws.indexed_at or '(not recorded)'}")
        pinned = {p.ref for p in ws.pins}
        for ref, count in ws.refs.items():
            mark = "*" if ref == ws.current else " "
            lines.append(f"  {mark} {ref}  {count} chunks{', pinned' if ref in pinned else ''}")
        for pin in ws.pins:
            lines.append(
                f"  pin on {short_ref(pin.ref)} by {shown(pin.holder)}, lease ends in "
                f"{max(0, round(pin.expires_at - now))} s"
            )
        if ws.skipped:
            lines.append(f"  skipped {len(ws.skipped)}:")
            lines.extend(f"    {shown(s.path)}: {s.reason}" for s in ws.skipped)
    return "\n".join(lines) + "\n"


def _status_summary(workspaces: Sequence[WorkspaceState]) -> list[str]:
    indexed = [ws for ws in workspaces if ws.current is not None]
    waiting = [shown(ws.name) for ws in workspaces if ws.current is None]
    refs = sum(len(ws.refs) for ws in workspaces)
    chunks = sum(sum(ws.refs.values()) for ws in workspaces)
    pins = sum(len(ws.pins) for ws in workspaces)
    lines = [
        f"{plural(len(workspaces), 'workspace')}: {len(indexed)} indexed, {len(waiting)} not "
        f"indexed yet; {plural(refs, 'ref')}, {plural(chunks, 'chunk')}; "
        f"{plural(pins, 'live pin')}"
    ]
    dated = sorted((ws for ws in indexed if ws.indexed_at), key=lambda ws: ws.indexed_at or "")
    if dated:
        last, first = dated[-1], dated[0]
        lines.append(f"last indexed: {shown(last.name)} at {last.indexed_at}")
        lines.append(f"longest since indexed: {shown(first.name)} at {first.indexed_at}")
    if waiting:
        more = f" and {len(waiting) - STATUS_LISTED} more" if len(waiting) > STATUS_LISTED else ""
        lines.append("not indexed yet: " + ", ".join(waiting[:STATUS_LISTED]) + more)
    skipping = [ws for ws in indexed if ws.skipped]
    if skipping:
        lines.append(f"skipped files in {plural(len(skipping), 'workspace')}")
    lines.append(
        "docshelf status --workspace NAME shows one workspace, --all every one, --json all of it"
    )
    return lines
