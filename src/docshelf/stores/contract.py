"""The contract both stores keep (SQLiteStore, PostgresStore), as the Protocol `Store`.

Both stores subclass `Store` explicitly, so mypy checks each class against it, and they inherit
its docstrings (a store's own says only what is particular to it) and `__enter__`/`__exit__`.

`tests/stores/test_contract.py` runs every case against a real SQLite file and a real
PostgreSQL; a new method gets its contract test first. This module imports nothing heavy, so
that a module may name `Store` without loading numpy or psycopg.

A store records the embedding model and width when it is created, and checks them every time it
is opened: `model_id`/`dim` are read from the database, never trusted from configuration. The
`none` embedder is model `none`, width 0: rows without vectors, full-text search only. A store
with a model refuses a row without a vector, or with one of another width or type, or not a
finite unit vector; a store of width 0 refuses a row with a vector, and a vector search. Each
refusal is a StoreError, in the same words on both stores (stores/common.py); a refused write
leaves the ref as it was.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from docshelf.rows import ChunkRow, FileRow, StoredFile, StoredHit, Vector

__all__ = ["RefScope", "Store"]

# One ref's part of a search over several (Store.search_refs): its workspace, the ref, and the
# paths to rank (None: all of them).
RefScope = tuple[str, str, "Collection[str] | None"]


class Store(Protocol):
    """Chunks, file texts, pins and indexing locks of every workspace in one store.
    Thread-safe; every failure is a StoreError naming the store by its `location`."""

    # Attributes, not properties: each store sets them when it opens, and a read-only property
    # here would refuse that assignment in the explicit subclasses. Read them, never set them.
    location: str
    """The store as messages name it: a path, or a URL without its password."""
    model_id: str
    """The embedding model the store was made for, as recorded in it."""
    dim: int
    """The width of its vectors, as recorded in it; 0 for the none embedder."""

    def close(self) -> None:
        """Close the store's connections."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        """Closes the store."""
        self.close()

    # -- writes ----------------------------------------------------------------------------

    def replace_doc_chunks(
        self,
        workspace: str,
        ref: str,
        rows: Iterable[ChunkRow],
        files: Iterable[FileRow] = (),
    ) -> None:
        """Make `rows` the whole of `ref`'s chunks and `files` the whole of its files, in one
        transaction.

        A ref that has any chunks has all of them and all of its files, and a failure (a
        refused row, a path given twice, an exception from either iterator) leaves the previous
        chunks and files untouched. A text is stored once per text_hash, across refs and
        workspaces: a commit that changes one file adds one text; the texts that no ref holds
        any more go at a later prune. A write without `files` leaves the ref without files.

        Raises:
            StoreError: the write failed, a row's embedding does not fit the store, or a path is
                among `files` twice; the ref's previous chunks and files are untouched.
        """

    def prune(self, workspace: str, keep_refs: Iterable[str]) -> int:
        """Delete every ref of the workspace (its chunks and files) but `keep_refs` and the
        pinned ones, and the workspace's expired pins; returns how many refs went.

        Then the texts no ref of any workspace holds go (on PostgreSQL, at a prune that no write
        overlaps). The workspace's current ref is left as it is, even when its chunks go. The
        pins are read in the transaction that deletes, so a pin added before the prune began is
        never missed.
        """

    def set_current(self, workspace: str, ref: str) -> None:
        """Make `ref` the one served by default, persisted."""

    def merge_term_lists(self, *, force: bool = False) -> int:
        """Merge the inverted lists of every workspace's current ref into one list per term, so
        that a search over many workspaces reads a list a term, when the current refs have
        moved on enough since the last merge (with `force`, whenever there are enough of them);
        returns how many refs were merged, 0 when the lists were left as they were. Searches go
        on meanwhile and rank alike either way. SQLite, whose lists are read in process, never
        merges.

        Raises:
            StoreError: the store cannot be written.
        """

    def set_selection(self, workspace: str, ref: str, selection: str, skipped: str = "[]") -> None:
        """Record which files `ref` holds: the docs selection it was read with, the files it
        skipped (JSON, as the indexer writes it) and now as the time it was indexed."""

    # -- pins and the indexing lock --------------------------------------------------------

    def add_pin(self, workspace: str, ref: str, holder: str, lease_seconds: float) -> str:
        """Keep `ref` out of every prune for `lease_seconds`; returns the pin's id.

        A pin is a row with a lease, so every process sharing the store sees it, and the pins
        of a holder that dies (and stops renewing them) expire. Two pins of one ref need two
        removals. Pin a ref before checking that it is there: a prune that ran first has
        deleted it.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """

    def renew_pins(self, pin_ids: Sequence[str], lease_seconds: float) -> set[str]:
        """Make the given pins expire `lease_seconds` from now; returns the ids still live.

        A pin that expired or was removed is not revived: a prune may have deleted its ref.

        Raises:
            ConfigError: the lease is not a positive number of seconds (at most a year).
            StoreError: the write failed.
        """

    def remove_pin(self, pin_id: str) -> None:
        """Release a pin; removing one that is gone already does nothing."""

    def pins(self, workspace: str) -> list[tuple[str, str, float]]:
        """The unexpired pins of `workspace`: (ref, holder, expiry in unix seconds), soonest to
        expire first."""

    def pinned_refs(self, workspace: str) -> set[str]:
        """The refs of `workspace` with at least one unexpired pin."""

    def workspace_lock(
        self, workspace: str, timeout_seconds: float
    ) -> AbstractContextManager[None]:
        """Hold the indexing lock of `workspace` for the block (one indexing run), waiting up to
        `timeout_seconds`.

        One holder at a time, among the threads of this process and every other process using
        the store. The operating system (SQLite) or the server (PostgreSQL) drops it when its
        holder dies.

        Raises:
            ConfigError: the timeout is negative or not a number.
            StoreError: another holder kept the lock for the whole wait, or the lock could not
                be taken (SQLite: its file cannot be opened; PostgreSQL: the server failed).
        """

    # -- reads -----------------------------------------------------------------------------

    def current(self, workspace: str) -> str | None:
        """The ref served by default; None before one is set."""

    def selection(self, workspace: str, ref: str) -> str | None:
        """The docs selection `ref` was read with, None when none was recorded."""

    def ref_report(self, workspace: str, ref: str) -> tuple[str | None, str | None]:
        """When `ref` was indexed (UTC, ISO 8601) and the files it skipped (JSON); None for
        each that was not recorded."""

    def has_chunks(self, workspace: str, ref: str) -> bool:
        """Whether a ref is indexed: one EXISTS query, no embedding."""

    def has_files(self, workspace: str, ref: str) -> bool:
        """Whether `ref` has files: a ref indexed before the stores kept them has chunks only."""

    def files(self, workspace: str, ref: str) -> list[StoredFile]:
        """The files of `ref` (path, lines, size in UTF-8 bytes), by path in code point
        order."""

    def file_text(self, workspace: str, ref: str, path: str) -> str | None:
        """The text of file `path` of `ref` exactly as it was written (line ends, a byte order
        mark); None when `ref` has no such file."""

    def ref_counts(self, workspace: str) -> dict[str, int]:
        """How many chunks each ref of `workspace` holds, by ref."""

    def workspaces(self) -> list[str]:
        """Every workspace with chunks or a current ref, in code point order."""

    def embeddings_for(self, content_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        """Stored vectors of chunks with these content hashes (the hash of the model and the
        embedding input), of any workspace, so the indexer embeds only new or changed chunks, and
        a fork or a second clone of the same docs nothing at all. Only vectors made by
        `model_id`: none when it is not the store's model, or the store's width is 0."""

    def title_embeddings_for(self, title_hashes: Sequence[str], model_id: str) -> dict[str, Vector]:
        """Stored vectors of file titles with these hashes (FileRow.title_hash), of any ref of
        any workspace, as embeddings_for finds chunks'."""

    def file_titles(self, workspace: str, ref: str, paths: Collection[str]) -> dict[str, Vector]:
        """The title vectors of these files of one ref, by path: only files that have one (a
        ref indexed before titles were kept, or without an embedder, has none)."""

    def search(
        self,
        workspace: str,
        ref: str,
        vector: Vector,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]:
        """The k chunks of `ref` nearest to `vector` by cosine similarity (score: the
        similarity, highest first).

        With `paths`, only the chunks of those paths are ranked, and the k best of that subset
        come back (all of it when it holds fewer than k), each scored as an unfiltered search
        scores it; an empty collection finds nothing. It may hold thousands of paths.

        Raises:
            StoreError: the store cannot be read, holds no vectors, or `vector` has another
                width or is not a finite, non-zero vector.
        """

    def search_text(
        self,
        workspace: str,
        ref: str,
        query: str,
        k: int,
        paths: Collection[str] | None = None,
    ) -> list[StoredHit]:
        """The k chunks of `ref` that best match the words of `query` by BM25, from the ref's own
        statistics (score: higher is better; no hits when the query has no searchable word).
        `paths` limits it as it limits `search`, the statistics staying the whole ref's.

        Raises:
            StoreError: the store cannot be read.
        """

    # -- reads over many workspaces: a bounded number of statements, however many there are ---

    def currents(self, workspaces: Collection[str]) -> dict[str, str]:
        """The current ref of each of `workspaces` that has one, by workspace."""

    def indexed_refs(self, refs: Collection[tuple[str, str]]) -> set[tuple[str, str]]:
        """Those of `refs` ((workspace, ref) pairs) that have chunks, as has_chunks tells."""

    def search_refs(self, scopes: Sequence[RefScope], vector: Vector, k: int) -> list[StoredHit]:
        """The k chunks of the union of `scopes` nearest to `vector`, as `search` ranks one ref
        (each scope's paths limiting it as `paths` does), each hit's `workspace` set. Exact
        where the store's index could miss one: the same hits as the searches of each scope
        merged by score, ties broken by workspace, path and chunk.

        Raises:
            StoreError: as `search`.
        """

    def search_text_refs(self, scopes: Sequence[RefScope], query: str, k: int) -> list[StoredHit]:
        """The k chunks of the union of `scopes` that best match the words of `query` by BM25,
        from the statistics of the union's refs taken together (chunks, lengths, and how many
        chunks hold each term, summed over them), so that the scores of two workspaces compare
        as those of one corpus; for one ref, what search_text answers. Each hit's `workspace`
        set.

        Raises:
            StoreError: the store cannot be read.
        """

    def file_titles_refs(
        self, files: Collection[tuple[str, str, str]]
    ) -> dict[tuple[str, str], Vector]:
        """The title vectors of these files ((workspace, ref, path) each), by (workspace,
        path), as file_titles finds them."""

    def files_refs(
        self, refs: Collection[tuple[str, str]], prefix: str = ""
    ) -> dict[tuple[str, str], list[StoredFile]]:
        """The files of each of these refs ((workspace, ref) each) whose path starts with
        `prefix`, as `files` lists them, by (workspace, ref); a ref with none is left out. One
        read, however many refs (a path named without its workspace)."""
