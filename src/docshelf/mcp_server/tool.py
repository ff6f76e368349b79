"""The tool contract: the server `docs`, its tools docs_search, docs_read and docs_outline (their
names, schemas and descriptions), and how an answer or a failure becomes a tool result.

Constraints:
- A thin adapter: app.Service validates, ranks, reads and renders. An answer becomes the rendered
  text and the same data as structured content; each failure the model can act on (a refused
  argument, an argument the schema does not name, a path that was not indexed, the embedder, the
  store, an empty index) becomes an error result whose text says what to do next. An unknown
  tool is a protocol error.
- Built on the SDK's low-level Server, not MCPServer: the arguments must reach the Service's
  checks raw (no pydantic coercion, no JSON parsed out of strings).
- With several workspaces, each tool's schema lists them as an enum, and each answer names them.
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
from docshelf.app import DocsOutline, Pins, Reading, Service, WorkspaceOverview
from docshelf.errors import ConfigError, DocshelfError, EmbeddingError, NotIndexedError, StoreError
from docshelf.mcp_server.schemas import (
    INPUT_SCHEMA,
    OUTLINE_OUTPUT_SCHEMA,
    OUTLINE_SCHEMA,
    OUTPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
    READ_SCHEMA,
    with_workspaces,
)
from docshelf.reading import (
    READ_MAX_BYTES,
    READ_MAX_LINES,
    outline_data,
    reading_data,
    render_outline,
    render_overview,
    render_reading,
)
from docshelf.search import DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K, SHORT_REF, Answer, render
from docshelf.workspace import shown

log = logging.getLogger("docshelf.mcp")

SERVER_NAME = "docs"
TOOL_NAME = "docs_search"
READ_TOOL = "docs_read"
OUTLINE_TOOL = "docs_outline"
TOOL_NAMES = (TOOL_NAME, READ_TOOL, OUTLINE_TOOL)
# Where the server answers over HTTP (session_pins.py pins `/mcp?ref=REV`).
MCP_PATH = "/mcp"

# Where the pinning middleware leaves a request's pins for the tools (Starlette's per-request
# state in the ASGI scope): a commit, or a commit per workspace.
PINNED_REF = "docshelf.pinned_ref"

# An error result names at most this many unknown arguments (a client may send thousands).
MAX_SHOWN_UNKNOWN_ARGUMENTS = 5

_SCHEMAS = {TOOL_NAME: INPUT_SCHEMA, READ_TOOL: READ_SCHEMA, OUTLINE_TOOL: OUTLINE_SCHEMA}
_OUTPUTS = {
    TOOL_NAME: OUTPUT_SCHEMA,
    READ_TOOL: READ_OUTPUT_SCHEMA,
    OUTLINE_TOOL: OUTLINE_OUTPUT_SCHEMA,
}
_TITLES = {
    TOOL_NAME: "Search the documentation",
    READ_TOOL: "Read a documentation file",
    OUTLINE_TOOL: "Outline the documentation",
}


def describe(workspace: str, commit: str | None, *, pinned: bool, text_only: bool) -> str:
    """docs_search's description: what the documentation covers, and when to call the tool."""
    return _search_words(f"the repository {shown(workspace)} ({_at(commit, pinned)})", text_only)


def describe_several(commits: dict[str, tuple[str | None, bool]], *, text_only: bool) -> str:
    """docs_search's description for several workspaces (each with its commit and whether it
    is pinned)."""
    listed = "; ".join(f"{name} ({_at(c, p)})" for name, (c, p) in commits.items())
    return _search_words(f"the repositories {listed}", text_only) + (
        " Without workspace, every repository is searched and the excerpts are ranked "
        "together; each names its workspace."
    )


def _at(commit: str | None, pinned: bool) -> str:
    if commit is None:
        return "nothing of it is indexed yet"
    if pinned:
        return f"at commit {commit[:SHORT_REF]}, which this session is pinned to"
    return f"at commit {commit[:SHORT_REF]}, the latest indexed"


def _search_words(what: str, text_only: bool) -> str:
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
        f"Search the documentation of {what}: how its "
        "services and components work, who owns them, runbooks and on-call steps, setup, "
        "configuration, decisions and troubleshooting. Call it whenever you need what the "
        "repository's docs say, before guessing about ownership, procedures or how something "
        f"works. {matching} Returns up to top_k excerpts (default {DEFAULT_TOP_K}, at most "
        f"{MAX_TOP_K}), each with its file path, line range and section heading; cite them as "
        "path:lines. Give path to search one folder or file pattern only. Then read around an "
        f"excerpt with {READ_TOOL}."
    )


def describe_read(where: str) -> str:
    return (
        f"Read the lines of one documentation file of {where}, exactly as that commit holds "
        "them, numbered as docs_search's excerpts cite them. Use it after docs_search, to read "
        "around an excerpt (start_line a little before its lines) or the rest of its section, "
        f"and to follow a link to another doc. One call gives at most {READ_MAX_LINES} lines "
        f"or {READ_MAX_BYTES} bytes; the answer says the start_line to read on from. Only "
        f"indexed docs can be read: a path that is not one is refused with the closest that "
        f"are ({OUTLINE_TOOL} lists them)."
    )


def describe_outline(where: str, several: bool) -> str:
    overview = (
        " Without workspace or path it lists each repository, its commit and its top-level folders."
        if several
        else ""
    )
    return (
        f"Outline the documentation of {where}: its files, each with its headings and their "
        "line ranges, under path (a folder, a file or a glob) or all. Use it to see how the "
        "docs are organised and to find where a topic lives when docs_search's words miss, "
        f"then read a section with {READ_TOOL} (its line range). One answer is bounded like "
        f"{READ_TOOL}'s; a cut one names narrower paths to ask for." + overview
    )


def answer_result(answer: Answer) -> CallToolResult:
    """A search's answer as the tool's result: the rendered text, and the hits as structured
    content for clients that read it."""
    structured: dict[str, Any] = {
        "ref": answer.ref or None,
        "query": answer.query,
        "note": answer.note,
        "hits": [dataclasses.asdict(hit) for hit in answer.hits],
    }
    if answer.refs:
        structured["refs"] = dict(answer.refs)
    return CallToolResult(
        content=[TextContent(type="text", text=render(answer))], structured_content=structured
    )


def read_result(reading: Reading, label: str | None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=render_reading(reading, label))],
        structured_content=reading_data(reading),
    )


def outline_result(
    outline: DocsOutline | list[WorkspaceOverview], label: str | None
) -> CallToolResult:
    text = render_overview(outline) if isinstance(outline, list) else render_outline(outline, label)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=outline_data(outline)
    )


def error_result(text: str) -> CallToolResult:
    """A failure the model can act on: an error result whose text says what to do next."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def failure_text(e: DocshelfError, tool: str = TOOL_NAME) -> str:
    """What the model reads when a tool fails: the cause, and what to do next."""
    if isinstance(e, ConfigError | NotIndexedError):
        return str(e)  # a refused argument (with its bound), or how to index the docs
    if isinstance(e, EmbeddingError):
        part = "could not embed the query"
    elif isinstance(e, StoreError):
        part = "could not read the documentation index"
    else:
        part = "failed"
    return (
        f"{tool} {part}: {e}. Try again in a minute; if it fails again, go on without the "
        f"documentation and tell the user that {tool} is failing."
    )


def unknown_arguments(
    arguments: Mapping[str, Any], tool: str = TOOL_NAME, schema: dict[str, Any] | None = None
) -> str | None:
    """The refusal of the arguments that the tool's schema does not name, or None when there
    are none."""
    known = (schema or _SCHEMAS[tool])["properties"]
    unknown = sorted(f"'{clip(str(name))}'" for name in arguments if name not in known)
    if not unknown:
        return None
    shown_names = ", ".join(unknown[:MAX_SHOWN_UNKNOWN_ARGUMENTS])
    if len(unknown) > MAX_SHOWN_UNKNOWN_ARGUMENTS:
        shown_names += f" and {len(unknown) - MAX_SHOWN_UNKNOWN_ARGUMENTS} more"
    words = {**_ARGUMENT_WORDS, **_TOOL_ARGUMENT_WORDS.get(tool, {})}
    names = [f"{name} ({words[name]})" if name in words else name for name in known]
    takes = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (
        f"unknown argument{'s' if len(unknown) > 1 else ''} {shown_names}: {tool} takes "
        f"{takes} only. Ask again with those"
    )


_ARGUMENT_WORDS = {
    "query": "the question",
    "top_k": f"how many excerpts, {MIN_TOP_K} to {MAX_TOP_K}",
    "path": "a folder, file or glob of the docs",
    "workspace": "which repository",
    "start_line": "the first line",
    "end_line": "the last line",
}
_TOOL_ARGUMENT_WORDS = {READ_TOOL: {"path": "the file to read"}}


def clip(text: str) -> str:
    """`text` as logs and answers show a client's input: escaped, and cut at 80 characters."""
    text = shown(text)
    return text if len(text) <= 80 else text[:77] + "..."


class DocsTool:
    """The tools over one service: what tools/list and tools/call answer, for one session's
    pins."""

    def __init__(self, service: Service, *, ref: Pins = None) -> None:
        self._service = service
        self._ref = ref

    def ref_for(self, ctx: ServerRequestContext[Any, Any]) -> Pins:
        """The pins of a request's session (over HTTP: by its URL), over the server's (with
        several workspaces, a session's pin of one workspace leaves the server's others), else
        None for the current refs."""
        request = ctx.request
        if isinstance(request, Request):
            pinned = request.scope.get("state", {}).get(PINNED_REF)
            if isinstance(pinned, str):
                return pinned
            if isinstance(pinned, dict):
                base = self._ref if isinstance(self._ref, dict) else {}
                return {**base, **pinned}
        return self._ref

    def _commit(self, label: str, ref: Pins) -> tuple[str | None, bool]:
        pinned = ref if isinstance(ref, str) else (ref or {}).get(label)
        if pinned is not None:
            return pinned, True
        return self._service.current(label), False

    def listing(self, ref: Pins) -> list[Tool]:
        """The tools as tools/list shows them to a session answering from `ref`."""
        service = self._service
        labels = service.labels
        if service.several:
            commits = {label: self._commit(label, ref) for label in labels}
            search = describe_several(commits, text_only=service.text_only)
            where = "the repositories " + ", ".join(
                f"{label} ({_at(c, p)})" for label, (c, p) in commits.items()
            )
        else:
            commit, pinned = self._commit(labels[0], ref)
            search = describe(service.workspace, commit, pinned=pinned, text_only=service.text_only)
            where = f"the repository {shown(service.workspace)} ({_at(commit, pinned)})"
        descriptions = {
            TOOL_NAME: search,
            READ_TOOL: describe_read(where),
            OUTLINE_TOOL: describe_outline(where, service.several),
        }
        return [
            Tool(
                name=name,
                title=_TITLES[name],
                description=descriptions[name],
                input_schema=with_workspaces(_SCHEMAS[name], labels),
                output_schema=_OUTPUTS[name],
                annotations=ToolAnnotations(
                    title=_TITLES[name],
                    read_only_hint=True,
                    destructive_hint=False,
                    idempotent_hint=True,
                    open_world_hint=False,
                ),
            )
            for name in TOOL_NAMES
        ]

    def call(
        self, arguments: Mapping[str, Any], ref: Pins, tool: str = TOOL_NAME
    ) -> CallToolResult:
        """One tool call; the arguments go to the service as they came, and an argument the
        schema does not name is refused (a misspelt top_k must not pass for the default)."""
        service = self._service
        schema = with_workspaces(_SCHEMAS[tool], service.labels)
        unknown = unknown_arguments(arguments, tool, schema)
        if unknown is not None:
            log.info("%s refused: %s", tool, unknown)
            return error_result(unknown)
        label = arguments.get("workspace") if service.several else None
        try:
            if tool == TOOL_NAME:
                answer = service.search(
                    arguments.get("query"),
                    arguments.get("top_k", DEFAULT_TOP_K),
                    ref=ref,
                    path=arguments.get("path"),
                    workspace=label,
                )
                return answer_result(answer)
            if tool == READ_TOOL:
                reading = service.read(
                    arguments.get("path"),
                    arguments.get("start_line"),
                    arguments.get("end_line"),
                    ref=ref,
                    workspace=label if service.several else None,
                )
                return read_result(reading, reading.workspace if service.several else None)
            outline = service.outline(arguments.get("path"), ref=ref, workspace=label)
            shown_label = (
                outline.workspace if service.several and isinstance(outline, DocsOutline) else None
            )
            return outline_result(outline, shown_label)
        except DocshelfError as e:
            log.info("%s refused or failed: %s", tool, e)
            return error_result(failure_text(e, tool))
        except Exception:  # a bug: the model still gets an answer it can act on
            log.exception("%s failed unexpectedly", tool)
            return error_result(
                f"{tool} failed unexpectedly (the server's log has the details). Try once "
                "more; if it fails again, go on without the documentation and tell the user."
            )


def build_server(service: Service, *, ref: Pins = None) -> Server[Any]:
    """The MCP server `docs` with its tools, answering each session from its own pins, else
    from `ref` (the server's pins: a full commit id, or one per workspace), else from the
    current refs."""
    tool = DocsTool(service, ref=ref)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        listed = await anyio.to_thread.run_sync(tool.listing, tool.ref_for(ctx))
        return ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name not in TOOL_NAMES:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {shown(params.name)!r}; this server has the tools "
                f"{', '.join(TOOL_NAMES)}",
            )
        arguments = params.arguments or {}
        return await anyio.to_thread.run_sync(tool.call, arguments, tool.ref_for(ctx), params.name)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=f"Use {TOOL_NAME} to look things up in the repository's documentation, "
        f"{READ_TOOL} to read around what it finds, {OUTLINE_TOOL} to see how the docs are "
        "organised.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
