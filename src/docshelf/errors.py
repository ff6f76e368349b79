"""The exception tree. Every message ends with what the user can do next.

    DocshelfError
    ├── ConfigError      a setting or an argument is wrong
    ├── EmbeddingError   the embedding model or endpoint failed
    ├── StoreError       the database failed or does not match the configuration
    ├── WorkspaceError   a source of documentation cannot be read
    ├── IndexingError    a revision could not be indexed; what was served before still is
    └── NotIndexedError  a search found nothing indexed to answer from yet

The command line turns a DocshelfError into one line on stderr and a non-zero exit.
"""

from __future__ import annotations


class DocshelfError(Exception):
    """Base of every error docshelf raises on purpose."""


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
