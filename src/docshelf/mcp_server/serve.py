"""Serving: `docshelf serve`'s one call, on stdio or on HTTP, and the server's background work.

Constraints:
- The ref a call answers from: its session's pin, else the server's (--ref), else the current
  ref, which moves as syncs land. The server's pin is held until the server stops.
- Indexing never happens per session or per query: only the background sync indexes, in a
  thread of its own that outlives a failed step; a warm-up search at start loads the model so
  that the first real call does not wait for it.
- Talks to app.Service only (current, pin, warm_up, check, refresh, reload, can_sync), and
  its background sync to app.Poller (the rounds, spread over the interval), never to their
  parts.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio

from docshelf.app import DEFAULT_JOBS, Pins, Poller, Reloaded, Service
from docshelf.errors import ConfigError, DocshelfError
from docshelf.mcp_server.http import (
    HttpOptions,
    _serve_http,
    build_http_app,
    check_http_options,
    listen,
)
from docshelf.mcp_server.stdio import _serve_stdio
from docshelf.mcp_server.tool import build_server
from docshelf.present import SHORT_REF, shown

if TYPE_CHECKING:
    from docshelf.app import IndexResult

log = logging.getLogger("docshelf.mcp")

# The server asks itself this at start, in a background thread, so that the first real call does
# not wait for the model to load (seconds on a CPU) and for the current ref's vectors to be read.
WARM_UP_QUERY = "documentation"

# On shutdown the background sync gets this long to finish its step; the indexer writes a ref all
# or nothing, so one cut short leaves nothing behind.
SYNC_STOP_SECONDS = 10.0


class _Background:
    """The server's background threads: a warm-up at start, and the periodic sync."""

    def __init__(self, service: Service, sync_interval: float | None, jobs: int) -> None:
        self._service = service
        self._interval = sync_interval
        self._jobs = jobs
        self._stop = threading.Event()
        self._sync: threading.Thread | None = None

    def start(self) -> None:
        threading.Thread(target=self._warm_up, name="docshelf-warm-up", daemon=True).start()
        if self._interval is not None:
            self._sync = threading.Thread(
                target=self._sync_forever, name="docshelf-sync", daemon=True
            )
            self._sync.start()

    def stop(self) -> None:
        self._stop.set()
        if self._sync is not None:
            self._sync.join(SYNC_STOP_SECONDS)

    def _warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self._service.warm_up(WARM_UP_QUERY)
        except DocshelfError as e:
            log.warning("%s", e)
            return
        log.info("ready: the first search took %.1f s", time.perf_counter() - started)

    def _sync_forever(self) -> None:
        assert self._interval is not None
        service = self._service

        def indexed(label: str, result: IndexResult) -> None:
            log.info(
                "indexed %s%s: %d chunks (%d embedded, %d reused) in %.1f s",
                f"{shown(label)} at " if service.several else "",
                result.ref[:SHORT_REF],
                result.chunks,
                result.embedded,
                result.reused,
                result.seconds,
            )

        def reloaded(changes: Reloaded) -> None:
            if changes.added:
                log.info("serving %s too", ", ".join(shown(label) for label in changes.added))
            if changes.removed:
                log.info(
                    "no longer serving %s", ", ".join(shown(label) for label in changes.removed)
                )

        poller = Poller(
            service, self._interval, jobs=self._jobs, indexed=indexed, reloaded=reloaded
        )
        poller.run(self._stop)


def serve(
    service: Service,
    *,
    ref: str | Sequence[str] | None = None,
    http: HttpOptions | None = None,
    sync_interval: float | None = None,
    jobs: int = DEFAULT_JOBS,
) -> None:
    """Serve the tools until stdin closes (stdio) or the process is stopped (HTTP, or a
    signal). `ref` (a REV, or `NAME=REV` values, one per workspace) pins the stdio session, or
    over HTTP every session without its own pin. Every `sync_interval` seconds the workspaces
    are chosen again (a manifest read again) and each source is checked, at most `jobs` at once.

    Raises:
        ConfigError: the HTTP options are refused or the address cannot be bound, or there is
            nothing to sync.
        WorkspaceError: `ref` names no commit.
        StoreError: the pin could not be recorded.
    """
    if sync_interval is not None and not service.can_sync:
        raise ConfigError("--sync-interval needs the repository to sync: give SOURCE")
    sock = None
    if http is not None:
        http = check_http_options(http)
        sock = listen(http.host, http.port)
        http = dataclasses.replace(http, port=sock.getsockname()[1])
    release = _nothing
    try:
        commit: Pins = None
        specs = [ref] if isinstance(ref, str) else list(ref or ())
        if specs:
            commit, release = service.pin_all(specs)
            pinned = (
                commit[:SHORT_REF]
                if isinstance(commit, str)
                else ", ".join(f"{k} at {v[:SHORT_REF]}" for k, v in (commit or {}).items())
            )
            log.info("pinned to %s (%s)", pinned, shown(" ".join(specs)))
        background = _Background(service, sync_interval, jobs)
        try:
            if http is None or sock is None:
                server = build_server(service, ref=commit, one_session=True)
                anyio.run(_serve_stdio, server, background.start, release)
            else:
                background.start()
                app = build_http_app(service, http, ref=commit, sync_interval=sync_interval)
                _serve_http(app, sock)
        finally:
            background.stop()
    finally:
        release()
        if sock is not None:
            sock.close()


def _nothing() -> None:
    pass
