"""Clone URLs: each is mirrored once (`git clone --mirror`, finished under a temporary name so an
interrupted clone is never taken for a mirror) and fetched on every sync."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from docshelf.config import GIT_FETCH_TIMEOUT_SECONDS
from docshelf.errors import WorkspaceError
from docshelf.workspace.docs import shown
from docshelf.workspace.git import GitWorkspace, run_git
from docshelf.workspace.redaction import redact_url
from docshelf.workspace.selection import Selection


def open_url(
    url: str, selection: Selection, chosen: bool, name: str | None, mirrors_dir: Path
) -> GitWorkspace:
    display = redact_url(url)
    digest = hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()
    mirrors_dir = Path(os.path.abspath(mirrors_dir))
    # Named from the URL without its secrets: a path-less URL would name it by its password.
    mirror = mirrors_dir / f"{_readable_name(display)}-{digest[:16]}.git"
    fresh = False
    if not mirror.exists():
        try:
            mirrors_dir.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix=f".{mirror.name}.", dir=mirrors_dir))
        except OSError as e:
            raise WorkspaceError(
                f"cannot make the mirror folder {shown(mirrors_dir)} ({e.strerror}); check its "
                "permissions or choose another place for mirrors"
            ) from e
        try:
            run_git(
                ["clone", "--mirror", "--quiet", "--", url, str(partial)],
                purpose=f"cloning {display}",
                next_step="check the URL, the network and your access to the repository",
                timeout=GIT_FETCH_TIMEOUT_SECONDS,
                secret_url=url,
            )
            try:
                # Only a finished clone gets the mirror's name; an interrupted one stays partial.
                partial.rename(mirror)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not mirror.is_dir():
                    raise WorkspaceError(
                        f"cannot put the mirror of {display} in place at {shown(mirror)} "
                        f"({e.strerror}); check the folder's permissions"
                    ) from e
                # Another process cloned the same URL first: use its mirror.
            else:
                fresh = True
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return GitWorkspace(
        mirror,
        name=name or display,
        selection=selection,
        chosen=chosen,
        url=url,
        fresh=fresh,
    )


def _readable_name(url: str) -> str:
    """The last part of a URL's path, as a file name: git@host:team/api.git -> api."""
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    tail = tail.removesuffix(".git")
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip(".-")
    return cleaned[:48] or "repository"
