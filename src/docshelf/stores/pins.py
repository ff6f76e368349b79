"""What both stores share about pins and the per-workspace indexing lock.

A pin is a row with a lease: its holder renews it while it runs; a holder that dies stops renewing,
and its pins expire, so no ref stays pinned by a process that is gone. The indexing lock is held
by the operating system (SQLite: flock) or by the server (PostgreSQL: a session's advisory lock),
so it too ends with its holder, however the holder ends.
"""

from __future__ import annotations

import math
import secrets

from docshelf.errors import ConfigError, StoreError

# Random bytes of a pin's id: 128 bits, so ids made by any number of processes never collide.
PIN_ID_BYTES = 16

# The longest lease: a pin is meant to be renewed by a running holder. A year keeps every expiry
# far inside both stores' ranges of time (PostgreSQL's timestamps end in the year 294276).
MAX_LEASE_SECONDS = 366 * 24 * 3600.0

# Seconds between tries of an indexing lock that another holder has: a waiter starts within this
# of the holder's end, and 20 tries a second cost the database nothing.
LOCK_POLL_SECONDS = 0.05


def new_pin_id() -> str:
    return secrets.token_hex(PIN_ID_BYTES)


def check_lease(lease_seconds: float) -> float:
    """The lease as a float.

    Raises:
        ConfigError: it is not a positive, finite number of seconds of at most a year.
    """
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, int | float)
        or not math.isfinite(lease_seconds)
        or not 0 < lease_seconds <= MAX_LEASE_SECONDS
    ):
        raise ConfigError(
            f"a pin's lease must be a number of seconds above 0 and at most "
            f"{MAX_LEASE_SECONDS:.0f} (a year): {lease_seconds!r}; renew a pin to keep it longer"
        )
    return float(lease_seconds)


def check_timeout(timeout_seconds: float) -> float:
    """The wait for the indexing lock as a float (inf: wait as long as it takes).

    Raises:
        ConfigError: it is negative or not a number.
    """
    if (
        isinstance(timeout_seconds, bool)
        or not isinstance(timeout_seconds, int | float)
        or not timeout_seconds >= 0  # also NaN
    ):
        raise ConfigError(
            f"the wait for the indexing lock must be 0 or more seconds: {timeout_seconds!r}"
        )
    return float(timeout_seconds)


def lock_busy(workspace: str, location: str, waited: float) -> StoreError:
    return StoreError(
        f"another docshelf process is indexing workspace {workspace!r} in {location} "
        f"(waited {waited:g} s); wait for it to finish, or stop it, then index again"
    )
