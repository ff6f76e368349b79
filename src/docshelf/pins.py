"""Pins: the refs a process keeps out of every prune, each a store row with a lease that one
daemon thread renews.

Constraints:
- A pin lives in the store, so every process sharing it sees it (`prune` reads the live pins inside
  its own write transaction); the lease ends a pin whose process died without releasing it.
- One thread renews every pin of a keeper each third of the lease, so two renewals may fail before
  a pin lapses; a lapsed pin is taken again.
- Release is idempotent, and a failed release is logged, never raised: the lease ends it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from docshelf.errors import DocshelfError

log = logging.getLogger("docshelf.indexer")


class PinStore(Protocol):
    """What pins need of a store."""

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str: ...

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]: ...

    def remove_pin(self, pin_id: str) -> None: ...


def default_holder() -> str:
    """Who holds a pin, as shown by `docshelf status`: this host and process."""
    return f"{socket.gethostname()}:{os.getpid()}"


class PinKeeper:
    """The pins one process holds in one workspace of a store: pin id -> ref."""

    def __init__(self, store: PinStore, workspace: str, holder: str, lease: float) -> None:
        self._store = store
        self._workspace = workspace
        self._holder = holder
        self._lease = lease
        self._refs: dict[str, str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def pin(self, ref: str) -> Callable[[], None]:
        """Keep `ref` out of every prune, in every process sharing the store, until the
        returned release is called. Release is idempotent; two pins need two releases.

        Raises:
            StoreError: the pin could not be recorded.
        """
        pin_id = self._store.add_pin(self._workspace, ref, self._holder, self._lease)
        with self._lock:
            self._refs[pin_id] = ref
            self._start_renewing()

        def release() -> None:
            with self._lock:
                if self._refs.pop(pin_id, None) is None:
                    return
            try:
                self._store.remove_pin(pin_id)
            except DocshelfError as e:  # the lease ends it soon enough
                log.warning("releasing the pin of %s: %s; it expires with its lease", ref, e)

        return release

    def refs(self) -> list[str]:
        """The refs pinned here, one entry per pin."""
        with self._lock:
            return sorted(self._refs.values())

    def _start_renewing(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew_loop, name="docshelf-pins", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        # A third of the lease: two renewals may fail before a pin lapses.
        while not self._stop.wait(self._lease / 3):
            with self._lock:
                held = dict(self._refs)
            if not held:
                continue
            try:
                alive = self._store.renew_pins(list(held), self._lease)
            except DocshelfError as e:
                log.warning("renewing pins: %s; retrying", e)
                continue
            for pin_id in held.keys() - alive:
                self._repin(pin_id, held[pin_id])

    def _repin(self, old: str, ref: str) -> None:
        """A pin whose lease lapsed (the process was suspended, the store was down) is taken
        again; its ref may have been pruned meanwhile, and searches then say so."""
        log.warning("the pin of %s in workspace %s lapsed; pinning it again", ref, self._workspace)
        try:
            new = self._store.add_pin(self._workspace, ref, self._holder, self._lease)
        except DocshelfError as e:
            log.warning("pinning %s again: %s", ref, e)
            return
        with self._lock:
            if self._refs.pop(old, None) is None:  # released meanwhile
                drop = True
            else:
                self._refs[new] = ref
                drop = False
        if drop:
            self._store.remove_pin(new)

    def close(self) -> None:
        """Release every pin held here and stop renewing them."""
        self._stop.set()
        with self._lock:
            held = list(self._refs)
            self._refs.clear()
        for pin_id in held:
            try:
                self._store.remove_pin(pin_id)
            except DocshelfError as e:
                log.warning("releasing a pin on close: %s; it expires with its lease", e)
        if self._thread is not None:
            self._thread.join()
