"""`docshelf index`'s progress: a bar redrawn on a terminal, or JSON events for a tool that wraps
the command (`--json`), both from the indexer's Progress reports.

Constraints:
- stderr only: stdout carries the command's result (the summary, or its one JSON object).
- The rate and the time left count the embedding only, from the first batch done: reading and
  loading the model come before it and would make the first estimates wrong.
- The time left counts the embedding's work, not its chunks, where the report states it
  (`work_done` of `work_total`: characters of input, each text capped where the model's window
  is full). The indexer embeds short texts first, so a count of chunks would promise far too
  little time left.
- Never slows indexing: the bar is redrawn, and an event written while embedding, at most every
  so often; a phase's change is always shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class Progress(Protocol):
    """What a report says (indexer.Progress has it): imports nothing of docshelf."""

    @property
    def phase(self) -> str: ...
    @property
    def files(self) -> int: ...
    @property
    def chunks(self) -> int: ...
    @property
    def embedded(self) -> int: ...
    @property
    def to_embed(self) -> int: ...
    @property
    def reused(self) -> int: ...
    @property
    def work_done(self) -> int: ...
    @property
    def work_total(self) -> int: ...


# Width of the progress bar of `docshelf index`, in characters.
PROGRESS_BAR_WIDTH = 24

# The bar is redrawn at most this often: often enough to look alive, rarely enough that a fast
# index of small files is not slowed down by the terminal.
PROGRESS_REDRAW_SECONDS = 0.1

# A JSON progress event while embedding is written at most this often (each phase's first and
# last report always are).
PROGRESS_EVENT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast the embedding goes, and how long it has left (None until it can be told)."""

    rate: float | None  # chunks embedded per second
    seconds_left: float | None


class _Clock:
    """The embedding's pace, measured from its first report with a batch done."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._first: tuple[float, int, int] | None = None

    def pace(self, p: Progress) -> Pace:
        now = self._now()
        if p.phase != "embedding" or p.embedded == 0:
            return Pace(None, None)
        if self._first is None:
            self._first = (now, p.embedded, p.work_done)
            return Pace(None, None)
        since, embedded, work = self._first
        if now <= since or p.embedded <= embedded:
            return Pace(None, None)
        rate = (p.embedded - embedded) / (now - since)
        if p.work_total > 0 and p.work_done > work:
            work_rate = (p.work_done - work) / (now - since)
            return Pace(rate, max(p.work_total - p.work_done, 0) / work_rate)
        return Pace(rate, max(p.to_embed - p.embedded, 0) / rate)


def clock_text(seconds: float) -> str:
    """A duration as a person reads it: `42 s`, `3 min 05 s`, `1 h 02 min`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class _Reporter:
    """What the bar and the events share: where to write, the clock, and when a report is due
    (each phase's first and last always; in between, at most every `every` seconds)."""

    every = PROGRESS_EVENT_SECONDS

    def __init__(
        self, write: Callable[[str], None], now: Callable[[], float] = time.perf_counter
    ) -> None:
        self._write = write
        self._now = now
        self._clock = _Clock(now)
        self._last = -self.every
        self._phase = ""

    def _due(self, p: Progress) -> Pace | None:
        """The pace when `p` is to be shown, else None."""
        pace = self._clock.pace(p)
        now = self._now()
        if p.phase == self._phase and _midway(p) and now - self._last < self.every:
            return None
        self._last, self._phase = now, p.phase
        return pace


class ProgressBar(_Reporter):
    """One line on stderr, redrawn as indexing goes: the phase, a bar, files, chunks done of all,
    embedded and reused, and while embedding chunks per second and the time left."""

    every = PROGRESS_REDRAW_SECONDS
    _width = 0

    def update(self, p: Progress) -> None:
        pace = self._due(p)
        if pace is None:
            return
        # Once embedded (or with no model, where nothing is), every chunk counts as done.
        done = p.chunks if p.phase in ("writing", "done") else p.embedded + p.reused
        share = 1.0 if not p.chunks else done / p.chunks
        filled = round(share * PROGRESS_BAR_WIDTH)
        bar = "#" * filled + "-" * (PROGRESS_BAR_WIDTH - filled)
        line = (
            f"{p.phase:<9} [{bar}] {p.files} files, {done}/{p.chunks} chunks "
            f"({p.embedded} embedded, {p.reused} reused)"
        )
        if pace.rate is not None and pace.seconds_left is not None:
            line += f", {pace.rate:.1f} chunks/s, {clock_text(pace.seconds_left)} left"
        self._write("\r" + line.ljust(self._width))
        self._width = len(line)

    def finish(self) -> None:
        if self._width:
            self._write("\n")


class ProgressEvents(_Reporter):
    """One JSON object per line on stderr for each step worth telling: `{"event": "progress",
    "phase", "files", "chunks", "embedded", "to_embed", "reused", "chunks_per_second",
    "seconds_left"}` (the last two null until the pace is known)."""

    def update(self, p: Progress) -> None:
        pace = self._due(p)
        if pace is not None:
            self._write(json.dumps(progress_event(p, pace)) + "\n")


def progress_event(p: Progress, pace: Pace) -> dict[str, Any]:
    return {
        "event": "progress",
        "phase": p.phase,
        "files": p.files,
        "chunks": p.chunks,
        "embedded": p.embedded,
        "to_embed": p.to_embed,
        "reused": p.reused,
        "chunks_per_second": None if pace.rate is None else round(pace.rate, 2),
        "seconds_left": None if pace.seconds_left is None else round(pace.seconds_left, 1),
    }


def _midway(p: Progress) -> bool:
    """An embedding report that is neither the phase's first nor its last."""
    return p.phase == "embedding" and 0 < p.embedded < p.to_embed
