"""Load on `docshelf serve --http`: many MCP sessions calling docs_search while the server's
background sync indexes and promotes new commits. Shared by tests/test_load.py,
tests/test_two_servers.py and bench/load.py.

Every section of every doc of release N holds the word `releasemarkerN`, so an excerpt proves the
commit it came from: an answer must name one commit, and each of its excerpts must carry that
commit's marker and no other. Calls are checked after the run, when every commit made is known.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.support.gitrepo import Repo

DOCSHELF = Path(sys.executable).with_name("docshelf")

MARKER = "releasemarker"
_MARKERS = re.compile(rf"{MARKER}(\d+)")

# Asked for in every call: fewer excerpts than any release holds, so a short answer means rows
# went missing under the search.
TOP_K = 5

TOPICS = (
    ("checkout", "Payments team", "the card form and the order summary"),
    ("payments", "Payments team", "the gateway, refunds and chargebacks"),
    ("search", "Discovery team", "the product index and its ranking"),
    ("inventory", "Warehouse team", "stock levels and reservations"),
    ("shipping", "Logistics team", "carriers, labels and tracking"),
    ("accounts", "Identity team", "sign-in, passwords and profiles"),
    ("pricing", "Revenue team", "price lists, discounts and taxes"),
    ("reviews", "Community team", "ratings, moderation and replies"),
)

QUERIES = (
    "who owns checkout?",
    "payment gateway timeout runbook",
    "how do I roll back a release",
    "search ranking configuration",
    "inventory reservations on call",
    "shipping carrier labels",
    "reset a password",
    "discount tax settings",
    "release marker",
    "moderation of reviews",
)

# Starting a server (imports, the model on the first sync) on a busy two-core machine.
START_TIMEOUT_SECONDS = 120.0
# A sync of a new commit: the interval, the embedding of a release, and slack for a busy machine.
SYNC_TIMEOUT_SECONDS = 120.0


def doc(topic: str, owner: str, covers: str, release: int) -> str:
    mark = f"Release marker: {MARKER}{release}."
    title = topic.capitalize()
    return (
        f"# {title}\n\nThe {topic} service handles {covers}. {mark}\n\n"
        f"## Owners\n\n{title} is owned by the {owner}; page them on call. {mark}\n\n"
        f"## Runbook\n\nWhen {topic} fails, check the dashboard, roll back the last release of "
        f"{topic} and open an incident. {mark}\n\n"
        f"## Configuration\n\nThe {topic} timeout is 30 seconds and its retries are 3; change "
        f"them in config/{topic}.toml. {mark}\n"
    )


class ReleaseRepo:
    """A git repository whose commit of release N holds `releasemarkerN` in every section."""

    def __init__(self, path: Path, *, copies: int = 1) -> None:
        self.repo = Repo(path)
        self.copies = copies
        self.releases: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.repo.path

    def release(self) -> str:
        """Commit the next release; its commit id."""
        with self._lock:
            n = len(self.releases)
            for copy in range(self.copies):
                for topic, owner, covers in TOPICS:
                    self.repo.write(f"docs/{copy}/{topic}.md", doc(topic, owner, covers, n))
            commit = self.repo.commit(f"release {n}")
            self.releases[commit] = n
            return commit

    def latest(self) -> str:
        with self._lock:
            return max(self.releases, key=self.releases.__getitem__)


@dataclass(frozen=True, slots=True)
class Answer:
    """One docs_search call as the client saw it."""

    session: int
    started: float
    seconds: float
    failure: str | None = None
    ref: str | None = None
    note: str | None = None
    header_ref: str | None = None
    hit_markers: tuple[frozenset[int], ...] = ()
    text_markers: frozenset[int] = frozenset()
    workspace: str | None = None  # asked for (a server of several workspaces)
    answered_by: tuple[str, ...] = ()  # the workspace of each excerpt


def read_answer(result: CallToolResult) -> dict[str, Any]:
    """What a check needs of a tool result; `failure` set when it is an error result."""
    text = "".join(block.text for block in result.content if block.type == "text")
    if result.is_error or result.structured_content is None:
        return {"failure": f"error result: {text[:300]}"}
    structured = result.structured_content
    header = re.search(r"from the documentation at commit ([0-9a-f]+)", text)
    return {
        "ref": structured["ref"],
        "note": structured["note"],
        "answered_by": tuple(hit.get("workspace") or "" for hit in structured["hits"]),
        "header_ref": header.group(1) if header else None,
        "hit_markers": tuple(
            frozenset(int(m) for m in _MARKERS.findall(hit["content"]))
            for hit in structured["hits"]
        ),
        "text_markers": frozenset(int(m) for m in _MARKERS.findall(text)),
    }


def problem(answer: Answer, releases: dict[str, int]) -> str | None:
    """Why an answer is wrong, or None: it must name one known commit, in its structured content
    and its text, without a note, with TOP_K excerpts that all carry that commit's marker."""
    if answer.failure is not None:
        return answer.failure
    if answer.ref not in releases:
        return f"answered from {answer.ref}, which is no release"
    n = releases[answer.ref]
    if answer.note is not None:
        return f"a note on release {n}: {answer.note}"
    if answer.header_ref is None or not answer.ref.startswith(answer.header_ref):
        return f"the text names commit {answer.header_ref}, the structured content {answer.ref}"
    if len(answer.hit_markers) != TOP_K:
        return f"{len(answer.hit_markers)} excerpts of release {n}, not {TOP_K}"
    if any(markers != {n} for markers in answer.hit_markers) or answer.text_markers != {n}:
        found = sorted(set().union(*answer.hit_markers, answer.text_markers))
        return f"an answer from release {n} holds the excerpts of releases {found}"
    return None


@dataclass
class Load:
    """Calls from `sessions` sessions until `stop` is set; the answers, in order of arrival."""

    url: str
    sessions: int
    # With several workspaces: the one session i asks (workspaces[i % len]).
    workspaces: Sequence[str] = ()
    answers: list[Answer] = field(default_factory=list)
    stop: anyio.Event | None = None
    epoch: float = field(default_factory=time.perf_counter)

    def refs(self) -> list[str]:
        """The commits answered from, in the order they were first seen."""
        return list(dict.fromkeys(a.ref for a in self.answers if a.ref is not None))

    async def run(self, until: Any) -> None:
        """Run the sessions until the coroutine function `until(load)` returns."""
        self.stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            for i in range(self.sessions):
                tasks.start_soon(self._session, i)
            await until(self)
            self.stop.set()

    async def _session(self, i: int) -> None:
        assert self.stop is not None
        # Half the sessions speak the handshake protocol (an HTTP session), half the 2026-07-28
        # one (each request on its own).
        mode = "legacy" if i % 2 == 0 else "auto"
        calls = 0
        workspace = self.workspaces[i % len(self.workspaces)] if self.workspaces else None
        named = {"workspace": workspace} if workspace else {}
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                async with Client(streamable_http_client(self.url), mode=mode) as client:
                    while not self.stop.is_set():
                        query = QUERIES[(i + calls) % len(QUERIES)]
                        calls += 1
                        started = time.perf_counter()
                        result = await client.call_tool(
                            # Each answer is checked whole: passages shown earlier too.
                            "docs_search",
                            {"query": query, "top_k": TOP_K, "repeat": True, **named},
                        )
                        self._record(i, started, {**read_answer(result), "workspace": workspace})
            except Exception as e:  # a transport or protocol failure is a failed call
                failure = f"{type(e).__name__}: {e}"[:300]
                self._record(i, started, {"failure": failure, "workspace": workspace})
                await anyio.sleep(0.1)

    def _record(self, session: int, started: float, fields: dict[str, Any]) -> None:
        now = time.perf_counter()
        self.answers.append(Answer(session, started - self.epoch, now - started, **fields))


def percentile_ms(seconds: Sequence[float], q: float) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Server:
    """A `docshelf serve --http` subprocess."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def logged(self) -> str:
        return self.log.read_text(errors="replace")

    def indexed(self) -> list[str]:
        """The short commit ids this server indexed (embedded and wrote), one per run."""
        return re.findall(r"^docshelf: INFO indexed ([0-9a-f]+):", self.logged(), re.M)


@contextmanager
def serve(
    source: Path | None, store: str, log: Path, *more: str, env: dict[str, str] | None = None
) -> Iterator[Server]:
    """`docshelf serve SOURCE --http --port 0` on `store` (no SOURCE: `more` names what to
    serve, a manifest), with the packaged model; yields once it listens. Stopped with SIGTERM;
    raises when it does not stop cleanly."""
    sources = [] if source is None else [str(source)]
    args = ["serve", *sources, "--store", store, "--http", "--port", "0", *more]
    with log.open("wb") as err:
        process = subprocess.Popen(
            [str(DOCSHELF), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        )
    server = None
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not (found := re.search(r"at (http://127\.0\.0\.1:\d+/mcp)$", _text(log), re.M)):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"docshelf serve did not start:\n{_text(log)}")
            time.sleep(0.1)
        server = Server(found.group(1), process, log)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGUSR1)  # every thread's stack into the log
            time.sleep(2)
            process.kill()
            process.wait()
    if process.returncode != 0:
        raise RuntimeError(f"docshelf serve exited with {process.returncode}:\n{_text(log)}")


def _text(log: Path) -> str:
    return log.read_text(errors="replace")


async def answered_ref(
    url: str, query: str = "release marker", workspace: str | None = None
) -> str | None:
    """The commit one call answers from (of `workspace`, when named), or None when it fails."""
    named = {"workspace": workspace} if workspace else {}
    async with Client(streamable_http_client(url), mode="legacy") as client:
        result = await client.call_tool(
            "docs_search", {"query": query, "top_k": 1, "repeat": True, **named}
        )
    if result.is_error or result.structured_content is None:
        return None
    ref = result.structured_content["ref"]
    return ref if isinstance(ref, str) else None


async def wait_for_ref(
    url: str, commit: str, timeout: float = SYNC_TIMEOUT_SECONDS, workspace: str | None = None
) -> None:
    """Wait until the server answers from `commit` (its sync has indexed and promoted it)."""
    deadline = time.monotonic() + timeout
    while await answered_ref(url, workspace=workspace) != commit:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the server did not answer from {commit} in {timeout:.0f} s")
        await anyio.sleep(0.25)
