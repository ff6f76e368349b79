"""The MCP server `docs`: the tools docs_search, docs_read and docs_outline over the service app
builds (one workspace or several), spoken on stdio or on streamable HTTP at /mcp.

Constraints:
- A thin adapter: app.Service validates, ranks and reads; present.py renders. This package turns
  an answer into a tool result (the rendered text, and the same data as structured content) and each
  failure the model can act on (a refused argument, an argument the schema does not name, a path
  that is not an indexed doc, the embedder, the store, an empty index) into an error result
  whose text says what to do next. An unknown tool is a protocol error, not an error result:
  the call could not be attempted at all, and nothing in it is the model's to fix.
- Built on the SDK's low-level Server, not MCPServer: MCPServer validates the arguments with
  pydantic first (its messages, and JSON inside strings parsed) and answers an unknown tool with
  an error result, while docs_search's arguments must reach check_query and check_top_k raw.
- The ref a call answers from: its session's pin, else the server's (--ref), else the current
  ref, which moves as syncs land; with several workspaces, each has its own. A pin is resolved
  to a commit when its session starts and held in the store (through the indexer, when the
  server has the source) until the session ends or idles out, so no prune removes it meanwhile.
- Indexing never happens per session or per query: only the background sync indexes.
- Searches run in worker threads: the model and the stores block.
- Over HTTP every request passes the guard first (the Origin allow-list and, on a loopback bind,
  the Host: DNS rebinding; then the bearer token), then the body size limit.
- stdout carries the stdio protocol and nothing else: logs go to stderr.
- Talks to app.Service only, never to its store, indexer, searcher or source.
- Imports point down: schemas.py <- tool.py <- session_pins.py <- http.py <- serve.py, and
  stdio.py <- serve.py; this file only re-exports.

Files: schemas.py (the tools' input and output schemas), tool.py (the tool contract and
build_server), http.py (the options, the guard, the ASGI
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
from docshelf.mcp_server.schemas import (
    INPUT_SCHEMA,
    OUTLINE_OUTPUT_SCHEMA,
    OUTLINE_SCHEMA,
    OUTPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
    READ_SCHEMA,
    with_workspaces,
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
    MAX_SHOWN_UNKNOWN_ARGUMENTS,
    MCP_PATH,
    OUTLINE_TOOL,
    READ_TOOL,
    SERVER_NAME,
    TOOL_NAME,
    TOOL_NAMES,
    DocsTool,
    answer_result,
    build_server,
    describe,
    error_result,
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
    "OUTLINE_OUTPUT_SCHEMA",
    "OUTLINE_SCHEMA",
    "OUTLINE_TOOL",
    "OUTPUT_SCHEMA",
    "READ_OUTPUT_SCHEMA",
    "READ_SCHEMA",
    "READ_TOOL",
    "SERVER_NAME",
    "SESSION_IDLE_TIMEOUT_SECONDS",
    "SESSION_SWEEP_SECONDS",
    "SYNC_STOP_SECONDS",
    "TOOL_NAME",
    "TOOL_NAMES",
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
    "is_loopback",
    "listen",
    "normal_origin",
    "serve",
    "unknown_arguments",
    "unreadable_error",
    "with_workspaces",
]
