"""A real git repository built by a test: write files, make links and submodules, commit.

Git runs with a fixed identity and without the user's or the system's configuration, so a
signing or hook setting on a developer's machine cannot change what the tests build.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "docshelf tests",
    "GIT_AUTHOR_EMAIL": "tests@docshelf.invalid",
    "GIT_COMMITTER_NAME": "docshelf tests",
    "GIT_COMMITTER_EMAIL": "tests@docshelf.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}
for _name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS"):
    _ENV.pop(_name, None)


class Repo:
    """A git work tree at `path`, created empty on branch main."""

    def __init__(self, path: Path, *, object_format: str = "sha1") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main", f"--object-format={object_format}")

    @property
    def url(self) -> str:
        """A file:// clone URL of this repository."""
        return self.path.resolve().as_uri()

    def git(self, *args: str, input: bytes | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=_ENV,
            input=input,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
        return done.stdout.decode("utf-8", "surrogateescape").strip()

    def write(self, path: str, content: str | bytes) -> Path:
        """Write a file (its directories made as needed); str is written as UTF-8."""
        full = self.path / path
        full.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        full.write_bytes(data)
        return full

    def symlink(self, path: str, target: str) -> Path:
        full = self.path / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.symlink_to(target)
        return full

    def remove(self, path: str) -> None:
        self.git("rm", "-r", "--quiet", "--", path)

    def commit(self, message: str = "change") -> str:
        """Commit everything in the work tree; returns the new commit id."""
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str) -> None:
        self.git("branch", "--", name)

    def checkout(self, name: str) -> None:
        self.git("checkout", "--quiet", name, "--")

    def tag(self, name: str) -> None:
        self.git("tag", "--", name)

    def add_submodule(self, path: str, other: Repo) -> None:
        """Add `other` (which needs a commit) as a submodule at `path`; commit to record it."""
        self.git("-c", "protocol.file.allow=always", "submodule", "--quiet", "add", other.url, path)


def write_shop_docs(repo: Repo) -> None:
    """The two pages the command-line tests ask about: who owns Checkout, and the payment
    gateway's timeout (not committed)."""
    repo.write(
        "docs/services/checkout.md",
        "# Checkout\n\n## Owners\n\nCheckout is owned by the Payments team; page them on call.\n",
    )
    repo.write(
        "docs/runbooks/payments.md",
        "# Payments runbook\n\n## Timeout\n\nWhen the payment gateway times out, raise the "
        "timeout to 30 seconds and restart the worker.\n",
    )
