"""Defaults, each with the reason for its value.

Modules below the command line and the MCP server never read the environment: whatever is
configurable reaches them as an argument, built once at the edge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_data_dir

# A chunk must fit any embedding model's input limit and still hold a whole runbook step or an
# ownership table. Measured in bytes of UTF-8, so a page of CJK text is held to the same budget.
MAX_CHUNK_BYTES = 2000

# Each later piece of a section repeats up to this many bytes of whole trailing lines of the piece
# before it, so a sentence cut at the boundary is whole in at least one piece.
OVERLAP_BYTES = 300

# The paragraph chunker's budget in characters: a few paragraphs of prose per chunk.
PARAGRAPH_MAX_CHARS = 800

# The paragraph chunker copies this much of the previous chunk's tail to the front of the next,
# so a match near a boundary is not lost. Never more than a quarter of the budget.
PARAGRAPH_OVERLAP_CHARS = 120

# Files docshelf reads as documentation, and which chunker each gets by default. A .txt file
# that opens with a reStructuredText title (Django writes its docs so) is read as one.
MARKDOWN_SUFFIXES = (".md", ".markdown")
MDX_SUFFIXES = (".mdx",)
RST_SUFFIXES = (".rst", ".rest")
ASCIIDOC_SUFFIXES = (".adoc", ".asciidoc", ".asc")
TEXT_SUFFIXES = (".txt",)
# The markup formats: what a discovery over the whole tree reads (a requirements.txt or a
# test fixture's .txt is no documentation; a docs folder's .txt files are read).
MARKUP_SUFFIXES = MARKDOWN_SUFFIXES + MDX_SUFFIXES + RST_SUFFIXES + ASCIIDOC_SUFFIXES
DOC_SUFFIXES = MARKUP_SUFFIXES + TEXT_SUFFIXES

# Files over this size are skipped, not read: hand-written documentation is far smaller, and a
# generated dump (an API reference, a changelog of every release) would dominate every top-k.
MAX_DOC_BYTES = 1024 * 1024

# Where repositories keep their documentation: with no --docs, docshelf reads every one of these
# folders (from the top of the tree) that holds a documentation file, and the whole tree outside
# NOT_DOCS_DIRS where none does. Sphinx (docs, doc, Doc), Docusaurus (website/docs, docs),
# Starlight (src/content/docs), Hugo (content), Nextra (pages), Antora (docs/modules), mdBook.
DOC_ROOT_CANDIDATES = (
    "docs",
    "doc",
    "Doc",
    "documentation",
    "Documentation",
    "website/docs",
    "website/content",
    "site/content",
    "src/content/docs",
    "apps/docs",
    "packages/docs",
    "content",
    "pages",
    "guides",
    "manual",
    "handbook",
    "book",
)

# Folders that hold no documentation of the repository's own: vendored code, build output,
# environments and test fixtures. A discovery skips them, and hidden folders (.git, .github).
NOT_DOCS_DIRS = frozenset(
    {
        "node_modules",
        "vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "external",
        "build",
        "dist",
        "out",
        "target",
        "_build",
        "site-packages",
        "venv",
        "env",
        "__pycache__",
        "coverage",
        "htmlcov",
        "tests",
        "test",
        "testdata",
        "__tests__",
        "fixtures",
    }
)

# Seconds one local git command (resolving a revision, listing a tree, reading its blobs) may take:
# a large repository on a cold disk needs seconds; minutes mean git is stuck, not busy.
GIT_TIMEOUT_SECONDS = 120.0

# Seconds a clone or a fetch may take: these move a whole repository over the network.
GIT_FETCH_TIMEOUT_SECONDS = 600.0

# What one docs_read or docs_outline answer holds at most. A hit is at most 2,000 bytes (about
# 50 lines of prose); 200 lines or 16,000 bytes (about 4,000 tokens, the size of eight hits) is
# a whole section or a long part of a page, enough to read around a hit, while ten such reads
# still take a small part of a model's context window. Longer ranges are cut at a line and the
# answer names the start_line to read on from.
READ_MAX_LINES = 200
READ_MAX_BYTES = 16_000

# How this version reads a commit's docs into chunks (discovery, includes, visible text, sections).
# Stored with each indexed ref's selection: a ref indexed by another reading is indexed again on
# the next run (its unchanged chunks keep their vectors). Raise it when a change gives one commit
# other chunks, or other rows. 2: docs sites read as their generator means them. 3: each file's
# title embedded (search.title_prior).
DOCS_READING = 3

# A heading's title in the breadcrumb is cut after this many characters: the breadcrumb labels a
# chunk and prefixes its embedding input; the full heading line stays in the chunk's content.
MAX_TITLE_CHARS = 200

# Texts per request to an OpenAI-compatible endpoint: the input cap of such endpoints (OpenAI
# takes more, but several gateways and local servers stop at 64), and the indexer's batch.
EMBED_BATCH_SIZE = 64

# Seconds one embeddings request may take before it is retried: a batch of 64 chunks takes a
# second or two on a hosted endpoint, much longer only when something is wrong.
EMBED_TIMEOUT_SECONDS = 30.0

# Retries of a request that failed with 429, a 5xx or a connection error, with exponential
# backoff and jitter starting at EMBED_RETRY_BASE_SECONDS; a server's Retry-After is honoured up to
# EMBED_RETRY_MAX_SECONDS.
EMBED_MAX_RETRIES = 4
EMBED_RETRY_BASE_SECONDS = 0.5
EMBED_RETRY_MAX_SECONDS = 60.0

# The sync hook gives indexing one revision this long before it gives up and lets the previous
# ref keep serving: a full index of a large docs tree takes a minute or two on a CPU, and an
# embeddings endpoint that hangs must not hold the sync for longer: a broken endpoint should leave
# search a revision behind, never stall the sync that keeps the rest of the workspace current.
REFRESH_TIMEOUT_SECONDS = 120.0

# How long `docshelf index` waits for another process indexing the same workspace: that run
# indexes the same commit more often than not, and after an hour something is stuck.
INDEX_LOCK_TIMEOUT_SECONDS = 3600.0

# A pin is a row with a lease its holder renews every third of it: a crashed process's pins lapse
# within a minute, and two missed renewals (a busy database, a slow network) do not lose a pin.
PIN_LEASE_SECONDS = 60.0

# hnsw.ef_search for PostgreSQL vector searches: the candidate list of the HNSW walk. pgvector's
# default of 40 misses many true neighbours of short questions; 200 with the index built at
# ef_construction 200 finds 95% of them at 10k chunks (fewer at 100k) and stays under 5 ms at the
# median (bench/search.py; BENCHMARKS.md has the measured recall and latency at each value).
DEFAULT_EF_SEARCH = 200

# Connections the PostgreSQL store keeps open: one per concurrent search is plenty for one server.
POSTGRES_POOL_MIN = 1
POSTGRES_POOL_MAX = 8

# Where `docshelf serve --http` listens by default: this machine only, so nothing reaches the
# docs over the network until someone chooses a host (and a token) on purpose. The port is one that
# no common development server claims.
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765

# The embedders docshelf knows: a local sentence-transformers model (the default, offline), any
# OpenAI-compatible /v1/embeddings endpoint, or none (full-text search only).
EMBEDDERS = ("local", "openai", "none")

# The model id and width a store records when it is made with the none embedder (rows without
# vectors), and the model id the indexer hashes each chunk's input with there: spelt once, so
# that the store the none embedder makes and every later opening of it agree.
NO_MODEL_ID = "none"
NO_MODEL_DIM = 0
NO_MODEL = (NO_MODEL_ID, NO_MODEL_DIM)

# The arithmetic of the local model's indexing batches (embedders/local.py explains auto).
PRECISIONS = ("auto", "float32", "bfloat16", "float16")

# Used with --embedder openai when no --base-url or --model is given.
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"

# The file name of the default SQLite store inside the user data directory.
STORE_FILE_NAME = "docshelf.sqlite3"


# The folder, inside the user data directory, where clone URLs are mirrored.
MIRROR_DIR_NAME = "mirrors"


def default_mirror_dir() -> str:
    """Where `docshelf index URL` keeps its mirror of each repository."""
    return str(Path(user_data_dir("docshelf", appauthor=False)) / MIRROR_DIR_NAME)


def default_store_location() -> str:
    """The SQLite store in the user data directory (platformdirs), e.g. ~/.local/share/docshelf."""
    return str(Path(user_data_dir("docshelf", appauthor=False)) / STORE_FILE_NAME)


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting, built once at the edge (flags and DOCSHELF_* variables) and passed down."""

    store: str = field(default_factory=default_store_location)
    embedder: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    dimensions: int | None = None
    batch_size: int | None = None
    precision: str = "auto"
    ef_search: int = DEFAULT_EF_SEARCH
    mirror_dir: str = field(default_factory=default_mirror_dir)
    # A PostgreSQL streaming replica of `store` that a server reads from (searches, reads,
    # outlines); None: it reads from `store`.
    read_store: str | None = None

    def __post_init__(self) -> None:
        # A path written ~/... (in a DOCSHELF_* variable, or through the Python API) means the
        # user's home, as a shell would have it; a URL is left as it is.
        if "://" not in self.store:
            object.__setattr__(self, "store", os.path.expanduser(self.store))
        object.__setattr__(self, "mirror_dir", os.path.expanduser(self.mirror_dir))
