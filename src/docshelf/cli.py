"""The command line: a thin adapter over the package app/.

Start-up stays fast: nothing heavy is imported here, and the embedding model loads on the first
embedding, never for `--help` or `chunk` (a test checks that torch and numpy stay out).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from docshelf import __version__
from docshelf.app import (
    DEFAULT_TOP_K,
    MAX_MAX_TOKENS,
    MAX_TOP_K,
    MIN_MAX_TOKENS,
    MIN_TOP_K,
    MODES,
    OVERVIEW_PAGE,
    TOKENS_PER_EXCERPT,
    ChunkedFile,
    ChunkerChoice,
    DocsOutline,
    check_max_tokens,
    check_read_store,
    chunk_paths,
    configured_embedder,
    index_source,
    open_reader,
    open_service,
    prune_store,
    search_answer,
    store_status,
)
from docshelf.app.manifest import (
    DEFAULT_JOBS,
    MAX_JOBS,
    ManifestOutcome,
    index_manifest,
    open_manifest_service,
    read_manifest,
)
from docshelf.config import (
    DEFAULT_EF_SEARCH,
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    EMBEDDERS,
    PRECISIONS,
    Config,
    default_mirror_dir,
    default_store_location,
)
from docshelf.errors import DocshelfError
from docshelf.present import (
    CLI,
    STATUS_LISTED,
    answer_data,
    fit_answer,
    index_data,
    manifest_data,
    outline_data,
    plural,
    reading_data,
    render_answer,
    render_index,
    render_manifest_outcome,
    render_manifest_summary,
    render_outline,
    render_reading,
    render_status,
    short_ref,
    shown,
    status_data,
)
from docshelf.progress import ProgressBar, ProgressEvents

# Widest heading shown in the `chunk` table before it is cut with an ellipsis.
TABLE_HEADING_WIDTH = 48

# `docshelf index --progress`: auto is the bar on a terminal (unless --json), else nothing.
PROGRESS_MODES = ("auto", "bar", "json", "none")

# Where an OpenAI-compatible endpoint's key is read from, first match wins. Never a flag: a key
# on the command line ends up in shell history and process listings.
API_KEY_VARIABLES = ("DOCSHELF_OPENAI_API_KEY", "OPENAI_API_KEY")

# The options of `docshelf serve` that mean something over HTTP only, by parameter name.
HTTP_ONLY_OPTIONS = {
    "host": "--host",
    "port": "--port",
    "token": "--token",
    "allow_origins": "--allow-origin",
    "allow_remote": "--allow-remote",
    "open_page": "--open",
}

F = TypeVar("F", bound=Callable[..., Any])


# --mirror-dir, for every command that opens a clone URL.
mirror_dir_option = click.option(
    "--mirror-dir",
    metavar="DIR",
    envvar="DOCSHELF_MIRROR_DIR",
    help=f"Where clone URLs are mirrored. Default: {default_mirror_dir()} "
    "[env: DOCSHELF_MIRROR_DIR]",
)


def store_options(f: F) -> F:
    """--store and --ef-search, shared by every command that opens the store."""
    f = click.option(
        "--ef-search",
        type=click.IntRange(1, 1000),
        default=DEFAULT_EF_SEARCH,
        show_default=True,
        envvar="DOCSHELF_EF_SEARCH",
        help="PostgreSQL only: hnsw.ef_search, the HNSW candidate list. Higher finds more of the "
        "true nearest chunks, slower. [env: DOCSHELF_EF_SEARCH]",
    )(f)
    return click.option(
        "--store",
        metavar="PATH|URL",
        envvar="DOCSHELF_STORE",
        help="A SQLite file, or postgresql://user:pass@host/db for PostgreSQL + pgvector. "
        f"Default: {default_store_location()} [env: DOCSHELF_STORE]",
    )(f)


def embedder_options(f: F) -> F:
    """--embedder, --model, --base-url, --dimensions, --batch-size and --precision, shared by
    every command that embeds."""
    for option in reversed(
        [
            click.option(
                "--embedder",
                type=click.Choice(EMBEDDERS),
                default="local",
                show_default=True,
                envvar="DOCSHELF_EMBEDDER",
                help="local: a sentence-transformers model on this machine. openai: an "
                "OpenAI-compatible /v1/embeddings endpoint, key from DOCSHELF_OPENAI_API_KEY or "
                "OPENAI_API_KEY. none: full-text search only. [env: DOCSHELF_EMBEDDER]",
            ),
            click.option(
                "--model",
                metavar="NAME|PATH",
                envvar="DOCSHELF_MODEL",
                help="local: a sentence-transformers model name or folder (default: the packaged "
                "all-MiniLM-L6-v2, offline). openai: the endpoint's model (default: "
                "text-embedding-3-small). [env: DOCSHELF_MODEL]",
            ),
            click.option(
                "--base-url",
                metavar="URL",
                envvar="DOCSHELF_BASE_URL",
                help="openai: the API base, e.g. http://localhost:11434/v1 for Ollama (default: "
                "https://api.openai.com/v1). [env: DOCSHELF_BASE_URL]",
            ),
            click.option(
                "--dimensions",
                type=click.IntRange(1),
                envvar="DOCSHELF_DIMENSIONS",
                help="openai: ask the endpoint for vectors of this width (models that support "
                "it). [env: DOCSHELF_DIMENSIONS]",
            ),
            click.option(
                "--batch-size",
                type=click.IntRange(1),
                envvar="DOCSHELF_BATCH_SIZE",
                help="Texts per model call (local, default 32) or per request (openai, at most "
                "and by default 64). [env: DOCSHELF_BATCH_SIZE]",
            ),
            click.option(
                "--precision",
                type=click.Choice(PRECISIONS),
                envvar="DOCSHELF_PRECISION",
                help="local: the arithmetic of indexing batches. auto (default): bfloat16 on a "
                "CPU with bfloat16 instructions, float16 on a CUDA GPU, each only if its vectors "
                "stay within 0.999 cosine of float32's; float32 otherwise. Queries are always "
                "float32. [env: DOCSHELF_PRECISION]",
            ),
        ]
    ):
        f = option(f)
    return f


def make_config(**options: Any) -> Config:
    """One Config from the command's options and the environment's API key."""
    settings = {k: v for k, v in options.items() if v is not None}
    api_key = next((os.environ[v] for v in API_KEY_VARIABLES if os.environ.get(v)), None)
    return Config(api_key=api_key, **settings)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="docshelf")
def cli() -> None:
    """docshelf: make a repository's documentation (Markdown, MDX, reStructuredText, AsciiDoc
    and text) answerable by meaning."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--chunker",
    type=click.Choice(["auto", "markdown", "mdx", "rst", "asciidoc", "paragraph"]),
    default="auto",
    show_default=True,
    help="auto: by suffix (.md, .mdx, .rst, .adoc, ...), and for .txt by content "
    "(reStructuredText, else paragraphs). Any other: that chunker for every file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of chunks.")
def chunk(paths: tuple[Path, ...], chunker: ChunkerChoice, as_json: bool) -> None:
    """Show how files are cut into chunks, the pieces a search retrieves.

    Each PATH is a file or a directory (every documentation file below it: .md, .markdown,
    .mdx, .rst, .rest, .adoc, .asciidoc, .asc, .txt; with paths relative to that directory).
    """
    results = chunk_paths(paths, chunker)
    for skipped in results.skipped:
        click.echo(f"docshelf: skipped {shown(skipped.path)}: {skipped.reason}", err=True)
    if as_json:
        rows = [row for r in results.files for row in _json_rows(r)]
        _write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
    else:
        _write(_table(results.files))


@cli.command()
@click.argument("texts", nargs=-1, required=True)
@embedder_options
def embed(texts: tuple[str, ...], **options: Any) -> None:
    """Embed TEXTS with the configured embedder: check a model or an endpoint works.

    Prints one JSON array per text on stdout, and the model, its width and the time taken on
    stderr.
    """
    embedder = configured_embedder(make_config(**options))
    if embedder is None:
        raise click.UsageError("--embedder none makes no vectors; choose local or openai")
    started = time.perf_counter()
    vectors = embedder.embed(list(texts))
    seconds = time.perf_counter() - started
    _write("".join(json.dumps([round(float(x), 6) for x in row]) + "\n" for row in vectors))
    click.echo(
        f"{embedder.model_id}: {embedder.dim} dimensions, {plural(len(texts), 'text')} in "
        f"{seconds:.2f} s",
        err=True,
    )


@cli.command()
@store_options
@click.option("--workspace", metavar="NAME", help="Show this workspace only.")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help=f"List every workspace in full (past {STATUS_LISTED} workspaces the text is a summary).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (every workspace).")
def status(workspace: str | None, every: bool, as_json: bool, **options: Any) -> None:
    """Show what the store holds: its model and width, and per workspace the current ref (when it
    was indexed, the files its read skipped), the chunks of each indexed ref and the live pins.
    Past 20 workspaces, a summary: how many are indexed, the refs, chunks and pins in all, the
    last and the longest since indexed, those not indexed yet."""
    state = store_status(make_config(**options), workspace)
    if as_json:
        _write(json.dumps(status_data(state), ensure_ascii=False, indent=2) + "\n")
    else:
        _write(render_status(state, every=every))


def docs_selection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--docs, --include and --exclude: which files of the workspace are its docs."""
    for option in reversed(
        [
            click.option(
                "--docs",
                "docs",
                multiple=True,
                metavar="DIR",
                help="A documentation folder, relative to the repository root; repeat for "
                "several (default: the folder SOURCE names inside a repository, else those given "
                "before, else the docs folders found: docs, doc, website/docs, "
                "src/content/docs, content, ...; for a plain directory, all of it).",
            ),
            click.option(
                "--include",
                multiple=True,
                metavar="GLOB",
                help="Read only the files matching a gitignore-style glob ('**/*.mdx', "
                "'guides/'); repeatable. Kept with the workspace for later syncs.",
            ),
            click.option(
                "--exclude",
                multiple=True,
                metavar="GLOB",
                help="Leave out the files matching a gitignore-style glob ('**/i18n/**', "
                "'CHANGELOG*'); repeatable. Kept with the workspace for later syncs.",
            ),
        ]
    ):
        command = option(command)
    return command


@cli.command()
@click.argument("source", required=False, metavar="[SOURCE]")
@click.option(
    "--ref",
    "rev",
    metavar="REV",
    help="The commit, branch or tag to index (default: the tracked branch, HEAD).",
)
@docs_selection_options
@click.option(
    "--workspace",
    metavar="NAME",
    help="The workspace name in the store (default: the repository's absolute path, or the "
    "clone URL without its password).",
)
@click.option(
    "--manifest",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Index every workspace a TOML manifest lists ([[workspace]] entries: source, and "
    "optionally name, ref, docs, include, exclude) with one model; a failure is reported and the "
    "rest carried on. Not with SOURCE or the options of one workspace.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, MAX_JOBS),
    default=DEFAULT_JOBS,
    show_default=True,
    help="With --manifest: how many workspaces sync (fetch, resolve) and read their docs ahead "
    "at once; two commits (one with --jobs 1) are indexed at once, taking turns at the model.",
)
@mirror_dir_option
@store_options
@embedder_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object when done.")
@click.option(
    "--progress",
    type=click.Choice(PROGRESS_MODES),
    default="auto",
    show_default=True,
    help="How to show progress on stderr: a bar (auto: on a terminal only), JSON events one a "
    "line for a tool that wraps the command, or none.",
)
def index(
    source: str | None,
    rev: str | None,
    docs: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    workspace: str | None,
    manifest: Path | None,
    jobs: int,
    as_json: bool,
    progress: str,
    **options: Any,
) -> None:
    """Index the documentation of a git repository at one commit, make it current and prune the
    refs nobody pins.

    SOURCE is a path (default: the current directory) or a clone URL, mirrored and fetched on
    every run. The docs are read from git's objects at that commit: uncommitted edits are not
    indexed. A commit that is already indexed is not embedded again, and only the chunks that
    changed since an indexed commit are.
    """
    config = make_config(**options)
    if manifest is not None:
        _beside_manifest(
            ("SOURCE", source),
            ("--ref", rev),
            ("--docs", docs),
            ("--include", include),
            ("--exclude", exclude),
            ("--workspace", workspace),
        )
        _index_manifest(config, manifest, jobs, as_json)
        return
    source = "." if source is None else source
    bar: ProgressBar | ProgressEvents | None = None
    if progress == "json":
        bar = ProgressEvents(_write_err)
    elif progress == "bar" or (progress == "auto" and not as_json and sys.stderr.isatty()):
        bar = ProgressBar(_write_err)
    try:
        result = index_source(
            config,
            source,
            rev=rev,
            docs=list(docs) or None,
            include=include,
            exclude=exclude,
            workspace=workspace,
            progress=bar.update if bar else None,
        )
    finally:
        if isinstance(bar, ProgressBar):
            bar.finish()
    if as_json:
        _write(json.dumps(index_data(result), ensure_ascii=False, indent=2) + "\n")
    else:
        _write(render_index(result))


def _beside_manifest(*given: tuple[str, object]) -> None:
    """Refuse the first of `given` (a flag and its value) that is set beside --manifest.

    Raises:
        click.UsageError: one is set.
    """
    for flag, value in given:
        if value:
            raise click.UsageError(
                f"--manifest lists the workspaces and their options; give {flag} in the "
                "manifest's entries instead"
            )


def _index_manifest(config: Config, path: Path, jobs: int, as_json: bool) -> None:
    """Index a manifest's workspaces: each outcome as it is known (text), then a summary, or
    one JSON object; exit status 1 when a workspace failed."""
    entries = read_manifest(path)

    def shown(outcome: ManifestOutcome) -> None:
        if not as_json:
            _write(render_manifest_outcome(outcome))

    outcomes = index_manifest(config, entries, jobs=jobs, report=shown)
    if as_json:
        _write(json.dumps(manifest_data(outcomes), ensure_ascii=False, indent=2) + "\n")
    else:
        _write(render_manifest_summary(outcomes))
    if any(o.error is not None for o in outcomes):
        raise click.exceptions.Exit(1)


@cli.command()
@click.option("--workspace", metavar="NAME", help="Prune this workspace only (default: all).")
@store_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array.")
def prune(workspace: str | None, as_json: bool, **options: Any) -> None:
    """Delete every indexed ref except each workspace's current ref and the refs a running
    session pins. `docshelf index` does this after each commit it makes current."""
    reports = prune_store(make_config(**options), workspace)
    if as_json:
        rows = [
            {
                "workspace": r.workspace,
                "current": r.current,
                "pinned": r.pinned,
                "removed": r.removed,
            }
            for r in reports
        ]
        _write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return
    lines = []
    for r in reports:
        if r.current is None:
            lines.append(f"workspace {shown(r.workspace)}: no current ref, left as it is")
            continue
        kept = ", ".join(
            [short_ref(r.current), *(short_ref(p) for p in r.pinned if p != r.current)]
        )
        lines.append(
            f"workspace {shown(r.workspace)}: removed {plural(r.removed, 'ref')}, kept {kept}"
        )
    _write("\n".join(lines or ["the store holds no workspace"]) + "\n")


@cli.command()
@click.argument("query")
@click.option(
    "-k",
    "--top-k",
    "k",
    type=int,
    default=DEFAULT_TOP_K,
    show_default=True,
    help=f"How many excerpts, {MIN_TOP_K} to {MAX_TOP_K}.",
)
@click.option(
    "--per-file",
    "per_file",
    type=int,
    default=None,
    help="At most this many excerpts of one file, 1 to -k (default: -k, no bound); each hit "
    "says how many more of its file's passages matched.",
)
@click.option(
    "--max-tokens",
    "max_tokens",
    type=int,
    default=None,
    help=f"The most tokens the answer may take (UTF-8 bytes / 4), {MIN_MAX_TOKENS} to "
    f"{MAX_MAX_TOKENS} (default {TOKENS_PER_EXCERPT} for each excerpt of -k, at least "
    f"{MIN_MAX_TOKENS}); past it, excerpts keep their citation "
    "and lose their text.",
)
@click.option(
    "--ref",
    "rev",
    metavar="REV",
    help="Answer from this commit (or branch or tag of a local repository) instead of the "
    "current one, as a pinned session does.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="hybrid: by meaning and by words, fused (the default). vector: by meaning only. text: "
    "by words only (the only mode with --embedder none).",
)
@click.option(
    "--path",
    metavar="PATH",
    help="Search only the files under this folder (docs/runbooks/) or matching this glob "
    "(**/payments.md).",
)
@click.option(
    "--workspace",
    metavar="NAME",
    help="The workspace to search (default: every workspace of the store, ranked together).",
)
@store_options
@embedder_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def search(
    query: str,
    k: int,
    rev: str | None,
    mode: str | None,
    path: str | None,
    workspace: str | None,
    as_json: bool,
    per_file: int | None,
    max_tokens: int | None,
    **options: Any,
) -> None:
    """Ask the documentation a question: the answer docs_search gives, from the current commit
    (or --ref)."""
    budget = check_max_tokens(max_tokens, k)
    answer = search_answer(
        make_config(**options),
        query,
        top_k=k,
        ref=rev,
        mode=mode,
        workspace=workspace,
        path=path,
        per_file=per_file,
    )
    answer = fit_answer(answer, budget)
    if as_json:
        _write(json.dumps(answer_data(answer), ensure_ascii=False, indent=2) + "\n")
    else:
        _write(render_answer(answer))


def reader_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--ref, --workspace and --json, as `read` and `outline` take them."""
    for option in reversed(
        [
            click.option(
                "--ref",
                "rev",
                metavar="REV",
                help="Read this indexed commit (or branch or tag of a local repository) "
                "instead of the current one.",
            ),
            click.option(
                "--workspace",
                metavar="NAME",
                help="The workspace to read (needed when the store holds several).",
            ),
            click.option("--json", "as_json", is_flag=True, help="Print one JSON object."),
        ]
    ):
        command = option(command)
    return command


# PATH:START-END, PATH:START or PATH.
_READ_SPEC = re.compile(r"(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?")


@cli.command()
@click.argument("spec", metavar="PATH[:START[-END]]")
@reader_options
@store_options
def read(spec: str, rev: str | None, workspace: str | None, as_json: bool, **options: Any) -> None:
    """Print an indexed doc's lines at the current commit (or --ref), numbered as the hits
    cite them, from the store's copy: what docs_read answers. PATH:START-END reads a range
    (docs/runbooks/payments.md:40-80), PATH:START from a line; at most 200 lines or 16,000
    bytes, then the line to read on from."""
    match = _READ_SPEC.fullmatch(spec)
    assert match is not None  # the pattern matches any non-empty text
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else None
    with open_reader(make_config(**options), workspace=workspace) as service:
        if rev and service.several:
            raise click.UsageError("--ref with several workspaces needs --workspace")
        pins = service.resolve(rev) if rev else None
        reading = service.read(match["path"], start, end, ref=pins)
    if as_json:
        _write(json.dumps(reading_data(reading), ensure_ascii=False, indent=2) + "\n")
    else:
        _write(render_reading(reading, CLI, reading.workspace if service.several else None))


@cli.command()
@click.argument("path", required=False)
@reader_options
@click.option(
    "--page",
    type=int,
    help=f"With several workspaces and neither PATH nor --workspace: which page of them, "
    f"{OVERVIEW_PAGE} a page (default 1).",
)
@store_options
def outline(
    path: str | None,
    rev: str | None,
    workspace: str | None,
    as_json: bool,
    page: int | None,
    **options: Any,
) -> None:
    """Print the indexed docs as files with their headings and line ranges, under PATH (a
    folder, a file or a glob) or all: what docs_outline answers. With several workspaces and
    neither PATH nor --workspace: a page of the workspaces, each with its commit and its
    top-level folders."""
    with open_reader(make_config(**options), workspace=workspace) as service:
        pins = service.resolve_all([rev]) if rev and not service.several else None
        if rev and service.several:
            raise click.UsageError("--ref with several workspaces needs --workspace")
        found = service.outline(path, ref=pins, page=page)  # open_reader chose the workspace
    if as_json:
        _write(json.dumps(outline_data(found), ensure_ascii=False, indent=2) + "\n")
    else:
        label = found.workspace if service.several and isinstance(found, DocsOutline) else None
        _write(render_outline(found, CLI, label))


@cli.command()
@click.argument("sources", nargs=-1, metavar="[SOURCE...]")
@click.option(
    "--ref",
    "revs",
    multiple=True,
    metavar="[NAME=]REV",
    help="Pin the stdio session to this commit, branch or tag, resolved at start (over HTTP: "
    "every session that does not pin its own with /mcp?ref=REV). With several workspaces, "
    "NAME=REV pins one (repeat for others). Default: the latest indexed commit, which moves "
    "as syncs land.",
)
@click.option("--http", "use_http", is_flag=True, help="Speak streamable HTTP at /mcp, not stdio.")
@click.option(
    "--host",
    default=DEFAULT_HTTP_HOST,
    show_default=True,
    help="With --http: the address to listen on. Another machine's reach needs --token (or "
    "--allow-remote).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_HTTP_PORT,
    show_default=True,
    help="With --http: the port to listen on (0: any free port, logged at start).",
)
@click.option(
    "--token",
    envvar="DOCSHELF_TOKEN",
    metavar="TOKEN",
    help="With --http: every request must carry 'Authorization: Bearer TOKEN'. Prefer the "
    "environment variable: a flag shows in process listings. [env: DOCSHELF_TOKEN]",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="With --http: also answer browser requests from this origin (scheme://host[:port]); "
    "repeat for several. Pages of this machine at the bound port are always allowed.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --http: listen on an address other machines can reach without a token (a "
    "trusted network only).",
)
@click.option(
    "--open",
    "open_page",
    is_flag=True,
    help="With --http: open the web page (search, read, status) in your browser once serving.",
)
@click.option(
    "--sync-interval",
    type=click.FloatRange(min=1.0),
    metavar="SECONDS",
    help="Sync SOURCE and index its new commits in the background every SECONDS while serving "
    "(default: never; index with docshelf index).",
)
@docs_selection_options
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    metavar="NAME",
    help="Without SOURCE: serve this workspace of the store (repeat for several; default: "
    "all of them). With one SOURCE: the name to store its workspace under.",
)
@click.option(
    "--manifest",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Serve every workspace a TOML manifest lists (as index --manifest reads it); with "
    "--sync-interval, keep each synced and read the manifest again every interval, so that "
    "workspaces added or removed are served or dropped without a restart. Not with SOURCE, "
    "--workspace or the docs options.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, MAX_JOBS),
    default=DEFAULT_JOBS,
    show_default=True,
    help="With --sync-interval: how many workspaces are checked (git ls-remote, a fetch when "
    "one moved) at once; their new commits are indexed one at a time.",
)
@click.option(
    "--read-store",
    metavar="URL",
    envvar="DOCSHELF_READ_STORE",
    help="A PostgreSQL streaming replica of --store to answer searches, reads and outlines "
    "from; pins, syncs and indexing go to --store. A session pinned to a commit the replica "
    "has not replayed yet waits up to 2 s for it, then is answered from the latest commit the "
    "replica holds, and told so. [env: DOCSHELF_READ_STORE]",
)
@mirror_dir_option
@store_options
@embedder_options
def serve(
    sources: tuple[str, ...],
    revs: tuple[str, ...],
    use_http: bool,
    host: str,
    port: int,
    token: str | None,
    allow_origins: tuple[str, ...],
    allow_remote: bool,
    open_page: bool,
    sync_interval: float | None,
    docs: tuple[str, ...],
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    workspaces: tuple[str, ...],
    manifest: Path | None,
    jobs: int,
    read_store: str | None,
    **options: Any,
) -> None:
    """Serve the documentation to MCP clients: the server `docs` with the tools docs_search,
    docs_read and docs_outline.

    Speaks stdio by default (an MCP client starts it), or streamable HTTP at /mcp with --http,
    which also serves a web page at / to search, read and check the docs in a browser.
    Each SOURCE is a repository (a path or a clone URL) whose workspace to serve and, with
    --sync-interval, to sync; without one, the store's workspaces (all, or those named with
    --workspace) are served as they are indexed; --manifest serves the workspaces a manifest
    lists. Several workspaces are served from one process, searched together or one at a time.
    Logs go to stderr.
    """
    ctx = click.get_current_context()
    if not use_http:
        for name, flag in HTTP_ONLY_OPTIONS.items():
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                raise click.UsageError(f"{flag} is for --http; add --http, or leave it out")
    if manifest is not None:
        _beside_manifest(
            ("SOURCE", sources),
            ("--docs", docs),
            ("--include", include),
            ("--exclude", exclude),
            ("--workspace", workspaces),
        )
    elif not sources and (docs or include or exclude or sync_interval is not None):
        raise click.UsageError(
            "--docs, --include, --exclude and --sync-interval need SOURCE, the repository to "
            "sync (or --manifest)"
        )
    if len(sources) > 1 and (docs or include or exclude or workspaces):
        raise click.UsageError(
            "--docs, --include, --exclude and --workspace name the docs of one SOURCE; index "
            "each source with its own, then serve them together"
        )
    from docshelf import mcp_server  # noqa: PLC0415 - the MCP SDK loads only to serve

    _log_to_stderr()
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 PID`: every thread's stack on stderr
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    http = None
    if use_http:
        http = mcp_server.check_http_options(
            mcp_server.HttpOptions(
                host=host,
                port=port,
                token=token or None,
                allow_origins=allow_origins,
                allow_remote=allow_remote,
                open_page=open_page,
            )
        )
    config = make_config(read_store=read_store, **options)
    check_read_store(config)
    create = sync_interval is not None  # a server that syncs may make its store
    if manifest is not None:
        service = open_manifest_service(config, manifest, jobs=jobs, create=create)
    else:
        service = open_service(
            config,
            sources=sources,
            docs=list(docs) or None,
            include=include,
            exclude=exclude,
            workspaces=workspaces,
            create=create,
        )
    with service, contextlib.suppress(KeyboardInterrupt):  # a stop, not a failure
        mcp_server.serve(service, ref=revs, http=http, sync_interval=sync_interval, jobs=jobs)


def _log_to_stderr() -> None:
    """docshelf's own messages at INFO, everything else's warnings, on stderr: stdout belongs
    to the stdio protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("docshelf: %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("docshelf").setLevel(logging.INFO)


def _json_rows(r: ChunkedFile) -> list[dict[str, Any]]:
    if r.pieces is None:
        return [
            {
                "path": c.path,
                "index": c.index,
                "heading": c.heading,
                "content": c.content,
                "start_line": c.start_line,
                "end_line": c.end_line,
            }
            for c in r.chunks
        ]
    return [
        {
            "path": r.file.path,
            "chunk_index": p.chunk_index,
            "text": p.text,
            "char_start": p.char_start,
            "char_end": p.char_end,
            "tokens": p.tokens,
        }
        for p in r.pieces
    ]


def _table(results: list[ChunkedFile]) -> str:
    rows: list[tuple[str, str, str, str, str]] = []
    total_bytes = largest = count = 0
    for r in results:
        for c in r.chunks:
            index, heading, text = c.index, c.heading, c.content
            first, last = c.start_line, c.end_line
            size = len(text.encode())
            total_bytes += size
            largest = max(largest, size)
            count += 1
            if len(heading) > TABLE_HEADING_WIDTH:
                heading = heading[: TABLE_HEADING_WIDTH - 1] + "…"
            lines = f"{first}-{last}" if last != first else str(first)
            rows.append((shown(r.file.path), str(index), shown(heading), lines, str(size)))
    header = ("PATH", "#", "HEADING", "LINES", "BYTES")
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]
    out = []
    for row in [header, *rows]:
        cells = [
            cell.rjust(w) if i in (1, 4) else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    out.append(
        f"\n{count} chunks from {plural(len(results), 'file')}, "
        f"{total_bytes} bytes in all, largest chunk {largest} bytes"
    )
    return "\n".join(out) + "\n"


def _write_err(text: str) -> None:
    """Progress on stderr, as it comes."""
    sys.stderr.write(text)
    sys.stderr.flush()


def _write(text: str) -> None:
    """Print `text` on stdout. A reader that went away (docshelf chunk docs | head) is not an
    error: the command ends there, with status 0 and nothing on stderr.

    A pipe whose reader has gone takes part of a write and refuses the rest, so the text is
    written until all of it is taken, and only then does the refusal show (click would turn it
    into exit status 1). Python flushes stdout once more on exit, which would fail too: stdout
    is pointed at /dev/null first.
    """
    out = sys.stdout.buffer
    data = memoryview(text.encode())
    try:
        while data:
            data = data[out.write(data) :]
        out.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise SystemExit(0) from None


def main() -> None:
    """Entry point of the `docshelf` console script: errors become one line and exit status 1."""
    try:
        # Not standalone, click returns the status of a command that ends with Exit.
        status = cli.main(standalone_mode=False)
        if isinstance(status, int) and status:
            sys.exit(status)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("docshelf: aborted", err=True)
        sys.exit(130)
    except DocshelfError as e:
        click.echo(f"docshelf: error: {e.said(CLI.words)}", err=True)
        sys.exit(1)
