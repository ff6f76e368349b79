"""A git repository's docs at a commit, read as data: trees listed with `ls-tree`, blobs read
through one `cat-file --batch`, nothing checked out, so the index matches the commit whatever the
work tree holds.

Constraints:
- Symbolic links and submodules are listed as skipped, never followed or entered.
- Git runs as a subprocess with `--end-of-options` before any revision a user supplies, no
  terminal prompts, the repository variables of a calling hook removed, and a timeout; a clone
  URL's password never reaches a message.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from docshelf.chunking import kind_of
from docshelf.config import (
    DOC_ROOT_CANDIDATES,
    GIT_FETCH_TIMEOUT_SECONDS,
    GIT_TIMEOUT_SECONDS,
    MAX_DOC_BYTES,
)
from docshelf.errors import WorkspaceError
from docshelf.workspace.docs import (
    COMMIT_ID,
    CONTROL_CHARS,
    HELD_TEXT_BYTES,
    LEAVES_ROOT,
    NAME_CONTROL,
    NAME_NOT_UTF8,
    NOT_REGULAR,
    SUBMODULE,
    SYMLINK,
    DocFile,
    DocFiles,
    Docs,
    Listed,
    Skipped,
    decoded,
    globs_note,
    is_utf8,
    listed,
    read_windows,
    shown,
    skip,
    sorted_docs,
    suffixes,
    too_big,
)
from docshelf.workspace.found import (
    CONFIG_MAX_BYTES,
    Finder,
    Layout,
    follow_includes,
    vendored_lines,
)
from docshelf.workspace.includes import Entry
from docshelf.workspace.redaction import redact_url, without_password
from docshelf.workspace.selection import WHOLE_TREE, Selection

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


class GitWorkspace:
    """A git repository: a local one, or the mirror of a clone URL. Build it with open_workspace."""

    def __init__(
        self,
        git_dir: Path,
        *,
        name: str,
        selection: Selection,
        chosen: bool = False,
        url: str | None = None,
        fresh: bool = False,
    ) -> None:
        self.name = name
        self.git_dir = git_dir
        # What the docs are: the roots (None: found at each commit) and the globs; `chosen` when
        # the user named them, so that a selection stored with the workspace does not replace it.
        self.selection = selection
        self.chosen = chosen
        self._url = url
        # A mirror cloned a moment ago needs no fetch before its first sync.
        self._fresh = fresh
        # Whether the last sync fetched (a mirror fetches only when its remote moved).
        self.fetched = False

    @property
    def docs_roots(self) -> tuple[str, ...] | None:
        """The docs roots named, or None when they are found at each commit."""
        return self.selection.docs

    def __repr__(self) -> str:
        return f"GitWorkspace({self.name!r}, selection={self.selection!r})"

    def sync(self, rev: str | None = None, selection: Selection | None = None) -> str:
        """Fetch (a mirror only, and only when its remote moved: one `git ls-remote` first),
        then resolve `rev` (default HEAD) to a full commit id. The selection is not needed: the
        commit is the ref, whichever docs are read of it.

        Raises:
            WorkspaceError: the fetch failed, or `rev` names no commit.
        """
        self.fetched = False
        if self._url is not None and not self._fresh and self._remote_moved(rev):
            display = redact_url(self._url)
            self.fetched = True
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

    def _remote_moved(self, rev: str | None) -> bool:
        """Whether a fetch may bring something new for `rev` (default HEAD): not for a commit
        id the mirror holds; for a branch or tag, when `git ls-remote` lists it at another
        commit than the mirror's, or cannot tell (the fetch then says why)."""
        wanted = "HEAD" if rev is None else rev
        assert self._url is not None
        if not wanted.isprintable() or wanted.startswith("-"):
            return True
        if COMMIT_ID.fullmatch(wanted):
            found = [[wanted, f"{wanted}^{{commit}}"]]
        else:
            listed = run_git(
                ["ls-remote", "--", self._url, wanted],
                purpose=f"listing the refs of {redact_url(self._url)}",
                next_step="check the network and your access to the repository",
                timeout=GIT_FETCH_TIMEOUT_SECONDS,
                check=False,
                secret_url=self._url,
            )
            found = [line.split("\t") for line in listed.stdout.decode().splitlines()]
            if listed.returncode != 0 or not found:
                return True
        mine = self._git(
            "rev-parse",
            *(name for _, name in found),  # HEAD, refs/..., or a commit id: never an option
            purpose=f"resolving the refs of {shown(self.git_dir)}",
            next_step="check the mirror with git fsck",
            check=False,
        )
        held = mine.stdout.decode("ascii", "replace").split()
        return mine.returncode != 0 or held != [commit for commit, _ in found]

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
        if done.returncode != 0 or not COMMIT_ID.fullmatch(commit):
            if done.stderr.strip():
                raise WorkspaceError(
                    f"resolving {shown(wanted)} in {shown(self.name)} failed: "
                    f"{git_said(done.stderr)}; name a branch, a tag or a commit id"
                )
            raise WorkspaceError(
                f"{shown(self.name)}: {shown(wanted)} names no commit; name a branch, a tag or a "
                "commit id that exists there (git log --oneline --all lists them)"
            )
        return commit

    def read_docs(self, ref: str, selection: Selection | None = None) -> Docs:
        """The documentation files at commit `ref` that `selection` picks (default: the one
        this workspace was opened with), read from git's objects.

        Raises:
            WorkspaceError: `ref` is not a full commit id of this repository, git fails, or no
                docs root holds any documentation file and nothing was skipped.
        """
        if not COMMIT_ID.fullmatch(ref):
            raise WorkspaceError(
                f"{shown(ref)!r} is not a full commit id; pass the id that sync() returned"
            )
        selection = self.selection if selection is None else selection
        found = selection.docs is None
        tree = _Tree(self._listing(ref, WHOLE_TREE))
        finder = Finder.of(tree.paths(), lambda path: self._config(ref, tree, path))
        roots = finder.roots if selection.docs is None else selection.docs
        skipped = self._skipped_ancestors(ref, roots)
        wanted: list[Listed] = []
        excluded = 0
        for mode, oid, size, path in tree.records:
            if found:
                if not _found_doc(path, finder):
                    continue  # outside the roots found, or not current docs: not read
            elif not any(root in (".", path) or path.startswith(root + "/") for root in roots):
                continue  # outside the roots named
            kind = kind_of(path)
            if not _is_under(path, roots):
                skipped.append(skip(path, LEAVES_ROOT, logging.WARNING))
            elif not selection.keeps(path):
                excluded += kind is not None
            elif mode == b"120000":
                skipped.append(skip(path, SYMLINK))
            elif mode == b"160000":
                skipped.append(skip(path, SUBMODULE))
            elif kind is None:
                continue
            elif mode not in (b"100644", b"100755"):
                skipped.append(skip(path, NOT_REGULAR))
            elif not is_utf8(path):
                skipped.append(skip(path, NAME_NOT_UTF8, logging.WARNING))
            elif CONTROL_CHARS.search(path):
                skipped.append(skip(path, NAME_CONTROL, logging.WARNING))
            elif size > MAX_DOC_BYTES:
                skipped.append(skip(path, too_big(size)))
            else:
                wanted.append(Listed(path, kind, size, oid))
        skipped += (skip(path, reason) for path, reason in vendored_lines(finder.vendored))
        files = self._files(ref, wanted, skipped)
        if not files and not skipped:
            raise WorkspaceError(
                f"{shown(self.name)}: no documentation files ({suffixes()}) at commit {ref} "
                f"under {listed(roots)}{globs_note(selection, excluded)}; name the directory "
                "that holds them with --docs DIR"
            )
        layout = finder.layout(f.path for f in wanted) if found else Layout(roots)
        files, included = self._included(ref, tree, files, wanted, finder, skipped)
        return sorted_docs(files, skipped, roots, excluded, layout, included)

    def layout_at(self, ref: str, selection: Selection | None = None) -> Layout:
        """Where the docs of `selection` (default: this workspace's) are at commit `ref`: the
        roots named, or those found there with the sites that lay them out."""
        docs = (self.selection if selection is None else selection).docs
        if docs is not None:
            return Layout(docs)
        tree = _Tree(self._listing(ref, WHOLE_TREE))
        finder = Finder.of(tree.paths(), lambda path: self._config(ref, tree, path))
        return finder.layout(
            path for _, _, _, path in tree.records if kind_of(path) and _found_doc(path, finder)
        )

    def _config(self, ref: str, tree: _Tree, path: str) -> str | None:
        """A site generator's config at `ref`: a regular file of at most CONFIG_MAX_BYTES,
        UTF-8 text; None otherwise."""
        record = tree.by_path.get(path)
        if record is None or record[0] not in (b"100644", b"100755"):
            return None
        if record[2] > CONFIG_MAX_BYTES:
            return None
        data = self._blobs(ref, [Listed(path, "text", record[2], record[1])])[0]
        return decoded(data)[0]

    def _included(
        self,
        ref: str,
        tree: _Tree,
        files: Sequence[DocFile],
        wanted: list[Listed],
        finder: Finder,
        skipped: list[Skipped],
    ) -> tuple[Sequence[DocFile], dict[str, tuple[str, ...]]]:
        """The docs with the files they include added (each once, read from `ref` as the docs
        are), and the pages each included file appears in; refused includes go to `skipped`."""
        texts = _include_texts(files)

        def read(path: str) -> str | None:
            if path in texts:
                return texts[path]
            record = tree.by_path.get(path)
            if record is None or record[0] not in (b"100644", b"100755"):
                return None
            if record[2] > MAX_DOC_BYTES:
                return None
            return decoded(self._blobs(ref, [Listed(path, "text", record[2], record[1])])[0])[0]

        pages = list(texts) if isinstance(files, DocFiles) else [f.path for f in files]
        found = follow_includes(pages, tree.entries(), read, finder.discovery.sites)
        skipped.extend(skip(path, reason, logging.WARNING) for path, reason in found.problems)
        extra: list[Listed] = []
        for path in found.extra:
            _mode, oid, size = tree.by_path[path]
            kind = kind_of(path)
            if kind is None:
                continue
            if not is_utf8(path) or CONTROL_CHARS.search(path):
                skipped.append(skip(path, NAME_CONTROL, logging.WARNING))
            elif size > MAX_DOC_BYTES:
                skipped.append(skip(path, too_big(size)))
            else:
                extra.append(Listed(path, kind, size, oid))
        if not extra:
            return files, dict(found.pages)
        more = self._files(ref, extra, skipped)
        if isinstance(files, DocFiles) or isinstance(more, DocFiles):
            # Too much text to hold: the pages and what they include, read a window at a time.
            return self._files(ref, [*wanted, *extra], []), dict(found.pages)
        return [*files, *more], dict(found.pages)

    def _listing(self, ref: str, roots: Sequence[str]) -> list[bytes]:
        """`ls-tree --long` records (mode, type, id, size, a tab and the path) under `roots`."""
        out = self._git(
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
        return [record for record in out.split(b"\0") if record]

    def _skipped_ancestors(self, ref: str, roots: Sequence[str]) -> list[Skipped]:
        """A docs root below a symbolic link or a submodule (docs/ a link, --docs docs/api) lists
        nothing: report the entry that stops it, as a plain directory's walk does."""
        ancestors = sorted({"/".join(root.split("/")[:i]) for root in roots for i in _depths(root)})
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
                    skipped.append(skip(path, SYMLINK))
                elif mode == b"160000":
                    skipped.append(skip(path, SUBMODULE))
        return skipped

    def _files(self, ref: str, wanted: list[Listed], skipped: list[Skipped]) -> Sequence[DocFile]:
        """The wanted files that are text, held when they are small (HELD_TEXT_BYTES in all),
        or else a DocFiles that reads their blobs again a window at a time; the rest skipped."""
        held = sum(entry.size for entry in wanted) <= HELD_TEXT_BYTES
        files: list[DocFile] = []
        kept: list[Listed] = []
        for window in read_windows(wanted):
            for entry, data in zip(window, self._blobs(ref, window), strict=True):
                text, reason = decoded(data)
                if text is None:
                    skipped.append(skip(entry.path, reason, logging.WARNING))
                elif held:
                    files.append(DocFile(entry.path, text, entry.kind))
                else:
                    kept.append(entry)
        if held:
            return files
        kept.sort(key=lambda entry: entry.path)
        return DocFiles(kept, lambda window: self._texts(ref, window))

    def _texts(self, ref: str, listed: Sequence[Listed]) -> list[str]:
        """The texts of files a read_docs of `ref` listed, read again from their blobs."""
        texts: list[str] = []
        for entry, data in zip(listed, self._blobs(ref, listed), strict=True):
            text, reason = decoded(data)
            if text is None:  # a blob does not change: only a damaged repository gets here
                raise WorkspaceError(
                    f"{shown(entry.path)} at commit {ref} is {reason} now, though it was text "
                    "when the commit was read; check the repository with git fsck"
                )
            texts.append(text)
        return texts

    def _blobs(self, ref: str, wanted: Sequence[Listed]) -> list[bytes]:
        """Every wanted blob through one `git cat-file --batch`, in order."""
        if not wanted:
            return []
        purpose = f"reading the docs of commit {ref} in {shown(self.name)}"
        out = self._git(
            "cat-file",
            "--batch",
            input=b"".join(entry.key + b"\n" for entry in wanted),
            purpose=purpose,
            next_step="check the repository with git fsck",
        ).stdout
        blobs: list[bytes] = []
        at = 0
        for entry in wanted:
            end = out.find(b"\n", at)
            header = out[at:end].split() if end >= 0 else []
            if len(header) != 3 or header[0] != entry.key or header[1] != b"blob":
                said = shown(out[at : max(end, at)].decode("ascii", "replace"))
                raise WorkspaceError(
                    f"{purpose}: git answered {said!r} for {shown(entry.path)}; "
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
        return run_git(
            ["--git-dir", str(self.git_dir), *args],
            purpose=purpose,
            next_step=next_step,
            timeout=timeout,
            input=input,
            check=check,
            secret_url=self._url,
        )


def run_git(
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
        said = git_said(done.stderr, secret_url)
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


def git_said(stderr: bytes, secret_url: str | None = None) -> str:
    """The first line of git's error output, printable and without a URL's password."""
    text = stderr.decode("utf-8", "replace")
    if secret_url is not None:
        text = without_password(text, secret_url)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((line for line in lines if not line.startswith("hint:")), "no message")
    if len(first) > _GIT_MESSAGE_CHARS:
        first = first[:_GIT_MESSAGE_CHARS] + "..."
    return shown(first)


def _found_doc(path: str, finder: Finder) -> bool:
    """Whether a discovery looks at `path`: one the finder reads; and a path that is not clean
    (reported as leaving the root), or a well-known docs folder that is a link or a submodule
    (reported as such)."""
    if any(part in ("", ".", "..") for part in path.split("/")) or path in DOC_ROOT_CANDIDATES:
        return True
    return finder.reads(path)


class _Tree:
    """A commit's `ls-tree --long` listing, by path: mode, blob id and size of each entry."""

    def __init__(self, listing: Iterable[bytes]) -> None:
        self.records: list[tuple[bytes, bytes, int, str]] = []
        for record in listing:
            meta, _, raw_path = record.partition(b"\t")
            mode, _type, oid, size = meta.split()
            path = raw_path.decode("utf-8", "surrogateescape")
            self.records.append((mode, oid, int(size) if size != b"-" else 0, path))
        self.by_path = {path: (mode, oid, size) for mode, oid, size, path in self.records}

    def paths(self) -> list[str]:
        return [path for _, _, _, path in self.records]

    def entries(self) -> dict[str, Entry]:
        """What an include may name: regular files, and symbolic links (never followed)."""
        kinds: dict[bytes, Entry] = {b"100644": "file", b"100755": "file", b"120000": "symlink"}
        return {path: kinds[mode] for mode, _, _, path in self.records if mode in kinds}


def _include_texts(files: Sequence[DocFile]) -> dict[str, str]:
    """The texts an include search reads, by path: every page's when they are held; past that,
    only those of pages that may hold an include directive (the rest read as no includes)."""
    if not isinstance(files, DocFiles):
        return {f.path: f.text for f in files}
    return {f.path: (f.text if _MAY_INCLUDE.search(f.text) else "") for f in files}


# Text that every include syntax holds: a page without any of it includes nothing.
_MAY_INCLUDE = re.compile(r"include|--8<--|^import |<<<", re.MULTILINE)


def _is_under(path: str, roots: Iterable[str]) -> bool:
    """Whether a listed path is clean (no "..", "." or empty part) and inside one of the roots."""
    if any(part in ("", ".", "..") for part in path.split("/")):
        return False
    return any(root in (".", path) or path.startswith(root + "/") for root in roots)


def _depths(root: str) -> range:
    """The lengths of a root's proper ancestors, in parts: "a/b/c" -> 1, 2."""
    return range(1, root.count("/") + 1) if root != "." else range(0)
