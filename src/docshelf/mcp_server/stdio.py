"""docs_search on stdin and stdout: one session, until stdin closes or a signal stops it.

Constraints:
- stdout carries the stdio protocol and nothing else: logs go to stderr, and the server's
  background threads start only once the transport holds stdout.
- Every line gets an answer: one the SDK could not read is answered with a JSON-RPC error (the
  SDK drops it, and its client would wait for ever).
- SIGTERM and SIGINT release the session's pin and exit at once: the SDK's stdin reader is a
  thread that cannot be interrupted.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from docshelf.present import SHOWN_INT_DIGITS

if TYPE_CHECKING:
    from typing import Self

    from mcp.shared._stream_protocols import ReadStream, WriteStream

log = logging.getLogger("docshelf.mcp")


async def _serve_stdio(
    server: Server[Any], started: Callable[[], None], release: Callable[[], None]
) -> None:
    """Serve one session on stdin and stdout until stdin closes, or SIGTERM or SIGINT.
    `started` runs once the transport holds stdout (whatever else writes to it then lands on
    stderr), so a library's stray print cannot corrupt the protocol."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_exit_on_signal, release)
        async with stdio_server() as (read, write):
            started()
            reads = _AnsweringUnreadable(read, write)
            await server.run(reads, write, server.create_initialization_options())
        tasks.cancel_scope.cancel()


class _AnsweringUnreadable:
    """stdio's read stream, answering each line the SDK could not read (not JSON, not a JSON-RPC
    message, a lone surrogate escape or a number too long for Python) with a JSON-RPC error. The
    SDK drops such a line, so its client would wait for an answer to that request for ever."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._write = write

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            error = unreadable_error(item)
            log.info("answered an unreadable message: %s", error.error.message)
            await self._write.send(SessionMessage(error))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def unreadable_error(error: Exception) -> JSONRPCError:
    """The JSON-RPC error that answers a line the SDK's stdio transport could not read: a parse
    error, for the request's id when the line is JSON to Python's more lenient parser; else an
    invalid request (a batch, another jsonrpc version, no method), which has no id to answer."""
    details = error.errors() if isinstance(error, ValidationError) else []
    first = details[0] if details else None
    if first is not None and first["type"] == "json_invalid" and isinstance(first["input"], str):
        return JSONRPCError(
            jsonrpc="2.0",
            id=_request_id(first["input"]),
            error=ErrorData(
                code=PARSE_ERROR,
                message=f"Parse error: {first['msg']}. Send each message as one line of JSON "
                "(UTF-8, no unpaired surrogate escapes such as \\ud800)",
            ),
        )
    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(
            code=INVALID_REQUEST,
            message='Invalid request: send one JSON-RPC 2.0 object a line, with jsonrpc "2.0" '
            "and a method (batches are not supported)",
        ),
    )


def _request_id(line: str) -> str | int | None:
    try:
        message = json.loads(line, parse_int=_small_int)
    except (ValueError, RecursionError):
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and request_id is not True else None


def _small_int(digits: str) -> int:
    # Python refuses to read ints of over 4,300 digits; no request id is one.
    return int(digits) if len(digits) <= SHOWN_INT_DIGITS else 0


async def _exit_on_signal(release: Callable[[], None]) -> None:
    """On SIGTERM or SIGINT, release the session's pin and exit at once: the thread that reads
    stdin cannot be interrupted, and nothing else needs an orderly end (a ref is written all or
    nothing, and the store's connections close with the process)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for received in signals:
            log.info("stopping on %s", signal.Signals(received).name)
            await anyio.to_thread.run_sync(release)
            logging.shutdown()
            os._exit(0)
