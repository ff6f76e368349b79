"""Run by tests/test_indexer.py in a subprocess that the test kills with SIGKILL mid-write:

    python -m tests.support.kill_index STORE MARKER AFTER_ROWS CHUNKS

Indexes ref "big" (CHUNKS chunks) into STORE with the fake embedder, and creates MARKER once
AFTER_ROWS rows have gone to the store, then writes slowly, so the kill lands inside the write.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docshelf.indexer import Indexer
from docshelf.rows import ChunkRow
from docshelf.stores import open_store
from tests.support.indexing import DIM, MODEL, FakeEmbedder, MemorySource, section_doc

# Seconds per row once the marker exists: slow enough that the kill lands mid-write.
SLOW_ROW_SECONDS = 0.002
END_OF_ROWS_SECONDS = 5.0


class MarkingStore:
    def __init__(self, inner: Any, marker: Path, after: int) -> None:
        self.inner, self.marker, self.after = inner, marker, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def replace_doc_chunks(
        self, workspace: str, ref: str, rows: Iterable[ChunkRow], files: Iterable[Any] = ()
    ) -> None:
        def marked() -> Iterator[ChunkRow]:
            for i, row in enumerate(rows):
                if i == self.after:
                    self.marker.touch()
                if i >= self.after:
                    time.sleep(SLOW_ROW_SECONDS)
                yield row
            time.sleep(
                END_OF_ROWS_SECONDS
            )  # the kill lands before the commit, even after the last row

        self.inner.replace_doc_chunks(workspace, ref, marked(), files)


def main() -> None:
    location, marker, after, chunks = (
        sys.argv[1],
        Path(sys.argv[2]),
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    source = MemorySource()
    source.add(
        "big", {f"docs/page{i}.md": section_doc(f"Page{i}", 10) for i in range(chunks // 10)}
    )
    with open_store(location, model_id=MODEL, dim=DIM) as store:
        Indexer(MarkingStore(store, marker, after), FakeEmbedder(), source).index("big")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
