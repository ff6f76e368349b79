"""A real PostgreSQL streaming replica for the tests of `serve --read-store`: a primary of its
own (pgserver), and a hot standby made from it with pgserver's own binaries (pg_basebackup -R
writes standby.signal and the primary's conninfo), both on Unix sockets under /tmp. The primary
is a server of the test's own, since a test stops it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pgserver
import psycopg
from pgserver import _commands as pg

from tests.conftest import STARTING_LOCK

# Starting or stopping a server, or the standby catching up, on a busy two-core machine.
SERVER_SECONDS = 60.0


@dataclass
class Pair:
    """A primary and its hot standby: their URLs for one database, and the controls a test
    needs (pause the standby's replay, wait for it to catch up, stop the primary)."""

    primary: str
    standby: str
    primary_data: Path
    standby_data: Path
    user: str | None

    def pause_replay(self) -> None:
        with psycopg.connect(self.standby, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        with psycopg.connect(self.standby, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def caught_up(self) -> None:
        """Wait until the standby has replayed all the primary has written so far."""
        with psycopg.connect(self.primary, autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        deadline = time.monotonic() + SERVER_SECONDS
        with psycopg.connect(self.standby, autocommit=True) as conn:
            while True:
                done = conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)
                ).fetchone()
                if done and done[0]:
                    return
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.05)

    def stop_primary(self) -> None:
        pg.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=self.primary_data, user=self.user)


def _socket_dir(where: Path, user: str | None) -> Path:
    made = where / "sockets"
    made.mkdir()
    made.chmod(0o777)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(made, entry.pw_uid, entry.pw_gid)
    return made


@contextlib.contextmanager
def primary_and_standby(database: str = "org") -> Iterator[Pair]:
    """A new primary holding `database` (empty), and a hot standby of it, both running; both
    stopped and removed after."""
    where = Path(tempfile.mkdtemp(prefix="docshelf-replica-", dir="/tmp"))
    where.chmod(0o755)
    with open(STARTING_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        server = pgserver.get_server(where / "primary", cleanup_mode="stop")
    user = server.system_user
    if user is not None:  # as root, the servers run as pgserver's own user: it writes here
        entry = pwd.getpwnam(user)
        os.chown(where, entry.pw_uid, entry.pw_gid)
    standby_data = where / "standby"
    started = False
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        socket = server.get_postmaster_info().socket_dir
        assert socket is not None
        standby_data.mkdir(mode=0o700)
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(standby_data, entry.pw_uid, entry.pw_gid)
        backup = ["-D", str(standby_data), "-R", "-X", "stream", "-c", "fast"]
        pg.pg_basebackup(
            [*backup, "-h", str(socket), "-U", "postgres"],
            user=user,
            timeout=SERVER_SECONDS,
        )
        sockets = _socket_dir(where, user)
        pg.pg_ctl(
            ["-w", "-o", '-h ""', "-o", f"-k {sockets}", "-l", str(where / "standby.log"), "start"],
            pgdata=standby_data,
            user=user,
            timeout=SERVER_SECONDS,
        )
        started = True
        standby = f"postgresql://postgres:@/{database}?host={sockets}"
        yield Pair(server.get_uri(database), standby, server.pgdata, standby_data, user)
    finally:
        if started:
            with contextlib.suppress(subprocess.CalledProcessError):
                pg.pg_ctl(["-m", "immediate", "-w", "stop"], pgdata=standby_data, user=user)
        server.cleanup()
        shutil.rmtree(where, ignore_errors=True)
