"""Shared test set-up: hypothesis profiles and the read-only shared data beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

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
