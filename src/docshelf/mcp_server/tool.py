"""The tool contract: the server `docs`, its one tool docs_search (its name, schemas and
description), and how an answer or a failure becomes a tool result.

Constraints:
- A thin adapter: search.py validates, ranks and renders. An answer becomes the rendered text and
  the same hits as structured content; each failure the model can act on (a refused query or
  top_k, an argument the schema does not name, the embedder, the store, an empty index) becomes
  an error result whose text says what to do next. An unknown tool is a protocol error.
- Built on the SDK's low-level Server, not MCPServer: docs_search's arguments must reach
  check_query and check_top_k raw.
- The tool talks to app.Service only, and runs in worker threads: the model and the stores block.
- Knows no transport: over HTTP a session's pin reaches it through the request's state.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from starlette.requests import Request

from docshelf import __version__
from docshelf.app import Service
from docshelf.errors import ConfigError, DocshelfError, EmbeddingError, NotIndexedError, StoreError
from docshelf.search import DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K, SHORT_REF, Answer, render
from docshelf.workspace import shown

log = logging.getLogger("docshelf.mcp")

SERVER_NAME = "docs"
TOOL_NAME = "docs_search"
# Where the server answers over HTTP (session_pins.py pins `/mcp?ref=REV`).
MCP_PATH = "/mcp"

# Where the pinning middleware leaves a request's pinned commit for the tool (Starlette's
# per-request state in the ASGI scope).
PINNED_REF = "docshelf.pinned_ref"

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
    unknown = sorted(f"'{clip(str(name))}'" for name in arguments if name not in known)
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


def clip(text: str) -> str:
    """`text` as logs and answers show a client's input: escaped, and cut at 80 characters."""
    text = shown(text)
    return text if len(text) <= 80 else text[:77] + "..."


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
            pinned = request.scope.get("state", {}).get(PINNED_REF)
            if isinstance(pinned, str):
                return pinned
        return self._ref

    def listing(self, ref: str | None) -> Tool:
        """The tool as tools/list shows it to a session answering from `ref`."""
        service = self._service
        commit = ref if ref is not None else service.current()
        return Tool(
            name=TOOL_NAME,
            title="Search the documentation",
            description=describe(
                service.workspace,
                commit,
                pinned=ref is not None,
                text_only=service.text_only,
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
