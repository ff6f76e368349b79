"""The ONNX query path: the same vectors as torch, exported once, and torch whenever it cannot
be taken."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

from docshelf.config import Config
from docshelf.embedders import local, make_embedder
from docshelf.embedders.local import ONNX_MAX_TEXTS, LocalEmbedder, packaged_model_path
from docshelf.embedders.onnx_query import QUERY_FORMAT, OnnxQueryEncoder
from tests.support.processes import python_process
from tests.support.spies import count_texts

QUESTIONS = [
    "who owns checkout?",
    "What does the runbook say about the payment timeout?",
    "ERR_CERT_AUTHORITY_INVALID",
    "déploiement 漢字 ✓",
    " ".join(["a very long question"] * 200),  # past the model's 256 tokens: truncated alike
]


@pytest.fixture(scope="module")
def torch_only() -> LocalEmbedder:
    made = LocalEmbedder(onnx_queries=False)
    made.embed(["load"])
    return made


@pytest.fixture
def exported(torch_only: LocalEmbedder, tmp_path: Path) -> Path:
    """An ONNX cache holding the packaged model's export, made from the loaded model."""
    assert torch_only._model is not None
    cache = tmp_path / "onnx"
    OnnxQueryEncoder.build(torch_only._model, packaged_model_path(), cache)
    return cache


def test_onnx_vectors_match_the_torch_model(torch_only: LocalEmbedder, tmp_path: Path) -> None:
    assert torch_only._model is not None
    encoder = OnnxQueryEncoder.build(torch_only._model, "packaged", tmp_path)
    assert encoder is not None
    for count in (1, 3, len(QUESTIONS)):
        got = encoder.encode(QUESTIONS[:count])
        want = torch_only.embed(QUESTIONS[:count])
        assert got.dtype == np.float32 and got.shape == want.shape
        assert np.abs(got - want).max() < 1e-5
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_the_export_is_written_once_and_reused(torch_only: LocalEmbedder, tmp_path: Path) -> None:
    assert torch_only._model is not None
    OnnxQueryEncoder.build(torch_only._model, "packaged", tmp_path)
    written = sorted(tmp_path.iterdir())
    assert [p.suffixes for p in written] == [[".onnx"], [".query", ".json"], [".weights"]]
    graph, _, weights = written
    # The weights are a file of their own, which ONNX Runtime maps: the graph names it.
    assert graph.stat().st_size < 1_000_000
    assert weights.stat().st_size > 80_000_000
    assert weights.name.encode() in graph.read_bytes()
    stamps = [p.stat().st_mtime_ns for p in written]
    assert OnnxQueryEncoder.build(torch_only._model, "packaged", tmp_path) is not None
    assert [p.stat().st_mtime_ns for p in sorted(tmp_path.iterdir())] == stamps


# A later process: the packaged model's queries from a cache that `build` filled, with the
# vectors written where the test reads them, and which heavy modules the process imported.
LATER_PROCESS = """
import sys
from pathlib import Path
import numpy as np
from docshelf.embedders.local import LocalEmbedder

cache, out, *texts = sys.argv[1:]
embedder = LocalEmbedder(onnx_cache=Path(cache))
np.save(out, embedder.embed(texts))
print(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules))
"""


def later_process(cache: Path, out: Path, texts: list[str]) -> tuple[str, np.ndarray]:
    return python_process(LATER_PROCESS, str(cache), str(out), *texts), np.load(out)


def test_a_later_process_embeds_its_queries_from_the_cache_without_torch(
    torch_only: LocalEmbedder, exported: Path, tmp_path: Path
) -> None:
    cache = exported
    imported, got = later_process(cache, tmp_path / "q.npy", QUESTIONS)
    assert imported == "[]"  # neither torch nor transformers
    want = torch_only.embed(QUESTIONS)  # the long question truncated at 256 tokens alike
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-5

    batch = [f"chunk {i} of the runbook" for i in range(ONNX_MAX_TEXTS + 1)]
    imported, got = later_process(cache, tmp_path / "b.npy", batch)
    assert imported == "['sentence_transformers', 'torch', 'transformers']"  # a batch: torch
    assert np.abs(got - torch_only.embed(batch)).max() < 1e-5


def test_a_damaged_or_missing_query_file_means_torch_which_writes_it_again(
    torch_only: LocalEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert torch_only._model is not None
    OnnxQueryEncoder.build(torch_only._model, packaged_model_path(), tmp_path)
    (query,) = tmp_path.glob("*.query.json")
    want = torch_only.embed(QUESTIONS[:2])
    for damage in ('{"format": 1, "tokenizer": "not a tokenizer"', None):
        if damage is None:
            query.unlink()  # as an export by an earlier docshelf left it
        else:
            query.write_text(damage)
        monkeypatch.setattr(local, "_CACHED", {})
        monkeypatch.setattr(local, "_FAST", {})
        embedder = LocalEmbedder(onnx_cache=tmp_path)
        assert np.abs(embedder.embed(QUESTIONS[:2]) - want).max() < 1e-5
        assert embedder._model is not None  # torch answered
    assert json.loads(query.read_text())["format"] == QUERY_FORMAT  # written again, whole
    monkeypatch.setattr(local, "_CACHED", {})
    fresh = LocalEmbedder(onnx_cache=tmp_path)
    assert np.abs(fresh.embed(QUESTIONS[:2]) - want).max() < 1e-5
    assert fresh._model is None  # from the cache again

    # A graph without its weights (an export cut short, an earlier layout): exported again.
    (weights,) = tmp_path.glob("*.weights")
    weights.unlink()
    monkeypatch.setattr(local, "_CACHED", {})
    monkeypatch.setattr(local, "_FAST", {})
    embedder = LocalEmbedder(onnx_cache=tmp_path)
    assert np.abs(embedder.embed(QUESTIONS[:2]) - want).max() < 1e-5
    assert embedder._model is not None and weights.stat().st_size > 80_000_000


def test_a_model_of_another_shape_stays_on_torch(caplog: pytest.LogCaptureFixture) -> None:
    class Other:
        pass

    with caplog.at_level(logging.INFO, logger="docshelf.embedders"):
        assert OnnxQueryEncoder.build([Other()], "other", Path("/nonexistent")) is None  # type: ignore[arg-type]
    assert "embedded with torch" in caplog.text


def test_without_onnxruntime_queries_stay_on_torch(
    torch_only: LocalEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert torch_only._model is not None
    assert OnnxQueryEncoder.build(torch_only._model, "packaged", tmp_path) is None


def test_a_failed_export_leaves_the_embedder_on_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setattr(local, "_FAST", {})
    embedder = LocalEmbedder(onnx_cache=blocked / "onnx")
    with caplog.at_level(logging.WARNING, logger="docshelf.embedders"):
        vector = embedder.embed(["who owns checkout?"])
    assert "ONNX export" in caplog.text
    assert embedder._source is not None and local._FAST[embedder._source] is None
    torch_vector = LocalEmbedder(onnx_queries=False).embed(["who owns checkout?"])
    assert np.abs(vector - torch_vector).max() < 1e-6


def test_queries_take_the_onnx_path_and_batches_stay_on_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "_FAST", {})
    embedder = LocalEmbedder(onnx_cache=tmp_path)
    embedder.embed(["who owns checkout?"])
    assert embedder._source is not None
    fast = local._FAST[embedder._source]
    assert isinstance(fast, OnnxQueryEncoder)
    calls = count_texts(monkeypatch, fast, "encode")
    embedder.embed(["q"] * local.ONNX_MAX_TEXTS)
    embedder.embed(["chunk"] * (local.ONNX_MAX_TEXTS + 1))
    assert calls == [local.ONNX_MAX_TEXTS]


def test_the_indexer_s_batches_never_take_the_onnx_path_even_when_small(
    torch_only: LocalEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "_FAST", {})
    monkeypatch.setattr(local, "_CACHED", {})
    embedder = LocalEmbedder(onnx_cache=tmp_path, precision="float32")
    texts = ["chunk one of the runbook", "chunk two"]
    got = embedder.embed_documents(texts)
    assert local._FAST == {} and local._CACHED == {}  # no ONNX Runtime session was made
    assert not list(tmp_path.iterdir())  # nor exported
    assert np.array_equal(got, torch_only.embed(texts))  # torch's vectors, bit for bit
    assert embedder.embed_documents([]).shape == (0, embedder.dim)


def test_one_failed_onnx_call_falls_back_for_that_call_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(local, "_FAST", {})
    monkeypatch.setattr(local, "_FAST_FAILURES", {})
    embedder = LocalEmbedder(onnx_cache=tmp_path)
    want = embedder.embed(["who owns checkout?"])
    assert embedder._source is not None
    fast = local._FAST[embedder._source]
    assert isinstance(fast, OnnxQueryEncoder)
    original = fast.encode
    failing = {"left": 1}

    def flaky(texts: list[str]) -> np.ndarray:
        if failing["left"]:
            failing["left"] -= 1
            raise RuntimeError("one bad input")
        return original(texts)

    monkeypatch.setattr(fast, "encode", flaky)
    with caplog.at_level(logging.WARNING, logger="docshelf.embedders"):
        got = embedder.embed(["who owns checkout?"])  # torch answers this one
    assert "ONNX query path failed (one bad input)" in caplog.text
    assert np.abs(got - want).max() < 1e-5
    assert local._FAST[embedder._source] is fast  # still on the ONNX path
    embedder.embed(["who owns checkout?"])
    assert failing["left"] == 0 and local._FAST_FAILURES == {}

    failing["left"] = local.ONNX_FAILURES_BEFORE_OFF
    for _ in range(local.ONNX_FAILURES_BEFORE_OFF):
        assert np.abs(embedder.embed(["who owns checkout?"]) - want).max() < 1e-5
    assert local._FAST[embedder._source] is None  # a broken runtime: torch from now on
    assert "queries stay on torch from now on" in caplog.text


# A server that syncs: its documents through the query session, never torch.
SERVING_PROCESS = """
import sys
from pathlib import Path
import numpy as np
from docshelf.embedders.local import LocalEmbedder

cache, out, *texts = sys.argv[1:]
embedder = LocalEmbedder(onnx_cache=Path(cache), onnx_documents=True)
np.save(out, np.concatenate([embedder.embed_documents(texts), embedder.embed(texts[:1])]))
print(embedder.precision, embedder.batch_chars)
print(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules))
"""


def test_a_server_s_documents_take_the_onnx_session_with_torch_s_vectors(
    torch_only: LocalEmbedder, exported: Path, tmp_path: Path
) -> None:
    cache = exported
    batch = [
        f"chunk {i} of the runbook: restart the worker" + " again" * (i % 7) for i in range(20)
    ]
    said = python_process(SERVING_PROCESS, str(cache), str(tmp_path / "v.npy"), *batch)
    assert said.splitlines() == ["float32 19200", "[]"]  # no torch, even for a batch
    got = np.load(tmp_path / "v.npy")
    want = LocalEmbedder(precision="float32", onnx_queries=False).embed_documents(batch)
    assert np.abs(got[:-1] - want).max() < 1e-5 and np.abs(got[-1] - want[0]).max() < 1e-5


def test_only_a_server_that_syncs_at_auto_precision_without_a_gpu_takes_that_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def onnx_documents(config: Config, serving: bool) -> bool:
        made = make_embedder(config, serving=serving)
        assert isinstance(made, LocalEmbedder)
        return made._onnx_documents

    monkeypatch.setattr("docshelf.embedders.NVIDIA_DEVICE", str(tmp_path / "absent"))
    assert onnx_documents(Config(), serving=True)
    assert onnx_documents(Config(batch_size=8), serving=True)
    assert not onnx_documents(Config(), serving=False)
    assert not onnx_documents(Config(precision="bfloat16"), serving=True)
    assert not onnx_documents(Config(model="all-MiniLM-L6-v2-int8"), serving=True)
    (tmp_path / "nvidiactl").touch()
    monkeypatch.setattr("docshelf.embedders.NVIDIA_DEVICE", str(tmp_path / "nvidiactl"))
    assert not onnx_documents(Config(), serving=True)
