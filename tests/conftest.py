"""Shared test set-up: hypothesis profiles, the read-only shared data beside the checkout, and a
real PostgreSQL 16 with pgvector from the `pgserver` package.

One PostgreSQL server per test session, started when a test first asks for it, its data directory
under /tmp (as root, pgserver runs the server as its own `pgserver` user, which cannot enter
/root), stopped and removed at the end. Each test gets its own database.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pgserver
import psycopg
import pytest
from hypothesis import HealthCheck, settings

from docshelf.stores import SQLiteStore, open_store
from docshelf.stores.postgres import PostgresStore
from tests.support.indexing import DIM, MODEL

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# `make test` stays quick; HYPOTHESIS_PROFILE=thorough (minutes) or long (hours) fuzz harder.
settings.register_profile(
    "default", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=5_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, which CI lays beside the checkout. Missing data fails, never skips."""
    assert SHARED_DATA.is_dir(), f"{SHARED_DATA} is missing: the tests read ../shared/data"
    return SHARED_DATA


_DATABASES = itertools.count()

# Held while a test process starts its PostgreSQL server.
STARTING_LOCK = "/tmp/docshelf-pgserver-start.lock"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pgserver.PostgresServer]:
    data = Path(tempfile.mkdtemp(prefix="docshelf-pg-", dir="/tmp"))
    # `make test` runs the tests in several processes (pytest-xdist), each with its own server.
    # As root, pgserver creates its system user on first use with useradd: one process at a time.
    with open(STARTING_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: pgserver.PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    name = f"docshelf_test_{next(_DATABASES)}"
    admin = postgres_server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.get_uri(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store location on each store in turn: a SQLite file, then a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "docshelf.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(location: str) -> Iterator[SQLiteStore | PostgresStore]:
    """An open store at `location`, for the fake embedder's model and width."""
    opened = open_store(location, model_id=MODEL, dim=DIM)
    yield opened
    opened.close()
