"""The local embedder on the real packaged all-MiniLM-L6-v2, offline."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from docshelf.embedders import local
from docshelf.embedders.local import (
    BATCH_CHARS,
    DEFAULT_MODEL,
    ONNX_MAX_TEXTS,
    REDUCED_BATCH_CHARS,
    LocalEmbedder,
    candidate_precision,
    native_bfloat16,
    packaged_model_path,
)
from docshelf.errors import ConfigError, EmbeddingError


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def test_the_default_model_is_the_packaged_one_and_knows_its_width_before_loading() -> None:
    fresh = LocalEmbedder()
    assert fresh.model_id == DEFAULT_MODEL
    assert fresh.dim == 384
    assert fresh.device is None  # not loaded by asking for the width


def test_rows_are_unit_length_float32_one_per_text(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(["Who owns Checkout?", "The payment timeout is 30 s.", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_a_question_is_nearest_to_the_passage_that_answers_it(embedder: LocalEmbedder) -> None:
    question, owner, timeout = embedder.embed(
        [
            "Which team owns the checkout service?",
            "Checkout is owned by the Payments team; page them for incidents.",
            "Database backups run nightly at 02:00 UTC and are kept for 30 days.",
        ]
    )
    assert question @ owner > question @ timeout + 0.2


def test_a_model_named_by_path_loads_through_the_general_code_path(
    embedder: LocalEmbedder,
) -> None:
    path = packaged_model_path()
    by_path = LocalEmbedder(path, batch_size=2)
    assert by_path.model_id == path
    assert by_path.dim == 384  # learned by loading the model
    texts = ["one", "two", "three"]
    np.testing.assert_allclose(by_path.embed(texts), embedder.embed(texts), atol=1e-5)


def test_the_packaged_model_answers_to_its_short_name() -> None:
    assert LocalEmbedder("all-MiniLM-L6-v2").model_id == DEFAULT_MODEL


def test_a_model_that_cannot_be_found_is_an_error_that_says_what_to_do() -> None:
    # A fresh interpreter, since huggingface_hub reads HF_HUB_OFFLINE when it is first imported;
    # offline, the hub lookup fails at once instead of waiting for network time-outs.
    code = (
        "from docshelf.embedders.local import LocalEmbedder\n"
        "from docshelf.errors import EmbeddingError\n"
        "try:\n"
        "    LocalEmbedder('no-such-org/no-such-embedding-model').embed(['text'])\n"
        "except EmbeddingError as e:\n"
        "    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert "no-such-org/no-such-embedding-model" in result.stdout
    assert "offline" in result.stdout


def test_the_model_loads_once_when_many_threads_ask_at_once() -> None:
    # A fresh interpreter, so that no earlier test has loaded the model already; every
    # construction of a SentenceTransformer is counted. Nine texts a call: more than a query, so
    # that torch answers and not the ONNX cache.
    code = """
import threading
import sentence_transformers
from docshelf.embedders.local import LocalEmbedder

built = []
original = sentence_transformers.SentenceTransformer.__init__
def counting(self, *args, **kwargs):
    built.append(1)
    original(self, *args, **kwargs)
sentence_transformers.SentenceTransformer.__init__ = counting

embedders = [LocalEmbedder(), LocalEmbedder(), LocalEmbedder("all-MiniLM-L6-v2")]
results = []
threads = [
    threading.Thread(target=lambda e=e: results.append(e.embed(["same text"] * 9)))
    for e in embedders * 3
]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert len(results) == 9, results
assert all(abs(r - results[0]).max() < 1e-6 for r in results)
print(len(built))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


def test_a_batch_size_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="batch size"):
        LocalEmbedder(batch_size=0)


def test_embedders_of_one_model_share_one_loaded_copy(embedder: LocalEmbedder) -> None:
    batch = ["load"] * (ONNX_MAX_TEXTS + 1)  # a batch, which torch embeds
    embedder.embed(batch)
    other = LocalEmbedder("all-MiniLM-L6-v2", batch_size=4)
    other.embed(batch)
    assert embedder._model is not None and other._model is embedder._model


# A process that loads the model, with the settings of torch's two shape caches it started with
# and then ran with.
CACHES_PROCESS = """
import os
from docshelf.embedders.local import LocalEmbedder
from docshelf.embedders.native_memory import IDEEP_CACHE_ENV, ONEDNN_CACHE_ENV

before = [os.environ.get(ONEDNN_CACHE_ENV), os.environ.get(IDEEP_CACHE_ENV)]
LocalEmbedder().embed_documents(["chunk of a runbook"])
print(*before, os.environ[ONEDNN_CACHE_ENV], os.environ[IDEEP_CACHE_ENV])
"""
CACHE_VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


def run_process(code: str, **env: str) -> str:
    kept = {k: v for k, v in os.environ.items() if k not in CACHE_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**kept, **env, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("given", "used"), [((None, None), ("0", "16")), (("64", "512"), ("64", "512"))]
)
def test_loading_the_model_bounds_torch_s_per_shape_caches_unless_the_user_set_them(
    given: tuple[str | None, str | None], used: tuple[str, str]
) -> None:
    env = {k: v for k, v in zip(CACHE_VARIABLES, given, strict=True) if v is not None}
    assert run_process(CACHES_PROCESS, **env).split() == [*map(str, given), *used]


# Batches of 240 shapes in bfloat16 (ideep's path), then the growth of anonymous memory, MiB.
SHAPES_PROCESS = """
import random
from docshelf.embedders.local import LocalEmbedder

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon"):
            return int(line.split()[1]) / 1024

embedder = LocalEmbedder(precision="bfloat16")
embedder.embed_documents(["warm up"] * 2)
before = anon()
rng = random.Random(0)
words = "restart the payment worker when the queue stalls and check the logs".split()
for _ in range(240):
    count, length = rng.randint(1, 12), rng.randint(2, 120)
    embedder.embed_documents(
        [" ".join(rng.choice(words) for _ in range(length)) for _ in range(count)]
    )
print(anon() - before)
"""


def test_batches_of_many_shapes_leave_little_behind() -> None:
    # Unbounded, ideep's cache kept about 0.37 MiB a shape here (296 MiB for 800 shapes).
    assert float(run_process(SHAPES_PROCESS)) < 30


# Texts of the kinds an index holds: a title, a sentence, a list, a table row, code, a long page.
DOC_TEXTS = [
    "Checkout",
    "The payments team owns Checkout; page them through the on-call rota.",
    "- retries: 3\n- timeout: 30 s\n- backoff: exponential",
    "| region | endpoint |\n| --- | --- |\n| eu-west-1 | https://api.eu.example.com |",
    "```yaml\nhttp:\n  routers:\n    api:\n      rule: Host(`example.com`)\n```",
    "Traefik reads its dynamic configuration from providers. " * 30,
]


def test_auto_precision_keeps_every_vector_within_the_cosine_bound_of_float32() -> None:
    exact = LocalEmbedder(precision="float32")
    auto = LocalEmbedder()
    assert exact.precision == "float32" and exact.batch_chars == BATCH_CHARS
    expected = "bfloat16" if native_bfloat16() else "float32"
    assert auto.precision == expected
    assert auto.batch_chars == (BATCH_CHARS if expected == "float32" else REDUCED_BATCH_CHARS)
    want, got = exact.embed_documents(DOC_TEXTS), auto.embed_documents(DOC_TEXTS)
    assert got.dtype == np.float32 and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert np.min(np.sum(want * got, axis=1)) >= local.PRECISION_MIN_COSINE
    # Queries stay float32, whatever the batches use.
    assert np.array_equal(auto.embed(DOC_TEXTS), exact.embed(DOC_TEXTS))


@pytest.mark.parametrize("precision", ["bfloat16", "float16"])
def test_a_reduced_precision_asked_for_runs_here_and_stays_near_float32(precision: str) -> None:
    # float16 is what auto picks on a CUDA GPU: its arithmetic is checked here on the CPU.
    reduced = LocalEmbedder(precision=precision)
    assert reduced.precision == precision
    got = reduced.embed_documents(DOC_TEXTS)
    want = LocalEmbedder(precision="float32").embed_documents(DOC_TEXTS)
    assert not np.array_equal(got, want)  # another arithmetic really ran
    assert np.min(np.sum(want * got, axis=1)) >= local.PRECISION_MIN_COSINE


def test_auto_falls_back_to_float32_when_the_probe_moves_a_vector_too_far(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(local, "native_bfloat16", lambda: True)  # bfloat16 runs on any CPU
    monkeypatch.setattr(local, "PRECISION_MIN_COSINE", 1.5)  # no cosine reaches it
    monkeypatch.setattr(local, "_PRECISION", {})
    fussy = LocalEmbedder()
    with caplog.at_level("WARNING", logger="docshelf.embedders"):
        assert fussy.precision == "float32"
    assert "bfloat16 moved a probe vector" in caplog.text
    want = LocalEmbedder(precision="float32").embed_documents(DOC_TEXTS)
    assert np.array_equal(fussy.embed_documents(DOC_TEXTS), want)


def test_auto_picks_by_device_and_an_unknown_precision_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local, "native_bfloat16", lambda: False)
    assert candidate_precision("auto", "cpu") == "float32"
    assert candidate_precision("auto", "cuda") == "float16"
    assert candidate_precision("auto", "cuda:1") == "float16"
    assert candidate_precision("auto", "mps") == "float32"
    assert candidate_precision("bfloat16", "cpu") == "bfloat16"
    monkeypatch.setattr(local, "native_bfloat16", lambda: True)
    assert candidate_precision("auto", "cpu") == "bfloat16"
    with pytest.raises(ConfigError, match="unknown precision 'int4'"):
        LocalEmbedder(precision="int4")


HEAP_PROCESS = """
from docshelf.embedders.local import release_free_heap

def rss_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024

# 300 MB in blocks below glibc's mmap threshold, so they live in the heap, then freed; the last
# block allocated stays, so the heap's top is in use and free() alone cannot shrink it.
blocks = [b"x" * 100_000 for _ in range(3_000)]
pin = b"y" * 100_000
del blocks
before = rss_mib()
release_free_heap()
print(before, rss_mib())
"""


def test_releasing_the_free_heap_gives_freed_blocks_back_to_the_system() -> None:
    done = subprocess.run(
        [sys.executable, "-c", HEAP_PROCESS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    before, after = (int(n) for n in done.stdout.split())
    assert before > 300 and after < before - 200, (before, after)


def test_every_indexing_batch_releases_the_free_heap_even_when_it_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    released: list[int] = []
    monkeypatch.setattr(local, "release_free_heap", lambda: released.append(1))
    embedder = LocalEmbedder(precision="float32")
    embedder.embed_documents(["a runbook", "the payment timeout"])
    embedder.embed_documents(["who owns checkout"])
    assert len(released) == 2
    model = embedder._load()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("out of memory")

    monkeypatch.setattr(model, "encode", broken)
    with pytest.raises(EmbeddingError, match="out of memory"):
        embedder.embed_documents(["a text"])
    assert len(released) == 3
