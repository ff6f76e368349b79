"""A Python snippet run in a process of its own (what it imports is its own), offline."""

from __future__ import annotations

import os
import subprocess
import sys


def python_process(code: str, *args: str) -> str:
    """Run `code` with `args` as sys.argv[1:]; its stdout, stripped. Fails the test on an error."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
