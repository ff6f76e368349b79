"""docshelf: a repository's documentation, searchable by meaning.

Index a repository's docs, then search them, from Python:

    import docshelf

    docshelf.index("~/src/shop", store="~/shop.sqlite3")
    with docshelf.open("~/shop.sqlite3") as shelf:
        for hit in shelf.search("Who owns Checkout?", top_k=3).hits:
            print(f"{hit.path}:{hit.start_line}-{hit.end_line}", hit.heading)
        print(shelf.read("docs/services/checkout.md", 1, 20).lines)
        print([f.path for f in shelf.outline("docs/runbooks/").files])

Importing docshelf loads neither numpy nor the model: those load on the first index or search.
"""

# First: on a system without fcntl and O_NOFOLLOW, fail here with a message that says so.
import docshelf._platform  # noqa: F401  # isort: skip

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any as _Any

from docshelf.app import Service, index, open
from docshelf.chunking import (
    Chunk,
    TextChunk,
    chunk_file,
    chunk_text,
    embedding_input,
    estimate_tokens,
    split_markdown,
)
from docshelf.config import Config
from docshelf.errors import (
    ConfigError,
    DocshelfError,
    EmbeddingError,
    IndexingError,
    NotIndexedError,
    StoreError,
    WorkspaceError,
)
from docshelf.reading import DocsOutline, OutlineFile, Reading, WorkspaceOverview, WorkspacesPage
from docshelf.search import Answer, Copy, Hit

try:
    __version__ = _version("docshelf")
except _PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "Answer",
    "Chunk",
    "Config",
    "ConfigError",
    "Copy",
    "DocsOutline",
    "DocshelfError",
    "EmbeddingError",
    "Hit",
    "IndexResult",
    "IndexingError",
    "NotIndexedError",
    "OutlineFile",
    "Progress",
    "Reading",
    "Service",
    "StoreError",
    "TextChunk",
    "WorkspaceError",
    "WorkspaceOverview",
    "WorkspacesPage",
    "__version__",
    "chunk_file",
    "chunk_text",
    "embedding_input",
    "estimate_tokens",
    "index",
    "open",
    "split_markdown",
]

# The indexer's result types live beside numpy; they load when first named.
_LAZY = {"IndexResult", "Progress"}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        from docshelf import indexer  # noqa: PLC0415 - numpy loads only when asked for

        return getattr(indexer, name)
    raise AttributeError(f"module 'docshelf' has no attribute {name!r}")
