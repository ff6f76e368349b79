"""What an include is: the syntaxes found, the record of one directive, and why a target is
refused.

Constraints:
- Data only: nothing here finds, resolves or reads; every other module of the package imports
  this one, and it imports none of them.
- A reason is short and lower case, as the skipped list writes it; one with `{}` is formatted
  with what it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Syntax = Literal[
    "mkdocs-snippet",
    "sphinx-include",
    "sphinx-literalinclude",
    "asciidoc-include",
    "antora-include",
    "antora-include-code",
    "mdbook-include",
    "vitepress-include",
    "vitepress-snippet",
    "mdx-import",
    "hugo-include",
]

# Why a target is refused (short, lower case, as the skipped list writes its reasons).
LEAVES_REPOSITORY = "leaves the repository"
URL = "a URL: the network is never read"
ABSOLUTE = "an absolute path on the file system"
CONTROL = "a path with a control character"
FOLDER = "a folder, not a file"
LEAVES_BASE = "leaves the snippets base_path"
NO_SOURCE_DIR = "names the site's source folder, which is not known"
UNSET_ATTRIBUTE = "an attribute that is not set: {{{}}}"
STANDARD_FILE = "a docutils standard file, not in the repository"
OUTSIDE_MODULE = "an Antora resource id outside an Antora module (modules/<module>/...)"
OTHER_COMPONENT = "another Antora component: {}"
OTHER_VERSION = "another version of the Antora component (another branch or tag): {}"
GENERATED = "written at build time (Spring's include-code): not in the repository"
MISSING = "no such file in the repository"
SYMLINK = "through a symbolic link, not followed: {}"
CYCLE = "a cycle: {}"
TOO_DEEP = "deeper than {} includes"
UNREADABLE = "could not be read"


@dataclass(frozen=True, slots=True)
class Include:
    """One include directive and the file it names.

    `target` is the repo-relative path ('/'-separated, normalised) the generator would read, or
    None when the include is refused (`problem` says why). Whether the target exists is the
    caller's to check; where several bases could hold it, the first whose path is in `paths`
    wins, else the first. `selector` is the part of the target the directive takes, as written
    (a snippet section or line range, an mdBook anchor, AsciiDoc `tag=`/`lines=`, reST options):
    recorded only, since the whole target file is what gets indexed."""

    line: int
    end_line: int
    syntax: Syntax
    raw: str
    target: str | None
    problem: str = ""
    as_code: bool = False
    selector: str = ""
