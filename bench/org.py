"""An organisation's docs in one place: N git repositories indexed into one store through a
manifest, and docs_search over all of them and over one, through `docshelf serve`.

Run it from the repository root with

    .venv/bin/python bench/org.py                                   # 10 and 100, both stores
    .venv/bin/python bench/org.py --workspaces 10 --store sqlite --markdown
    .venv/bin/python bench/org.py --workspaces 3 --queries 5 --files-per-workspace 5-10
    .venv/bin/python bench/org.py --workspaces 10 --store sqlite --baseline HEAD~5

Options: `--workspaces N,M,...` the sizes of the organisation (default 10,100), `--store
sqlite,postgres` the stores (default both; postgres starts a PostgreSQL server here from
pgserver, as the tests do, its data under /tmp, a new database per size, all removed at the end),
`--seed` the draw of every workspace's files, team page and the questions, `--files-per-workspace
LO-HI` how many shared files a workspace holds (default 20-80), `--queries N` the timed
docs_search calls of each kind (default 50), `--jobs N` index --manifest's --jobs (default 4),
`--out DIR` where the repositories, manifests and SQLite stores go (default
/tmp/docshelf-bench-org; the repositories are kept and reused by later runs), `--baseline REV`
also serves each store with REV's code (a git worktree) before this tree's, side by side.

Data: workspace i (`ws0000`, `ws0001`, ...) is a git repository (git init, one commit with a
fixed identity and date, no user or system git configuration) of real documentation from
`../shared/data`: the Markdown, MDX, reStructuredText and AsciiDoc files (at most MAX_DOC_BYTES,
none under a hidden folder) of every tree of corpora/, formats/ and sites/, and of the
aws-docs-qa and anthropic-docs-qa corpora. From the seed and i alone, it draws 2 to 4 of those
trees and LO to HI files spread over them, copied to `docs/<tree>/<path in the tree>`, and
writes `docs/team.md`, a team page of its own (the workspace's services, on-call rotation,
runbooks and channels, drawn from word lists), so that no two workspaces are copies. Files of
one tree recur across workspaces, as shared docs do in an organisation: a store embeds a text
once (vectors are shared by content hash across its workspaces), so the "embedded" figure
is below the chunks. A repository is built once under `--out/repos` and reused while its marker
file (the seed and the draw's bounds) matches.

Method, for each store and size N:
- Index: a manifest of the N workspaces (`[[workspace]]`: source, name, docs = ["docs"]) is
  indexed into an empty store by `docshelf index --manifest FILE --store STORE --jobs J --json`
  (the console script, the packaged model), timed on the wall clock; its peak RSS is the
  process's ru_maxrss (os.wait4: the process or the largest of its git children). Chunks: the
  sum of each workspace's current-ref chunks that `docshelf status --json` reports; files (read),
  embedded and reused: the sums of the manifest's JSON.
- Store size: the SQLite file with its -wal, or PostgreSQL's pg_database_size.
- Search: `docshelf serve --store STORE` (every workspace of the store, stdio) is started by the
  MCP SDK's stdio client, as an MCP client starts it. WARM_UP_CALLS untimed docs_search calls
  over all workspaces and as many over one (the first loads the model), then `--queries`
  questions drawn with the seed from the queries.jsonl of the two eval sets whose corpora the
  workspaces draw from (aws-docs-qa, anthropic-docs-qa: 150 questions; drawn again with
  replacement past that), each asked twice in one session, each call timed alone on the client
  from the request to the parsed result: (a) over all workspaces (no `workspace` argument), then
  (b) over one, a label drawn per question from the `workspace` enum of the tool's input schema.
  top_k 5, `repeat: true` when the schema has it (a session shows a passage once otherwise).
  p50 and p95 by nearest rank. The server's VmRSS and VmHWM are read from /proc after all the
  calls.
- Baseline (`--baseline REV`): REV's code (a git worktree of REV, imported with
  PYTHONPATH=<worktree>/src, as bench/serve.py does) serves the same store first, the same
  calls; a REV that cannot serve it (a store schema newer than it knows, no such command) is
  reported on stderr and left out of the table.
- One more repository: workspace N is appended to the manifest and `docshelf index --manifest`
  runs again on the same store: the whole run's wall time (N workspaces already indexed, each
  synced and found so, and one indexed), what adding a team's repository to the manifest costs.
"""

from __future__ import annotations

# pickle probes for Jython with `from org.python.core import ...`, and a script run from bench/
# has this folder on sys.path: imported as `org`, this file must fail as a missing module would.
if __name__ != "__main__":
    raise ImportError("bench/org.py is a script, not the module org")

import argparse
import contextlib
import fcntl
import json
import math
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docshelf.config import MARKUP_SUFFIXES, MAX_DOC_BYTES
from report import GIT_ENV, cpu_model, print_table, serve_pid, server_memory, worktree

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
DOCSHELF = Path(sys.executable).with_name("docshelf")
DEFAULT_OUT = Path(tempfile.gettempdir()) / "docshelf-bench-org"

# The doc trees drawn from: every tree of these folders, and the two eval corpora of docs.
TREE_FOLDERS = ("corpora", "formats", "sites")
EVAL_TREES = {
    "aws-docs-qa": "eval/aws-docs-qa/docs",
    "anthropic-docs-qa": "eval/anthropic-docs-qa/pages",
}

# How many trees a workspace draws its files from.
TREES_PER_WORKSPACE = (2, 4)

# Untimed docs_search calls of each kind before the timed ones (the first loads the model).
WARM_UP_CALLS = 3

# How long a server may take to answer its first call (it loads the model then).
START_TIMEOUT_SECONDS = 120.0

# The draw of a repository changes when this does (its marker then no longer matches).
BUILD_VERSION = 1

# A fixed commit date, so that a workspace's commit is the same on every machine.
GIT_DATE = "2026-01-01T00:00:00+00:00"

# tests/conftest.py's lock: as root, pgserver creates its system user on first use.
PGSERVER_LOCK = "/tmp/docshelf-pgserver-start.lock"

STORES = ("sqlite", "postgres")


# -- the organisation ---------------------------------------------------------------------------


def tree_roots(data: Path) -> dict[str, Path]:
    """The doc trees of `data` by name (each name is unique across its folders)."""
    roots: dict[str, Path] = {}
    for folder in TREE_FOLDERS:
        if not (data / folder).is_dir():
            raise SystemExit(f"{data / folder} is missing: is ../shared/data beside the checkout?")
        for tree in sorted((data / folder).iterdir()):
            if tree.is_dir():
                roots[tree.name] = tree
    for name, folder in EVAL_TREES.items():
        roots[name] = data / folder
    return roots


def doc_trees(roots: dict[str, Path]) -> dict[str, list[str]]:
    """Each tree's doc files (paths relative to the tree), sorted: what a workspace draws from."""
    trees: dict[str, list[str]] = {}
    for name, root in roots.items():
        files = []
        for path in root.rglob("*"):
            inside = path.relative_to(root)
            if (
                path.suffix.lower() in MARKUP_SUFFIXES
                and path.is_file()
                and not path.is_symlink()
                and not any(part.startswith(".") for part in inside.parts)
                and path.stat().st_size <= MAX_DOC_BYTES
            ):
                files.append(inside.as_posix())
        if files:
            trees[name] = sorted(files)
    if not trees:
        raise SystemExit("no doc files in ../shared/data: is it beside the checkout?")
    return trees


def workspace_name(i: int) -> str:
    return f"ws{i:04d}"


def draw_files(
    trees: dict[str, list[str]], seed: int, i: int, files: tuple[int, int]
) -> list[tuple[str, str]]:
    """The (tree, path) pairs workspace i holds: 2 to 4 trees, LO to HI files spread over them,
    drawn from the seed and i alone."""
    rng = random.Random(f"org/{seed}/{i}/files")
    names = sorted(trees)
    chosen = rng.sample(names, min(len(names), rng.randint(*TREES_PER_WORKSPACE)))
    wanted = rng.randint(*files)
    shares = [wanted // len(chosen) + (k < wanted % len(chosen)) for k in range(len(chosen))]
    picked: list[tuple[str, str]] = []
    for tree, share in zip(chosen, shares, strict=True):
        paths = rng.sample(trees[tree], min(share, len(trees[tree])))
        picked.extend((tree, p) for p in sorted(paths))
    return picked


SERVICES = (
    "checkout", "billing", "payments", "search", "ledger", "identity", "notifications",
    "catalogue", "shipping", "pricing", "reporting", "ingest", "gateway", "scheduler",
    "inventory", "recommendations", "fraud", "onboarding", "exports", "audit-log",
)  # fmt: skip
THINGS = (
    "public API", "nightly batch jobs", "message queues", "database migrations", "dashboards",
    "feature flags", "SDKs", "webhooks", "data pipeline", "admin console", "mobile backend",
)  # fmt: skip
CITIES = ("Lisbon", "Nairobi", "Toronto", "Osaka", "Tallinn", "Recife", "Pune", "Dublin")
TOOLS = ("PagerDuty", "Opsgenie", "a shared calendar", "incident.io", "a spreadsheet")
WAYS = ("in the open", "in two-week cycles", "on a kanban board", "in quarterly bets")
SLOS = ("99.9", "99.95", "99.5")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def team_page(seed: int, i: int) -> str:
    """Workspace i's own page: its team, services, on-call rotation and runbooks."""
    rng = random.Random(f"org/{seed}/{i}/team")
    name = workspace_name(i)
    owned = rng.sample(SERVICES, rng.randint(2, 4))
    things = rng.sample(THINGS, 2)
    people = rng.randint(3, 9)
    city = rng.choice(CITIES)
    lines = [
        f"# Team {name}",
        "",
        f"The {name} team owns the {', '.join(owned[:-1])} and {owned[-1]} services, their "
        f"{things[0]} and the {things[1]} they share with other teams. It sits mostly in "
        f"{city} and works {rng.choice(WAYS)}.",
        "",
        "## On-call",
        "",
        f"The {name} on-call rotation is {people} engineers wide and hands over every "
        f"{rng.choice(DAYS)} at {rng.randint(8, 17)}:00 {city} time; pages go through "
        f"{rng.choice(TOOLS)}. Escalate to the team lead after {rng.choice((10, 15, 30))} minutes "
        f"without an acknowledgement.",
        "",
        "## Services",
        "",
    ]
    for service in owned:
        lines.append(
            f"- **{service}**: {rng.choice(('tier 1', 'tier 2', 'tier 3'))}, "
            f"{rng.randint(2, 40)} deployments a week, SLO {rng.choice(SLOS)}%, dashboard "
            f"`{name}-{service}`."
        )
    lines += [
        "",
        "## Runbooks",
        "",
        f"When {owned[0]} errors rise above {rng.randint(1, 5)}% for five minutes, roll back the "
        f"last deployment first and ask questions after. The {owned[-1]} runbook lives next to "
        "this page; keep it current when the service changes.",
        "",
        "## Contact",
        "",
        f"Ask in #team-{name} or #{owned[0]}-support; the team's weekly sync is on "
        f"{rng.choice(DAYS)}s.",
        "",
    ]
    return "\n".join(lines)


def git(repo: Path, *args: str) -> None:
    env = {**GIT_ENV, "GIT_AUTHOR_DATE": GIT_DATE, "GIT_COMMITTER_DATE": GIT_DATE}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {repo} failed: {done.stderr.strip()}")


def build_workspace(
    repos: Path,
    roots: dict[str, Path],
    trees: dict[str, list[str]],
    seed: int,
    i: int,
    files: tuple[int, int],
) -> Path:
    """Workspace i's repository under `repos`, built unless its marker says it is there."""
    name = workspace_name(i)
    repo = repos / name
    marker = repos / f"{name}.json"
    spec = {"version": BUILD_VERSION, "seed": seed, "files": list(files)}
    drawn = draw_files(trees, seed, i, files)
    if marker.is_file() and repo.is_dir():
        with contextlib.suppress(ValueError):
            if json.loads(marker.read_text()) == spec:
                return repo
    marker.unlink(missing_ok=True)
    shutil.rmtree(repo, ignore_errors=True)
    building = repos / f"{name}.building"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    for tree, inside in drawn:
        target = building / "docs" / tree / inside
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(roots[tree] / inside, target)
    (building / "docs" / "team.md").write_text(team_page(seed, i), encoding="utf-8")
    git(building, "init", "--quiet", "--initial-branch", "main")
    git(building, "add", "--all")
    git(building, "commit", "--quiet", "--no-verify", "--message", f"{name} docs")
    building.rename(repo)
    marker.write_text(json.dumps(spec))
    return repo


def write_manifest(path: Path, repos: Sequence[Path]) -> Path:
    entries = [
        f'[[workspace]]\nsource = "{repo}"\nname = "{repo.name}"\ndocs = ["docs"]\n'
        for repo in repos
    ]
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


# -- stores -------------------------------------------------------------------------------------


class Postgres:
    """A PostgreSQL server of this run (pgserver, data under /tmp, as tests/conftest.py starts
    it), started on first use and removed on close; a new database per store."""

    def __init__(self) -> None:
        self.server: Any = None
        self.data: Path | None = None
        self.made = 0
        self.names: dict[str, str] = {}  # each database's name, by its URL

    def database(self) -> str:
        import psycopg  # noqa: PLC0415 (only for the PostgreSQL runs)

        if self.server is None:
            try:
                import pgserver  # noqa: PLC0415
            except ImportError as e:
                raise SystemExit(f"--store postgres needs the pgserver package: {e}") from e
            self.data = Path(tempfile.mkdtemp(prefix="docshelf-bench-org-pg-", dir="/tmp"))
            print(f"starting PostgreSQL in {self.data} ...", file=sys.stderr)
            with open(PGSERVER_LOCK, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self.server = pgserver.get_server(  # type: ignore[attr-defined]
                    self.data, cleanup_mode="stop"
                )
        self.made += 1
        name = f"docshelf_org_{os.getpid()}_{self.made}"
        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        url = str(self.server.get_uri(name))
        self.names[url] = name
        return url

    def drop(self, url: str) -> None:
        import psycopg  # noqa: PLC0415

        name = self.names.pop(url)
        with psycopg.connect(self.server.get_uri(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def close(self) -> None:
        if self.server is not None:
            self.server.cleanup()
            self.server = None
        if self.data is not None:
            shutil.rmtree(self.data, ignore_errors=True)
            self.data = None


def store_mib(kind: str, location: str) -> float:
    if kind == "sqlite":
        files = [Path(location), Path(location + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists()) / 2**20
    import psycopg  # noqa: PLC0415

    with psycopg.connect(location) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0]) / 2**20


# -- indexing -----------------------------------------------------------------------------------


def docshelf_env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    return env


@dataclass(frozen=True, slots=True)
class IndexRun:
    seconds: float
    peak_mib: float
    indexed: int  # workspaces indexed (not already indexed)
    files: int
    embedded: int
    reused: int


def index_manifest(manifest: Path, location: str, jobs: int, log: Path) -> IndexRun:
    """`docshelf index --manifest` as a subprocess: its wall time, its peak RSS (ru_maxrss from
    os.wait4) and its JSON's sums."""
    command = [
        str(DOCSHELF), "index", "--manifest", str(manifest), "--store", location,
        "--jobs", str(jobs), "--json", "--progress", "none",
    ]  # fmt: skip
    out = log.with_suffix(".json")
    with out.open("w") as stdout, log.open("w") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=docshelf_env())
        try:
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if process.returncode is None:
                process.kill()
                process.wait()
    if process.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise SystemExit(
            f"docshelf index --manifest {manifest} exited {process.returncode}; its stderr ends:\n"
            f"{tail}\nits stdout: {out}"
        )
    data = json.loads(out.read_text())
    results = [w["result"] for w in data["workspaces"] if w.get("result")]
    return IndexRun(
        seconds,
        usage.ru_maxrss / 1024,  # KiB on Linux
        sum(not r["already_indexed"] for r in results),
        sum(r["files"] or 0 for r in results),  # None: already indexed, nothing read
        sum(r["embedded"] for r in results),
        sum(r["reused"] for r in results),
    )


def store_chunks(location: str) -> tuple[int, int]:
    """The store's workspaces and the sum of their current refs' chunks (`docshelf status`)."""
    done = subprocess.run(
        [str(DOCSHELF), "status", "--store", location, "--json"],
        capture_output=True, text=True, env=docshelf_env(), check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"docshelf status failed: {done.stderr.strip()}")
    workspaces = json.loads(done.stdout)["workspaces"]
    chunks = sum(int(w["refs"].get(w["current"], 0)) for w in workspaces if w["current"])
    return len(workspaces), chunks


# -- search -------------------------------------------------------------------------------------


def questions(data: Path, n: int, seed: int) -> list[str]:
    found = []
    for path in sorted(data / "eval" / name / "queries.jsonl" for name in EVAL_TREES):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(json.loads(line)["text"])
    if not found:
        raise SystemExit(f"no questions in the eval sets {', '.join(EVAL_TREES)} of {data}")
    rng = random.Random(f"org/{seed}/queries")
    return rng.sample(found, n) if n <= len(found) else rng.choices(found, k=n)


class ServeError(Exception):
    """A call the server answered with an error, or a server without what is asked."""


@dataclass(frozen=True, slots=True)
class Server:
    """How to start `docshelf serve`: this tree's, or a baseline's (`src`: a worktree's)."""

    name: str
    src: Path | None = None

    def params(self, location: str) -> StdioServerParameters:
        args = ["serve", "--store", location]
        env = docshelf_env()
        if self.src is None:
            return StdioServerParameters(command=str(DOCSHELF), args=args, env=env)
        env["PYTHONPATH"] = str(self.src)
        code = "import sys; from docshelf.cli import main; sys.exit(main())"
        return StdioServerParameters(command=sys.executable, args=["-c", code, *args], env=env)


@dataclass(frozen=True, slots=True)
class Searched:
    server: str
    all_seconds: list[float]
    one_seconds: list[float]  # empty when the server has no workspace argument
    rss_mib: float
    hwm_mib: float
    labels: int


def search(location: str, asked: Sequence[str], seed: int, server: Server, log: Path) -> Searched:
    """docs_search through `docshelf serve --store location` over stdio: over all workspaces,
    then over one (a label drawn per question), each call timed alone."""

    async def session() -> Searched:
        with log.open("w") as errlog:
            async with Client(stdio_client(server.params(location), errlog=errlog)) as client:
                with anyio.fail_after(START_TIMEOUT_SECONDS):
                    tools = {t.name: t for t in (await client.list_tools()).tools}
                if "docs_search" not in tools:
                    raise ServeError(f"{server.name}: the server has no docs_search tool")
                schema = tools["docs_search"].input_schema.get("properties", {})
                extra: dict[str, Any] = {"top_k": 5}
                if "repeat" in schema:
                    extra["repeat"] = True
                labels: list[str] = list(schema.get("workspace", {}).get("enum", []))
                if not labels and "workspace" in schema:
                    # Past the schema's enum, docs_outline lists the workspaces page by page.
                    page, pages = 1, 1
                    while page <= pages:
                        listing = await client.call_tool("docs_outline", {"page": page})
                        found = listing.structured_content or {}
                        labels += [w["workspace"] for w in found.get("workspaces", [])]
                        page, pages = page + 1, int(found.get("pages", 1))
                rng = random.Random(f"org/{seed}/labels")
                picked = [rng.choice(labels) for _ in asked] if labels else []

                async def call(arguments: dict[str, Any]) -> float:
                    started = time.perf_counter()
                    result = await client.call_tool("docs_search", {**arguments, **extra})
                    seconds = time.perf_counter() - started
                    if result.is_error:
                        text = " ".join(c.text for c in result.content if c.type == "text")
                        raise ServeError(f"{server.name}: docs_search {arguments} failed: {text}")
                    return seconds

                warm = ["who is on call this week?", "how do I configure it?", "release notes"]
                with anyio.fail_after(START_TIMEOUT_SECONDS):
                    for query in warm[:WARM_UP_CALLS]:
                        await call({"query": query})
                        if labels:
                            await call({"query": query, "workspace": rng.choice(labels)})
                every = [await call({"query": q}) for q in asked]
                one = [
                    await call({"query": q, "workspace": label})
                    for q, label in zip(asked, picked, strict=True)
                ]
                rss, hwm = server_memory(serve_pid())
                return Searched(server.name, every, one, rss, hwm, len(labels))

    try:
        return anyio.run(session)
    except (ServeError, RuntimeError) as e:
        raise SystemExit(str(e)) from e
    except Exception as e:  # the server died or never answered
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:]) if log.exists() else ""
        raise SystemExit(
            f"{server.name}: serving {location} failed ({leaves(e)}); its stderr ends:\n{tail}"
        ) from e


def leaves(e: BaseException) -> str:
    """What went wrong, through the exception groups of the SDK's task groups."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(leaves(inner) for inner in e.exceptions)
    return f"{type(e).__name__}: {e}"


# -- the run ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Exactness:
    """PostgreSQL's HNSW walk and merged term lists against exact search over every workspace:
    the recall of the vector candidates (search depth 60), and how many answers (the fused top
    5) are the same."""

    recall: float
    same_answers: int
    questions: int


def exactness(location: str, asked: Sequence[str]) -> Exactness:
    """Each question over every workspace's current ref, once as served (the shared HNSW index
    walked, BM25 from the merged term lists) and once ranked exactly from each ref's own rows
    (postgres_many's and postgres_merged's bounds forced either way), in this process with the
    packaged model."""
    from docshelf import app  # noqa: PLC0415 - the model loads only for this step
    from docshelf.config import Config  # noqa: PLC0415
    from docshelf.stores import postgres_many, postgres_merged  # noqa: PLC0415

    bound = postgres_many.EXACT_MAX_CHUNKS
    share = postgres_merged.MERGED_READ_SHARE
    found = 0
    wanted = 0
    same = 0
    with app.open_service(Config(store=location)) as service:
        assert service.embedder is not None
        store = service.store
        currents = store.currents([s.name for s in service.served])
        scopes = [(name, ref, None) for name, ref in currents.items()]
        try:
            for question in asked:
                vector = service.embedder.embed([question])[0]
                postgres_many.EXACT_MAX_CHUNKS = 0
                postgres_merged.MERGED_READ_SHARE = share
                walked = store.search_refs(scopes, vector, 60)
                walked_answer = service.search(question, 5)
                # Exact: every vector compared, and BM25 from each ref's own lists.
                postgres_many.EXACT_MAX_CHUNKS = 10**12
                postgres_merged.MERGED_READ_SHARE = math.inf
                exact = store.search_refs(scopes, vector, 60)
                exact_answer = service.search(question, 5)
                keys = {(h.workspace, h.path, h.chunk) for h in exact}
                found += sum((h.workspace, h.path, h.chunk) in keys for h in walked)
                wanted += len(keys)

                def places(answer: Any) -> list[tuple[str, str, int, int]]:
                    return [(h.workspace, h.path, h.start_line, h.end_line) for h in answer.hits]

                same += places(walked_answer) == places(exact_answer)
        finally:
            postgres_many.EXACT_MAX_CHUNKS = bound
            postgres_merged.MERGED_READ_SHARE = share
    return Exactness(found / wanted if wanted else 1.0, same, len(asked))


@dataclass(slots=True)
class Row:
    store: str
    workspaces: int
    files: int
    chunks: int
    index: IndexRun
    one_more: IndexRun
    size_mib: float
    searched: list[Searched]
    exact: Exactness | None = None


def measure(
    kind: str,
    location: str,
    repos: Sequence[Path],
    extra: Path,
    out: Path,
    args: argparse.Namespace,
    asked: Sequence[str],
    servers: Sequence[Server],
) -> Row:
    n = len(repos)
    manifest = write_manifest(out / f"org-{n}.toml", repos)
    print(f"{kind}, {n} workspaces: docshelf index --manifest {manifest} ...", file=sys.stderr)
    index = index_manifest(manifest, location, args.jobs, out / f"index-{kind}-{n}.log")
    print(
        f"  {index.seconds:.1f} s, peak {index.peak_mib:.0f} MiB, {index.embedded} embedded, "
        f"{index.reused} reused",
        file=sys.stderr,
    )
    workspaces, chunks = store_chunks(location)
    if workspaces != n:
        raise SystemExit(f"the {kind} store holds {workspaces} workspaces, not {n}")
    size = store_mib(kind, location)
    searched = []
    for server in servers:
        print(f"  docs_search through {server.name}'s serve ...", file=sys.stderr)
        log = out / f"serve-{kind}-{n}-{'baseline' if server.src else 'tree'}.log"
        try:
            searched.append(search(location, asked, args.seed, server, log))
        except SystemExit as e:
            if server.src is None:
                raise
            print(f"  baseline failed: {e}", file=sys.stderr)
    exact = None
    if kind == "postgres":
        print("  HNSW against exact search ...", file=sys.stderr)
        exact = exactness(location, asked)
    plus = write_manifest(out / f"org-{n}-plus-one.toml", [*repos, extra])
    print(f"  one more repository: docshelf index --manifest {plus} ...", file=sys.stderr)
    one_more = index_manifest(plus, location, args.jobs, out / f"index-{kind}-{n}-plus-one.log")
    if one_more.indexed != 1:
        raise SystemExit(f"{plus}: {one_more.indexed} workspaces indexed, not 1")
    return Row(kind, n, index.files, chunks, index, one_more, size, searched, exact)


def percentile_ms(seconds: Sequence[float], q: float) -> str:
    if not seconds:
        return "n/a"
    ordered = sorted(seconds)
    return f"{1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]:.1f}"


def report(rows: Sequence[Row], args: argparse.Namespace, load: tuple[float, ...]) -> None:
    command = " ".join(["bench/org.py", *map(shlex.quote, sys.argv[1:])])
    print(f"command: .venv/bin/python {command}")
    commit = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    print(f"code: {commit or 'unknown'}")
    print(
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    end = os.getloadavg()
    print(
        "load average: at the start " + ", ".join(f"{x:.2f}" for x in load) + "; at the end "
        + ", ".join(f"{x:.2f}" for x in end) + " (1, 5, 15 min)"
    )  # fmt: skip
    print(
        f"data: workspaces of {args.files[0]}-{args.files[1]} files of ../shared/data and a team "
        f"page each, seed {args.seed}; {args.queries} questions of aws-docs-qa and "
        f"anthropic-docs-qa, top_k 5; "
        f"index --jobs {args.jobs}"
    )
    print()
    baseline = bool(args.baseline)
    for kind in args.store:
        mine = [r for r in rows if r.store == kind]
        if not mine:
            continue
        print(f"{kind}:")
        print()
        columns = [
            "workspaces", *(["served by"] if baseline else []), "files", "chunks", "embedded",
            "index s", "index peak MiB", "+1 repo s", "store MiB", "all p50 ms", "all p95 ms",
            "one p50 ms", "one p95 ms", "server RSS MiB", "server peak MiB",
        ]  # fmt: skip
        table = []
        for r in mine:
            for k, s in enumerate(r.searched or [None]):
                first = k == 0
                table.append(
                    [
                        str(r.workspaces),
                        *([s.server if s else "-"] if baseline else []),
                        str(r.files) if first else "",
                        str(r.chunks) if first else "",
                        str(r.index.embedded) if first else "",
                        f"{r.index.seconds:.1f}" if first else "",
                        f"{r.index.peak_mib:.0f}" if first else "",
                        f"{r.one_more.seconds:.1f}" if first else "",
                        f"{r.size_mib:.1f}" if first else "",
                        percentile_ms(s.all_seconds, 0.5) if s else "n/a",
                        percentile_ms(s.all_seconds, 0.95) if s else "n/a",
                        percentile_ms(s.one_seconds, 0.5) if s else "n/a",
                        percentile_ms(s.one_seconds, 0.95) if s else "n/a",
                        f"{s.rss_mib:.0f}" if s else "n/a",
                        f"{s.hwm_mib:.0f}" if s else "n/a",
                    ]
                )
        print_table(columns, table, markdown=args.markdown)
    for r in rows:
        print(
            f"- {r.store}, {r.workspaces} workspaces: indexed {r.index.embedded} chunks embedded, "
            f"{r.index.reused} reused; one more repository: {r.one_more.embedded} embedded, "
            f"{r.one_more.reused} reused, peak {r.one_more.peak_mib:.0f} MiB"
        )
        if r.exact is not None:
            print(
                f"  - HNSW walk against exact search over all workspaces: recall of the 60 "
                f"vector candidates {r.exact.recall:.4f}; the fused top 5 the same for "
                f"{r.exact.same_answers} of {r.exact.questions} questions"
            )
        for s in r.searched:
            print(
                f"  - {s.server}: docs_search mean "
                f"{1000 * statistics.fmean(s.all_seconds):.1f} ms over all, "
                + (
                    f"{1000 * statistics.fmean(s.one_seconds):.1f} ms over one of {s.labels} labels"
                    if s.one_seconds
                    else "no workspace argument (over one: n/a)"
                )
            )


def size_list(value: str) -> list[int]:
    try:
        sizes = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(
            f"--workspaces takes a comma-separated list of sizes of at least 2; got {value!r}"
        )
    return sizes


def store_list(value: str) -> list[str]:
    stores = [{"postgresql": "postgres"}.get(s.strip(), s.strip()) for s in value.split(",")]
    if not stores or set(stores) - set(STORES):
        raise argparse.ArgumentTypeError(
            f"--store takes a comma-separated list of {', '.join(STORES)}; got {value!r}"
        )
    return list(dict.fromkeys(stores))


def file_range(value: str) -> tuple[int, int]:
    lo, _, hi = value.partition("-")
    try:
        bounds = (int(lo), int(hi or lo))
    except ValueError:
        bounds = (0, 0)
    if not 1 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(
            f"--files-per-workspace takes LO-HI, 1 <= LO <= HI; got {value!r}"
        )
    return bounds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--workspaces",
        type=size_list,
        default=size_list("10,100"),
        help="the organisation's sizes, comma-separated (default: 10,100)",
    )
    parser.add_argument(
        "--store",
        type=store_list,
        default=list(STORES),
        help="sqlite, postgres or both, comma-separated (default: both)",
    )
    parser.add_argument("--seed", type=int, default=20_261_205)
    parser.add_argument(
        "--files-per-workspace",
        dest="files",
        type=file_range,
        default=(20, 80),
        metavar="LO-HI",
        help="shared doc files per workspace (default: 20-80)",
    )
    parser.add_argument(
        "--queries",
        type=int,
        default=50,
        help="timed docs_search calls over all and over one (default: 50)",
    )
    parser.add_argument("--jobs", type=int, default=4, help="index --manifest --jobs (default 4)")
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"repositories, manifests, logs and SQLite stores (default {DEFAULT_OUT})",
    )
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve each store with REV's code (a git worktree), before this "
        "tree's: side by side",
    )
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    return args


@contextlib.contextmanager
def store_location(kind: str, n: int, out: Path, postgres: Postgres) -> Iterator[str]:
    """An empty store for the organisation of n: a SQLite file under `out` or a new PostgreSQL
    database, removed when the block ends."""
    if kind == "postgres":
        url = postgres.database()
        try:
            yield url
        finally:
            postgres.drop(url)
        return
    location = str(out / f"org-{n}.sqlite3")
    paths = [Path(location + suffix) for suffix in ("", "-wal", "-shm")]
    for path in paths:
        path.unlink(missing_ok=True)
    try:
        yield location
    finally:
        for path in paths:
            path.unlink(missing_ok=True)


def terminated(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not DOCSHELF.exists():
        raise SystemExit(f"{DOCSHELF} is missing: run it with the project's .venv/bin/python")
    signal.signal(signal.SIGTERM, terminated)
    load = os.getloadavg()
    out: Path = args.out.resolve()
    repos_dir = out / "repos"
    repos_dir.mkdir(parents=True, exist_ok=True)
    roots = tree_roots(DATA)
    trees = doc_trees(roots)
    asked = questions(DATA, args.queries, args.seed)
    largest = max(args.workspaces)
    print(f"building {largest + 1} workspaces under {repos_dir} ...", file=sys.stderr)
    built = [
        build_workspace(repos_dir, roots, trees, args.seed, i, args.files)
        for i in range(largest + 1)
    ]
    rows = []
    postgres = Postgres()
    with contextlib.ExitStack() as stack:
        stack.callback(postgres.close)
        servers = [Server("this tree")]
        if args.baseline:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="docshelf-org-base-"))
            base = stack.enter_context(worktree(REPO, args.baseline, Path(tmp) / "baseline"))
            servers.insert(0, Server(f"baseline {args.baseline}", base / "src"))
        for kind in args.store:
            for n in args.workspaces:
                with store_location(kind, n, out, postgres) as location:
                    row = measure(kind, location, built[:n], built[n], out, args, asked, servers)
                rows.append(row)
    report(rows, args, load)
    return 0


if __name__ == "__main__":
    sys.exit(main())
