"""A real OpenAI-compatible embeddings server on 127.0.0.1, for the tests of OpenAIEmbedder.

It serves the local model's vectors in OpenAI's response format, records every request, and can
be told to misbehave: each queued `Reply` answers one request, in order, and `fallback` answers
the rest. A hanging reply waits on an event that `stop()` sets, so no test leaves a thread behind.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from docshelf.embedders.local import LocalEmbedder

# Rewrites the OpenAI-format payload before it is sent: the way a test breaks a good answer.
Mutation = Callable[[dict[str, Any]], None]


@dataclass
class Reply:
    """How the server answers one request."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    # A body sent as is; None serves the embeddings of the request's inputs.
    body: bytes | None = None
    mutate: Mutation | None = None
    # Seconds to wait before answering (cut short when the server stops).
    delay: float = 0.0


@dataclass
class Seen:
    """One request as the server received it."""

    at: float
    headers: dict[str, str]
    body: dict[str, Any]


class EmbeddingsServer:
    """POST /v1/embeddings on 127.0.0.1 at a free port (or `port`, to stand in for a server that
    went down there); `base_url` ends in /v1. `embedder` is any object with `embed(texts)`."""

    def __init__(self, embedder: LocalEmbedder, port: int = 0) -> None:
        self.embedder = embedder
        self.replies: deque[Reply] = deque()
        self.fallback = Reply()
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        # shutdown() waits for the serving loop's next poll: the default half second, per test,
        # would be most of the suite's time.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def batch_sizes(self) -> list[int]:
        return [len(seen.body["input"]) for seen in self.seen]

    def start(self) -> EmbeddingsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def _next_reply(self) -> Reply:
        with self._lock:
            return self.replies.popleft() if self.replies else self.fallback

    def _answer(self, headers: dict[str, str], raw: bytes) -> tuple[Reply, bytes]:
        body = json.loads(raw)
        with self._lock:
            self.seen.append(Seen(time.monotonic(), headers, body))
        reply = self._next_reply()
        if reply.delay:
            self._stopping.wait(reply.delay)
        if reply.body is not None:
            return reply, reply.body
        payload = self._embeddings(body)
        if reply.mutate is not None:
            reply.mutate(payload)
        return reply, json.dumps(payload).encode()

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs: list[str] = body["input"]
        vectors = self.embedder.embed(inputs).astype(np.float64)
        if "dimensions" in body:
            # As OpenAI's text-embedding-3 models do: cut, then normalise again.
            vectors = vectors[:, : body["dimensions"]]
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": row.tolist()}
                for i, row in enumerate(vectors)
            ],
            "model": body["model"],
            "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/embeddings":
                    reply, content = Reply(status=404), b'{"error": "no such route"}'
                else:
                    reply, content = server._answer(dict(self.headers.items()), raw)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(content)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(content)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first, as a timing-out client should

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
