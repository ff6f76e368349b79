"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 that serves the local model's vectors."""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docshelf.config import EMBED_BATCH_SIZE
from docshelf.embedders.local import LocalEmbedder
from docshelf.embedders.openai_http import OpenAIEmbedder, parse_retry_after
from docshelf.errors import ConfigError, EmbeddingError
from tests.embedders.openai_server import EmbeddingsServer, Reply

API_KEY = "sk-test-0123456789abcdefSECRET"
TEXTS = ["How do I rotate the database password?", "Who owns the billing service?", "On-call"]

# Quick retries, so the failing tests take a fraction of a second each. The timeout leaves room
# for the local model to embed a batch of 64 on a slow CPU; the hang tests set a short one.
FAST: dict[str, Any] = {"timeout": 10.0, "retry_base": 0.01, "retry_max": 0.05}


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    embedder = LocalEmbedder()
    embedder.embed(["load the model now, not inside a request with a deadline"])
    return embedder


@pytest.fixture
def server(local_embedder: LocalEmbedder) -> Iterator[EmbeddingsServer]:
    running = EmbeddingsServer(local_embedder).start()
    yield running
    running.stop()


def embedder_for(server: EmbeddingsServer, **options: Any) -> OpenAIEmbedder:
    settings: dict[str, Any] = {"max_retries": 2, **FAST, **options}
    return OpenAIEmbedder(server.base_url, "all-minilm", **settings)


def test_vectors_are_the_served_models_and_unit_length(
    server: EmbeddingsServer, local_embedder: LocalEmbedder
) -> None:
    with embedder_for(server) as embedder:
        vectors = embedder.embed(TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(vectors, local_embedder.embed(TEXTS), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_request_body_is_openai_shaped_and_sends_no_key_unless_given(
    server: EmbeddingsServer,
) -> None:
    with embedder_for(server) as embedder:
        embedder.embed(TEXTS[:1])
    (seen,) = server.seen
    assert seen.body == {"model": "all-minilm", "input": TEXTS[:1], "encoding_format": "float"}
    assert "authorization" not in {name.lower() for name in seen.headers}


def test_authorization_header_carries_the_key(server: EmbeddingsServer) -> None:
    with embedder_for(server, api_key=API_KEY) as embedder:
        embedder.embed(TEXTS[:1])
    assert server.seen[0].headers["Authorization"] == f"Bearer {API_KEY}"


def test_150_inputs_go_in_3_requests_of_at_most_64(
    server: EmbeddingsServer, local_embedder: LocalEmbedder
) -> None:
    texts = [f"document number {i}" for i in range(150)]
    with embedder_for(server) as embedder:
        vectors = embedder.embed(texts)
    assert server.batch_sizes == [64, 64, 22]
    assert [seen.body["input"][0] for seen in server.seen] == [texts[0], texts[64], texts[128]]
    np.testing.assert_allclose(vectors, local_embedder.embed(texts), atol=1e-6)


def test_out_of_order_items_are_paired_to_inputs_by_index(
    server: EmbeddingsServer, local_embedder: LocalEmbedder
) -> None:
    texts = [f"line {i} about topic {i * 7 % 5}" for i in range(20)]

    def shuffle(payload: dict[str, Any]) -> None:
        random.Random(4).shuffle(payload["data"])
        assert [item["index"] for item in payload["data"]] != list(range(20))

    server.fallback = Reply(mutate=shuffle)
    with embedder_for(server) as embedder:
        vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, local_embedder.embed(texts), atol=1e-6)


def test_dimensions_is_sent_when_given_and_sets_dim(
    server: EmbeddingsServer, local_embedder: LocalEmbedder
) -> None:
    with embedder_for(server, dimensions=128) as embedder:
        assert embedder.dim == 128
        assert not server.seen  # a stated width needs no probe
        vectors = embedder.embed(TEXTS)
    assert server.seen[0].body["dimensions"] == 128
    assert vectors.shape == (3, 128)
    cut = local_embedder.embed(TEXTS)[:, :128]
    np.testing.assert_allclose(vectors, cut / np.linalg.norm(cut, axis=1, keepdims=True), atol=1e-6)


def test_dim_is_learned_from_the_first_response(server: EmbeddingsServer) -> None:
    with embedder_for(server) as embedder:
        assert embedder.dim == 384
        assert len(server.seen) == 1
        assert embedder.dim == 384
        assert len(server.seen) == 1


def test_empty_input_gives_zero_rows_of_the_width(server: EmbeddingsServer) -> None:
    with embedder_for(server, dimensions=64) as embedder:
        assert embedder.embed([]).shape == (0, 64)
    assert not server.seen


def test_model_id_names_the_model_and_dimensions_but_not_the_url() -> None:
    a = OpenAIEmbedder("https://api.openai.com/v1", "text-embedding-3-small")
    b = OpenAIEmbedder("http://127.0.0.1:4000/v1/", "text-embedding-3-small")
    c = OpenAIEmbedder("http://127.0.0.1:4000/v1", "text-embedding-3-small", dimensions=256)
    assert a.model_id == b.model_id == "text-embedding-3-small"
    assert c.model_id == "text-embedding-3-small@256d"
    assert b.url == "http://127.0.0.1:4000/v1/embeddings"
    for embedder in (a, b, c):
        embedder.close()


@pytest.mark.parametrize(
    "options",
    [
        {"batch_size": EMBED_BATCH_SIZE + 1},
        {"batch_size": 0},
        {"dimensions": 0},
        {"timeout": 0},
        {"max_retries": -1},
    ],
)
def test_out_of_range_arguments_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder("http://127.0.0.1:1/v1", "m", **options)


@pytest.mark.parametrize("base_url", ["127.0.0.1:11434/v1", "ftp://example.com/v1", "http://"])
def test_a_base_url_that_is_not_http_is_refused(base_url: str) -> None:
    with pytest.raises(ConfigError, match="http"):
        OpenAIEmbedder(base_url, "m")


def test_429_with_retry_after_waits_that_long_then_succeeds(server: EmbeddingsServer) -> None:
    server.replies.append(
        Reply(status=429, headers={"Retry-After": "1"}, body=b'{"error": {"message": "slow"}}')
    )
    # retry_max must allow the server's wait: it caps Retry-After.
    with embedder_for(server, retry_max=5.0) as embedder:
        vectors = embedder.embed(TEXTS)
    assert vectors.shape == (3, 384)
    first, second = server.seen
    assert second.at - first.at >= 1.0


def test_retry_after_is_capped_at_retry_max(server: EmbeddingsServer) -> None:
    server.replies.append(Reply(status=429, headers={"Retry-After": "120"}, body=b"{}"))
    started = time.monotonic()
    with embedder_for(server, retry_max=0.05) as embedder:
        embedder.embed(TEXTS)
    assert time.monotonic() - started < 5
    assert len(server.seen) == 2


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = time.time()
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 0 ", now) == 0.0
    assert parse_retry_after(formatdate(now + 10, usegmt=True), now) == pytest.approx(10, abs=1)
    assert parse_retry_after(formatdate(now - 10, usegmt=True), now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after("nan", now) is None


def test_500_twice_then_success_is_retried(server: EmbeddingsServer) -> None:
    server.replies.extend([Reply(status=500, body=b"oops"), Reply(status=503, body=b"")])
    with embedder_for(server) as embedder:
        vectors = embedder.embed(TEXTS)
    assert vectors.shape == (3, 384)
    assert len(server.seen) == 3


def test_500_forever_fails_after_max_retries_naming_url_and_batch(
    server: EmbeddingsServer,
) -> None:
    server.fallback = Reply(status=500, body=b'{"error": {"message": "the GPU caught fire"}}')
    texts = [f"text {i}" for i in range(100)]
    with embedder_for(server, max_retries=2) as embedder, pytest.raises(EmbeddingError) as err:
        embedder.embed(texts)
    assert len(server.seen) == 3
    message = str(err.value)
    assert f"{server.base_url}/embeddings" in message
    assert "batch 1 of 2 (inputs 0-63)" in message
    assert "HTTP 500" in message
    assert "the GPU caught fire" in message
    assert "3 attempts" in message


def test_the_failing_batch_is_named_when_a_later_one_fails(server: EmbeddingsServer) -> None:
    server.replies.append(Reply())
    server.fallback = Reply(status=400, body=b'{"error": "input too long"}')
    texts = [f"text {i}" for i in range(100)]
    with embedder_for(server) as embedder, pytest.raises(EmbeddingError) as err:
        embedder.embed(texts)
    assert "batch 2 of 2 (inputs 64-99)" in str(err.value)
    assert "input too long" in str(err.value)
    assert len(server.seen) == 2  # a 400 is not retried


def test_a_long_server_message_is_cut(server: EmbeddingsServer) -> None:
    server.fallback = Reply(status=400, body=b'{"detail": "' + b"x" * 5000 + b'"}')
    with embedder_for(server) as embedder, pytest.raises(EmbeddingError) as err:
        embedder.embed(TEXTS)
    assert "x" * 300 in str(err.value)
    assert "x" * 301 not in str(err.value)


def test_a_hang_past_the_timeout_fails_within_a_bounded_time(server: EmbeddingsServer) -> None:
    server.fallback = Reply(delay=30)
    started = time.monotonic()
    with (
        embedder_for(server, timeout=0.3, max_retries=1) as embedder,
        pytest.raises(EmbeddingError, match="2 attempts") as err,
    ):
        embedder.embed(TEXTS)
    assert time.monotonic() - started < 3
    assert len(server.seen) == 2
    assert "Timeout" in str(err.value)


def test_a_body_that_drips_past_the_timeout_is_cut_off(server: EmbeddingsServer) -> None:
    # Each pause is under the read timeout; only the whole-response deadline catches it.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        stop = threading.Event()

        def drip() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                    try:
                        for _ in range(100):
                            conn.sendall(b" ")
                            time.sleep(0.1)
                    except OSError:
                        pass

        thread = threading.Thread(target=drip, daemon=True)
        thread.start()
        started = time.monotonic()
        embedder = OpenAIEmbedder(
            f"http://127.0.0.1:{port}/v1", "m", max_retries=0, **{**FAST, "timeout": 0.5}
        )
        with embedder, pytest.raises(EmbeddingError, match="took over"):
            embedder.embed(TEXTS)
        assert time.monotonic() - started < 2
        stop.set()
    thread.join(timeout=5)


def _drop_last(payload: dict[str, Any]) -> None:
    payload["data"].pop()


def _duplicate_index(payload: dict[str, Any]) -> None:
    payload["data"][1]["index"] = 0


def _index_out_of_range(payload: dict[str, Any]) -> None:
    payload["data"][2]["index"] = 3


def _no_index(payload: dict[str, Any]) -> None:
    del payload["data"][0]["index"]


def _narrow_row(payload: dict[str, Any]) -> None:
    payload["data"][1]["embedding"].pop()


def _all_narrow(payload: dict[str, Any]) -> None:
    for item in payload["data"]:
        item["embedding"] = item["embedding"][:100]


def _nan(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"][5] = float("nan")


def _string_value(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"][5] = "0.5"


def _bool_value(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"][5] = True


def _base64(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"] = "AAAAAA=="


def _zero_vector(payload: dict[str, Any]) -> None:
    payload["data"][0]["embedding"] = [0.0] * 384


def _no_data(payload: dict[str, Any]) -> None:
    del payload["data"]


def _huge_integer_body() -> bytes:
    rows = [", ".join(["0.05"] * 384)] * 3
    rows[2] = "1" + "0" * 400 + ", " + ", ".join(["0.05"] * 383)
    items = ", ".join(f'{{"index": {i}, "embedding": [{row}]}}' for i, row in enumerate(rows))
    return f'{{"data": [{items}]}}'.encode()


def _overflowing_body() -> bytes:
    # 1e999 is valid JSON that Python reads as infinity; json.dumps cannot write it.
    rows = [", ".join(["0.05"] * 384)] * 3
    rows[1] = "1e999, " + ", ".join(["0.05"] * 383)
    items = ", ".join(f'{{"index": {i}, "embedding": [{row}]}}' for i, row in enumerate(rows))
    return f'{{"data": [{items}]}}'.encode()


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(Reply(mutate=_drop_last), id="one-vector-missing"),
        pytest.param(Reply(mutate=_duplicate_index), id="duplicate-index"),
        pytest.param(Reply(mutate=_index_out_of_range), id="index-out-of-range"),
        pytest.param(Reply(mutate=_no_index), id="no-index"),
        pytest.param(Reply(mutate=_narrow_row), id="rows-of-different-widths"),
        pytest.param(Reply(mutate=_all_narrow), id="wrong-width"),
        pytest.param(Reply(mutate=_nan), id="nan"),
        pytest.param(Reply(mutate=_string_value), id="string-value"),
        pytest.param(Reply(mutate=_bool_value), id="bool-value"),
        pytest.param(Reply(mutate=_base64), id="base64-string"),
        pytest.param(Reply(mutate=_zero_vector), id="zero-vector"),
        pytest.param(Reply(mutate=_no_data), id="no-data"),
        pytest.param(Reply(body=b"<html>502 Bad Gateway</html>"), id="not-json"),
        pytest.param(Reply(body=_overflowing_body()), id="number-too-large"),
        pytest.param(Reply(body=_huge_integer_body()), id="integer-too-large"),
        pytest.param(Reply(body=b"[]"), id="json-list"),
    ],
)
def test_a_malformed_response_is_an_error_never_a_short_or_wrong_result(
    server: EmbeddingsServer, reply: Reply
) -> None:
    # The width is known beforehand, as it is once a store has been built with this model.
    with embedder_for(server) as embedder:
        assert embedder.dim == 384
        server.fallback = reply
        with pytest.raises(EmbeddingError) as err:
            embedder.embed(TEXTS)
    assert "batch 1 of 1 (inputs 0-2)" in str(err.value)
    assert server.base_url in str(err.value)


def test_a_width_other_than_dimensions_is_an_error(server: EmbeddingsServer) -> None:
    # The server honours `dimensions`, but the vectors come back uncut: the endpoint ignored it.
    def uncut(payload: dict[str, Any]) -> None:
        for item in payload["data"]:
            item["embedding"] = item["embedding"] + [0.1] * 256

    server.fallback = Reply(mutate=uncut)
    with (
        embedder_for(server, dimensions=128) as embedder,
        pytest.raises(EmbeddingError, match="ignores 'dimensions'"),
    ):
        embedder.embed(TEXTS)


def test_401_fails_at_once_and_never_shows_the_key(
    server: EmbeddingsServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f'{{"error": {{"message": "Incorrect API key provided: {API_KEY}"}}}}'.encode()
    # A retried 429 first, so that a warning is logged, then the refusal; both echo the key.
    server.replies.extend([Reply(status=429, body=echo), Reply(status=401, body=echo)])
    with (
        embedder_for(server, api_key=API_KEY) as embedder,
        pytest.raises(EmbeddingError) as err,
    ):
        embedder.embed(TEXTS)
    assert len(server.seen) == 2  # the 429 was retried, the 401 was not
    message = str(err.value)
    assert "HTTP 401" in message
    assert "OPENAI_API_KEY" in message
    assert "Incorrect API key provided" in message
    assert API_KEY not in message
    assert "retrying" in caplog.text
    assert API_KEY not in caplog.text


@pytest.mark.parametrize(
    ("status", "advice"), [(403, "OPENAI_API_KEY"), (404, "--base-url"), (422, "--model")]
)
def test_other_client_errors_fail_at_once_with_advice(
    server: EmbeddingsServer, status: int, advice: str
) -> None:
    server.fallback = Reply(status=status, body=b'{"error": "nope"}')
    with embedder_for(server) as embedder, pytest.raises(EmbeddingError, match=advice):
        embedder.embed(TEXTS)
    assert len(server.seen) == 1


def test_a_wrong_path_is_a_404_that_names_base_url(server: EmbeddingsServer) -> None:
    base = server.base_url.removesuffix("/v1")
    with (
        OpenAIEmbedder(base, "all-minilm", **FAST) as embedder,
        pytest.raises(EmbeddingError, match=r"HTTP 404.*--base-url"),
    ):
        embedder.embed(TEXTS)


def test_connection_refused_fails_after_retries(caplog: pytest.LogCaptureFixture) -> None:
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with (
        caplog.at_level(logging.WARNING, logger="docshelf.embedders.openai_http"),
        OpenAIEmbedder(url, "m", max_retries=2, **FAST) as embedder,
        pytest.raises(EmbeddingError, match="3 attempts") as err,
    ):
        embedder.embed(TEXTS)
    assert f"{url}/embeddings" in str(err.value)
    assert "ConnectError" in str(err.value)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2


def test_one_embedder_serves_many_threads(
    server: EmbeddingsServer, local_embedder: LocalEmbedder
) -> None:
    groups = [[f"thread {t} text {i}" for i in range(5)] for t in range(8)]
    with embedder_for(server) as embedder, ThreadPoolExecutor(4) as pool:
        results = list(pool.map(embedder.embed, groups))
        assert embedder.dim == 384
    for texts, vectors in zip(groups, results, strict=True):
        np.testing.assert_allclose(vectors, local_embedder.embed(texts), atol=1e-6)


@pytest.mark.parametrize(
    "variables",
    [
        pytest.param({"OPENAI_API_KEY": API_KEY}, id="OPENAI_API_KEY"),
        pytest.param({"DOCSHELF_OPENAI_API_KEY": API_KEY}, id="DOCSHELF_OPENAI_API_KEY"),
        pytest.param(
            {"DOCSHELF_OPENAI_API_KEY": API_KEY, "OPENAI_API_KEY": "sk-the-other-one"},
            id="DOCSHELF_OPENAI_API_KEY-wins",
        ),
    ],
)
def test_the_command_line_reaches_an_endpoint_with_the_key_from_the_environment(
    server: EmbeddingsServer, local_embedder: LocalEmbedder, variables: dict[str, str]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("OPENAI_API_KEY")}
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("docshelf")),
            "embed",
            TEXTS[0],
            "--embedder",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "all-MiniLM-L6-v2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, **variables},
    )
    assert result.returncode == 0, result.stderr
    vector = np.array(json.loads(result.stdout), dtype=np.float32)
    np.testing.assert_allclose(vector, local_embedder.embed([TEXTS[0]])[0], atol=1e-5)
    assert "all-MiniLM-L6-v2: 384 dimensions, 1 text" in result.stderr
    assert server.seen[-1].headers.get("Authorization") == f"Bearer {API_KEY}"
    assert API_KEY not in result.stderr


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(API_KEY + "\n" + API_KEY, id="two-lines"),
        pytest.param(API_KEY + " extra", id="space"),
        pytest.param(API_KEY + "é", id="non-ascii"),
        pytest.param(API_KEY + "\x00", id="nul"),
    ],
)
def test_a_key_no_server_could_accept_is_refused_without_showing_it(
    server: EmbeddingsServer, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ConfigError) as refused:
        OpenAIEmbedder(server.base_url, "m", api_key=key, **FAST)
    assert "OPENAI_API_KEY" in str(refused.value)
    assert API_KEY not in str(refused.value)
    assert API_KEY not in caplog.text
    assert server.seen == []
