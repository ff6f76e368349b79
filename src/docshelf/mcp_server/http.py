"""The tools on streamable HTTP at /mcp, and the web page beside them at / (docshelf.web): the
options, the guard, the ASGI app and its listener.

Constraints:
- Every request passes the guard first (the Origin allow-list and, on a loopback bind, the Host:
  DNS rebinding; then a declared body over the limit; then the bearer token, which only the page
  and its static files, holding no docs, go without), then the body size limit, then the session
  pins. Every response carries the page's security headers (docshelf.web.SECURITY_HEADERS).
- A host other than this machine is refused without a token or allow_remote.
- uvicorn runs in a thread, so that SIGTERM and SIGINT reach docshelf and the pins are released
  before the process ends.
- Logs go to stderr, in docshelf's format: uvicorn's own logging is off.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import ipaddress
import logging
import re
import select
import signal
import socket
import threading
import webbrowser
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docshelf.app import Pins, Service
from docshelf.config import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT
from docshelf.errors import ConfigError
from docshelf.mcp_server.session_pins import _SessionPins
from docshelf.mcp_server.tool import MCP_PATH, TOOL_NAMES, build_server
from docshelf.present import clip, shown
from docshelf.web import PAGE_PATH, SECURITY_HEADERS, is_public, web_routes

log = logging.getLogger("docshelf.mcp")

# A docs_search call is a question and a number, a few hundred bytes. A megabyte leaves room for
# any request an MCP client sends, and stops a client from making the server hold large bodies.
MAX_REQUEST_BODY_BYTES = 1024 * 1024

# An HTTP session with no request in flight for this long ends, and its pin is released: a client
# that vanished without ending its session holds no commit back from pruning for long, and half an
# hour outlasts any pause between a model's calls. (The SDK's default, kept for its sessions too.)
SESSION_IDLE_TIMEOUT_SECONDS = 30 * 60.0

# A shorter bearer token can be guessed; `openssl rand -hex 32` makes a good one.
MIN_TOKEN_CHARS = 16

# What a bearer token may hold: a header value is bytes that servers read as latin-1 and the
# browser's fetch refuses outside it, so only printable ASCII matches the same on both ends.
TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")

# How long open HTTP streams get to finish when the server is stopped: an answer takes
# milliseconds, and a client's idle event stream would otherwise hold the shutdown forever.
HTTP_SHUTDOWN_SECONDS = 5

# The names of this machine that a browser may use for a server bound to a loopback address.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """Where `docshelf serve --http` listens and whom it answers."""

    host: str = DEFAULT_HTTP_HOST
    port: int = DEFAULT_HTTP_PORT
    token: str | None = field(default=None, repr=False)
    allow_origins: tuple[str, ...] = ()
    allow_remote: bool = False
    session_idle_timeout: float = SESSION_IDLE_TIMEOUT_SECONDS
    open_page: bool = False  # open the web page in the user's browser once serving


def check_http_options(options: HttpOptions) -> HttpOptions:
    """The options, with each allowed origin normalised.

    Raises:
        ConfigError: a token too short to be safe, an origin that is not scheme://host[:port],
            or a host other than this machine without a token or allow_remote.
    """
    if options.token is not None and not TOKEN_CHARS.fullmatch(options.token):
        raise ConfigError(
            "the token must be printable ASCII without spaces (an HTTP header carries no more); "
            "openssl rand -hex 32 makes one"
        )
    if options.token is not None and len(options.token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"the token is {len(options.token)} characters long; use at least "
            f"{MIN_TOKEN_CHARS} (openssl rand -hex 32 makes one)"
        )
    origins = []
    for origin in options.allow_origins:
        normal = normal_origin(origin)
        if normal is None:
            raise ConfigError(
                f"--allow-origin {shown(origin)!r} is not an origin; give scheme://host[:port], "
                "e.g. https://docs.example.com"
            )
        origins.append(normal)
    if not is_loopback(options.host) and options.token is None and not options.allow_remote:
        raise ConfigError(
            f"{shown(options.host)} can be reached from other machines, and without a token "
            "anyone there could read the docs; set a token (--token or DOCSHELF_TOKEN), or pass "
            "--allow-remote if the network itself is trusted"
        )
    return dataclasses.replace(options, allow_origins=tuple(origins))


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (localhost or a loopback address)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def normal_origin(origin: str) -> str | None:
    """`origin` as scheme://host[:port], lower case, without the scheme's default port; None
    when it is not an http(s) origin."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname  # lower case already
    if ":" in host:
        host = f"[{host}]"
    default_port = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" + (f":{port}" if port not in (None, default_port) else "")


def _host_name(host_header: str | None) -> str | None:
    """The host name of a Host header, lower case, IPv6 in brackets."""
    if not host_header:
        return None
    try:
        name = urlsplit(f"//{host_header.strip()}").hostname
    except ValueError:
        return None
    if name is None:
        return None
    return f"[{name}]" if ":" in name else name


def _bearer_matches(authorization: str | None, token: bytes) -> bool:
    if authorization is None:
        return False
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode("utf-8", "surrogateescape"), token)


class _Guard:
    """Refuses a request before the MCP transport sees it: a foreign Origin (403), on a loopback
    bind a Host that is not this machine (421), a missing or wrong bearer token (401)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        origins: frozenset[str],
        hosts: frozenset[str] | None,
        token: str | None,
    ) -> None:
        self._app = app
        self._origins = origins
        self._hosts = hosts
        self._token = None if token is None else token.encode("utf-8", "surrogateescape")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        refusal = None
        if origin is not None and normal_origin(origin) not in self._origins:
            log.warning("refused a request from origin %s", clip(origin))
            refusal = PlainTextResponse(
                f"origin {clip(origin)} may not use this server: only pages of this machine "
                "may. To allow it, start docshelf serve with --allow-origin ORIGIN\n",
                status_code=403,
            )
        elif self._hosts is not None and _host_name(headers.get("host")) not in self._hosts:
            log.warning("refused a request for host %s", clip(headers.get("host") or ""))
            refusal = PlainTextResponse(
                "this server answers for this machine's names only (localhost, 127.0.0.1, "
                "[::1]) and the hosts of --allow-origin\n",
                status_code=421,
            )
        elif _declared_length(headers) > MAX_REQUEST_BODY_BYTES:
            refusal = PlainTextResponse(
                f"the request body is over {MAX_REQUEST_BODY_BYTES} bytes; send a smaller one\n",
                status_code=413,
            )
        elif (
            self._token is not None
            and not is_public(scope["path"])
            and not _bearer_matches(headers.get("authorization"), self._token)
        ):
            refusal = PlainTextResponse(
                "missing or wrong token: send the header 'Authorization: Bearer <token>' with "
                "the token docshelf serve was started with\n",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="docshelf"'},
            )

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        if refusal is not None:
            await refusal(scope, receive, secured)
            return
        await self._app(scope, receive, secured)


def _declared_length(headers: Headers) -> int:
    """The body length a request declares (Content-Length), 0 without one; an unreadable one
    counts as too long."""
    value = headers.get("content-length")
    if value is None:
        return 0
    try:
        return int(value)
    except ValueError:
        return MAX_REQUEST_BODY_BYTES + 1


@dataclass
class HttpApp:
    """The ASGI application of `docshelf serve --http`, and its session pins (for tests)."""

    app: ASGIApp
    pins: _SessionPins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def build_http_app(
    service: Service, options: HttpOptions, *, ref: Pins = None, sync_interval: float | None = None
) -> HttpApp:
    """The tools on streamable HTTP at /mcp and the web page at /, behind the guard; `options`
    checked by check_http_options, with the port the server is bound to (the allowed origins
    name it); `sync_interval`: how often the server syncs, for the page's status."""
    server = build_server(service, ref=ref)
    manager = StreamableHTTPSessionManager(
        app=server,
        # The guard below checks Origin and Host with the bound port and --allow-origin.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=options.session_idle_timeout,
        max_request_body_size=MAX_REQUEST_BODY_BYTES,
    )
    pins = _SessionPins(
        StreamableHTTPASGIApp(manager), service.pin_all, options.session_idle_timeout
    )
    base = f"http://{_url_host(options.host)}:{options.port}"
    url = base + MCP_PATH
    # A browser reaches a server bound to every address through this machine's own.
    browse = base if is_loopback(options.host) else f"http://127.0.0.1:{options.port}"

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(pins.sweep_forever)
            log.info(
                "serving %s of %s at %s",
                ", ".join(TOOL_NAMES),
                ", ".join(shown(label) for label in service.labels),
                url,
            )
            log.info("the web page is at %s%s", browse, PAGE_PATH)
            if options.open_page:
                threading.Thread(
                    target=webbrowser.open, args=(browse + PAGE_PATH,), daemon=True
                ).start()
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
        await pins.release_all()

    routes = [
        Route(MCP_PATH, endpoint=pins),
        *web_routes(
            service, ref=ref, session_pins=lambda: pins.pinned, sync_interval=sync_interval
        ),
    ]
    starlette = Starlette(routes=routes, lifespan=lifespan)
    origins = {f"http://{name}:{options.port}" for name in LOOPBACK_NAMES}
    origins.update(options.allow_origins)
    hosts = None
    if is_loopback(options.host):
        allowed = {_host_name(urlsplit(o).netloc) for o in options.allow_origins}
        hosts = frozenset({*LOOPBACK_NAMES, *(h for h in allowed if h is not None)})
    guarded = _Guard(starlette, origins=frozenset(origins), hosts=hosts, token=options.token)
    return HttpApp(guarded, pins)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (port 0: any free port), listening.

    Raises:
        ConfigError: the address cannot be bound (in use, or not this machine's).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as e:
        raise ConfigError(f"cannot listen on {shown(host)}: {e}; check --host") from e
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen()
    except OSError as e:
        sock.close()
        raise ConfigError(
            f"cannot listen on {shown(host)} port {port}: {e.strerror or e}; choose another "
            "--port, or stop what listens there"
        ) from e
    return sock


def _serve_http(app: HttpApp, sock: socket.socket) -> None:
    """Serve until SIGTERM or SIGINT (a second one stops at once). uvicorn runs in a thread so
    that the signals reach docshelf: on the main thread uvicorn would end the process by raising
    the signal again, before the server's pins are released and its store is closed."""
    config = uvicorn.Config(
        app,
        log_config=None,  # docshelf's logging: stderr, one format
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=HTTP_SHUTDOWN_SECONDS,
    )
    server = uvicorn.Server(config)

    def stop(received: int, _: object) -> None:
        log.info("stopping on %s", signal.Signals(received).name)
        server.force_exit = server.should_exit
        server.should_exit = True

    # The main thread waits on a socket that both the signal's C handler (set_wakeup_fd) and the
    # uvicorn thread's end write to. A process-directed signal may land on any thread (uvicorn's,
    # the sync's, the model's native pool); an untimed thread.join() then never wakes to run
    # the Python handler, and a join polled with a timeout held every search with the model up
    # to the next poll (about 500 ms a call with a 0.5 s poll, 20 ms without; bench/serve.py).
    wake, wakeup = socket.socketpair()
    wake.setblocking(False)
    wakeup.setblocking(False)

    done = threading.Event()

    def run() -> None:
        try:
            server.run(sockets=[sock])
        finally:
            done.set()  # before the byte: once the byte is read, done is seen
            with contextlib.suppress(OSError):
                wakeup.send(b"\0")

    thread = threading.Thread(target=run, name="docshelf-http", daemon=True)
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    previous_fd = signal.set_wakeup_fd(wakeup.fileno(), warn_on_full_buffer=False)
    try:
        thread.start()
        while not done.is_set():
            select.select([wake], [], [])  # the handler runs as this returns
            with contextlib.suppress(BlockingIOError):
                while wake.recv(4096):
                    pass
        thread.join()
    finally:
        signal.set_wakeup_fd(previous_fd)
        for received, handler in previous.items():
            signal.signal(received, handler)
        wake.close()
        wakeup.close()
