"""What the user sees, once for every face: each face's words for the arguments and commands it
names, the text of an answer, a reading, an outline, an index run and the status, their JSON
shapes, and the text of a failure. The command line, the MCP tools and the web API call these;
they choose a face and a format, and build no output of their own.

Constraints:
- Each face speaks its own language: the command line names `-k` and `docshelf outline`, the
  MCP tools `top_k` and `docs_outline`, the web API `k` and `/api/outline`. A message names an
  argument or a command by its term (errors.term), and the face's words say it here, so a
  refusal is written once and said in each face's words.
- One JSON shape per thing for every face: an answer, a reading, an outline, a status.
- Every text that comes from a client or a repository and goes into a line is escaped
  (shown.shown, shown.clip); the docs' own text goes out as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from docshelf.answers import answer_data, fit_answer, render_answer
from docshelf.config import READ_MAX_BYTES, READ_MAX_LINES
from docshelf.errors import (
    TERMS,
    ConfigError,
    DocshelfError,
    EmbeddingError,
    NotIndexedError,
    StoreError,
    said,
    term,
)
from docshelf.present.status import STATUS_LISTED, ServerView, render_status, status_data
from docshelf.reading import (
    OVERVIEW_PAGE,
    DocsOutline,
    Reading,
    WorkspaceOverview,
    WorkspacesPage,
    outline_file_lines,
)
from docshelf.shown import (
    SHORT_REF,
    SHOWN_INT_DIGITS,
    clip,
    plural,
    short_ref,
    shown,
    shown_value,
)
from docshelf.workspace import Layout
from docshelf.workspace.redaction import redact_url

if TYPE_CHECKING:
    from docshelf.app import IndexResult
    from docshelf.app.manifest import ManifestOutcome

__all__ = [
    "CLI",
    "MCP",
    "SHORT_REF",
    "SHOWN_INT_DIGITS",
    "STATUS_LISTED",
    "WEB",
    "Face",
    "ServerView",
    "answer_data",
    "clip",
    "describe_docs",
    "failure_text",
    "fit_answer",
    "http_status",
    "index_data",
    "manifest_data",
    "outline_data",
    "plural",
    "reading_data",
    "render_answer",
    "render_index",
    "render_manifest_outcome",
    "render_manifest_summary",
    "render_outline",
    "render_reading",
    "render_status",
    "short_ref",
    "shown",
    "shown_value",
    "status_data",
]

FaceName = Literal["cli", "mcp", "web"]


@dataclass(frozen=True, slots=True)
class Face:
    """A face's words: `words` for each term (errors.TERMS), `read_on` the call that reads a file
    on from a line ({path}, {line}), `narrow` the call that outlines a narrower path ({path}),
    and `retry` what it says after a failure it cannot fix for the caller."""

    name: FaceName
    words: Mapping[str, str]
    read_on: str
    narrow: str
    retry: str

    def say(self, text: str) -> str:
        """`text` (with terms) in this face's words."""
        return said(text, self.words)


CLI = Face(
    "cli",
    {
        "query": "QUERY",
        "top_k": "-k",
        "per_file": "--per-file",
        "max_tokens": "--max-tokens",
        "mode": "--mode",
        "path": "PATH",
        "search_path": "--path",
        "workspace": "--workspace",
        "start_line": "START",
        "end_line": "END",
        "page": "--page",
        "docs_search": "docshelf search",
        "docs_read": "docshelf read",
        "docs_outline": "docshelf outline",
    },
    read_on="docshelf read {path}:{line}",
    narrow="docshelf outline {path}",
    retry="Try again in a minute",
)
MCP = Face(
    "mcp",
    {
        "query": "query",
        "top_k": "top_k",
        "per_file": "per_file",
        "max_tokens": "max_tokens",
        "mode": "mode",
        "path": "path",
        "search_path": "path",
        "workspace": "workspace",
        "start_line": "start_line",
        "end_line": "end_line",
        "page": "page",
        "docs_search": "docs_search",
        "docs_read": "docs_read",
        "docs_outline": "docs_outline",
    },
    read_on="start_line={line}",
    narrow="path={path}",
    retry="Try again in a minute; if it fails again, go on without the documentation and tell "
    "the user that {tool} is failing",
)
WEB = Face(
    "web",
    {
        "query": "q",
        "top_k": "k",
        "per_file": "per_file",
        "max_tokens": "max_tokens",
        "mode": "mode",
        "path": "path",
        "search_path": "path",
        "workspace": "workspace",
        "start_line": "start",
        "end_line": "end",
        "page": "page",
        "docs_search": "/api/search",
        "docs_read": "/api/read",
        "docs_outline": "/api/outline",
    },
    read_on="start={line}",
    narrow="path={path}",
    retry="Try again in a minute; the server's log has the details",
)
FACES = (CLI, MCP, WEB)
assert all(set(face.words) == set(TERMS) for face in FACES)


# -- failures ---------------------------------------------------------------------------------


def failure_text(e: DocshelfError, face: Face, call: str) -> str:
    """What a face says when `call` (the tool or endpoint, as the face names it) fails: a refused
    argument (with its bound) or how to index the docs as they are; any other failure with what
    it could not do and what to do next."""
    message = e.said(face.words)
    if isinstance(e, ConfigError | NotIndexedError):
        return message
    if isinstance(e, EmbeddingError):
        part = "could not embed the query"
    elif isinstance(e, StoreError):
        part = "could not read the documentation index"
    else:
        part = "failed"
    return f"{call} {part}: {message}. {face.retry.format(tool=call)}."


def http_status(e: DocshelfError) -> int:
    """The HTTP status of a failure: the caller's mistake 400, nothing indexed 404, the model or
    the store 503."""
    if isinstance(e, ConfigError):
        return 400
    if isinstance(e, NotIndexedError):
        return 404
    if isinstance(e, EmbeddingError | StoreError):
        return 503
    return 500


# -- answers ----------------------------------------------------------------------------------


# -- reading and outlines ---------------------------------------------------------------------


def render_reading(reading: Reading, face: Face, label: str | None = None) -> str:
    """A reading as text: a header naming the path, range, total lines and commit, the
    numbered lines, then how to read on."""
    out = []
    if reading.note:
        out += [reading.note, ""]
    where = f" of workspace {label}" if label else ""
    if reading.total_lines == 0:
        header = f"{reading.path}{where} at commit {short_ref(reading.ref)} is empty (0 lines)"
    else:
        header = (
            f"{reading.path}{where}, lines {reading.start_line}-{reading.end_line} of "
            f"{reading.total_lines}, at commit {short_ref(reading.ref)}"
        )
    out.append(header)
    width = len(str(reading.end_line))
    for number, line in enumerate(reading.lines, start=reading.start_line):
        out.append(f"{number:>{width}}  {line}")
    if reading.next_start_line is not None:
        why = f"cut at {reading.cut}; " if reading.cut else ""
        read_on = face.read_on.format(path=reading.path, line=reading.next_start_line)
        out += ["", f"[{why}the file goes on: read on with {read_on}]"]
    return "\n".join(out) + "\n"


def reading_data(reading: Reading) -> dict[str, Any]:
    """A reading as JSON (docs_read's structured content, /api/read, `docshelf read --json`)."""
    return {
        "workspace": reading.workspace,
        "ref": reading.ref,
        "path": reading.path,
        "start_line": reading.start_line,
        "end_line": reading.end_line,
        "total_lines": reading.total_lines,
        "text": "\n".join(reading.lines),
        "next_start_line": reading.next_start_line,
        "note": reading.note,
    }


def render_outline(
    outline: DocsOutline | WorkspacesPage, face: Face, label: str | None = None
) -> str:
    """An outline as text: a header, each file with its line count, each heading indented by
    depth with its line range, then how to see the rest when it was cut. The workspaces'
    overview: each with its commit and its top-level folders."""
    if not isinstance(outline, DocsOutline):
        return _render_overview(outline, face)
    out = []
    if outline.note:
        out += [outline.note, ""]
    where = f" of workspace {label}" if label else ""
    under = f" under {outline.path}" if outline.path else ""
    shown_count = len(outline.files)
    count = (
        plural(outline.total_files, "file")
        if shown_count == outline.total_files
        else f"{shown_count} of {outline.total_files} files"
    )
    out.append(f"The docs{where}{under} at commit {short_ref(outline.ref)}: {count}")
    for file in outline.files:
        out.extend(outline_file_lines(file))
    if outline.cut or shown_count < outline.total_files:
        out.append("")
        cut = f"[cut at {READ_MAX_LINES} lines or {READ_MAX_BYTES} bytes"
        if outline.narrower:
            named = ", ".join(
                f"{face.narrow.format(path=p)} ({plural(n, 'file')})" for p, n in outline.narrower
            )
            out.append(f"{cut}; see less at once with {named}]")
        elif shown_count == 1 and outline.total_files == 1:
            last = outline.files[0].headings[-1].end_line if outline.files[0].headings else 0
            out.append(
                f"{cut}: the first headings of {outline.files[0].path} only; read on from line "
                f"{last + 1} with {face.say(term('docs_read'))}]"
            )
        else:
            out.append(f"{cut}; name one file as {face.say(term('path'))} to see all its headings]")
    return "\n".join(out) + "\n"


def _render_overview(page: WorkspacesPage, face: Face) -> str:
    workspace = face.say(term("workspace"))
    views = page.views
    if page.pages > 1:
        first = (page.page - 1) * OVERVIEW_PAGE + 1
        shown_range = f"{first}-{first + len(views) - 1}"
        out = [
            f"{page.total} workspaces, {shown_range} shown (page {page.page} of {page.pages}); "
            f"name one as {workspace} to see its docs"
            + (
                f", or ask for {face.say(term('page'))} {page.page + 1} for more:"
                if page.page < page.pages
                else ":"
            )
        ]
    else:
        out = [f"{page.total} workspaces; name one as {workspace} to see its docs:"]
    for view in views:
        if view.ref is None:
            out += ["", f"{view.workspace}: nothing indexed yet"]
            continue
        files = plural(view.files, "file")
        out += ["", f"{view.workspace} at commit {short_ref(view.ref)}: {files}"]
        out += [f"  {folder} ({plural(n, 'file')})" for folder, n in view.folders]
    return "\n".join(out) + "\n"


def outline_data(outline: DocsOutline | WorkspacesPage) -> dict[str, Any]:
    """An outline (or a page of the workspaces' overview) as JSON (docs_outline's structured
    content, /api/outline, `docshelf outline --json`)."""
    if not isinstance(outline, DocsOutline):
        return {
            "workspaces": [
                {
                    "workspace": view.workspace,
                    "ref": view.ref,
                    "files": view.files,
                    "folders": [{"path": p, "files": n} for p, n in view.folders],
                }
                for view in outline.views
            ],
            "total_workspaces": outline.total,
            "page": outline.page,
            "pages": outline.pages,
        }
    return {
        "workspace": outline.workspace,
        "ref": outline.ref,
        "path": outline.path,
        "total_files": outline.total_files,
        "files": [
            {"path": f.path, "lines": f.lines, "headings": [h._asdict() for h in f.headings]}
            for f in outline.files
        ],
        "narrower": [{"path": p, "files": n} for p, n in outline.narrower],
        "note": outline.note,
        "cut": outline.cut,
    }


# The names of the kinds of docs (chunking.Kind), as a description names them.
KIND_NAMES = {
    "markdown": "Markdown",
    "mdx": "MDX",
    "rst": "reStructuredText",
    "asciidoc": "AsciiDoc",
    "text": "plain text",
}

# How many top-level folders a description of the docs names.
DESCRIBED_FOLDERS = 6


def describe_docs(view: WorkspaceOverview) -> str:
    """What a workspace's indexed docs are, in a phrase: how many, of which kinds, in which
    top-level folders ("42 docs (Markdown, MDX) in docs/ (30), guides/ (12)")."""
    if view.ref is None:
        return "nothing of it is indexed yet"
    kinds = ", ".join(KIND_NAMES.get(kind, kind) for kind in view.kinds)
    folders = ", ".join(
        f"{shown(folder)} ({n})" for folder, n in view.folders[:DESCRIBED_FOLDERS] if folder != "."
    )
    more = len(view.folders) - DESCRIBED_FOLDERS
    if more > 0:
        folders += f" and {plural(more, 'more folder')}"
    return (
        plural(view.files, "doc")
        + (f" ({kinds})" if kinds else "")
        + (f" in {folders}" if folders else "")
    )


# -- indexing ---------------------------------------------------------------------------------


def render_index(r: IndexResult) -> str:
    """`docshelf index`'s report: what was indexed (or that it already was), the docs roots,
    what the globs left out and what was skipped, and what the prune did."""
    name, ref = shown(r.workspace), short_ref(r.ref)
    if r.already_indexed:
        lines = [f"{ref} of {name} was already indexed ({r.chunks} chunks); it is current"]
    else:
        lines = [
            f"indexed {ref} of {name}: {plural(r.files or 0, 'file')}, {plural(r.chunks, 'chunk')} "
            f"({r.embedded} embedded, {r.reused} reused) in {r.seconds:.1f} s"
        ]
    if r.layout is not None and r.layout.roots:
        lines += _layout_lines(r.layout)
    elif r.roots:
        lines.append(f"docs: {', '.join(shown(root) for root in r.roots)}")
    if r.excluded:
        lines.append(f"left out by --include/--exclude: {plural(r.excluded, 'file')}")
    if r.skipped:
        lines.append(f"skipped {len(r.skipped)}:")
        lines.extend(f"  {shown(s.path)}: {s.reason}" for s in r.skipped)
    if r.pruned:
        lines.append(f"pruned {plural(r.pruned, 'older ref')}")
    if r.prune_error:
        lines.append(f"warning: pruning failed ({r.prune_error}); the old refs cost disk only")
    return "\n".join(lines) + "\n"


# How many top folders the whole-tree reading lists by name before it counts the rest.
SHOWN_FOLDERS = 8


def _layout_lines(layout: Layout) -> list[str]:
    """Where the docs were found: "docs: website/docs (Docusaurus; not read: ...)", a line per
    config that could not be read, and when the whole tree was read, what each top folder gave
    and what the folders that are never docs left out."""
    lines = [f"docs: {shown(layout.describe())}"]
    lines += [f"note: {shown(note)}" for note in layout.notes]
    if layout.folders:
        named = ", ".join(
            f"{shown(folder)} {count}" for folder, count in layout.folders[:SHOWN_FOLDERS]
        )
        more = len(layout.folders) - SHOWN_FOLDERS
        if more > 0:
            named += f" and {plural(more, 'more folder')}"
        lines.append(
            f"no docs folder or site config found: read the whole tree ({named}); name the "
            "docs with --docs DIR"
        )
    if layout.left_out:
        lines.append(
            f"left out {plural(layout.left_out, 'file')} in vendored, build, test and hidden "
            "folders"
        )
    return lines


def index_data(r: IndexResult) -> dict[str, Any]:
    return {
        "workspace": r.workspace,
        "ref": r.ref,
        "files": r.files,
        "skipped": [{"path": s.path, "reason": s.reason} for s in r.skipped],
        "chunks": r.chunks,
        "embedded": r.embedded,
        "reused": r.reused,
        "seconds": round(r.seconds, 3),
        "already_indexed": r.already_indexed,
        "pruned": r.pruned,
        "prune_error": r.prune_error,
        "roots": list(r.roots),
        "docs": (r.layout or Layout(r.roots)).data(),
        "excluded": r.excluded,
    }


def render_manifest_outcome(o: ManifestOutcome) -> str:
    """One workspace of `docshelf index --manifest`: its report, or what stopped it."""
    if o.result is not None:
        return render_index(o.result)
    return f"failed: {o.entry.label}: {o.error}\n"


def render_manifest_summary(outcomes: Sequence[ManifestOutcome]) -> str:
    """The last line of `docshelf index --manifest`: how many workspaces did what."""
    done = [o.result for o in outcomes if o.result is not None]
    already = sum(r.already_indexed for r in done)
    failed = [o for o in outcomes if o.error is not None]
    line = (
        f"manifest: {plural(len(outcomes), 'workspace')}: {len(done) - already} indexed, "
        f"{already} already indexed, {len(failed)} failed"
    )
    if failed:
        line += " (" + ", ".join(o.entry.label for o in failed) + ")"
    return line + "\n"


def manifest_data(outcomes: Sequence[ManifestOutcome]) -> dict[str, Any]:
    return {
        "workspaces": [
            {"source": redact_url(o.entry.source), "name": o.entry.name, "ref": o.entry.ref}
            | (
                {"result": index_data(o.result), "error": None}
                if o.result is not None
                else {"result": None, "error": o.error}
            )
            for o in outcomes
        ],
        "failed": sum(o.error is not None for o in outcomes),
    }
