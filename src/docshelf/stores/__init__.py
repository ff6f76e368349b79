"""Where chunks and their embeddings live: SQLite (the embedded default) or PostgreSQL + pgvector.

Both keep one contract, the Protocol `Store` (stores/contract.py), and pass the same contract
tests (tests/stores/test_contract.py); `open_store` opens either by its location.
"""

from __future__ import annotations

from pathlib import Path

from docshelf.errors import ConfigError
from docshelf.stores.contract import Store
from docshelf.stores.sqlite import SQLiteStore

__all__ = ["SQLiteStore", "Store", "is_postgres_url", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: str) -> bool:
    return location.startswith(POSTGRES_SCHEMES)


def open_store(
    location: str,
    *,
    model_id: str | None,
    dim: int | None,
    ef_search: int | None = None,
    create: bool = True,
) -> Store:
    """Open the store at a SQLite path or a PostgreSQL URL, creating it when needed and
    `create` is true.

    With `model_id` and `dim`, an existing store must have been created for that model, and a
    new one is created for it; with None, an existing store is opened as it is. Without a model,
    or with `create` false, a place that holds no store is refused, and nothing is created there.

    Raises:
        StoreError: the store cannot be opened, holds no store and may not be created, or was
            made for another model or width.
        ConfigError: a PostgreSQL URL without the `postgres` extra installed.
    """
    # Both classes subclass Store, so mypy checks each against the contract where it is defined.
    if is_postgres_url(location):
        try:
            from docshelf.stores.postgres import PostgresStore  # noqa: PLC0415 - optional extra
        except ImportError as e:
            raise ConfigError(
                f"a PostgreSQL store needs the postgres extra ({e.name} is missing): "
                "pip install 'docshelf[postgres]'"
            ) from e
        return PostgresStore.open(
            location, model_id=model_id, dim=dim, ef_search=ef_search, create=create
        )
    return SQLiteStore.open(Path(location), model_id=model_id, dim=dim, create=create)
