"""Reading a commit's docs from git: docshelf's git subprocesses beside dulwich and pygit2.

Run it from the repository root with

    .venv/bin/python bench/git_read.py              # the table as text
    .venv/bin/python bench/git_read.py --markdown   # the table as Markdown, for BENCHMARKS.md

Options: `--corpus DIR` reads another folder of docs instead of the shared traefik corpus
(`../shared/data/corpora/traefik` beside the repository), `--docs ROOT` names its docs root
(default: docs), and `--rounds N` sets how many timed rounds are run.

dulwich and pygit2 are optional and not dependencies of docshelf: one that is not importable is
left out of the table with a line saying so. To measure them without touching the project's
environment, install them into a folder of their own and put it on PYTHONPATH:

    .venv/bin/python -m pip install --target /tmp/benchlibs dulwich pygit2
    PYTHONPATH=/tmp/benchlibs .venv/bin/python bench/git_read.py

Data: the corpus is copied into a temporary directory (the shared copy is never touched), made a
git repository and committed in one commit, with a fixed identity and no user or system git
configuration. Every method is measured twice: on that repository as committed (loose objects,
as a work tree that was just committed to) and after `git gc` (one pack, as a clone or a mirror).

Methods, each reading every documentation file under the docs root at that commit, with the same
rules as docshelf (links and submodules skipped, files over MAX_DOC_BYTES not read, UTF-8 only):
- docshelf: GitWorkspace.read_docs, one `git ls-tree -r -z --long` and one `git cat-file --batch`.
- git per file: the same listing, then one `git cat-file blob OID` process per file (what reading
  files one by one through git would cost).
- dulwich: dulwich.repo.Repo, walking the tree objects from the commit and reading each blob.
- pygit2: pygit2.Repository (libgit2), walking the tree and reading each blob.
Each method's result is checked to equal docshelf's, file for file, before any timing.

Method of timing: one untimed warm-up call per method, then `--rounds` rounds, each timing one
call of every method with time.perf_counter, the methods interleaved inside the round (the first
one rotates from round to round). The median and the minimum per method are reported. Each
method opens the repository once per state, untimed (open_workspace; dulwich.repo.Repo;
pygit2.Repository), and every timed call reads through that handle, as a workspace object would.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docshelf.config import MAX_DOC_BYTES
from docshelf.workspace import GitWorkspace, kind_of, open_workspace
from report import GIT_ENV, version

# The shared corpora sit beside the repository: <parent of repo>/shared/data/corpora.
DEFAULT_CORPUS = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora" / "traefik"
)

# 15 rounds: a whole run takes about 10 s on a 2-core machine and the medians of repeated runs
# stayed within about 10% of each other there.
DEFAULT_ROUNDS = 15

# The row every other row's median is divided by.
BASELINE = "docshelf (ls-tree + one cat-file --batch)"

# Times are reported in milliseconds, sizes in decimal megabytes.
MS_PER_SECOND = 1000.0
BYTES_PER_MB = 1_000_000

# git file modes docshelf reads as files.
REGULAR_MODES = (0o100644, 0o100755)
TREE_MODE = 0o040000

Read = list[tuple[str, str]]  # (path, text) of every file read, sorted by path


@dataclass(frozen=True, slots=True)
class Method:
    """A row of the table: how to open the repository (once, untimed) and read the docs of
    `commit` under `root` from what `open` returned (timed)."""

    name: str
    open: Callable[[Path, str], Any]  # (work tree, docs root) -> handle
    read: Callable[[Any, str, str], Read]  # (handle, commit, docs root) -> files


def docshelf_method() -> Method:
    def open_(work_tree: Path, root: str) -> GitWorkspace:
        ws = open_workspace(str(work_tree), docs=[root], mirrors_dir=work_tree / "unused")
        assert isinstance(ws, GitWorkspace)
        return ws

    def read(ws: GitWorkspace, commit: str, root: str) -> Read:
        return [(f.path, f.text) for f in ws.read_docs(commit).files]

    return Method(BASELINE, open_, read)


def _work_tree(work_tree: Path, root: str) -> Path:
    return work_tree


def git_per_file_read(work_tree: Path, commit: str, root: str) -> Read:
    def git(*args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(work_tree), *args], capture_output=True, check=True, env=GIT_ENV
        ).stdout

    roots = [] if root == "." else [root]
    listing = git("ls-tree", "-r", "-z", "--long", "--full-tree", commit, "--", *roots)
    files: Read = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, _type, oid, size = meta.split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if int(mode, 8) not in REGULAR_MODES or kind_of(path) is None:
            continue
        if int(size) > MAX_DOC_BYTES:
            continue
        text = _text(git("cat-file", "blob", oid.decode()))
        if text is not None:
            files.append((path, text))
    return sorted(files)


def dulwich_method() -> Method | None:
    try:
        from dulwich.repo import Repo  # noqa: PLC0415 (optional peer)
    except ImportError:
        return None

    def open_(work_tree: Path, root: str) -> Any:
        return Repo(str(work_tree))

    def read(repo: Any, commit: str, root: str) -> Read:
        tree = repo[repo[commit.encode()].tree]
        for part in _parts(root):
            _mode, oid = tree[part.encode()]
            tree = repo[oid]
        files: Read = []
        stack = [(root, tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree.iteritems():
                path = _join(prefix, entry.path.decode("utf-8", "surrogateescape"))
                if entry.mode == TREE_MODE:
                    stack.append((path, repo[entry.sha]))
                elif entry.mode in REGULAR_MODES and kind_of(path) is not None:
                    data = repo[entry.sha].as_raw_string()
                    text = _text(data) if len(data) <= MAX_DOC_BYTES else None
                    if text is not None:
                        files.append((path, text))
        return sorted(files)

    return Method("dulwich", open_, read)


def pygit2_method() -> Method | None:
    try:
        import pygit2  # noqa: PLC0415 (optional peer)
    except ImportError:
        return None

    def open_(work_tree: Path, root: str) -> Any:
        return pygit2.Repository(str(work_tree))

    def read(repo: Any, commit: str, root: str) -> Read:
        tree = repo[commit].peel(pygit2.Tree)
        for part in _parts(root):
            tree = tree / part
        files: Read = []
        stack = [(root, tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = _join(prefix, entry.name)
                if entry.filemode == TREE_MODE:
                    stack.append((path, repo[entry.id]))
                elif entry.filemode in REGULAR_MODES and kind_of(path) is not None:
                    blob = repo[entry.id]
                    text = _text(blob.data) if blob.size <= MAX_DOC_BYTES else None
                    if text is not None:
                        files.append((path, text))
        return sorted(files)

    return Method("pygit2", open_, read)


def _parts(root: str) -> list[str]:
    return [] if root == "." else root.split("/")


def _join(prefix: str, name: str) -> str:
    return name if prefix == "." else f"{prefix}/{name}"


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# Each optional peer's distribution (for its version, and to name when it is missing).
PEERS: list[tuple[str, Callable[[], Method | None]]] = [
    ("dulwich", dulwich_method),
    ("pygit2", pygit2_method),
]


def make_repository(corpus: Path, into: Path) -> tuple[Path, str]:
    """A copy of `corpus` committed as a new git repository; its work tree and commit id."""
    work_tree = into / corpus.name
    shutil.copytree(corpus, work_tree, symlinks=True)

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(work_tree), *args], capture_output=True, check=True, env=GIT_ENV
        )
        return done.stdout.decode().strip()

    git("init", "--quiet", "--initial-branch=main")
    git("add", "--all")
    git("commit", "--quiet", "-m", "corpus")
    return work_tree, git("rev-parse", "HEAD")


def pack(work_tree: Path) -> None:
    subprocess.run(
        ["git", "-C", str(work_tree), "gc", "--quiet", "--prune=now"],
        check=True,
        env=GIT_ENV,
    )


def measure(
    methods: Sequence[Method], work_tree: Path, commit: str, root: str, rounds: int
) -> dict[str, list[float]]:
    handles = {m.name: m.open(work_tree, root) for m in methods}
    expected = methods[0].read(handles[methods[0].name], commit, root)
    for method in methods:
        got = method.read(handles[method.name], commit, root)  # the warm-up call
        if got != expected:
            raise SystemExit(f"{method.name} read other files or texts than {methods[0].name}")
    times: dict[str, list[float]] = {m.name: [] for m in methods}
    for r in range(rounds):
        for i in range(len(methods)):
            method = methods[(r + i) % len(methods)]
            started = time.perf_counter()
            method.read(handles[method.name], commit, root)
            times[method.name].append(time.perf_counter() - started)
    return times


def git_version() -> str:
    done = subprocess.run(["git", "--version"], capture_output=True, check=True, text=True)
    return done.stdout.strip().removeprefix("git version ")


def render(rows: list[list[str]], markdown: bool) -> str:
    header = ["method", "loose: median ms", "loose: min ms", "packed: median ms", "packed: min ms"]
    header.append("packed median vs docshelf")
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = [header, *rows]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in out
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--docs", default="docs", help="the docs root inside the corpus")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)

    methods = [docshelf_method(), Method("git per file", _work_tree, git_per_file_read)]
    for distribution, loader in PEERS:
        method = loader()
        if method is None:
            print(f"{distribution} is not importable and is left out: see this script's docstring")
        else:
            methods.append(method)

    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="docshelf-bench-git-") as tmp:
        work_tree, commit = make_repository(args.corpus, Path(tmp))
        baseline_method = methods[0]
        files = baseline_method.read(baseline_method.open(work_tree, args.docs), commit, args.docs)
        size = sum(len(text.encode()) for _path, text in files)
        results["loose"] = measure(methods, work_tree, commit, args.docs, args.rounds)
        pack(work_tree)
        results["packed"] = measure(methods, work_tree, commit, args.docs, args.rounds)

    baseline = statistics.median(results["packed"][BASELINE])
    rows: list[list[str]] = []
    for method in methods:
        row = [method.name]
        for state in ("loose", "packed"):
            times = results[state][method.name]
            row += [f"{statistics.median(times) * MS_PER_SECOND:.1f}"]
            row += [f"{min(times) * MS_PER_SECOND:.1f}"]
        ratio = statistics.median(results["packed"][method.name]) / baseline
        row.append(f"{ratio:.2f}x")
        rows.append(row)

    command = shlex.join(sys.orig_argv)
    pythonpath = os.environ.get("PYTHONPATH")
    if pythonpath:
        command = f"PYTHONPATH={shlex.quote(pythonpath)} {command}"
    header = [
        ("command", f"`{command}`" if args.markdown else command),
        ("python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("platform", f"{platform.platform()}, {os.cpu_count()} CPUs"),
        ("git", git_version()),
        (
            "input",
            f"{len(files)} files, {size / BYTES_PER_MB:.2f} MB of UTF-8 under {args.docs}/ of a "
            f"one-commit copy of {args.corpus}",
        ),
        (
            "rounds",
            f"{args.rounds} after one warm-up call each, methods interleaved; loose objects "
            "first, then after git gc (one pack)",
        ),
        (
            "versions",
            ", ".join(f"{name} {version(name)}" for name in ["docshelf", "dulwich", "pygit2"]),
        ),
    ]
    bullet = "- " if args.markdown else ""
    for key, value in header:
        print(f"{bullet}{key}: {value}")
    print()
    print(render(rows, args.markdown))
    print()
    print(
        "packed median vs docshelf = this method's median / docshelf's median, both on the packed "
        "repository: 2.00x takes twice as long, 0.50x half as long."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
