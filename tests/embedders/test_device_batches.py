"""The GPU path (embedders/device_batches.py) on the CPU: the same vectors as the model's own
encode, in the caller's order, the same rows in an index, and batches sized for the device."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from docshelf.embedders import device_batches, local
from docshelf.embedders.device_batches import device_batch_size, encode_on_device
from docshelf.embedders.local import DEFAULT_BATCH_SIZE, DEVICE_CALL_BATCHES, LocalEmbedder
from docshelf.indexer import Indexer
from docshelf.stores.sqlite import SQLiteStore
from tests.support.indexing import MemorySource, section_doc
from tests.support.spies import count_texts

GIB = 1024**3

# Lengths that vary, in no order, so that batches pad and the order must be put back.
TEXTS = [
    f"runbook {i}: " + "restart the payment worker and check the queue " * ((i * 7) % 11 + 1)
    for i in range(45)
]


@pytest.fixture(scope="module")
def model() -> object:
    return LocalEmbedder(precision="float32")._load()


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_the_device_path_gives_encode_s_vectors_in_the_caller_s_order(
    model: object, precision: str
) -> None:
    # 8 a batch: six batches, more than the tokeniser threads keep ready. In bfloat16 a text's
    # vector moves with its batch's padding (by up to 5e-4 here), so encode's batches are the same.
    want = local._encode(model, TEXTS, 32 if precision == "float32" else 8, precision)
    got = encode_on_device(model, TEXTS, 8, precision)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.abs(got - want).max() < 1e-6
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    alone = encode_on_device(model, TEXTS[7:8], 8, "float32")
    assert np.abs(alone[0] - local._encode(model, TEXTS[7:8], 8, "float32")[0]).max() < 1e-6


def test_the_device_path_refuses_no_texts(model: object) -> None:
    with pytest.raises(ValueError, match="no texts"):
        encode_on_device(model, [], 8, "float32")


@pytest.mark.parametrize(
    ("free", "size"),
    [(0, 32), (1 * GIB, 32), (3 * GIB, 64), (8 * GIB, 256), (32 * GIB, 1_024), (139 * GIB, 1_024)],
)
def test_a_device_s_batch_is_the_largest_power_of_two_its_free_memory_holds(
    free: int, size: int
) -> None:
    assert device_batch_size(free) == size


def test_an_index_through_the_device_path_stores_the_rows_of_the_usual_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = MemorySource()
    files = {f"guide-{i}.md": section_doc(f"Guide {i}", 30, "restart the worker") for i in range(5)}
    source.add("c1", files)

    def index(name: str) -> tuple[dict[bytes, bytes], list[int]]:
        embedder = LocalEmbedder(precision="float32")
        calls = count_texts(monkeypatch, embedder, "embed_documents")
        path = tmp_path / f"{name}.sqlite3"
        with SQLiteStore.open(path, model_id=embedder.model_id, dim=embedder.dim) as store:
            Indexer(store, embedder, source).index("c1")
        with sqlite3.connect(path) as conn:
            rows = dict(conn.execute("SELECT content_hash, embedding FROM chunks").fetchall())
        return rows, calls

    usual, usual_calls = index("usual")
    # The GPU's path, on this CPU: the model counts as on a device with 16 texts a pass.
    monkeypatch.setattr(local, "_on_device", lambda model: True)
    monkeypatch.setattr(device_batches, "cuda_batch_size", lambda device: 16)
    passes: list[int] = []

    def spied(model: object, texts: list[str], batch_size: int, precision: str) -> np.ndarray:
        passes.append(batch_size)
        return encode_on_device(model, texts, batch_size, precision)

    monkeypatch.setattr(device_batches, "encode_on_device", spied)
    on_device, device_calls = index("device")

    assert len(usual) == 150 and usual.keys() == on_device.keys()
    for key, blob in usual.items():
        a, b = np.frombuffer(blob, "<f4"), np.frombuffer(on_device[key], "<f4")
        assert np.abs(a - b).max() < 1e-6
    # The indexer hands the device DEVICE_CALL_BATCHES passes at once, more than its own 64.
    assert max(usual_calls) <= 64 and max(device_calls) == DEVICE_CALL_BATCHES * 16
    assert passes and set(passes) == {16}
    assert LocalEmbedder().batch_size == DEFAULT_BATCH_SIZE
