"""The HTTP API's connection bounds: the size of a request's head and how long a connection may idle.

uvicorn's h11 protocol answered a request line or headers past h11's buffer with 400 and closed the
socket with the rest of the request unread, which the client saw as a TCP reset; and it closed a
connection only after a response (timeout_keep_alive), so a client that connected and sent nothing, or
a request head a byte at a time, held its socket for ever. `BoundedH11` (uvicorn's `http` protocol):

- a head longer than `limits.http_header_bytes` that is still arriving is answered 431 naming the limit;
  the connection is then half-closed and what the client still sends is read and dropped until it
  closes (at most LINGER_S), so the answer is read rather than reset;
- a connection with no request in progress (before its first, between two, or while a head is still
  arriving) is closed after `http.idle_timeout_s`, counted from its last response, not reset by each byte.
  A request being answered (an SSE stream too) is never cut by it.

`HeadLimit` (ASGI middleware) answers 431 to a head that arrived whole in one read yet is longer than
the limit (h11 bounds only heads it has to wait for), so the limit holds however the bytes arrive.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)
HEADER_KEY = "limits.http_header_bytes"
IDLE_KEY = "http.idle_timeout_s"
LINGER_S = 2.0  # how long a refused connection's unread request is drained before the socket closes


def too_large(size: str, limit: int) -> bytes:
    return json.dumps(
        {"detail": f"request line and headers: {size} bytes, limit {limit} bytes ({HEADER_KEY})"}
    ).encode()


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with a 431 for an overlong head and an idle timeout (see module doc);
    `bounded_h11` makes one with the limits set. uvicorn.Config's h11_max_incomplete_event_size must be
    `head_limit` (h11 raises at it)."""

    head_limit = 64 * 1024
    idle_s = 30.0

    def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: Any = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._head_limit = self.head_limit
        self._idle_s = self.idle_s
        self._idle: asyncio.TimerHandle | None = None
        self._draining = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_idle()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return  # the refused request's rest: read so that closing does not reset the answer
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_idle()  # a whole head arrived: its request is in progress

    def eof_received(self) -> None:
        pass  # asyncio closes the transport (the client has nothing more to send)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_idle()

    def send_400_response(self, msg: str) -> None:
        buffered = len(self.conn.trailing_data[0])
        if buffered <= self._head_limit:
            super().send_400_response(msg)
            return
        log.info("HTTP request head over %d bytes (%s): 431", self._head_limit, HEADER_KEY)
        body = too_large(f"more than {self._head_limit}", self._head_limit)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        self.transport.write(self.conn.send(h11.Response(status_code=431, headers=headers)))
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self._draining = True
        self._disarm_idle()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)

    def _arm_idle(self) -> None:
        self._disarm_idle()
        self._idle = self.loop.call_later(self._idle_s, self._idle_expired)

    def _disarm_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _idle_expired(self) -> None:
        self._idle = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.debug("HTTP connection idle %.1f s (%s): closed", self._idle_s, IDLE_KEY)
            self.transport.close()


def bounded_h11(head_limit: int, idle_s: float) -> type[BoundedH11]:
    """The protocol class for uvicorn.Config(http=...), with these limits."""
    return type("BoundedH11", (BoundedH11,), {"head_limit": head_limit, "idle_s": idle_s})


class HeadLimit:
    """ASGI middleware: 431 for a request whose target and headers together pass `limit` bytes."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers") or ())
            if size > self.limit:
                body = too_large(str(size), self.limit)
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 431, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
