"""The test builder of app.Service: one workspace of a store, with the embedder, the command that
indexes it, and optionally its source and indexer, built through Service's one constructor."""

from __future__ import annotations

from typing import Any

from docshelf.app import Served, Service
from docshelf.search import Fusion


def build_service(
    store: Any,
    embedder: Any,
    workspace: str = "ws",
    *,
    index_hint: str = "docshelf index",
    label: str | None = None,
    source: Any = None,
    indexer: Any = None,
    fusion: Fusion | None = None,
) -> Service:
    """A service of one workspace (`label`: its shown name, default `workspace`)."""
    served = Served(workspace, label or workspace, index_hint, source, indexer)
    return Service(store, embedder, [served], fusion=fusion)
