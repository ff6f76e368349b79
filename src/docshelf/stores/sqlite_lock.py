"""The SQLite store's indexing lock of a workspace: an flock on a file beside the database, so the
kernel releases it when its holder exits, however it exits; a threading lock per file in this
process makes the threads of one process wait for each other as plainly.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from docshelf.errors import StoreError
from docshelf.stores.common import check_timeout, lock_busy, poll_until

# Hex digits of a workspace's hash in the name of its lock file: any workspace name becomes a safe
# file name, and 64 bits keep two workspaces of one store from sharing a file.
LOCK_NAME_HEX_DIGITS = 16

# The indexing lock file is for this user only, as the database should be.
LOCK_FILE_MODE = 0o600


@contextmanager
def workspace_lock(
    store_path: Path, location: str, workspace: str, timeout_seconds: float
) -> Iterator[None]:
    """Hold the indexing lock of `workspace` of the store at `store_path` for the block, waiting
    up to `timeout_seconds`; see SQLiteStore.workspace_lock."""
    waited = check_timeout(timeout_seconds)
    deadline = time.monotonic() + waited
    path = lock_path(store_path, workspace)
    in_process = _PROCESS_LOCKS.get(os.path.realpath(path))
    if not in_process.acquire(timeout=_lock_wait(deadline)):
        raise lock_busy(workspace, location, waited)
    try:
        fd = _open_lock_file(path)
        try:
            if not poll_until(lambda: _try_flock(fd), deadline):
                raise lock_busy(workspace, location, waited)
            try:
                yield
            finally:
                # Also for a child that was forked with this descriptor and shares the lock.
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    finally:
        in_process.release()


def lock_path(store_path: Path, workspace: str) -> Path:
    digest = hashlib.sha256(workspace.encode("utf-8", "surrogatepass")).hexdigest()
    return store_path.with_name(f"{store_path.name}.{digest[:LOCK_NAME_HEX_DIGITS]}.lock")


class _ProcessLocks:
    """One threading lock per lock file, shared by every store object of this process."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def get(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def reset(self) -> None:
        # In a forked child only its forking thread runs: locks held by the parent's other
        # threads would never be released there. The flock still excludes the parent.
        self._guard = threading.Lock()
        self._locks = {}


_PROCESS_LOCKS = _ProcessLocks()
os.register_at_fork(after_in_child=_PROCESS_LOCKS.reset)


def _lock_wait(deadline: float) -> float:
    """What threading.Lock.acquire takes as the time left: -1 for as long as it takes."""
    left = deadline - time.monotonic()
    return -1 if left > threading.TIMEOUT_MAX else max(left, 0.0)


def _open_lock_file(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, LOCK_FILE_MODE)
    except OSError as e:
        raise StoreError(
            f"cannot open the indexing lock file {path}: {e.strerror}. Check that this user may "
            "write the store's folder"
        ) from e


def _try_flock(fd: int) -> bool:
    """Take the flock of `fd` if no one else has it; whether it was taken."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as e:
        raise StoreError(
            f"cannot lock the indexing lock file: {e.strerror}. Keep the store on a local "
            "file system, which supports flock"
        ) from e
    return True
