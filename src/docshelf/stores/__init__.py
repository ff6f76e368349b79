"""Where chunks and their embeddings live: SQLite (the embedded default) or PostgreSQL + pgvector.

Both stores offer the same methods and pass the same contract tests (tests/stores):

- `has_chunks(workspace, ref)`: whether a ref is indexed; one EXISTS query, no embedding.
- `replace_doc_chunks(workspace, ref, rows, files=())`: all of a ref's chunk rows and all of its
  files (rows.FileRow: path, text, text_hash, lines) in one transaction; a ref that has any
  chunks has all of them and all of its files, and a failure (a refused row, a path given twice,
  an exception from either iterator) leaves the previous chunks and files untouched. A text is
  stored once per text_hash, across refs and workspaces: a commit that changes one file adds one
  text. A write without `files` leaves the ref without files.
- `has_files(workspace, ref)`: whether the ref has files (a ref indexed before the stores kept
  them has chunks only); `files(workspace, ref)`: its rows.StoredFile rows (path, lines, size in
  UTF-8 bytes), by path in code point order; `file_text(workspace, ref, path)`: the file's text
  exactly as written (line ends, a byte order mark), None when the ref has no such file.
- `search(workspace, ref, vector, k, paths=None)`: the k nearest chunks of one ref by cosine
  similarity (score: the similarity, highest first).
- `search_text(workspace, ref, query, k, paths=None)`: the k best chunks of one ref by full-text
  rank (score: higher is better; no hits when the query has no searchable word).
- Either search with `paths` ranks only the chunks of those paths and returns the k best of that
  subset (all of it when it holds fewer than k), each scored as an unfiltered search scores it;
  an empty collection finds nothing. It may hold thousands of paths.
- `prune(workspace, keep_refs)`: delete every ref of the workspace (its chunks and files) but
  `keep_refs` and the pinned ones, and the workspace's expired pins; returns how many refs went.
  Then the texts no ref of any workspace holds go (on PostgreSQL, at a prune that no write
  overlaps: see TEXTS_LOCK_KEY). The pins are read in the transaction that deletes, so a pin
  added before the prune began is never missed.
- `add_pin(workspace, ref, holder, lease_seconds)` -> pin id; `renew_pins(ids, lease_seconds)` ->
  the ids still live; `remove_pin(id)`, idempotent; `pinned_refs(workspace)`: the refs with at
  least one live pin. A pin is a row with a lease (live while it has not expired), so every
  process sharing the store sees it, and the pins of a holder that dies, and stops renewing them,
  expire. An expired or removed pin is never revived. Two pins of one ref need two removals. Pin
  a ref before checking that it is there: a prune that ran first has deleted it.
- `workspace_lock(workspace, timeout_seconds)`: a context manager for one indexing run of one
  workspace, exclusive across threads and processes; StoreError when another holder keeps it
  past the timeout. The operating system (SQLite) or the server (PostgreSQL) drops it when its
  holder dies.
- `set_current(workspace, ref)` / `current(workspace)`: the ref served by default, persisted.
- `embeddings_for(content_hashes, model_id)`: stored vectors by content hash (the hash of the
  model and the embedding input), of any workspace, so the indexer embeds only new or changed
  chunks, and a fork or a second clone of the same docs nothing at all.
- `ref_counts(workspace)`, `workspaces()`: what is stored, for `docshelf status`.

A store records the embedding model and width when it is created, and checks them every time it is
opened: `model_id`/`dim` are read from the database, never trusted from configuration. The `none`
embedder is model `none`, width 0: rows without vectors, full-text search only. A store with a
model refuses a row without a vector, or with one of another width or type, or not a finite unit
vector; a store of width 0 refuses a row with a vector, and a vector search. Each refusal is a
StoreError, in the same words on both stores (stores/common.py); a refused write leaves the ref
as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from docshelf.errors import ConfigError
from docshelf.stores.sqlite import SQLiteStore

if TYPE_CHECKING:  # importing psycopg is optional at run time
    from docshelf.stores.postgres import PostgresStore

__all__ = ["SQLiteStore", "is_postgres_url", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


def open_store(
    location: str,
    *,
    model_id: str | None,
    dim: int | None,
    ef_search: int | None = None,
) -> SQLiteStore | PostgresStore:
    """Open (creating when needed) the store at a SQLite path or a PostgreSQL URL.

    With `model_id` and `dim`, a new store is created for that model and an existing one must
    have been created for it; with None, an existing store is opened as it is (read-only uses).

    Raises:
        StoreError: the store cannot be opened, or was made for another model or width.
        ConfigError: a PostgreSQL URL without the `postgres` extra installed.
    """
    if is_postgres_url(location):
        try:
            from docshelf.stores.postgres import PostgresStore  # noqa: PLC0415 - optional extra
        except ImportError as e:
            raise ConfigError(
                f"a PostgreSQL store needs the postgres extra ({e.name} is missing): "
                "pip install 'docshelf[postgres]'"
            ) from e
        return PostgresStore.open(location, model_id=model_id, dim=dim, ef_search=ef_search)
    return SQLiteStore.open(Path(location), model_id=model_id, dim=dim)
