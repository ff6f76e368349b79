"""docshelf: a repository's Markdown documentation, searchable by meaning."""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from docshelf.chunking import (
    Chunk,
    TextChunk,
    chunk_text,
    embedding_input,
    estimate_tokens,
    split_markdown,
)
from docshelf.errors import (
    ConfigError,
    DocshelfError,
    EmbeddingError,
    IndexingError,
    StoreError,
    WorkspaceError,
)

try:
    __version__ = _version("docshelf")
except _PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "Chunk",
    "ConfigError",
    "DocshelfError",
    "EmbeddingError",
    "IndexingError",
    "StoreError",
    "TextChunk",
    "WorkspaceError",
    "__version__",
    "chunk_text",
    "embedding_input",
    "estimate_tokens",
    "split_markdown",
]
