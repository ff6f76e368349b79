"""The MCP server `docs`: one tool, docs_search, over the service app.py builds, spoken on stdio or
on streamable HTTP at /mcp.

Constraints:
- A thin adapter: search.py validates, ranks and renders. This module turns an answer into a tool
  result (the rendered text, and the same hits as structured content) and each failure the model
  can act on (a refused query or top_k, an argument the schema does not name, the embedder, the
  store, an empty index) into an error result whose text says what to do next. An unknown tool
  is a protocol error, as in the seed.
- Built on the SDK's low-level Server, not MCPServer: MCPServer validates the arguments with
  pydantic first (its messages, and JSON inside strings parsed) and answers an unknown tool with
  an error result, while docs_search's arguments must reach check_query and check_top_k raw.
- The ref a call answers from: its session's pin, else the server's (--ref), else the current
  ref, which moves as syncs land. A pin is resolved to a commit when its session starts and held
  in the store (through the indexer, when the server has the source) until the session ends or
  idles out, so no prune removes that commit meanwhile.
- Indexing never happens per session or per query: only the background sync indexes.
- Searches run in worker threads: the model and the stores block.
- Over HTTP every request passes the guard first (the Origin allow-list and, on a loopback bind,
  the Host: DNS rebinding; then the bearer token), then the body size limit.
- stdout carries the stdio protocol and nothing else: logs go to stderr.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import anyio
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docshelf import __version__
from docshelf.app import Service
from docshelf.config import DEFAULT_HTTP_HOST, DEFAULT_HTTP_PORT
from docshelf.errors import (
    ConfigError,
    DocshelfError,
    EmbeddingError,
    NotIndexedError,
    StoreError,
)
from docshelf.search import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    MIN_TOP_K,
    SHORT_REF,
    SHOWN_INT_DIGITS,
    Answer,
    render,
)
from docshelf.workspace import shown

if TYPE_CHECKING:
    from typing import Self

    from mcp.shared._stream_protocols import ReadStream, WriteStream

log = logging.getLogger("docshelf.mcp")

SERVER_NAME = "docs"
TOOL_NAME = "docs_search"
MCP_PATH = "/mcp"

# A docs_search call is a question and a number, a few hundred bytes. A megabyte leaves room for
# any request an MCP client sends, and stops a client from making the server hold large bodies.
MAX_REQUEST_BODY_BYTES = 1024 * 1024

# An HTTP session with no request in flight for this long ends, and its pin is released: a client
# that vanished without ending its session holds no commit back from pruning for long, and half an
# hour outlasts any pause between a model's calls. (The SDK's default, kept for its sessions too.)
SESSION_IDLE_TIMEOUT_SECONDS = 30 * 60.0

# Ended sessions are looked for this often (a quarter of the idle timeout when that is shorter):
# a pin outlives its session by a minute at most.
SESSION_SWEEP_SECONDS = 60.0

# A shorter bearer token can be guessed; `openssl rand -hex 32` makes a good one.
MIN_TOKEN_CHARS = 16

# The server asks itself this at start, in a background thread, so that the first real call does
# not wait for the model to load (seconds on a CPU) and for the current ref's vectors to be read.
WARM_UP_QUERY = "documentation"

# On shutdown the background sync gets this long to finish its step; the indexer writes a ref all
# or nothing, so one cut short leaves nothing behind.
SYNC_STOP_SECONDS = 10.0

# How long open HTTP streams get to finish when the server is stopped: an answer takes
# milliseconds, and a client's idle event stream would otherwise hold the shutdown forever.
HTTP_SHUTDOWN_SECONDS = 5

# The names of this machine that a browser may use for a server bound to a loopback address.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")

# Where the pinning middleware leaves a request's pinned commit for the tool (Starlette's
# per-request state in the ASGI scope).
_PINNED_REF = "docshelf.pinned_ref"

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "The question, or the words to look up: 'who owns checkout?', "
            "'payment gateway timeout', an error code or a flag name.",
        },
        "top_k": {
            "type": "integer",
            "minimum": MIN_TOP_K,
            "maximum": MAX_TOP_K,
            "default": DEFAULT_TOP_K,
            "description": f"How many excerpts to return, a whole number from {MIN_TOP_K} to "
            f"{MAX_TOP_K}.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

# An error result names at most this many unknown arguments (a client may send thousands).
MAX_SHOWN_UNKNOWN_ARGUMENTS = 5

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ref": {"type": "string", "description": "The commit the excerpts come from."},
        "query": {"type": "string", "description": "The query, as searched."},
        "note": {
            "type": ["string", "null"],
            "description": "Why the excerpts come from another commit than the pinned one.",
        },
        "hits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "heading": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "score": {"type": "number"},
                    "content": {"type": "string"},
                },
                "required": ["path", "heading", "start_line", "end_line", "score", "content"],
            },
        },
    },
    "required": ["ref", "query", "note", "hits"],
}


def describe(workspace: str, commit: str | None, *, pinned: bool, text_only: bool) -> str:
    """The tool's description: what the documentation covers, and when to call the tool."""
    if commit is None:
        where = "nothing of it is indexed yet"
    elif pinned:
        where = f"at commit {commit[:SHORT_REF]}, which this session is pinned to"
    else:
        where = f"at commit {commit[:SHORT_REF]}, the latest indexed"
    if text_only:
        matching = (
            "It matches words, not meaning: use the words the docs would use (names, flags, "
            "error codes), and try other words when nothing matches."
        )
    else:
        matching = (
            "It matches by meaning and by words, so ask in plain language and keep any exact "
            "names, flags or error codes in the query."
        )
    return (
        f"Search the documentation of the repository {shown(workspace)} ({where}): how its "
        "services and components work, who owns them, runbooks and on-call steps, setup, "
        "configuration, decisions and troubleshooting. Call it whenever you need what the "
        "repository's docs say, before guessing about ownership, procedures or how something "
        f"works. {matching} Returns up to top_k excerpts (default {DEFAULT_TOP_K}, at most "
        f"{MAX_TOP_K}), each with its file path, line range and section heading; cite them as "
        "path:lines."
    )


def answer_result(answer: Answer) -> CallToolResult:
    """A search's answer as the tool's result: the rendered text, and the hits as structured
    content for clients that read it."""
    structured = {
        "ref": answer.ref,
        "query": answer.query,
        "note": answer.note,
        "hits": [dataclasses.asdict(hit) for hit in answer.hits],
    }
    return CallToolResult(
        content=[TextContent(type="text", text=render(answer))], structured_content=structured
    )


def error_result(text: str) -> CallToolResult:
    """A failure the model can act on: an error result whose text says what to do next."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def failure_text(e: DocshelfError) -> str:
    """What the model reads when docs_search fails: the cause, and what to do next."""
    if isinstance(e, ConfigError | NotIndexedError):
        return str(e)  # a refused argument (with its bound), or how to index the docs
    if isinstance(e, EmbeddingError):
        part = "could not embed the query"
    elif isinstance(e, StoreError):
        part = "could not read the documentation index"
    else:
        part = "failed"
    return (
        f"docs_search {part}: {e}. Try again in a minute; if it fails again, go on without the "
        "documentation and tell the user that docs_search is failing."
    )


def unknown_arguments(arguments: Mapping[str, Any]) -> str | None:
    """The refusal of the arguments that INPUT_SCHEMA does not name, or None when there are
    none."""
    known = INPUT_SCHEMA["properties"]
    unknown = sorted(f"'{_clip(str(name))}'" for name in arguments if name not in known)
    if not unknown:
        return None
    shown_names = ", ".join(unknown[:MAX_SHOWN_UNKNOWN_ARGUMENTS])
    if len(unknown) > MAX_SHOWN_UNKNOWN_ARGUMENTS:
        shown_names += f" and {len(unknown) - MAX_SHOWN_UNKNOWN_ARGUMENTS} more"
    return (
        f"unknown argument{'s' if len(unknown) > 1 else ''} {shown_names}: docs_search takes "
        f"query (the question) and top_k (how many excerpts, {MIN_TOP_K} to {MAX_TOP_K}) only. "
        "Ask again with those"
    )


class DocsTool:
    """docs_search over one service: what tools/list and tools/call answer, for one ref."""

    def __init__(self, service: Service, *, ref: str | None = None) -> None:
        self._service = service
        self._ref = ref

    def ref_for(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The commit a request's session is pinned to (over HTTP: by its URL), else the
        server's pin, else None for the current ref."""
        request = ctx.request
        if isinstance(request, Request):
            pinned = request.scope.get("state", {}).get(_PINNED_REF)
            if isinstance(pinned, str):
                return pinned
        return self._ref

    def listing(self, ref: str | None) -> Tool:
        """The tool as tools/list shows it to a session answering from `ref`."""
        service = self._service
        commit = ref if ref is not None else service.store.current(service.workspace)
        return Tool(
            name=TOOL_NAME,
            title="Search the documentation",
            description=describe(
                service.workspace,
                commit,
                pinned=ref is not None,
                text_only=service.searcher.default_mode == "text",
            ),
            input_schema=INPUT_SCHEMA,
            output_schema=OUTPUT_SCHEMA,
            annotations=ToolAnnotations(
                title="Search the documentation",
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )

    def call(self, arguments: Mapping[str, Any], ref: str | None) -> CallToolResult:
        """One docs_search call; the arguments go to the search as they came, and an argument
        the schema does not name is refused (a misspelt top_k must not pass for the default)."""
        unknown = unknown_arguments(arguments)
        if unknown is not None:
            log.info("docs_search refused: %s", unknown)
            return error_result(unknown)
        try:
            answer = self._service.search(
                arguments.get("query"), arguments.get("top_k", DEFAULT_TOP_K), ref=ref
            )
        except DocshelfError as e:
            log.info("docs_search refused or failed: %s", e)
            return error_result(failure_text(e))
        except Exception:  # a bug: the model still gets an answer it can act on
            log.exception("docs_search failed unexpectedly")
            return error_result(
                "docs_search failed unexpectedly (the server's log has the details). Try once "
                "more; if it fails again, go on without the documentation and tell the user."
            )
        return answer_result(answer)


def build_server(service: Service, *, ref: str | None = None) -> Server[Any]:
    """The MCP server `docs` with its one tool, answering each session from its own pin, else
    from `ref` (a full commit id: the server's pin), else from the current ref."""
    tool = DocsTool(service, ref=ref)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        listed = await anyio.to_thread.run_sync(tool.listing, tool.ref_for(ctx))
        return ListToolsResult(tools=[listed])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name != TOOL_NAME:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {shown(params.name)!r}; this server has one tool, "
                f"{TOOL_NAME}",
            )
        return await anyio.to_thread.run_sync(tool.call, params.arguments or {}, tool.ref_for(ctx))

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=f"Use {TOOL_NAME} to look things up in the repository's documentation.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def pin_ref(service: Service, rev: str) -> tuple[str, Callable[[], None]]:
    """`rev` resolved to a commit, pinned in the store when the service has the source (so that
    prunes keep it), and the call that releases the pin.

    Raises:
        WorkspaceError: `rev` names no commit.
        StoreError: the pin could not be recorded.
    """
    commit = service.resolve(rev)
    assert commit is not None
    if service.indexer is None:
        return commit, _nothing
    return commit, service.indexer.pin(commit)


def _nothing() -> None:
    pass


# -- HTTP ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """Where `docshelf serve --http` listens and whom it answers."""

    host: str = DEFAULT_HTTP_HOST
    port: int = DEFAULT_HTTP_PORT
    token: str | None = field(default=None, repr=False)
    allow_origins: tuple[str, ...] = ()
    allow_remote: bool = False
    session_idle_timeout: float = SESSION_IDLE_TIMEOUT_SECONDS


def check_http_options(options: HttpOptions) -> HttpOptions:
    """The options, with each allowed origin normalised.

    Raises:
        ConfigError: a token too short to be safe, an origin that is not scheme://host[:port],
            or a host other than this machine without a token or allow_remote.
    """
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


def _clip(text: str) -> str:
    text = shown(text)
    return text if len(text) <= 80 else text[:77] + "..."


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
            log.warning("refused a request from origin %s", _clip(origin))
            refusal = PlainTextResponse(
                f"origin {_clip(origin)} may not use this server: only pages of this machine "
                "may. To allow it, start docshelf serve with --allow-origin ORIGIN\n",
                status_code=403,
            )
        elif self._hosts is not None and _host_name(headers.get("host")) not in self._hosts:
            log.warning("refused a request for host %s", _clip(headers.get("host") or ""))
            refusal = PlainTextResponse(
                "this server answers for this machine's names only (localhost, 127.0.0.1, "
                "[::1]) and the hosts of --allow-origin\n",
                status_code=421,
            )
        elif self._token is not None and not _bearer_matches(
            headers.get("authorization"), self._token
        ):
            refusal = PlainTextResponse(
                "missing or wrong token: send the header 'Authorization: Bearer <token>' with "
                "the token docshelf serve was started with\n",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="docshelf"'},
            )
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._app(scope, receive, send)


@dataclass(eq=False)
class _Pin:
    """A session's pinned commit, and what releases it."""

    commit: str
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
        pin: Callable[[str], tuple[str, Callable[[], None]]],
        idle_timeout: float,
    ) -> None:
        self._app = app
        self._pin = pin
        self._idle_timeout = idle_timeout
        self._sessions: dict[str, _Pin] = {}
        self._sessionless: dict[str, _Pin] = {}

    @property
    def pinned(self) -> list[str]:
        """The commits pinned now, one entry per session (or sessionless ref)."""
        return sorted(p.commit for p in [*self._sessions.values(), *self._sessionless.values()])

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
        rev = _query_ref(scope)
        if rev is None:
            await self._app(scope, receive, send)
            return
        version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
        sessionless = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
        pin = self._sessionless.get(rev) if sessionless else None
        if pin is None:
            try:
                commit, release = await anyio.to_thread.run_sync(self._pin, rev)
            except DocshelfError as e:
                log.warning("refused a session pinned to %s: %s", _clip(rev), e)
                refusal = PlainTextResponse(
                    f"cannot pin this session to {_clip(rev)}: {e}. Connect to {MCP_PATH}?ref=REV "
                    f"with a commit, branch or tag of the repository, or to {MCP_PATH} for the "
                    "latest indexed commit\n",
                    status_code=400,
                )
                await refusal(scope, receive, send)
                return
            pin = _Pin(commit, release)
            if sessionless:
                held = self._sessionless.setdefault(rev, pin)
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
                log.info("session %s… pinned to %s", new_session[:8], pin.commit[:SHORT_REF])

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
        scope["state"] = {**scope.get("state", {}), _PINNED_REF: pin.commit}
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
                        log.info("released the pin of %s: idle", pin.commit[:SHORT_REF])
                        await anyio.to_thread.run_sync(pin.release)

    async def release_all(self) -> None:
        pins = [*self._sessions.values(), *self._sessionless.values()]
        self._sessions.clear()
        self._sessionless.clear()
        for pin in pins:
            await anyio.to_thread.run_sync(pin.release)


def _query_ref(scope: Scope) -> str | None:
    query = scope.get("query_string", b"").decode("latin-1")
    values = parse_qs(query).get("ref")
    return values[0] if values else None


@dataclass
class HttpApp:
    """The ASGI application of `docshelf serve --http`, and its session pins (for tests)."""

    app: ASGIApp
    pins: _SessionPins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def build_http_app(service: Service, options: HttpOptions, *, ref: str | None = None) -> HttpApp:
    """docs_search on streamable HTTP at /mcp, behind the guard; `options` checked by
    check_http_options, with the port the server is bound to (the allowed origins name it)."""
    server = build_server(service, ref=ref)
    manager = StreamableHTTPSessionManager(
        app=server,
        # The guard below checks Origin and Host with the bound port and --allow-origin.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=options.session_idle_timeout,
        max_request_body_size=MAX_REQUEST_BODY_BYTES,
    )
    pins = _SessionPins(
        StreamableHTTPASGIApp(manager),
        lambda rev: pin_ref(service, rev),
        options.session_idle_timeout,
    )
    url = f"http://{_url_host(options.host)}:{options.port}{MCP_PATH}"

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(pins.sweep_forever)
            log.info("serving %s of %s at %s", TOOL_NAME, shown(service.workspace), url)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
        await pins.release_all()

    starlette = Starlette(routes=[Route(MCP_PATH, endpoint=pins)], lifespan=lifespan)
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


# -- serving ---------------------------------------------------------------------------------


class _Background:
    """The server's background threads: a warm-up at start, and the periodic sync."""

    def __init__(self, service: Service, sync_interval: float | None) -> None:
        self._service = service
        self._interval = sync_interval
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
            self._service.searcher.search(WARM_UP_QUERY, 1)
        except DocshelfError as e:
            log.warning("%s", e)
            return
        log.info("ready: the first search took %.1f s", time.perf_counter() - started)

    def _sync_forever(self) -> None:
        assert self._interval is not None
        while not self._stop.is_set():
            try:
                result = self._service.sync()
            except Exception:  # the loop must outlive a bug in one step
                log.exception("syncing %s", shown(self._service.workspace))
                result = None
            if result is not None and not result.already_indexed:
                log.info(
                    "indexed %s: %d chunks (%d embedded, %d reused) in %.1f s",
                    result.ref[:SHORT_REF],
                    result.chunks,
                    result.embedded,
                    result.reused,
                    result.seconds,
                )
            self._stop.wait(self._interval)


def serve(
    service: Service,
    *,
    ref: str | None = None,
    http: HttpOptions | None = None,
    sync_interval: float | None = None,
) -> None:
    """Serve docs_search until stdin closes (stdio) or the process is stopped (HTTP, or a
    signal). `ref` pins the stdio session, or over HTTP every session without its own pin.

    Raises:
        ConfigError: the HTTP options are refused or the address cannot be bound, or there is
            nothing to sync.
        WorkspaceError: `ref` names no commit.
        StoreError: the pin could not be recorded.
    """
    if sync_interval is not None and service.source is None:
        raise ConfigError("--sync-interval needs the repository to sync: give SOURCE")
    sock = None
    if http is not None:
        http = check_http_options(http)
        sock = listen(http.host, http.port)
        http = dataclasses.replace(http, port=sock.getsockname()[1])
    release = _nothing
    try:
        commit = None
        if ref is not None:
            commit, release = pin_ref(service, ref)
            log.info("pinned to %s (%s)", commit[:SHORT_REF], shown(ref))
        background = _Background(service, sync_interval)
        try:
            if http is None or sock is None:
                server = build_server(service, ref=commit)
                anyio.run(_serve_stdio, server, background.start, release)
            else:
                background.start()
                _serve_http(build_http_app(service, http, ref=commit), sock)
        finally:
            background.stop()
    finally:
        release()
        if sock is not None:
            sock.close()


async def _serve_stdio(
    server: Server[Any], started: Callable[[], None], release: Callable[[], None]
) -> None:
    """Serve one session on stdin and stdout until stdin closes, or SIGTERM or SIGINT.
    `started` runs once the transport holds stdout (whatever else writes to it then lands on
    stderr), so a library's stray print cannot corrupt the protocol."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_exit_on_signal, release)
        async with stdio_server() as (read, write):
            started()
            reads = _AnsweringUnreadable(read, write)
            await server.run(reads, write, server.create_initialization_options())
        tasks.cancel_scope.cancel()


class _AnsweringUnreadable:
    """stdio's read stream, answering each line the SDK could not read (not JSON, not a JSON-RPC
    message, a lone surrogate escape or a number too long for Python) with a JSON-RPC error. The
    SDK drops such a line, so its client would wait for an answer to that request for ever."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._write = write

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            error = unreadable_error(item)
            log.info("answered an unreadable message: %s", error.error.message)
            await self._write.send(SessionMessage(error))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def unreadable_error(error: Exception) -> JSONRPCError:
    """The JSON-RPC error that answers a line the SDK's stdio transport could not read: a parse
    error, for the request's id when the line is JSON to Python's more lenient parser; else an
    invalid request (a batch, another jsonrpc version, no method), which has no id to answer."""
    details = error.errors() if isinstance(error, ValidationError) else []
    first = details[0] if details else None
    if first is not None and first["type"] == "json_invalid" and isinstance(first["input"], str):
        return JSONRPCError(
            jsonrpc="2.0",
            id=_request_id(first["input"]),
            error=ErrorData(
                code=PARSE_ERROR,
                message=f"Parse error: {first['msg']}. Send each message as one line of JSON "
                "(UTF-8, no unpaired surrogate escapes such as \\ud800)",
            ),
        )
    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(
            code=INVALID_REQUEST,
            message='Invalid request: send one JSON-RPC 2.0 object a line, with jsonrpc "2.0" '
            "and a method (batches are not supported)",
        ),
    )


def _request_id(line: str) -> str | int | None:
    try:
        message = json.loads(line, parse_int=_small_int)
    except (ValueError, RecursionError):
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and request_id is not True else None


def _small_int(digits: str) -> int:
    # Python refuses to read ints of over 4,300 digits; no request id is one.
    return int(digits) if len(digits) <= SHOWN_INT_DIGITS else 0


async def _exit_on_signal(release: Callable[[], None]) -> None:
    """On SIGTERM or SIGINT, release the session's pin and exit at once: the thread that reads
    stdin cannot be interrupted, and nothing else needs an orderly end (a ref is written all or
    nothing, and the store's connections close with the process)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            log.info("stopping on %s", signal.Signals(received).name)
            await anyio.to_thread.run_sync(release)
            logging.shutdown()
            os._exit(0)


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

    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="docshelf-http", daemon=True
    )
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        thread.start()
        # An untimed join: a signal still runs its handler here, and a join polled with a timeout
        # held every search with the model up to the next poll (about 500 ms a call measured
        # with a 0.5 s poll, 20 ms without; bench/serve.py).
        thread.join()
    finally:
        for received, handler in previous.items():
            signal.signal(received, handler)
