"""The web page of `docshelf serve --http`: its static files (package data, served from the
installed package) at `/` and `/static/`, and the small JSON API under `/api/` that it reads.

Constraints:
- The API is app.Service's search, read, outline and status, the same calls as the MCP tools:
  the same ranking, the same checks of every argument, the same pins (a server's --ref).
- Every name a request gives (a parameter, a path, a workspace) is checked by the Service; an
  unknown or repeated parameter is refused, not ignored. Only GET (and HEAD) is answered.
- The page's files are a fixed set read from the package at start: a request names one of them
  or gets 404, so no request reaches any other file.
- Security headers (a strict Content-Security-Policy, nosniff, no referrer) are set by the guard
  in mcp_server/http.py on every response, which also checks Host, Origin, token and body size.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from importlib.resources import files
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from docshelf import __version__
from docshelf.app import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    MIN_TOP_K,
    DocsOutline,
    Pins,
    Service,
    check_max_tokens,
)
from docshelf.errors import DocshelfError
from docshelf.present import (
    WEB,
    ServerView,
    answer_data,
    clip,
    failure_text,
    fit_answer,
    http_status,
    outline_data,
    reading_data,
    status_data,
)

log = logging.getLogger("docshelf.web")

PAGE_PATH = "/"
STATIC_PREFIX = "/static/"
API_PREFIX = "/api/"

# The page's files and their media types; nothing else under /static/ exists.
STATIC_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}

# The parameters each endpoint takes; any other is refused, naming these.
API_PARAMETERS = {
    "search": ("q", "k", "per_file", "max_tokens", "path", "workspace"),
    "read": ("path", "start", "end", "workspace"),
    "outline": ("path", "workspace", "page"),
    "status": (),
}

# A parameter value longer than this is refused before it reaches the Service: a query is a
# sentence and a path a few hundred bytes, and the Service bounds each again more tightly.
MAX_PARAMETER_CHARS = 4096

# The data changes as syncs land, and a token-guarded answer must not linger in a cache.
NO_STORE = {"Cache-Control": "no-store"}

# A page whose own files are the only script, style and connection it may use: no inline script,
# nothing from another host, no framing, no form posted anywhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


def is_public(path: str) -> bool:
    """Whether a request path is the page or one of its files: they hold no docs, so they are
    served without the token (the page then asks for it)."""
    return path == PAGE_PATH or (
        path.startswith(STATIC_PREFIX) and path[len(STATIC_PREFIX) :] in STATIC_FILES
    )


class _RefusedError(Exception):
    """A request the API refuses before calling the Service (400)."""


def web_routes(
    service: Service,
    *,
    ref: Pins = None,
    session_pins: Callable[[], list[str]] = list,
    sync_interval: float | None = None,
) -> list[BaseRoute]:
    """The page, its files and its API over `service`, answering from the server's pins `ref`
    (else the current refs); `session_pins` lists the MCP sessions' pins for the status, and
    `sync_interval` is how often the server syncs (None: never)."""
    static = files(__package__).joinpath("static")
    page = static.joinpath("index.html").read_bytes()
    assets = {name: static.joinpath(name).read_bytes() for name in STATIC_FILES}

    async def index(_: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=NO_STORE)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return Response("no such file\n", status_code=404, media_type="text/plain")
        return Response(
            assets[name], media_type=STATIC_FILES[name], headers={"Cache-Control": "no-cache"}
        )

    def api(name: str, answer: Callable[[dict[str, str], list[str]], dict[str, Any]]) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                params = _params(request, name)
                # The sessions' pins are read here, on the event loop that changes them.
                data = await anyio.to_thread.run_sync(answer, params, session_pins())
                return JSONResponse(data, headers=NO_STORE)
            except _RefusedError as e:
                return _error(400, str(e))
            except DocshelfError as e:
                log.info("%s%s refused or failed: %s", API_PREFIX, name, e)
                return _error(http_status(e), failure_text(e, WEB, f"{API_PREFIX}{name}"))
            except Exception:  # a bug: the page still gets an answer it can show
                log.exception("%s%s failed unexpectedly", API_PREFIX, name)
                return _error(500, "the request failed unexpectedly; the server's log says why")

        return Route(f"{API_PREFIX}{name}", endpoint, methods=["GET"], name=f"api-{name}")

    def workspace_of(params: Mapping[str, str]) -> str | None:
        label = params.get("workspace") or None
        if label is not None and not service.several:
            service.served_as(label)  # refuses a name that is not the one served
            return None
        return label

    def search(params: dict[str, str], _: list[str]) -> dict[str, Any]:
        budget = check_max_tokens(
            _number(params, "max_tokens", None), _number(params, "k", DEFAULT_TOP_K)
        )
        answer = service.search(
            params.get("q", ""),
            _number(params, "k", DEFAULT_TOP_K),
            ref=ref,
            path=params.get("path") or None,
            workspace=workspace_of(params),
            per_file=_number(params, "per_file", None),
        )
        return answer_data(fit_answer(answer, budget))

    def read(params: dict[str, str], _: list[str]) -> dict[str, Any]:
        reading = service.read(
            params.get("path"),
            _number(params, "start", None),
            _number(params, "end", None),
            ref=ref,
            workspace=workspace_of(params),
        )
        return reading_data(reading)

    def outline(params: dict[str, str], _: list[str]) -> dict[str, Any]:
        found = service.outline(
            params.get("path") or None,
            ref=ref,
            workspace=workspace_of(params),
            page=_number(params, "page", None),
        )
        data = outline_data(found)
        if not isinstance(found, DocsOutline):
            data["overview"] = True
        return data

    def status(_: dict[str, str], sessions: list[str]) -> dict[str, Any]:
        server_pins = {service.labels[0]: ref} if isinstance(ref, str) else dict(ref or {})
        server = ServerView(
            __version__,
            service.several,
            server_pins,
            sessions,
            sync_interval,
            {"min": MIN_TOP_K, "max": MAX_TOP_K, "default": DEFAULT_TOP_K},
        )
        return status_data(service.status(), server)

    return [
        Route(PAGE_PATH, index, methods=["GET"], name="page"),
        Route(STATIC_PREFIX + "{name:str}", asset, methods=["GET"], name="static"),
        api("search", search),
        api("read", read),
        api("outline", outline),
        api("status", status),
    ]


def _params(request: Request, name: str) -> dict[str, str]:
    """The request's query parameters, each known to the endpoint, given once and bounded."""
    allowed = API_PARAMETERS[name]
    got: dict[str, str] = {}
    for key, value in request.query_params.multi_items():
        if key not in allowed:
            takes = ", ".join(allowed) if allowed else "no parameters"
            raise _RefusedError(
                f"unknown parameter {clip(key)!r}: {API_PREFIX}{name} takes {takes}"
            )
        if key in got:
            raise _RefusedError(f"parameter {key} is given twice; give it once")
        if len(value) > MAX_PARAMETER_CHARS:
            raise _RefusedError(
                f"parameter {key} is {len(value)} characters; at most {MAX_PARAMETER_CHARS}"
            )
        got[key] = value
    return got


def _number(params: Mapping[str, str], key: str, default: int | None) -> int | None:
    value = params.get(key, "")
    if value == "":
        return default
    digits = value[1:] if value.startswith("-") else value
    if not value.isascii() or not digits.isdigit():
        raise _RefusedError(f"parameter {key} must be a whole number; got {clip(value)!r}")
    return int(value)  # its bound is the service's to say (-1 is refused naming it)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=NO_STORE)
