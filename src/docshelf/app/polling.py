"""A server's background sync: each round, the workspaces chosen again (a manifest read again),
then each workspace with a source checked once, at its own moment of the interval.

Constraints:
- Checks are spread over the interval (a shuffled order, each at a random point of its own
  slot), so that a thousand remotes are never polled in one burst, and at most `jobs` run at
  once. A check is one `git ls-remote` for a clone URL that did not move: no fetch.
- The first round checks every workspace at once (bounded by `jobs`): a server that starts
  behind catches up before it spreads its checks.
- Commits are indexed one at a time, in this thread, as their checks finish: the one model is
  never asked by two indexings at once.
- Check threads are daemons: a check waiting on the network never holds the process at exit.
- A round that indexed a commit ends with a merge of the store's term lists, when the current
  refs have moved on enough (Service.merge_lists), in this thread too.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docshelf.app.service import Reloaded, Service
    from docshelf.indexer import IndexResult

_log = logging.getLogger("docshelf.app")

# A round waits for check results at most this long at a time, to notice a stop.
_TICK_SECONDS = 0.5


def spread(labels: Sequence[str], interval: float, rng: random.Random) -> list[tuple[float, str]]:
    """When each workspace is checked, in seconds from the start of a round of `interval`
    seconds: a shuffled order, the interval cut in one slot per workspace, each at a random
    point of its slot (so two servers of one manifest do not poll in step)."""
    order = list(labels)
    rng.shuffle(order)
    slot = interval / len(order) if order else 0.0
    return [((i + rng.random()) * slot, label) for i, label in enumerate(order)]


class Poller:
    """The rounds of a service's background sync, every `interval` seconds until stopped.
    `indexed` hears of each commit indexed, `reloaded` of each reload."""

    def __init__(
        self,
        service: Service,
        interval: float,
        *,
        jobs: int,
        indexed: Callable[[str, IndexResult], None] | None = None,
        reloaded: Callable[[Reloaded], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._service = service
        self._interval = interval
        self._jobs = max(1, jobs)
        self._indexed = indexed
        self._reloaded = reloaded
        self._rng = rng or random.Random()
        self.rounds = 0

    def run(self, stop: threading.Event) -> None:
        """Rounds until `stop` is set, each starting `interval` seconds after the last one
        started (or at once, when a round took longer)."""
        while not stop.is_set():
            started = time.monotonic()
            self.round(stop, 0.0 if self.rounds == 0 else self._interval)
            stop.wait(max(0.0, started + self._interval - time.monotonic()))

    def round(self, stop: threading.Event, within: float) -> None:
        """One round: reload, then check every workspace with a source, spread over `within`
        seconds, indexing each new commit as its check finishes."""
        self.rounds += 1
        service = self._service
        reloaded = service.reload()
        if reloaded is not None:
            if reloaded.error is not None:
                _log.error("reloading the workspaces: %s", reloaded.error)
            if self._reloaded is not None:
                self._reloaded(reloaded)
        plan = deque(spread(service.syncable, within, self._rng))
        results: queue.Queue[tuple[str, str | BaseException | None]] = queue.Queue()
        started = time.monotonic()
        running = 0
        indexed = False
        while (plan or running) and not stop.is_set():
            now = time.monotonic()
            while plan and running < self._jobs and started + plan[0][0] <= now:
                label = plan.popleft()[1]
                running += 1
                threading.Thread(
                    target=_check,
                    args=(service, label, results),
                    name="docshelf-check",
                    daemon=True,
                ).start()
            wait = _TICK_SECONDS
            if plan and running < self._jobs:
                wait = min(wait, max(0.0, started + plan[0][0] - time.monotonic()))
            try:
                label, outcome = results.get(timeout=wait)
            except queue.Empty:
                continue
            running -= 1
            indexed = self._refresh(label, outcome) or indexed
        if indexed and not stop.is_set():
            # One merge a round, after its commits: the lists of the refs they made current
            # are read from their own rows until then.
            service.merge_lists()

    def _refresh(self, label: str, outcome: str | BaseException | None) -> bool:
        """Index the commit a check found; whether a commit was indexed."""
        if isinstance(outcome, BaseException):  # a bug in one check: the rounds go on
            _log.error("syncing %s failed unexpectedly", label, exc_info=outcome)
            return False
        if outcome is None:  # the check failed; it was logged, and the status says so
            return False
        try:
            result = self._service.refresh(label, outcome)
        except Exception:  # the loop must outlive a bug in one step
            _log.exception("indexing %s", label)
            return False
        if result is None or result.already_indexed:
            return False
        if self._indexed is not None:
            self._indexed(label, result)
        return True


def _check(
    service: Service, label: str, results: queue.Queue[tuple[str, str | BaseException | None]]
) -> None:
    try:
        results.put((label, service.check(label)))
    except BaseException as e:  # handed to the round's thread
        results.put((label, e))
