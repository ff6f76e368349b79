"""The paths a call names: a doc's path (docs_read's `path`) and the path filter that keeps some
of the docs (docs_search's and docs_outline's `path`), both checked before any store is read.

Constraints:
- A path the model can fix (not a string, empty, absolute, with `..`, a NUL byte, over
  MAX_PATH_BYTES) is refused with the rule; no path can name anything outside the indexed docs,
  since every later step looks it up among them.
- A filter is a prefix (a folder or a file) or a gitignore-style glob, matched against the
  indexed paths exactly as the hits show them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docshelf.errors import ConfigError, WorkspaceError, term
from docshelf.shown import clip, shown, shown_value
from docshelf.workspace.docs import CONTROL_CHARS
from docshelf.workspace.selection import compile_glob

if TYPE_CHECKING:
    from docshelf.rows import StoredFile

# The longest path a call may name, in UTF-8 bytes: Linux's PATH_MAX. An indexed path is
# shorter still (git and the file systems docshelf reads refuse longer ones).
MAX_PATH_BYTES = 4096

# What makes a filter a glob rather than a prefix.
GLOB_CHARS = re.compile(r"[*?\[]")


def check_path(value: object, argument: str = "path") -> str:
    """A path as the hits show it (relative to the repository, `/` between folders), with a
    leading `./` taken off; `argument` is the term (errors.TERMS) the refusal names it by.

    Raises:
        ConfigError: not a string, empty, absolute, with a `..` part, a NUL or another control
            character, not valid Unicode, or longer than MAX_PATH_BYTES.
    """
    rule = (
        f"{term(argument)} must be a path relative to the repository, as the hits show it "
        "(docs/runbooks/payments.md)"
    )
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{rule}; got {shown_value(value)}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ConfigError(f"{rule}; it holds an unpaired surrogate, not valid Unicode") from None
    if size > MAX_PATH_BYTES:
        raise ConfigError(f"{rule}, at most {MAX_PATH_BYTES} bytes; got {size} bytes")
    if "\x00" in value or CONTROL_CHARS.search(value):
        raise ConfigError(f"{rule}; it holds a NUL or control character")
    path = value
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:[\\/]", path):
        raise ConfigError(f"{rule}, not an absolute path; got {shown(value)!r}")
    if any(part == ".." for part in re.split(r"[\\/]", path)):
        raise ConfigError(f"{rule}, without '..'; got {clip(value)!r}")
    if not path:
        raise ConfigError(f"{rule}; got {clip(value)!r}")
    return path


@dataclass(frozen=True, slots=True)
class PathFilter:
    """docs_search's and docs_outline's `path`: a prefix (a folder or a file) or a glob."""

    text: str
    pattern: re.Pattern[str] | None

    @property
    def prefix(self) -> str:
        """What every path it keeps starts with: the folder or file ("" for a glob, which may
        match anywhere)."""
        return self.text if self.pattern is None else ""

    def keeps(self, path: str) -> bool:
        if self.pattern is not None:
            return self.pattern.fullmatch(path) is not None
        prefix = self.text
        if prefix.endswith("/"):
            return path.startswith(prefix)
        return path == prefix or path.startswith(prefix + "/")


def check_path_filter(value: object, argument: str = "path") -> PathFilter | None:
    """None, or the path filter: a folder or file (`docs/runbooks/`, `docs/runbooks`) or a
    gitignore-style glob (`**/payments.md`, `docs/*.md`).

    Raises:
        ConfigError: as check_path, or a glob that does not compile.
    """
    if value is None:
        return None
    text = check_path(value, argument)
    if not GLOB_CHARS.search(text):
        return PathFilter(text, None)
    try:
        return PathFilter(text, compile_glob(text, term(argument)))
    except WorkspaceError as e:
        raise ConfigError(e.args[0]) from None


def selected(files: Sequence[StoredFile], chosen: PathFilter | None) -> list[StoredFile]:
    """The files a path filter keeps (all without one)."""
    if chosen is None:
        return list(files)
    return [f for f in files if chosen.keeps(f.path)]
