"""The SQLite store's indexing lock of a workspace: an flock on a file in this user's runtime
folder, so the kernel releases it when its holder exits, however it exits, and nothing is left
beside the store; a threading lock per file in this process makes the threads of one process
wait for each other as plainly.

- The runtime folder is `docshelf` in $XDG_RUNTIME_DIR, else in /run/user/UID where the system
  makes that folder (so a job without a login session agrees with one), else `docshelf-UID` in
  the temporary folder. Each must be this user's own folder, not a link, closed to other users
  (a lock file is opened with O_NOFOLLOW too). The processes sharing a store run as one user
  and find the same folder.
- A lock file is named by the store file's device and inode and a hash of the workspace: every
  path to one store (a link, a relative path) takes the same lock, and any workspace name makes
  a safe file name. The files are a few bytes of nothing; the system clears the folder at
  logout or boot, and a lock is only ever taken on a store that exists.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import tempfile
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

# The lock files and their folder are for this user only, as the database should be.
LOCK_FILE_MODE = 0o600
LOCK_FOLDER_MODE = 0o700

# The folder of the lock files inside a runtime folder, and the base of its name in the
# temporary folder, where the user's id is added to it.
LOCK_FOLDER_NAME = "docshelf"

# Where systemd-logind makes each user's runtime folder (/run/user/UID), which $XDG_RUNTIME_DIR
# names in a login session.
RUN_USER = "/run/user"

# Bits that would let another user into a runtime folder.
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


@contextmanager
def workspace_lock(
    store_path: Path, location: str, workspace: str, timeout_seconds: float
) -> Iterator[None]:
    """Hold the indexing lock of `workspace` of the store at `store_path` for the block, waiting
    up to `timeout_seconds`; see SQLiteStore.workspace_lock.

    Raises:
        ConfigError: the timeout is negative or not a number.
        StoreError: another holder kept the lock for the whole wait, or the lock file cannot be
            opened.
    """
    waited = check_timeout(timeout_seconds)
    deadline = time.monotonic() + waited
    path = runtime_folder() / lock_name(store_path, location, workspace)
    in_process = _PROCESS_LOCKS.get(str(path))
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


def runtime_folder() -> Path:
    """This user's folder of lock files, made when it is missing.

    Raises:
        StoreError: the one in the temporary folder (the last resort) is a link, not a folder,
            another user's or open to other users, or cannot be made.
    """
    user = os.geteuid()
    # The platform's place for this user's runtime files, as tempfile reads TMPDIR: no setting
    # of docshelf's, so it is read here rather than passed down from the configuration.
    given = os.environ.get("XDG_RUNTIME_DIR", "")
    for base in (given, f"{RUN_USER}/{user}"):
        if os.path.isabs(base) and _private(base, user):
            folder = os.path.join(base, LOCK_FOLDER_NAME)
            if _made_private(folder, user):
                return Path(folder)
    folder = os.path.join(tempfile.gettempdir(), f"{LOCK_FOLDER_NAME}-{user}")
    if not _made_private(folder, user):
        raise StoreError(
            f"cannot use {folder} for the indexing lock: it must be this user's own folder, not "
            "a link, and closed to other users. Remove it, or set XDG_RUNTIME_DIR to a folder "
            "of your own"
        )
    return Path(folder)


def lock_name(store_path: Path, location: str, workspace: str) -> str:
    """The name of the lock file of `workspace` of the store at `store_path`.

    Raises:
        StoreError: the store file cannot be found.
    """
    try:
        found = os.stat(store_path)
    except OSError as e:
        raise StoreError(
            f"cannot take the indexing lock of {location}: {e.strerror}. Check that the store "
            "is still there"
        ) from e
    digest = hashlib.sha256(workspace.encode("utf-8", "surrogatepass")).hexdigest()
    return f"sqlite-{found.st_dev:x}-{found.st_ino:x}-{digest[:LOCK_NAME_HEX_DIGITS]}.lock"


def _private(folder: str, user: int) -> bool:
    """Whether `folder` is a folder (not a link) of `user`'s that no other user may enter."""
    try:
        found = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == user and not found.st_mode & _OTHERS


def _made_private(folder: str, user: int) -> bool:
    """Make `folder` for `user` alone when it is missing; whether it is private (_private)."""
    try:
        os.mkdir(folder, LOCK_FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError:
        return False
    return _private(folder, user)


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
            f"write {path.parent}, or set XDG_RUNTIME_DIR to a folder of your own"
        ) from e


def _try_flock(fd: int) -> bool:
    """Take the flock of `fd` if no one else has it; whether it was taken."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as e:
        raise StoreError(
            f"cannot lock the indexing lock file: {e.strerror}. Keep the runtime folder on a "
            "local file system, which supports flock"
        ) from e
    return True
