"""The exception tree. Every message ends with what the user can do next.

    DocshelfError
    ├── ConfigError      a setting or an argument is wrong
    ├── EmbeddingError   the embedding model or endpoint failed
    ├── StoreError       the database failed or does not match the configuration
    ├── WorkspaceError   a source of documentation cannot be read
    ├── IndexingError    a revision could not be indexed; what was served before still is
    └── NotIndexedError  a search found nothing indexed to answer from yet

The command line turns a DocshelfError into one line on stderr and a non-zero exit.

A message that names an argument or a command names it by `term(KEY)`: each face says it in its
own words (`-k` on the command line, `top_k` to an MCP client, `k` to the web API; present.py
holds the words), and `str()` of the error says the KEY itself, which is the argument's name in
the Python API and the MCP tools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# The arguments and commands that each face names its own way (present.FACE_WORDS).
TERMS = (
    "query",
    "top_k",
    "per_file",
    "max_tokens",
    "mode",
    "path",
    "search_path",
    "workspace",
    "start_line",
    "end_line",
    "page",
    "docs_search",
    "docs_read",
    "docs_outline",
)

# A term travels inside a message between two control characters that no shown value holds:
# every value a message quotes is escaped (workspace.shown, repr) before it is written in.
_OPEN, _CLOSE = "\x1e", "\x1f"
_TERM = re.compile(f"{_OPEN}({'|'.join(TERMS)}){_CLOSE}")


def term(key: str) -> str:
    """`key` marked, for each face to say in its own words when it is one of TERMS (any other
    word is said as it is)."""
    return f"{_OPEN}{key}{_CLOSE}" if key in TERMS else key


def said(text: str, words: Mapping[str, str]) -> str:
    """`text` with each term in `words` (a face's), else as its key."""
    return _TERM.sub(lambda m: words.get(m[1], m[1]), text)


class DocshelfError(Exception):
    """Base of every error docshelf raises on purpose."""

    def __str__(self) -> str:
        return said(super().__str__(), {})

    def said(self, words: Mapping[str, str]) -> str:
        """The message in a face's words."""
        return said(super().__str__(), words)


class ConfigError(DocshelfError):
    """A setting or an argument is wrong."""


class EmbeddingError(DocshelfError):
    """The embedding model or endpoint failed."""


class StoreError(DocshelfError):
    """The database failed or does not match the configuration."""


class WorkspaceError(DocshelfError):
    """A source of documentation cannot be read."""


class IndexingError(DocshelfError):
    """A revision could not be indexed."""


class NotIndexedError(DocshelfError):
    """A search found nothing indexed to answer from yet."""
