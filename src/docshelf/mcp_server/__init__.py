"""The MCP server `docs`: one tool, docs_search, over the service app.py builds, spoken on stdio or
on streamable HTTP at /mcp.

Constraints:
- A thin adapter: search.py validates, ranks and renders. This package turns an answer into a tool
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
- Talks to app.Service only, never to its store, indexer, searcher or source.
- Imports point down: tool.py <- session_pins.py <- http.py <- serve.py, and stdio.py <-
  serve.py; this file only re-exports.

Files: tool.py (the tool contract and build_server), http.py (the options, the guard, the ASGI
app, the listener), session_pins.py (per-session pins from `/mcp?ref=REV`), stdio.py (the stdio
session, answering unreadable lines), serve.py (the background warm-up and sync, and serve()).
"""

from __future__ import annotations

from docshelf.mcp_server.http import (
    HTTP_SHUTDOWN_SECONDS,
    LOOPBACK_NAMES,
    MAX_REQUEST_BODY_BYTES,
    MIN_TOKEN_CHARS,
    SESSION_IDLE_TIMEOUT_SECONDS,
    HttpApp,
    HttpOptions,
    build_http_app,
    check_http_options,
    is_loopback,
    listen,
    normal_origin,
)
from docshelf.mcp_server.serve import (
    SYNC_STOP_SECONDS,
    WARM_UP_QUERY,
    serve,
)
from docshelf.mcp_server.session_pins import (
    SESSION_SWEEP_SECONDS,
)
from docshelf.mcp_server.stdio import (
    unreadable_error,
)
from docshelf.mcp_server.tool import (
    INPUT_SCHEMA,
    MAX_SHOWN_UNKNOWN_ARGUMENTS,
    MCP_PATH,
    OUTPUT_SCHEMA,
    SERVER_NAME,
    TOOL_NAME,
    DocsTool,
    answer_result,
    build_server,
    describe,
    error_result,
    failure_text,
    unknown_arguments,
)

__all__ = [
    "HTTP_SHUTDOWN_SECONDS",
    "INPUT_SCHEMA",
    "LOOPBACK_NAMES",
    "MAX_REQUEST_BODY_BYTES",
    "MAX_SHOWN_UNKNOWN_ARGUMENTS",
    "MCP_PATH",
    "MIN_TOKEN_CHARS",
    "OUTPUT_SCHEMA",
    "SERVER_NAME",
    "SESSION_IDLE_TIMEOUT_SECONDS",
    "SESSION_SWEEP_SECONDS",
    "SYNC_STOP_SECONDS",
    "TOOL_NAME",
    "WARM_UP_QUERY",
    "DocsTool",
    "HttpApp",
    "HttpOptions",
    "answer_result",
    "build_http_app",
    "build_server",
    "check_http_options",
    "describe",
    "error_result",
    "failure_text",
    "is_loopback",
    "listen",
    "normal_origin",
    "serve",
    "unknown_arguments",
    "unreadable_error",
]
