"""Any OpenAI-compatible `/v1/embeddings` endpoint: OpenAI, gateways, Ollama, vLLM, LM Studio, TEI.

Constraints:

- Nothing is trusted: each response must hold exactly one finite, numeric vector per input,
  paired by its `index` (servers may answer out of order), all of one width. Anything else is an
  EmbeddingError, never a truncated or misaligned result.
- Each request is bounded in time (connect, send and the whole body: a server that drips bytes
  is cut off too), and retried a bounded number of times on 429, 5xx and connection errors, with
  exponential backoff and full jitter, or after the server's Retry-After, never past retry_max.
  Other 4xx fail at once: retrying a bad key or a wrong model only delays the message.
- The API key never appears in an error message or a log line, even when a server echoes it.
- One instance serves many threads: httpx.Client is thread-safe, and the width learned from the
  first response is guarded by a lock.

`model_id` is the model name, with `@<n>d` appended when `dimensions` is set: the endpoint's URL
is left out, since one model behind two URLs (a hosted API and a gateway in front of it) makes
the same vectors, and a store built through one stays usable through the other. A model served
under its sentence-transformers name (text-embeddings-inference) gets the same id as the local
embedder of that model, for the same reason.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import threading
import time
from datetime import UTC
from types import TracebackType
from typing import Any, NoReturn

import httpx
import numpy as np

from docshelf.config import (
    EMBED_BATCH_SIZE,
    EMBED_MAX_RETRIES,
    EMBED_RETRY_BASE_SECONDS,
    EMBED_RETRY_MAX_SECONDS,
    EMBED_TIMEOUT_SECONDS,
)
from docshelf.errors import ConfigError, EmbeddingError
from docshelf.rows import Vector

logger = logging.getLogger(__name__)

# What an API key may hold: printable ASCII without spaces, as every provider's keys do.
_KEY = re.compile(r"[!-~]+")

# A server's own error message is quoted up to this many characters: enough for OpenAI's longest
# ("This model's maximum context length is ..."), short enough for one line on a terminal.
MAX_SERVER_MESSAGE_CHARS = 300

# The text embedded to learn an endpoint's width when `dimensions` is not given: short and plain,
# so every model accepts it and it costs next to nothing.
PROBE_TEXT = "docshelf"

# What an echoed API key is replaced with in messages and logs.
REDACTED = "[redacted]"

# Statuses below 500 worth another try, as OpenAI's own client has them: a request timeout, a
# lock conflict, and rate limiting. Every 5xx is retried too; other 4xx will not pass on a retry.
RETRY_STATUSES = frozenset({408, 409, 429})


class OpenAIEmbedder:
    """Embeds by POSTing batches of texts to `{base_url}/embeddings`."""

    # An endpoint states no budget for the indexer's batches: its batch size alone bounds them.
    batch_chars: int | None = None
    batch_text_chars: int | None = None
    batch_texts: int | None = None

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = EMBED_BATCH_SIZE,
        timeout: float = EMBED_TIMEOUT_SECONDS,
        max_retries: int = EMBED_MAX_RETRIES,
        retry_base: float = EMBED_RETRY_BASE_SECONDS,
        retry_max: float = EMBED_RETRY_MAX_SECONDS,
    ) -> None:
        """Checks the arguments; connects on the first request only.

        Raises:
            ConfigError: an argument is out of range or the URL is not http(s).
        """
        _check_arguments(
            base_url, model, dimensions, batch_size, timeout, max_retries, retry_base, retry_max
        )
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.model_id = model if dimensions is None else f"{model}@{dimensions}d"
        self.url = base_url.rstrip("/") + "/embeddings"
        self._shown_url = _without_userinfo(self.url)
        # A key pasted from a file often ends in a newline, which no server accepts.
        self._api_key = (api_key or "").strip() or None
        if self._api_key is not None and not _KEY.fullmatch(self._api_key):
            # httpx would refuse the header with the key's bytes in its message, or crash on a
            # non-ASCII key: refuse it here, without ever showing it.
            raise ConfigError(
                "the API key holds spaces, control or non-ASCII characters, so no server would "
                "accept it; check OPENAI_API_KEY or DOCSHELF_OPENAI_API_KEY"
            )
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_base = retry_base
        self._retry_max = retry_max
        self._dim = dimensions
        self._dim_lock = threading.Lock()
        self._probe_lock = threading.Lock()
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        # Redirects are not followed: a POST redirected to a login page would be read as a
        # malformed answer, and the Authorization header must not travel to another host.
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout), headers=headers, follow_redirects=False
        )

    @property
    def dim(self) -> int:
        """The width of the vectors: `dimensions`, else learned by embedding one short text.

        Raises:
            EmbeddingError: the width is unknown and the probe request fails.
        """
        if self._dim is None:
            with self._probe_lock:
                if self._dim is None:
                    self.embed([PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: list[str]) -> Vector:
        """One L2-normalised float32 row per text, in the order of `texts`.

        Raises:
            EmbeddingError: a request failed after its retries, or a response is malformed.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        starts = range(0, len(texts), self.batch_size)
        parts = [
            self._embed_batch(texts[start : start + self.batch_size], number, len(starts), start)
            for number, start in enumerate(starts, 1)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def embed_documents(self, texts: list[str]) -> Vector:
        """The indexer's batches: as `embed`, the one path an endpoint has."""
        return self.embed(texts)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _embed_batch(self, batch: list[str], number: int, total: int, start: int) -> Vector:
        where = (
            f"embedding batch {number} of {total} (inputs {start}-{start + len(batch) - 1}) "
            f"via {self._shown_url}"
        )
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        attempts = self._max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                status, headers, content = self._post(body)
            except (
                httpx.LocalProtocolError
            ) as e:  # our own request is malformed: retrying won't help
                self._fail(f"{where} failed: the request could not be sent ({type(e).__name__})")
            except httpx.TransportError as e:
                problem = f"could not reach the endpoint ({type(e).__name__}: {e!s:.200})"
                if attempt == attempts:
                    self._fail(
                        f"{where} failed after {attempts} attempts: {problem}. Check that the "
                        "server is running and reachable at --base-url, or raise the timeout"
                    )
                self._wait(where, problem, attempt, attempts, None)
                continue
            except httpx.HTTPError as e:  # an undecodable body and the like: a retry won't help
                self._fail(
                    f"{where} failed: {type(e).__name__}: {e}. Check that --base-url points at "
                    "an OpenAI-compatible endpoint"
                )
            if status == 200:
                return self._parse(content, len(batch), where)
            problem = f"HTTP {status}{self._server_message(content)}"
            if status in RETRY_STATUSES or status >= 500:
                if attempt == attempts:
                    self._fail(
                        f"{where} failed after {attempts} attempts: {problem}. The endpoint is "
                        "overloaded or failing; try again later, or check the server's logs"
                    )
                self._wait(where, problem, attempt, attempts, headers.get("retry-after"))
                continue
            self._fail(f"{where} failed: {problem}. {_advice(status)}")
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _post(self, body: dict[str, Any]) -> tuple[int, httpx.Headers, bytes]:
        # httpx bounds each phase, not the whole exchange; the deadline bounds the body as well.
        deadline = time.monotonic() + self._timeout
        with self._client.stream("POST", self.url, json=body) as response:
            chunks = []
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout(
                        f"the response took over {self._timeout:g} s", request=response.request
                    )
            return response.status_code, response.headers, b"".join(chunks)

    def _wait(
        self, where: str, problem: str, attempt: int, attempts: int, retry_after: str | None
    ) -> None:
        delay = parse_retry_after(retry_after, time.time()) if retry_after else None
        if delay is None:
            ceiling = self._retry_base * 2 ** (attempt - 1)
            delay = random.uniform(0, min(self._retry_max, ceiling))
        delay = min(delay, self._retry_max)
        logger.warning(
            "%s",
            self._redact(
                f"{where}: {problem}; retrying in {delay:.2f} s (attempt {attempt + 1} of "
                f"{attempts})"
            ),
        )
        time.sleep(delay)

    def _parse(self, content: bytes, count: int, where: str) -> Vector:
        bad = f"{where}: the endpoint answered 200 but"
        fix = (
            "Check that --base-url points at an OpenAI-compatible /v1 endpoint "
            "and that the server is healthy"
        )
        try:
            payload = json.loads(content, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            self._fail(f"{bad} the body is not valid JSON ({e}): {_snippet(content)!r}. {fix}")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            self._fail(f"{bad} the body has no 'data' list: {_snippet(content)!r}. {fix}")
        if len(data) != count:
            self._fail(f"{bad} returned {len(data)} vectors for {count} inputs. {fix}")
        rows: list[list[float] | None] = [None] * count
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < count:
                self._fail(
                    f"{bad} an item has the index {index!r}, not one of 0-{count - 1}. {fix}"
                )
            if rows[index] is not None:
                self._fail(f"{bad} the index {index} appears twice. {fix}")
            row = item.get("embedding")
            if not isinstance(row, list) or not row:
                kind = type(row).__name__
                self._fail(
                    f"{bad} item {index} has an embedding of type {kind}, not a list of numbers. "
                    f"{fix}"
                )
            # bool is an int to Python; json only makes one from true/false, never from a number.
            if not all(type(v) is float or type(v) is int for v in row):
                self._fail(f"{bad} item {index} holds a value that is not a number. {fix}")
            rows[index] = row
        widths = {len(row) for row in rows if row is not None}
        if len(widths) != 1:
            self._fail(f"{bad} the vectors have different widths: {sorted(widths)}. {fix}")
        try:
            vectors = np.array(rows, dtype=np.float64)
        except OverflowError:  # an integer of hundreds of digits
            self._fail(f"{bad} a vector holds a value too large to represent. {fix}")
        self._check_width(vectors.shape[1], where)
        if not np.isfinite(vectors).all():
            self._fail(f"{bad} a vector holds a value too large to represent. {fix}")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        zero = np.flatnonzero(norms[:, 0] == 0)
        if zero.size:
            self._fail(
                f"{bad} input {int(zero[0])} got a zero vector, which has no direction. {fix}"
            )
        return np.ascontiguousarray(vectors / norms, dtype=np.float32)

    def _check_width(self, width: int, where: str) -> None:
        with self._dim_lock:
            if self._dim is None:
                self._dim = width
                return
            expected = self._dim
        if width == expected:
            return
        if self.dimensions is not None:
            self._fail(
                f"{where}: the endpoint returned {width}-dimensional vectors, not the "
                f"{expected} asked for: model {self.model!r} there ignores 'dimensions'. Leave "
                "--dimensions unset, or use a model that supports it"
            )
        self._fail(
            f"{where}: the endpoint returned {width}-dimensional vectors after earlier ones of "
            f"{expected}: the model behind it changed. Check --model and the server"
        )

    def _server_message(self, content: bytes) -> str:
        text = _error_text(content)
        if not text:
            return ""
        if len(text) > MAX_SERVER_MESSAGE_CHARS:
            text = text[:MAX_SERVER_MESSAGE_CHARS] + "..."
        return f" ({text})"

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, REDACTED) if self._api_key else text

    def _fail(self, message: str) -> NoReturn:
        raise EmbeddingError(self._redact(message))


def parse_retry_after(value: str, now: float) -> float | None:
    """Seconds to wait from a Retry-After header: delay-seconds or an HTTP-date; None if neither.

    `now` is the current Unix time, for the HTTP-date form. A date in the past means no wait.
    """
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP-date is always GMT, whether or not it says so
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - now
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _check_arguments(
    base_url: str,
    model: str,
    dimensions: int | None,
    batch_size: int,
    timeout: float,
    max_retries: int,
    retry_base: float,
    retry_max: float,
) -> None:
    try:
        host = httpx.URL(base_url).host
    except httpx.InvalidURL:
        host = ""
    if not base_url.startswith(("http://", "https://")) or not host:
        raise ConfigError(
            f"the embeddings base URL {_without_userinfo(base_url)!r} is not an http(s) URL; "
            "give one like https://api.openai.com/v1 or http://127.0.0.1:11434/v1"
        )
    if not model.strip():
        raise ConfigError("no embedding model named; give the endpoint's model with --model")
    if dimensions is not None and dimensions < 1:
        raise ConfigError(f"dimensions must be at least 1, not {dimensions}; or leave it unset")
    if not 1 <= batch_size <= EMBED_BATCH_SIZE:
        raise ConfigError(
            f"the embedding batch size must be between 1 and {EMBED_BATCH_SIZE}, not "
            f"{batch_size}: several OpenAI-compatible servers refuse larger requests"
        )
    if not timeout > 0:
        raise ConfigError(f"the embedding timeout must be above 0 seconds, not {timeout}")
    if max_retries < 0:
        raise ConfigError(f"the embedding retries must be 0 or more, not {max_retries}")
    if not (retry_base >= 0 and retry_max >= 0):
        raise ConfigError(
            f"the retry delays must be 0 or more, not {retry_base} and {retry_max} seconds"
        )


def _advice(status: int) -> str:
    if status in (401, 403):
        return (
            "Check the API key in OPENAI_API_KEY or DOCSHELF_OPENAI_API_KEY, and that it may "
            "use this model"
        )
    if status == 404:
        return "Check --base-url (it usually ends in /v1) and --model"
    if 300 <= status < 400:
        return "The endpoint redirects; give the URL it redirects to as --base-url"
    if status == 413:
        return "The request is too large for the server; lower the batch size"
    return "Check --model, --dimensions and the server's documentation"


def _error_text(content: bytes) -> str:
    """The server's own message from an error body, in the shapes servers use, else its text."""
    try:
        payload = json.loads(content)
    except (ValueError, RecursionError):
        return " ".join(content.decode("utf-8", "replace").split())
    if isinstance(payload, dict):
        # OpenAI: {"error": {"message"}}; Ollama, TEI: {"error": "..."}; vLLM: {"message"};
        # FastAPI-based servers: {"detail"}.
        error = payload.get("error")
        if isinstance(error, dict):
            error = error.get("message", error)
        for found in (error, payload.get("message"), payload.get("detail")):
            if found:
                return found if isinstance(found, str) else json.dumps(found)
    return json.dumps(payload)


def _snippet(content: bytes) -> str:
    text = content.decode("utf-8", "replace")
    return text[:MAX_SERVER_MESSAGE_CHARS] + ("..." if len(text) > MAX_SERVER_MESSAGE_CHARS else "")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number")


def _without_userinfo(url: str) -> str:
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return url
    if not parsed.userinfo:
        return url
    return str(parsed.copy_with(username=None, password=None))
