"""docshelf runs on POSIX systems only: its locks are fcntl locks, and it opens documentation
files with O_NOFOLLOW so that no symbolic link is ever followed. Importing this module (the first
thing ``docshelf`` does) fails elsewhere with an ImportError that says so, instead of an
AttributeError deep inside a command."""

from __future__ import annotations

import os

POSIX_ONLY = (
    "docshelf needs a POSIX system (Linux, macOS): it uses fcntl locks and O_NOFOLLOW; "
    "on Windows run it under WSL"
)


def require_posix() -> None:
    """Raise ImportError unless this is a POSIX system."""
    if os.name != "posix":
        raise ImportError(POSIX_ONLY)


require_posix()
