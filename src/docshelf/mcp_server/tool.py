"""The tool contract: the server `docs`, its tools docs_search, docs_read and docs_outline (their
names, schemas and descriptions), and how an answer or a failure becomes a tool result.

Constraints:
- A thin adapter: app.Service validates, ranks and reads; present.py renders, in the tools' own
  words (top_k, docs_outline). An answer becomes the rendered text and the same data as
  structured content; each failure the model can act on (a refused
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
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
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
from docshelf.app import (
    DEFAULT_TOP_K,
    MAX_MAX_TOKENS,
    MAX_TOP_K,
    MIN_MAX_TOKENS,
    MIN_TOP_K,
    READ_MAX_BYTES,
    READ_MAX_LINES,
    TOKENS_PER_EXCERPT,
    Answer,
    DocsOutline,
    Hit,
    Pins,
    Reading,
    Service,
    WorkspaceOverview,
    WorkspacesPage,
    check_max_tokens,
)
from docshelf.errors import ConfigError, DocshelfError
from docshelf.mcp_server.schemas import (
    INPUT_SCHEMA,
    OUTLINE_OUTPUT_SCHEMA,
    OUTLINE_SCHEMA,
    OUTPUT_SCHEMA,
    READ_OUTPUT_SCHEMA,
    READ_SCHEMA,
    with_workspaces,
)
from docshelf.present import (
    MCP,
    answer_data,
    clip,
    describe_docs,
    failure_text,
    fit_answer,
    outline_data,
    reading_data,
    render_answer,
    render_outline,
    render_reading,
    short_ref,
    shown,
    shown_value,
)

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

# How many workspaces a tool's description names; the rest are counted, and docs_outline lists
# them page by page.
DESCRIBED_WORKSPACES = 10

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


def describe(view: WorkspaceOverview, name: str, *, pinned: bool, text_only: bool) -> str:
    """docs_search's description: what is served (the repository, its commit, its docs), and
    when to call the tool."""
    return _search_words(f"the repository {shown(name)} ({_at(view, pinned)})", text_only)


def describe_several(
    views: list[WorkspaceOverview], pinned: set[str], *, text_only: bool, total: int = 0
) -> str:
    """docs_search's description for several workspaces (each with its commit, whether it is
    pinned, and its docs): the first DESCRIBED_WORKSPACES of `total`, then how many more."""
    return _search_words(_several(views, pinned, total), text_only) + (
        " Without workspace, every repository is searched and the excerpts are ranked "
        "together; each names its workspace."
    )


def _several(views: list[WorkspaceOverview], pinned: set[str], total: int) -> str:
    shown_views = views[:DESCRIBED_WORKSPACES]
    listed = "; ".join(f"{v.workspace} ({_at(v, v.workspace in pinned)})" for v in shown_views)
    more = max(total, len(views)) - len(shown_views)
    if more > 0:
        listed += f"; and {more} more ({OUTLINE_TOOL} without a path lists them all, page by page)"
    return f"the repositories {listed}"


def _at(view: WorkspaceOverview, pinned: bool) -> str:
    if view.ref is None:
        return "nothing of it is indexed yet"
    docs = describe_docs(view)
    if pinned:
        return f"at commit {short_ref(view.ref)}, which this session is pinned to: {docs}"
    return f"at commit {short_ref(view.ref)}, the latest indexed: {docs}"


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
        f"Search the documentation of {what}. Call it whenever you need what the repository's "
        "docs say, before guessing how something works, is set up or is done. "
        f"{matching} Returns up to top_k excerpts (default {DEFAULT_TOP_K}, at most "
        f"{MAX_TOP_K}), each with its file path, line range and section heading; cite them as "
        f"path:lines. The answer keeps within max_tokens (default {TOKENS_PER_EXCERPT} per "
        "excerpt asked for; UTF-8 bytes / 4): past it, excerpts keep their citation and lose "
        "their text. A passage this "
        "session was shown earlier comes back as its citation only (repeat: true shows it "
        "again). "
        "Neighbouring passages of a file are joined; per_file 1 gives top_k different files. "
        "An excerpt that says more passages of "
        f"its file matched is worth reading whole with {READ_TOOL}. Give path to search one "
        f"folder or file pattern only. Then read around an excerpt with {READ_TOOL}."
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
    return CallToolResult(
        content=[TextContent(type="text", text=render_answer(answer))],
        structured_content=answer_data(answer),
    )


def read_result(reading: Reading, label: str | None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=render_reading(reading, MCP, label))],
        structured_content=reading_data(reading),
    )


def outline_result(outline: DocsOutline | WorkspacesPage, label: str | None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=render_outline(outline, MCP, label))],
        structured_content=outline_data(outline),
    )


def error_result(text: str) -> CallToolResult:
    """A failure the model can act on: an error result whose text says what to do next."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


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
    noun = "argument" if len(unknown) == 1 else "arguments"
    return f"unknown {noun} {shown_names}: {tool} takes {takes} only. Ask again with those"


_ARGUMENT_WORDS = {
    "query": "the question",
    "top_k": f"how many excerpts, {MIN_TOP_K} to {MAX_TOP_K}",
    "per_file": "at most so many excerpts of one file, 1 to top_k",
    "max_tokens": f"the most tokens the answer may take, {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS}",
    "repeat": "true to see again what this session was shown",
    "path": "a folder, file or glob of the docs",
    "workspace": "which repository",
    "page": "which page of the workspaces, from 1",
    "start_line": "the first line",
    "end_line": "the last line",
}
_TOOL_ARGUMENT_WORDS = {READ_TOOL: {"path": "the file to read"}}


def _pinned_view(view: WorkspaceOverview, ref: Pins, label: str) -> WorkspaceOverview:
    """The view named by the commit a session is pinned to."""
    pinned = ref if isinstance(ref, str) else (ref or {}).get(label)
    return view if pinned is None else dataclasses.replace(view, ref=pinned)


# A session remembers at most so many passages (a stdio session lasts as long as its process).
MAX_REMEMBERED_PASSAGES = 10_000


class Shown:
    """The passages one MCP session was shown (by workspace, commit and path: their line
    ranges), so that a later answer gives a passage it holds as its citation only. A new commit's
    passage is a new passage. Calls of one session may run at once: a lock keeps it whole."""

    def __init__(self) -> None:
        self._ranges: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
        self._count = 0  # ranges held, all files
        self._lock = threading.Lock()

    def hide_repeats(self, answer: Answer) -> Answer:
        """`answer` with each excerpt this session was shown whole given as its citation."""
        with self._lock:
            hits = [
                dataclasses.replace(hit, content="", repeated=True)
                if any(
                    a <= hit.start_line and hit.end_line <= b for a, b in self._seen(answer, hit)
                )
                else hit
                for hit in answer.hits
            ]
        return dataclasses.replace(answer, hits=hits)

    def remember(self, answer: Answer) -> None:
        """Keep the excerpts of `answer` whose text it shows (a range already held once)."""
        with self._lock:
            for hit in answer.hits:
                if hit.cut or hit.repeated:
                    continue
                ranges = self._seen(answer, hit)
                if not any(a <= hit.start_line and hit.end_line <= b for a, b in ranges):
                    ranges.append((hit.start_line, hit.end_line))
                    self._count += 1
            while self._count > MAX_REMEMBERED_PASSAGES:  # the oldest file's go first
                oldest = next(iter(self._ranges))
                self._count -= len(self._ranges.pop(oldest))

    def _seen(self, answer: Answer, hit: Hit) -> list[tuple[int, int]]:
        key = (hit.workspace or answer.workspace, hit.ref or answer.ref, hit.path)
        return self._ranges.setdefault(key, [])


def check_repeat(repeat: object) -> bool:
    """docs_search's `repeat`: true or false (false when absent).

    Raises:
        ConfigError: anything else.
    """
    if repeat is None or isinstance(repeat, bool):
        return bool(repeat)
    raise ConfigError(
        f"repeat must be true or false; got {shown_value(repeat)}. Ask again with repeat: true "
        "to see passages shown earlier in this session, or without it"
    )


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

    def listing(self, ref: Pins) -> list[Tool]:
        """The tools as tools/list shows them to a session answering from `ref`: each says
        which repositories it serves, at which commits, and what their docs are."""
        service = self._service
        labels = service.labels
        # The first page only: a description names a few workspaces, however many are served.
        views = service.overview(ref).views
        pinned = {
            label
            for label in labels
            if (ref if isinstance(ref, str) else (ref or {}).get(label)) is not None
        }
        # A pinned commit that is not indexed is still the one named: the answers say so.
        views = [
            v if v.workspace not in pinned else _pinned_view(v, ref, v.workspace) for v in views
        ]
        if service.several:
            search = describe_several(views, pinned, text_only=service.text_only, total=len(labels))
            where = _several(views, pinned, len(labels))
        else:
            view = views[0]
            search = describe(
                view, service.workspace, pinned=bool(pinned), text_only=service.text_only
            )
            where = f"the repository {shown(service.workspace)} ({_at(view, bool(pinned))})"
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
        self,
        arguments: Mapping[str, Any],
        ref: Pins,
        tool: str = TOOL_NAME,
        seen: Shown | None = None,
    ) -> CallToolResult:
        """One tool call; the arguments go to the service as they came, and an argument the
        schema does not name is refused (a misspelt top_k must not pass for the default).
        `seen`: what the call's session was shown, when it has one."""
        service = self._service
        schema = with_workspaces(_SCHEMAS[tool], service.labels)
        unknown = unknown_arguments(arguments, tool, schema)
        if unknown is not None:
            log.info("%s refused: %s", tool, unknown)
            return error_result(unknown)
        label = arguments.get("workspace") if service.several else None
        try:
            if tool == TOOL_NAME:
                budget = check_max_tokens(
                    arguments.get("max_tokens"), arguments.get("top_k", DEFAULT_TOP_K)
                )
                repeat = check_repeat(arguments.get("repeat"))
                answer = service.search(
                    arguments.get("query"),
                    arguments.get("top_k", DEFAULT_TOP_K),
                    ref=ref,
                    path=arguments.get("path"),
                    workspace=label,
                    per_file=arguments.get("per_file"),
                )
                if seen is None:
                    return answer_result(fit_answer(answer, budget))
                fitted = fit_answer(answer if repeat else seen.hide_repeats(answer), budget)
                seen.remember(fitted)
                return answer_result(fitted)
            if tool == READ_TOOL:
                reading = service.read(
                    arguments.get("path"),
                    arguments.get("start_line"),
                    arguments.get("end_line"),
                    ref=ref,
                    workspace=label if service.several else None,
                )
                return read_result(reading, reading.workspace if service.several else None)
            outline = service.outline(
                arguments.get("path"), ref=ref, workspace=label, page=arguments.get("page")
            )
            shown_label = (
                outline.workspace if service.several and isinstance(outline, DocsOutline) else None
            )
            return outline_result(outline, shown_label)
        except DocshelfError as e:
            log.info("%s refused or failed: %s", tool, e)
            return error_result(failure_text(e, MCP, tool))
        except Exception:  # a bug: the model still gets an answer it can act on
            log.exception("%s failed unexpectedly", tool)
            return error_result(
                f"{tool} failed unexpectedly (the server's log has the details). Try once "
                "more; if it fails again, go on without the documentation and tell the user."
            )


# An HTTP server remembers what so many sessions were shown, the most recently used (an idle
# session ends after --session-idle-timeout; its memory goes when newer ones push it out).
MAX_REMEMBERED_SESSIONS = 1_000


class _Sessions:
    """What each session was shown. A session is: the process's one client (stdio), an HTTP
    request's MCP session (its Mcp-Session-Id), or the SDK's connection of a request made in
    process. A request of the protocol without sessions (no id) has no memory."""

    def __init__(self, one_session: bool) -> None:
        self._only = Shown() if one_session else None
        self._by_id: OrderedDict[str, Shown] = OrderedDict()
        self._by_connection: weakref.WeakKeyDictionary[object, Shown] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, ctx: ServerRequestContext[Any, Any]) -> Shown | None:
        if self._only is not None:
            return self._only
        with self._lock:
            request = ctx.request
            if isinstance(request, Request):
                session_id = request.headers.get(MCP_SESSION_ID_HEADER)
                if not session_id:
                    return None
                found = self._by_id.pop(session_id, None) or Shown()
                self._by_id[session_id] = found
                while len(self._by_id) > MAX_REMEMBERED_SESSIONS:
                    self._by_id.popitem(last=False)
                return found
            # In process: the SDK's connection object (not public API) is the session's.
            connection = getattr(ctx.session, "_connection", None)
            if connection is None:
                return None
            if connection not in self._by_connection:
                self._by_connection[connection] = Shown()
            return self._by_connection[connection]


def build_server(service: Service, *, ref: Pins = None, one_session: bool = False) -> Server[Any]:
    """The MCP server `docs` with its tools, answering each session from its own pins, else
    from `ref` (the server's pins: a full commit id, or one per workspace), else from the
    current refs. `one_session`: every call is the one client's (stdio), which remembers what it
    was shown."""
    tool = DocsTool(service, ref=ref)
    sessions = _Sessions(one_session)

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
        return await anyio.to_thread.run_sync(
            tool.call, arguments, tool.ref_for(ctx), params.name, sessions.of(ctx)
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=f"Use {TOOL_NAME} to look things up in the repository's documentation, "
        f"{READ_TOOL} to read around what it finds, {OUTLINE_TOOL} to see how the docs are "
        "organised.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
