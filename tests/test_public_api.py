from __future__ import annotations

import docshelf


def test_everything_in_all_is_importable_and_nothing_public_is_missing() -> None:
    for name in docshelf.__all__:
        assert hasattr(docshelf, name), name
    public = {n for n in vars(docshelf) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(docshelf.__all__)


def test_errors_share_one_base() -> None:
    for error in (
        docshelf.ConfigError,
        docshelf.EmbeddingError,
        docshelf.StoreError,
        docshelf.WorkspaceError,
        docshelf.IndexingError,
    ):
        assert issubclass(error, docshelf.DocshelfError)
