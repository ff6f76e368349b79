"""Sources of documentation: a git repository's docs at a commit, a plain directory's docs, and the
files a command names.

Constraints:
- A workspace's docs are read as they are at one ref, and only as data: git trees are listed and
  their blobs read from git's objects (nothing is checked out), so the index matches the commit
  whatever the work tree holds. A plain directory's snapshot is kept from the sync that read it,
  so the tree cannot change under the indexer.
- The content is untrusted. Symbolic links are never followed, in git or on disk, at any level
  (a link to /etc/passwd must never become documentation); on disk every step is opened relative
  to its parent's descriptor with O_NOFOLLOW, so a link swapped in during the walk is refused too.
  Submodules are not entered, files over MAX_DOC_BYTES are not read, and a file or a file name
  that is not UTF-8 is skipped by name rather than decoded with replacement characters, as is a
  file holding a NUL byte (binary) or a name holding a control character. What is skipped is
  reported with the reason, and logged.
- Git runs as a subprocess with `--end-of-options` before any revision a user supplies, no
  terminal prompts, and a timeout; passwords in clone URLs never reach a message or a name.
- Results are deterministic: files and skips sorted by path.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias
from urllib.parse import unquote, urlsplit

from docshelf.config import (
    DEFAULT_DOCS_ROOTS,
    GIT_FETCH_TIMEOUT_SECONDS,
    GIT_TIMEOUT_SECONDS,
    MARKDOWN_SUFFIXES,
    MAX_DOC_BYTES,
    TEXT_SUFFIXES,
)
from docshelf.errors import WorkspaceError

Kind = Literal["markdown", "text"]

log = logging.getLogger(__name__)

SYMLINK = "symbolic link, not followed"
SUBMODULE = "submodule, not read"
NAME_NOT_UTF8 = "file name is not UTF-8"
NAME_CONTROL = "file name has a control character"
BINARY = "binary, not text"
LEAVES_ROOT = "path leaves the docs root"
NOT_REGULAR = "not a regular file"

# Characters a path may not hold: a path is cited as one line ("path:line"), and a newline or an
# escape sequence in a name would let a file forge lines of a listing or a search result.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# A commit id as `git rev-parse` prints it: SHA-1, or SHA-256 in a repository that uses it.
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

# Clone URLs git understands, and scp-like user@host:path (a leading "-" would be an option).
_URL = re.compile(r"(?:https?|ssh|git|file)://", re.IGNORECASE)
_SCP_LIKE = re.compile(r"[^-/@:\s][^/@:\s]*@[^/:\s]+:")

# What git reads to find a repository (`git rev-parse --local-env-vars`): set by a git hook that
# runs docshelf, they would point every command at the hook's repository instead of ours.
_GIT_REPOSITORY_VARIABLES = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
    }
)

# The longest part of git's own error message quoted in ours.
_GIT_MESSAGE_CHARS = 300


@dataclass(frozen=True, slots=True)
class DocFile:
    """A documentation file: its path as shown to the user, its text and its kind."""

    path: str
    text: str
    kind: Kind


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory left out of a workspace's docs, and why (short, lower case)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Docs:
    """The docs of one ref: files and skips, each sorted by path relative to the workspace root."""

    files: list[DocFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def kind_of(name: str) -> Kind | None:
    """Which chunker a file gets by default, or None when docshelf does not read such files."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def shown(path: Path | str) -> str:
    """A path as one printable line: control characters and undecodable bytes escaped."""
    text = str(path)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class GitWorkspace:
    """A git repository: a local one, or the mirror of a clone URL. Build it with open_workspace."""

    def __init__(
        self,
        git_dir: Path,
        *,
        name: str,
        docs_roots: tuple[str, ...],
        url: str | None = None,
        fresh: bool = False,
    ) -> None:
        self.name = name
        self.git_dir = git_dir
        self.docs_roots = docs_roots
        self._url = url
        # A mirror cloned a moment ago needs no fetch before its first sync.
        self._fresh = fresh

    def __repr__(self) -> str:
        return f"GitWorkspace({self.name!r}, docs_roots={self.docs_roots!r})"

    def sync(self, rev: str | None = None) -> str:
        """Fetch (a mirror only), then resolve `rev` (default HEAD) to a full commit id.

        Raises:
            WorkspaceError: the fetch failed, or `rev` names no commit.
        """
        if self._url is not None and not self._fresh:
            display = redact_url(self._url)
            self._git(
                "fetch",
                "--prune",
                "--quiet",
                purpose=f"fetching {display} into {shown(self.git_dir)}",
                next_step=(
                    "check the network and your access to the repository; if the mirror is "
                    "damaged, delete that folder and index again"
                ),
                timeout=GIT_FETCH_TIMEOUT_SECONDS,
            )
        self._fresh = False
        return self.resolve(rev)

    def resolve(self, rev: str | None = None) -> str:
        """Resolve `rev` (default HEAD) to a full commit id, without fetching.

        Raises:
            WorkspaceError: `rev` names no commit.
        """
        wanted = "HEAD" if rev is None else rev
        if not wanted or not wanted.isprintable():
            raise WorkspaceError(
                f"{shown(wanted)!r} is not a revision; name a branch, a tag or a commit id"
            )
        done = self._git(
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{wanted}^{{commit}}",
            purpose=f"resolving {shown(wanted)} in {shown(self.name)}",
            next_step="name a branch, a tag or a commit id",
            check=False,
        )
        commit = done.stdout.decode("ascii", "replace").strip()
        if done.returncode != 0 or not _COMMIT_ID.fullmatch(commit):
            if done.stderr.strip():
                raise WorkspaceError(
                    f"resolving {shown(wanted)} in {shown(self.name)} failed: "
                    f"{_git_said(done.stderr)}; name a branch, a tag or a commit id"
                )
            raise WorkspaceError(
                f"{shown(self.name)}: {shown(wanted)} names no commit; name a branch, a tag or a "
                "commit id that exists there (git log --oneline --all lists them)"
            )
        return commit

    def read_docs(self, ref: str) -> Docs:
        """The documentation files under the docs roots at commit `ref`, read from git's objects.

        Raises:
            WorkspaceError: `ref` is not a full commit id of this repository, git fails, or no
                docs root holds any documentation file and nothing was skipped.
        """
        if not _COMMIT_ID.fullmatch(ref):
            raise WorkspaceError(
                f"{shown(ref)!r} is not a full commit id; pass the id that sync() returned"
            )
        roots = self.docs_roots
        listing = self._git(
            "--literal-pathspecs",
            "ls-tree",
            "-r",
            "-z",
            "--long",
            "--full-tree",
            # No --end-of-options: ref is hex, and after it ls-tree would take "--" for a path.
            ref,
            "--",
            *[os.fsencode(root) for root in roots if root != "."],
            purpose=f"listing the docs of commit {ref} in {shown(self.name)}",
            next_step="check that the commit exists there (git cat-file -t COMMIT)",
        ).stdout
        skipped = self._skipped_ancestors(ref)
        wanted: list[tuple[str, bytes, Kind]] = []
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, _type, oid, size = meta.split()
            path = raw_path.decode("utf-8", "surrogateescape")
            kind = kind_of(path)
            if not _is_under(path, roots):
                skipped.append(_skip(path, LEAVES_ROOT, logging.WARNING))
            elif mode == b"120000":
                skipped.append(_skip(path, SYMLINK))
            elif mode == b"160000":
                skipped.append(_skip(path, SUBMODULE))
            elif kind is None:
                continue
            elif mode not in (b"100644", b"100755"):
                skipped.append(_skip(path, NOT_REGULAR))
            elif not _is_utf8(path):
                skipped.append(_skip(path, NAME_NOT_UTF8, logging.WARNING))
            elif _CONTROL.search(path):
                skipped.append(_skip(path, NAME_CONTROL, logging.WARNING))
            elif int(size) > MAX_DOC_BYTES:
                skipped.append(_skip(path, _too_big(int(size))))
            else:
                wanted.append((path, oid, kind))
        files: list[DocFile] = []
        for (path, _oid, kind), data in zip(wanted, self._blobs(ref, wanted), strict=True):
            text, reason = _decoded(data)
            if text is None:
                skipped.append(_skip(path, reason, logging.WARNING))
            else:
                files.append(DocFile(path, text, kind))
        if not files and not skipped:
            raise WorkspaceError(
                f"{shown(self.name)}: no documentation files ({_suffixes()}) at commit {ref} "
                f"under {_listed(roots)}; name the directory that holds them with --docs DIR"
            )
        return _sorted_docs(files, skipped)

    def _skipped_ancestors(self, ref: str) -> list[Skipped]:
        """A docs root below a symbolic link or a submodule (docs/ a link, --docs docs/api) lists
        nothing: report the entry that stops it, as a plain directory's walk does."""
        ancestors = sorted(
            {"/".join(root.split("/")[:i]) for root in self.docs_roots for i in _depths(root)}
        )
        if not ancestors:
            return []
        listing = self._git(
            "--literal-pathspecs",
            "ls-tree",
            "-z",
            "--full-tree",
            ref,
            "--",
            *[os.fsencode(a) for a in ancestors],
            purpose=f"listing the docs roots of commit {ref} in {shown(self.name)}",
            next_step="check that the commit exists there (git cat-file -t COMMIT)",
        ).stdout
        skipped: list[Skipped] = []
        for record in listing.split(b"\0"):
            meta, _, raw_path = record.partition(b"\t")
            path = raw_path.decode("utf-8", "surrogateescape")
            if path in ancestors:
                mode = meta.split()[0]
                if mode == b"120000":
                    skipped.append(_skip(path, SYMLINK))
                elif mode == b"160000":
                    skipped.append(_skip(path, SUBMODULE))
        return skipped

    def _blobs(self, ref: str, wanted: Sequence[tuple[str, bytes, Kind]]) -> list[bytes]:
        """Every wanted blob through one `git cat-file --batch`, in order."""
        if not wanted:
            return []
        purpose = f"reading the docs of commit {ref} in {shown(self.name)}"
        out = self._git(
            "cat-file",
            "--batch",
            input=b"".join(oid + b"\n" for _path, oid, _kind in wanted),
            purpose=purpose,
            next_step="check the repository with git fsck",
        ).stdout
        blobs: list[bytes] = []
        at = 0
        for path, oid, _kind in wanted:
            end = out.find(b"\n", at)
            header = out[at:end].split() if end >= 0 else []
            if len(header) != 3 or header[0] != oid or header[1] != b"blob":
                said = shown(out[at : max(end, at)].decode("ascii", "replace"))
                raise WorkspaceError(
                    f"{purpose}: git answered {said!r} for {shown(path)}; "
                    "check the repository with git fsck"
                )
            size = int(header[2])
            blobs.append(out[end + 1 : end + 1 + size])
            at = end + 1 + size + 1
        return blobs

    def _git(
        self,
        *args: str | bytes,
        purpose: str,
        next_step: str,
        timeout: float = GIT_TIMEOUT_SECONDS,
        input: bytes | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        return _git(
            ["--git-dir", str(self.git_dir), *args],
            purpose=purpose,
            next_step=next_step,
            timeout=timeout,
            input=input,
            check=check,
            secret_url=self._url,
        )


class DirectoryWorkspace:
    """A plain directory that is not in a git repository. Build it with open_workspace."""

    def __init__(self, path: Path, *, name: str, docs_roots: tuple[str, ...]) -> None:
        self.name = name
        self.path = path
        self.docs_roots = docs_roots
        self._snapshot: tuple[str, Docs] | None = None

    def __repr__(self) -> str:
        return f"DirectoryWorkspace({self.name!r}, docs_roots={self.docs_roots!r})"

    def sync(self, rev: str | None = None) -> str:
        """Read the docs now and return their ref: the sha256 of their paths and contents (and of
        what was skipped), so it changes whenever a doc is edited, added, removed or renamed.

        Raises:
            WorkspaceError: a revision was named, the directory cannot be read, or it holds no
                documentation file and nothing was skipped.
        """
        if rev is not None:
            raise WorkspaceError(
                f"a plain directory has no revisions; leave out the revision {shown(rev)!r}, or "
                f"index a git repository ({shown(self.name)} is not in one)"
            )
        docs = _read_directory(self.path, self.docs_roots)
        if not docs.files and not docs.skipped:
            raise WorkspaceError(
                f"{shown(self.name)}: no documentation files ({_suffixes()}) under "
                f"{_listed(self.docs_roots)}; name the directory that holds them with --docs DIR"
            )
        ref = _digest(docs)
        self._snapshot = (ref, docs)
        return ref

    def resolve(self, rev: str | None = None) -> str:
        """A ref this directory was indexed at, as given: a plain directory has no revision
        names, only the refs its syncs returned.

        Raises:
            WorkspaceError: `rev` is not such a ref (64 hexadecimal digits).
        """
        if rev is None or not _COMMIT_ID.fullmatch(rev):
            raise WorkspaceError(
                f"a plain directory has no revisions; name a ref that docshelf index printed "
                f"for it (64 hexadecimal digits), not {shown(str(rev))!r}"
            )
        return rev

    def read_docs(self, ref: str) -> Docs:
        """The docs the sync() that returned `ref` read.

        Raises:
            WorkspaceError: `ref` is not the ref of the last sync.
        """
        if self._snapshot is None or self._snapshot[0] != ref:
            raise WorkspaceError(
                f"{shown(self.name)}: {shown(ref)!r} is not the ref this workspace last read; the "
                "directory changed or was not read yet; sync again and index the ref it returns"
            )
        return self._snapshot[1]


Workspace: TypeAlias = GitWorkspace | DirectoryWorkspace


def open_workspace(
    source: str,
    *,
    docs: Sequence[str] | None = None,
    name: str | None = None,
    mirrors_dir: Path,
) -> Workspace:
    """The workspace at `source`: a path or a clone URL (https://, http://, ssh://, git://,
    file://, or scp-like user@host:path).

    A path in a git work tree is that repository, its docs in `docs` (relative to the path) or,
    by default, the path itself when it is a subdirectory and DEFAULT_DOCS_ROOTS at the top level.
    A path outside any git repository is a plain directory, its docs in `docs` or the whole of it.
    A clone URL is mirrored into `mirrors_dir` (once; each sync fetches). The name defaults to the
    repository's top level, the directory's absolute path, or the URL without its password.

    Raises:
        WorkspaceError: the path is missing, the URL cannot be cloned, a docs root is absolute or
            leaves the workspace, or git fails.
    """
    roots = None if docs is None else _normalised_roots(docs)
    if _URL.match(source) or _SCP_LIKE.match(source):
        return _open_url(source, roots, name, mirrors_dir)
    return _open_path(source, roots, name)


def redact_url(url: str) -> str:
    """The URL without its secrets: the password, and for http(s) the whole user part, which is
    often a token (https://TOKEN@host/x, https://x-access-token:TOKEN@host/x). An ssh user name
    is kept: https://user:secret@host/x -> https://host/x, ssh://git:pw@host/x -> ssh://git@host/x.
    """
    if not _URL.match(url):
        return url
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url
    user = "" if parts.scheme.lower() in _HTTP_SCHEMES else userinfo.partition(":")[0]
    if user == userinfo:
        return url
    return parts._replace(netloc=f"{user}@{hostport}" if user else hostport).geturl()


# Schemes whose user part is dropped from names and messages: a token often stands there.
_HTTP_SCHEMES = ("http", "https")


def _open_url(
    url: str, roots: tuple[str, ...] | None, name: str | None, mirrors_dir: Path
) -> GitWorkspace:
    display = redact_url(url)
    digest = hashlib.sha256(url.encode("utf-8", "surrogateescape")).hexdigest()
    mirrors_dir = Path(os.path.abspath(mirrors_dir))
    mirror = mirrors_dir / f"{_readable_name(url)}-{digest[:16]}.git"
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
            _git(
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
        docs_roots=roots or DEFAULT_DOCS_ROOTS,
        url=url,
        fresh=fresh,
    )


def _open_path(source: str, roots: tuple[str, ...] | None, name: str | None) -> Workspace:
    path = Path(source)
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as e:
        raise _unreadable(path, e) from e
    if not exists:
        raise WorkspaceError(
            f"{shown(source)}: no such file or directory; check the path, or give a clone URL "
            "(https://..., ssh://..., user@host:path)"
        )
    if not is_dir:
        raise WorkspaceError(
            f"{shown(source)}: not a directory; name the repository or the directory that holds "
            "the docs (docshelf chunk reads single files)"
        )
    probe = _git(
        [
            "-C",
            str(path),
            "rev-parse",
            "--is-bare-repository",
            "--is-inside-git-dir",
            "--absolute-git-dir",
        ],
        purpose=f"looking for a git repository at {shown(source)}",
        next_step="fix the repository, or index a plain directory outside it",
        check=False,
    )
    if probe.returncode != 0:
        if b"not a git repository" not in probe.stderr:
            raise WorkspaceError(
                f"looking for a git repository at {shown(source)} failed: "
                f"{_git_said(probe.stderr)}; fix the repository, or index a plain directory "
                "outside it"
            )
        absolute = Path(os.path.abspath(path))
        return DirectoryWorkspace(absolute, name=name or str(absolute), docs_roots=roots or (".",))
    bare, in_git_dir, git_dir = os.fsdecode(probe.stdout).splitlines()
    if bare == "true":
        return GitWorkspace(
            Path(git_dir), name=name or git_dir, docs_roots=roots or DEFAULT_DOCS_ROOTS
        )
    if in_git_dir == "true":
        raise WorkspaceError(
            f"{shown(source)} is inside a repository's .git directory; name the repository's top "
            "level instead"
        )
    where = _git(
        ["-C", str(path), "rev-parse", "--show-toplevel", "--show-prefix"],
        purpose=f"finding the top level of the git repository at {shown(source)}",
        next_step="check the repository with git status",
    )
    top, prefix = (os.fsdecode(line) for line in where.stdout.split(b"\n")[:2])
    prefix = prefix.rstrip("/")
    if roots is None:
        roots = (prefix,) if prefix else DEFAULT_DOCS_ROOTS
    elif prefix:
        roots = tuple(prefix if root == "." else f"{prefix}/{root}" for root in roots)
    return GitWorkspace(Path(git_dir), name=name or top, docs_roots=roots)


def _normalised_roots(docs: Sequence[str]) -> tuple[str, ...]:
    """Docs roots as clean relative paths ("./docs/" -> "docs"), any root inside another dropped.

    Raises:
        WorkspaceError: none given, or one is absolute, empty or leaves the workspace.
    """
    if isinstance(docs, str):
        docs = [docs]
    if not docs:
        raise WorkspaceError(
            "no docs directory given; name one or more with --docs DIR (. for the whole tree)"
        )
    roots: set[str] = set()
    for given in docs:
        if given.startswith("/"):
            raise WorkspaceError(
                f"--docs {shown(given)}: an absolute path; name a directory inside the workspace, "
                "relative to its top, such as docs"
            )
        if not given or "\0" in given:
            raise WorkspaceError(
                f"--docs {shown(given)!r} is not a directory name; name one such as docs, or . "
                "for the whole tree"
            )
        parts = [part for part in given.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise WorkspaceError(
                f"--docs {shown(given)}: the path leaves the workspace; name a directory inside "
                "it, such as docs"
            )
        roots.add("/".join(parts) or ".")
    if "." in roots:
        return (".",)
    kept: list[str] = []
    for root in sorted(roots):
        if not any(root.startswith(outer + "/") for outer in kept):
            kept.append(root)
    return tuple(kept)


def _readable_name(url: str) -> str:
    """The last part of a URL's path, as a file name: git@host:team/api.git -> api."""
    tail = re.split(r"[/:]", url.rstrip("/"))[-1]
    tail = tail.removesuffix(".git")
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip(".-")
    return cleaned[:48] or "repository"


def _git(
    args: Sequence[str | bytes],
    *,
    purpose: str,
    next_step: str,
    timeout: float = GIT_TIMEOUT_SECONDS,
    input: bytes | None = None,
    check: bool = True,
    secret_url: str | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run git; a failure is a WorkspaceError naming the purpose, git's words and the next step.

    Raises:
        WorkspaceError: git is missing, fails (when `check`) or runs past `timeout`.
    """
    try:
        done = subprocess.run(
            ["git", *args],
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            timeout=timeout,
            env=_git_environment(),
            check=False,
        )
    except FileNotFoundError as e:
        raise WorkspaceError(
            f"{purpose}: git is not installed (or not on PATH); install git and try again"
        ) from e
    except subprocess.TimeoutExpired as e:
        raise WorkspaceError(
            f"{purpose}: git did not finish within {timeout:g} seconds; {next_step}"
        ) from e
    except OSError as e:
        raise WorkspaceError(
            f"{purpose}: git cannot be run ({e.strerror}); install git and try again"
        ) from e
    if check and done.returncode != 0:
        said = _git_said(done.stderr, secret_url)
        raise WorkspaceError(f"{purpose} failed: {said}; {next_step}")
    return done


def _git_environment() -> dict[str, str]:
    # Git needs the user's own environment (PATH, HOME and its config, ssh agent, proxies); this
    # passes it through rather than configuring docshelf from it. No prompt may wait for a user who
    # is not there, and git's messages are quoted in ours, in one language.
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REPOSITORY_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


def _git_said(stderr: bytes, secret_url: str | None = None) -> str:
    """The first line of git's error output, printable and without a URL's password."""
    text = stderr.decode("utf-8", "replace")
    if secret_url is not None:
        text = _without_password(text, secret_url)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((line for line in lines if not line.startswith("hint:")), "no message")
    if len(first) > _GIT_MESSAGE_CHARS:
        first = first[:_GIT_MESSAGE_CHARS] + "..."
    return shown(first)


def _without_password(text: str, url: str) -> str:
    redacted = redact_url(url)
    if redacted == url:
        return text
    text = text.replace(url, redacted)
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    user = "" if parts.scheme.lower() in _HTTP_SCHEMES else userinfo.partition(":")[0]
    for secret in {userinfo, unquote(userinfo)}:
        text = text.replace(f"{secret}@", f"{user}@" if user else "")
    hidden = {userinfo.partition(":")[2], unquote(userinfo.partition(":")[2])}
    if not user:
        hidden |= {userinfo.partition(":")[0], unquote(userinfo.partition(":")[0])}
    for secret in sorted(hidden, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in for a file must not block the open; no effect on regular files.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(slots=True)
class _Walk:
    """What a directory walk collected so far."""

    files: list[DocFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def _read_directory(path: Path, roots: tuple[str, ...]) -> Docs:
    try:
        # The workspace itself may be reached through a link the user named; nothing below it is.
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise _unreadable(path, e) from e
    found = _Walk()
    try:
        for root in roots:
            _read_root(top, root, found)
    finally:
        os.close(top)
    return _sorted_docs(found.files, found.skipped)


def _read_root(top: int, root: str, found: _Walk) -> None:
    """Step down to a docs root one component at a time, then walk it (or read it, a file)."""
    if root == ".":
        _walk_directory(top, "", found, close=False)
        return
    parts = root.split("/")
    parent = top
    try:
        for depth, part in enumerate(parts, start=1):
            rel = "/".join(parts[:depth])
            opened = _open_entry(parent, part, rel, found)
            if parent != top:
                os.close(parent)
            parent = top
            if opened is None:
                return
            fd, is_dir = opened
            if depth == len(parts):
                if is_dir:
                    _walk_directory(fd, rel, found, close=True)
                else:
                    _read_file(fd, rel, found)
            elif is_dir:
                parent = fd
            else:
                os.close(fd)
                return
    finally:
        if parent != top:
            os.close(parent)


def _walk_directory(fd: int, rel: str, found: _Walk, *, close: bool) -> None:
    """Walk the directory open at `fd` iteratively, in sorted order, one descriptor per level."""
    stack: list[tuple[int, str, Iterator[str], bool]] = [(fd, rel, _names(fd, rel, found), close)]
    try:
        while stack:
            dir_fd, dir_rel, names, owned = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if owned:
                    os.close(dir_fd)
                continue
            child_rel = f"{dir_rel}/{name}" if dir_rel else name
            opened = _open_entry(dir_fd, name, child_rel, found)
            if opened is None:
                continue
            child, is_dir = opened
            if is_dir:
                stack.append((child, child_rel, _names(child, child_rel, found), True))
            else:
                _read_file(child, child_rel, found)
    finally:
        for dir_fd, _rel, _left, owned in stack:
            if owned:
                os.close(dir_fd)


def _names(fd: int, rel: str, found: _Walk) -> Iterator[str]:
    try:
        with os.scandir(fd) as entries:
            names = sorted(entry.name for entry in entries)
    except OSError as e:
        found.skipped.append(_skip(rel or ".", f"cannot be read ({e.strerror})", logging.WARNING))
        names = []
    return iter(names)


def _open_entry(parent: int, name: str, rel: str, found: _Walk) -> tuple[int, bool] | None:
    """An open descriptor for a directory or a documentation file, and whether it is a directory;
    None for anything skipped (recorded) or ignored (a file of another kind, an entry gone)."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        found.skipped.append(_skip(rel, f"cannot be read ({e.strerror})", logging.WARNING))
        return None
    is_dir = stat.S_ISDIR(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        found.skipped.append(_skip(rel, SYMLINK))
        return None
    if not is_dir and kind_of(name) is None:
        return None
    if not _is_utf8(rel):
        found.skipped.append(_skip(rel, NAME_NOT_UTF8, logging.WARNING))
        return None
    if _CONTROL.search(name):
        found.skipped.append(_skip(rel, NAME_CONTROL, logging.WARNING))
        return None
    if not is_dir and not stat.S_ISREG(info.st_mode):
        found.skipped.append(_skip(rel, NOT_REGULAR))
        return None
    try:
        fd = os.open(name, _DIR_FLAGS if is_dir else _FILE_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as e:
        # ELOOP (a file) or ENOTDIR (a directory): swapped for a link since the stat above.
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, name):
            found.skipped.append(_skip(rel, SYMLINK))
        else:
            found.skipped.append(_skip(rel, f"cannot be read ({e.strerror})", logging.WARNING))
        return None
    if stat.S_ISDIR(os.fstat(fd).st_mode) != is_dir:
        os.close(fd)
        found.skipped.append(_skip(rel, "changed while being read", logging.WARNING))
        return None
    return fd, is_dir


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_file(fd: int, rel: str, found: _Walk) -> None:
    """Read an opened documentation file (the descriptor is closed) unless it must be skipped."""
    with os.fdopen(fd, "rb", closefd=True) as file:
        info = os.fstat(file.fileno())
        kind = kind_of(rel)
        if kind is None or rel in found.seen:
            return
        found.seen.add(rel)
        if not stat.S_ISREG(info.st_mode):
            found.skipped.append(_skip(rel, NOT_REGULAR))
            return
        if info.st_size > MAX_DOC_BYTES:
            found.skipped.append(_skip(rel, _too_big(info.st_size)))
            return
        try:
            data = file.read(MAX_DOC_BYTES + 1)
        except OSError as e:
            found.skipped.append(_skip(rel, f"cannot be read ({e.strerror})", logging.WARNING))
            return
    if len(data) > MAX_DOC_BYTES:
        found.skipped.append(_skip(rel, f"over the {MAX_DOC_BYTES}-byte limit"))
        return
    text, reason = _decoded(data)
    if text is None:
        found.skipped.append(_skip(rel, reason, logging.WARNING))
    else:
        found.files.append(DocFile(rel, text, kind))


def _digest(docs: Docs) -> str:
    """A ref for a directory's docs: sha256 over each file's path and bytes and each skip."""
    h = hashlib.sha256()
    for doc in docs.files:
        data = doc.text.encode("utf-8")
        h.update(b"file\0%s\0%d\0" % (doc.path.encode("utf-8"), len(data)))
        h.update(data)
    for skip in docs.skipped:
        h.update(b"skipped\0%s\0" % skip.path.encode("utf-8", "surrogateescape"))
        h.update(b"%s\0" % skip.reason.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _skip(path: str, reason: str, level: int = logging.INFO) -> Skipped:
    log.log(level, "skipped %s: %s", shown(path), reason)
    return Skipped(path, reason)


def _too_big(size: int) -> str:
    return f"{size} bytes, over the {MAX_DOC_BYTES}-byte limit"


def _decoded(data: bytes) -> tuple[str | None, str]:
    # A NUL byte is valid UTF-8 but no text file holds one: it marks an image or an archive
    # renamed .md (git's own test for binary), and PostgreSQL cannot store it in a text column.
    nul = data.find(b"\0")
    if nul >= 0:
        return None, f"{BINARY} (a NUL byte at offset {nul})"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text (invalid byte at offset {e.start})"


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_under(path: str, roots: Iterable[str]) -> bool:
    """Whether a listed path is clean (no "..", "." or empty part) and inside one of the roots."""
    if any(part in ("", ".", "..") for part in path.split("/")):
        return False
    return any(root in (".", path) or path.startswith(root + "/") for root in roots)


def _depths(root: str) -> range:
    """The lengths of a root's proper ancestors, in parts: "a/b/c" -> 1, 2."""
    return range(1, root.count("/") + 1) if root != "." else range(0)


def _sorted_docs(files: list[DocFile], skipped: list[Skipped]) -> Docs:
    unique = {skip.path: skip for skip in skipped}
    return Docs(
        files=sorted(files, key=lambda f: f.path),
        skipped=sorted(unique.values(), key=lambda s: s.path),
    )


def _suffixes() -> str:
    return ", ".join(MARKDOWN_SUFFIXES + TEXT_SUFFIXES)


def _listed(roots: Sequence[str]) -> str:
    return ", ".join(shown(root) for root in roots)


def _unreadable(path: Path, e: OSError) -> WorkspaceError:
    return WorkspaceError(
        f"{shown(path)}: cannot be read ({e.strerror}); check the path and its permissions"
    )


def read_local(paths: Iterable[Path]) -> list[DocFile]:
    """Read the named files, and every documentation file below the named directories.

    A named file is read whatever its suffix (as Markdown unless it ends in .txt), with its path
    as given; a file found below a directory has its path relative to that directory.

    Raises:
        WorkspaceError: a path is missing or cannot be read, a directory holds no documentation,
            or a file or its name is not UTF-8.
    """
    files: list[DocFile] = []
    for root in paths:
        try:
            is_dir, exists = root.is_dir(), root.exists()
        except OSError as e:
            raise _unreadable(root, e) from e
        if is_dir:
            found = _walk(root)
            if not found:
                raise WorkspaceError(
                    f"{shown(root)}: no documentation files ({_suffixes()}) below this directory; "
                    "name a directory that holds some, or the files themselves"
                )
            files.extend(DocFile(rel, _read(root / rel), kind) for rel, kind in found)
        elif exists:
            path = _utf8_path(root.as_posix())
            files.append(DocFile(path, _read(root), kind_of(root.name) or "markdown"))
        else:
            raise WorkspaceError(f"{shown(root)}: no such file or directory; check the path")
    return files


def _walk(root: Path) -> list[tuple[str, Kind]]:
    def fail(e: OSError) -> None:
        raise _unreadable(Path(e.filename or root), e)

    found: list[tuple[str, Kind]] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=fail):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(filenames):
            kind = kind_of(name)
            full = here / name
            if kind is not None and not full.is_symlink() and full.is_file():
                found.append((_utf8_path(full.relative_to(root).as_posix()), kind))
    found.sort()
    return found


def _utf8_path(path: str) -> str:
    """`path` when it may be cited as one line of text (see _CONTROL)."""
    if not _is_utf8(path):
        raise WorkspaceError(
            f"{shown(path)}: the file name is not UTF-8; rename the file or leave it out"
        )
    if _CONTROL.search(path):
        raise WorkspaceError(
            f"{shown(path)}: the file name has a control character; rename the file or leave it out"
        )
    return path


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _unreadable(path, e) from e
    text, reason = _decoded(data)
    if text is None and reason.startswith(BINARY):
        raise WorkspaceError(f"{shown(path)}: {reason}; name only text files")
    if text is None:
        raise WorkspaceError(f"{shown(path)}: {reason}; convert it to UTF-8 or leave it out")
    return text
