"""Session pins: each HTTP session that connects to `/mcp?ref=REV` answers from REV's commit
(with several workspaces, `/mcp?ref=NAME=REV&ref=OTHER=REV`: each named workspace from its own).

Constraints:
- A pin is resolved to a commit when its session starts, through app.Service (which holds it in
  the store when the server has the source), and released when the session ends or idles out,
  so no prune removes that commit meanwhile.
- A new session's pin is kept before the client learns its session id, and released on DELETE
  before the client learns that its session ended.
- The pinned commit reaches the tool through the request's state in the ASGI scope, never a
  global: concurrent sessions answer from their own commits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docshelf.app import Pins
from docshelf.errors import DocshelfError
from docshelf.mcp_server.tool import MCP_PATH, PINNED_REF
from docshelf.present import SHORT_REF, clip

log = logging.getLogger("docshelf.mcp")

# Ended sessions are looked for this often (a quarter of the idle timeout when that is shorter):
# a pin outlives its session by a minute at most.
SESSION_SWEEP_SECONDS = 60.0


@dataclass(eq=False)
class _Pin:
    """A session's pins (a commit, or a commit per workspace), and what releases them."""

    pins: Pins
    release: Callable[[], None]
    in_flight: int = 0
    idle_since: float = field(default_factory=time.monotonic)


class _SessionPins:
    """Pins each HTTP session that starts with `/mcp?ref=REV` to REV's commit until it ends.

    A session of the handshake protocol starts with its initialize request (no session id yet)
    and ends with a DELETE or when it idles out. A 2026-07-28 client has no sessions: each of its
    requests carries the URL, so its pin is shared by the requests of one REV and held while they
    keep coming. A request's pinned commit reaches the tool through the scope's state."""

    def __init__(
        self,
        app: ASGIApp,
        pin: Callable[[list[str]], tuple[Pins, Callable[[], None]]],
        idle_timeout: float,
    ) -> None:
        self._app = app
        self._pin = pin
        self._idle_timeout = idle_timeout
        self._sessions: dict[str, _Pin] = {}
        self._sessionless: dict[str, _Pin] = {}

    @property
    def pinned(self) -> list[str]:
        """The commits pinned now, one entry per session (or sessionless ref): a commit, or
        NAME=COMMIT entries joined by commas."""
        return sorted(
            _shown_pins(p.pins, full=True)
            for p in [*self._sessions.values(), *self._sessionless.values()]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            pin = self._sessions.get(session_id)

            async def ended(status: int, _: str | None) -> None:
                # Released before the client learns that its session ended.
                if pin is None or scope["method"] != "DELETE" or status >= 300:
                    return
                if self._sessions.pop(session_id, None) is pin:
                    await anyio.to_thread.run_sync(pin.release)

            await self._serve(pin, scope, receive, send, ended)
            return
        revs = _query_refs(scope)
        if not revs:
            await self._app(scope, receive, send)
            return
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        sessionless = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
        key = "&".join(revs)
        pin = self._sessionless.get(key) if sessionless else None
        if pin is None:
            try:
                pins, release = await anyio.to_thread.run_sync(self._pin, revs)
            except DocshelfError as e:
                log.warning("refused a session pinned to %s: %s", clip(key), e)
                refusal = PlainTextResponse(
                    f"cannot pin this session to {clip(key)}: {e}. Connect to {MCP_PATH}?ref=REV "
                    f"with a commit, branch or tag of the repository (NAME=REV, repeated, when "
                    f"the server serves several), or to {MCP_PATH} for the latest indexed "
                    "commit\n",
                    status_code=400,
                )
                await refusal(scope, receive, send)
                return
            pin = _Pin(pins, release)
            if sessionless:
                held = self._sessionless.setdefault(key, pin)
                if held is not pin:  # another request pinned the same ref meanwhile
                    await anyio.to_thread.run_sync(pin.release)
                    pin = held
        opened = False

        async def started(status: int, new_session: str | None) -> None:
            # Kept before the client learns the session id, so its next request finds the pin.
            nonlocal opened
            if not sessionless and new_session is not None and status < 400:
                self._sessions[new_session] = pin
                opened = True
                log.info("session %s… pinned to %s", new_session[:8], _shown_pins(pin.pins))

        await self._serve(pin, scope, receive, send, started)
        if not sessionless and not opened:
            await anyio.to_thread.run_sync(pin.release)

    async def _serve(
        self,
        pin: _Pin | None,
        scope: Scope,
        receive: Receive,
        send: Send,
        on_start: Callable[[int, str | None], Awaitable[None]],
    ) -> None:
        """Run the request with `pin` in its state; `on_start` sees the response's status and
        any session id it opens before the client does."""

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                await on_start(message["status"], opened)
            await send(message)

        if pin is None:
            await self._app(scope, receive, watch)
            return
        scope["state"] = {**scope.get("state", {}), PINNED_REF: pin.pins}
        pin.in_flight += 1
        try:
            await self._app(scope, receive, watch)
        finally:
            pin.in_flight -= 1
            pin.idle_since = time.monotonic()

    async def sweep_forever(self) -> None:
        """Release the pins of sessions idle past the timeout (the SDK has ended them by then:
        it counts the same requests, and stopped counting earlier)."""
        interval = min(SESSION_SWEEP_SECONDS, self._idle_timeout / 4)
        while True:
            await anyio.sleep(interval)
            now = time.monotonic()
            for table in (self._sessions, self._sessionless):
                for key, pin in list(table.items()):
                    if pin.in_flight == 0 and now - pin.idle_since >= self._idle_timeout:
                        del table[key]
                        log.info("released the pin of %s: idle", _shown_pins(pin.pins))
                        await anyio.to_thread.run_sync(pin.release)

    async def release_all(self) -> None:
        pins = [*self._sessions.values(), *self._sessionless.values()]
        self._sessions.clear()
        self._sessionless.clear()
        for pin in pins:
            await anyio.to_thread.run_sync(pin.release)


def _query_refs(scope: Scope) -> list[str]:
    query = scope.get("query_string", b"").decode("latin-1")
    return parse_qs(query).get("ref", [])


def _shown_pins(pins: Pins, *, full: bool = False) -> str:
    size = None if full else SHORT_REF
    if pins is None:
        return "current"
    if isinstance(pins, str):
        return pins[:size]
    return ",".join(f"{name}={commit[:size]}" for name, commit in sorted(pins.items()))
