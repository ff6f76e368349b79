"""The int8 model: the packaged model quantized by ONNX Runtime, a model of its own (its id, its
store), made once per machine, near the float model's vectors, and run without torch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from docshelf.embedders import local
from docshelf.embedders.local import INT8_MODEL, LocalEmbedder
from docshelf.embedders.onnx_query import INT8_SUFFIX
from docshelf.errors import ConfigError, EmbeddingError
from tests.support.processes import python_process

TEXTS = [
    "Checkout is owned by the payments team; page them through the on-call rota.",
    "The gateway reloads its routes from the providers without a restart.",
    "If a payment times out after 30 seconds, retry it twice, then raise an incident.",
    "déploiement 漢字 ✓",
    " ".join(["a long passage about certificates and their renewal"] * 60),  # past 256 tokens
    "Checkout",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache the int8 model is made in once, by the first test that needs it."""
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def int8(cache: Path) -> LocalEmbedder:
    made = LocalEmbedder("all-MiniLM-L6-v2-int8", onnx_cache=cache)
    made.embed(["load"])
    return made


@pytest.fixture(scope="module")
def float32() -> LocalEmbedder:
    return LocalEmbedder(precision="float32", onnx_queries=False)


def test_the_int8_model_is_a_model_of_its_own_known_before_it_loads() -> None:
    for name in ("all-MiniLM-L6-v2-int8", "all-minilm-l6-v2-int8", INT8_MODEL):
        embedder = LocalEmbedder(name)
        assert embedder.model_id == "docshelf/all-MiniLM-L6-v2-int8"
        assert embedder.dim == 384 and embedder.precision == "int8"
        assert embedder.device is None  # nothing loaded
    assert LocalEmbedder().model_id != INT8_MODEL
    with pytest.raises(ConfigError, match="always runs in int8"):
        LocalEmbedder("all-MiniLM-L6-v2-int8", precision="bfloat16")


def test_the_int8_model_is_made_once_in_the_cache_and_is_a_quarter_of_the_weights(
    int8: LocalEmbedder, cache: Path
) -> None:
    (made,) = cache.glob(f"*{INT8_SUFFIX}")
    (weights,) = cache.glob("*.weights")
    assert made.stat().st_size < weights.stat().st_size / 3
    stamp = made.stat().st_mtime_ns
    local._CACHED.clear()
    again = LocalEmbedder("all-MiniLM-L6-v2-int8", onnx_cache=cache)
    again.embed(TEXTS[:2])
    assert made.stat().st_mtime_ns == stamp
    assert int8.device == "cpu"


def test_int8_vectors_are_unit_rows_near_the_float_model_s_but_not_its_own(
    int8: LocalEmbedder, float32: LocalEmbedder
) -> None:
    got = int8.embed_documents(TEXTS)
    want = float32.embed_documents(TEXTS)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * want, axis=1)
    assert cosines.min() > 0.97  # 0.989 at the lowest on 64 traefik texts (BENCHMARKS.md)
    assert np.abs(got - want).max() > 1e-3  # another model: hence its own id


def test_an_int8_vector_does_not_depend_on_the_texts_beside_it(int8: LocalEmbedder) -> None:
    whole = int8.embed(TEXTS)
    assert np.array_equal(int8.embed_documents(TEXTS), whole)
    # Dynamic quantization scales a call's activations together: each text is a call alone,
    # so a stored vector reused by its text's hash is the one that text gets anywhere.
    one_by_one = np.stack([int8.embed([t])[0] for t in TEXTS])
    assert np.array_equal(one_by_one, whole)
    assert np.array_equal(int8.embed(TEXTS[::-1])[::-1], whole)


def test_a_question_is_nearest_to_the_passage_that_answers_it(int8: LocalEmbedder) -> None:
    passages = int8.embed_documents(TEXTS[:3])
    for question, answer in (
        ("who owns checkout?", 0),
        ("what happens when a payment times out?", 2),
        ("do route changes need a restart?", 1),
    ):
        scores = passages @ int8.embed([question])[0]
        assert int(np.argmax(scores)) == answer


# A later process with the int8 model in its cache: documents and queries without torch.
LATER_PROCESS = """
import sys
from pathlib import Path
import numpy as np
from docshelf.embedders.local import LocalEmbedder

cache, out, *texts = sys.argv[1:]
embedder = LocalEmbedder("all-MiniLM-L6-v2-int8", onnx_cache=Path(cache))
np.save(out, np.concatenate([embedder.embed(texts[:1]), embedder.embed_documents(texts * 4)]))
print(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules))
"""


def test_a_later_process_embeds_documents_and_queries_without_torch(
    int8: LocalEmbedder, cache: Path, tmp_path: Path
) -> None:
    out = tmp_path / "vectors.npy"
    said = python_process(LATER_PROCESS, str(cache), str(out), *TEXTS)
    assert said == "[]"  # neither torch nor transformers
    got = np.load(out)
    assert got.shape == (1 + 4 * len(TEXTS), 384)
    assert np.abs(got[1 : 1 + len(TEXTS)] - int8.embed(TEXTS)).max() < 1e-5


def test_without_onnxruntime_the_int8_model_is_an_error_that_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)
    monkeypatch.setattr(local, "_CACHED", {})
    embedder = LocalEmbedder("all-MiniLM-L6-v2-int8", onnx_cache=tmp_path / "onnx")
    with pytest.raises(EmbeddingError, match=r"pip install onnxruntime onnx"):
        embedder.embed_documents(TEXTS)


def test_a_cache_that_cannot_be_written_is_an_error_that_names_it(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    embedder = LocalEmbedder("all-MiniLM-L6-v2-int8", onnx_cache=blocked / "onnx")
    with pytest.raises(EmbeddingError, match=r"could not make docshelf/all-MiniLM-L6-v2-int8"):
        embedder.embed(["who owns checkout?"])
