"""Hostile HTTP and gRPC connections: an overlong request head is answered 431 naming
limits.http_header_bytes (it was a TCP reset), a client that leaves mid-body leaves one log line (it was
"Exception in ASGI application" and a traceback), and connections with nothing in progress are closed
after http.idle_timeout_s / grpc.idle_timeout_s (they were kept for ever), while a streaming request
(SSE) and the shim's Sync stream are not cut."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import hostile
import pytest
from rpc_harness import in_process_service

from pyscheduler.service.rmproxy.service import DecisionService

HEAD = "HTTP request head over limits.http_header_bytes"
GONE = "HTTP client gone mid-body"
IDLE = "idle HTTP/gRPC connections"
LIMIT = "limit 65536 bytes (limits.http_header_bytes)"


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[DecisionService]:
    s = in_process_service(
        tmp_path, **{"http.port": 0, "http.idle_timeout_s": 1.0, "grpc.idle_timeout_s": 1.0}
    )
    try:
        yield s
    finally:
        s.stop()


def _exchange(port: int, parts: list[bytes], pause_s: float = 0.0) -> bytes:
    """Send `parts` (pausing between them), then read until the server closes; a reset is raised."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as c:
        for p in parts:
            c.sendall(p)
            time.sleep(pause_s)
        out = b""
        while chunk := c.recv(65536):
            out += chunk
        return out


def _head(port: int, parts: list[bytes], pause_s: float = 0.0) -> None:
    r = hostile.row(HEAD)
    r.inputs += 1
    try:
        answer = _exchange(port, parts, pause_s)
    except ConnectionError:
        r.crashes += 1  # reset: the client never reads an answer
        raise
    ok = answer.startswith(b"HTTP/1.1 431 ") and LIMIT.encode() in answer
    r.clear_errors += ok
    assert ok, answer[:300]


def test_overlong_request_heads_are_answered_431_naming_the_limit(svc: DecisionService) -> None:
    port = svc.http.port
    for n in (70_000, 200_000, 1_000_000):
        _head(port, [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * n + b"\r\n\r\n"])
        _head(port, [b"GET /healthz?" + b"a" * n + b" HTTP/1.1\r\nHost: x\r\n\r\n"])
    many = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(1000))  # 1000 headers, 108 KB
    _head(port, [b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n"])
    dribble = [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "] + [b"a" * 8192] * 10  # never ends
    _head(port, dribble, pause_s=0.02)
    # a head under the limit still gets its answer, on a connection kept open
    ok = _exchange(port, [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 60_000 + b"\r\n\r\n"])
    assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_client_gone_mid_body_leaves_one_line_without_a_traceback(svc: DecisionService) -> None:
    seen = _Records()
    watched = [logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "pyscheduler", "")]
    levels = [lg.level for lg in watched]
    for lg in watched:
        lg.addHandler(seen)
    logging.getLogger("pyscheduler").setLevel(logging.INFO)
    try:
        for sent in (0, 1000, 50_000):
            r = hostile.row(GONE)
            r.inputs += 1
            with socket.create_connection(("127.0.0.1", svc.http.port), timeout=10) as c:
                c.sendall(
                    b"POST /v1/config/validate HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                    b"Content-Length: 100000\r\n\r\n" + b"#" * sent
                )
                time.sleep(0.3)
            time.sleep(0.5)
            mine = list(dict.fromkeys(seen.records))  # a record reaches several watched loggers' handler
            seen.records.clear()
            traced = [x for x in mine if x.exc_info or x.levelno >= logging.ERROR]
            gone = [x for x in mine if "client gone" in x.getMessage()]
            if traced:
                r.crashes += 1
            ok = not traced and len(gone) == 1 and f"after {sent} of 100000" in gone[0].getMessage()
            r.clear_errors += ok
            assert ok, [(x.levelname, x.getMessage()) for x in mine]
    finally:
        for lg, level in zip(watched, levels, strict=True):
            lg.removeHandler(seen)
            lg.setLevel(level)


def _closed_within(c: socket.socket, seconds: float) -> bool:
    """Whether the server closes `c` within `seconds` (what it sent meanwhile is read and dropped)."""
    c.settimeout(seconds)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            if not c.recv(65536):
                return True
    except TimeoutError:
        return False
    return False


def _idle_row(closed: bool, expected: bool) -> None:
    r = hostile.row(IDLE)
    r.inputs += 1
    if closed == expected:
        r.bounded += 1
    elif expected:
        r.hangs += 1  # a connection held for ever
    else:
        r.cross_tenant += 1  # a live stream cut


def test_idle_http_connections_are_closed_and_streams_are_not(svc: DecisionService) -> None:
    port = svc.http.port
    with socket.create_connection(("127.0.0.1", port)) as silent:  # connects, never sends
        t0 = time.monotonic()
        closed = _closed_within(silent, 5.0)
        took = time.monotonic() - t0
        _idle_row(closed, True)
        assert closed and 0.5 < took < 3.0, took
    with socket.create_connection(("127.0.0.1", port)) as slow:  # a head one byte every 0.2 s
        t0 = time.monotonic()
        for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa":
            try:
                slow.sendall(bytes([b]))
            except ConnectionError:
                break
            time.sleep(0.2)
        took = time.monotonic() - t0
        closed = _closed_within(slow, 1.0) or took < 5.0
        _idle_row(closed, True)
        assert closed and took < 5.0, took  # bytes arriving do not keep a head waiting for ever
    with socket.create_connection(("127.0.0.1", port)) as kept:  # keep-alive after an answer
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.settimeout(5)
        assert kept.recv(65536).startswith(b"HTTP/1.1 200 ")
        closed = _closed_within(kept, 5.0)
        _idle_row(closed, True)
        assert closed
    with socket.create_connection(("127.0.0.1", port)) as sse:  # a stream is a request in progress
        sse.sendall(b"GET /v1/decisions/stream HTTP/1.1\r\nHost: x\r\n\r\n")
        sse.settimeout(5)
        assert sse.recv(65536).startswith(b"HTTP/1.1 200 ")
        closed = _closed_within(sse, 3.0)
        _idle_row(closed, False)
        assert not closed, "an SSE stream was cut by http.idle_timeout_s"


def _watch(channel: grpc.Channel) -> list[grpc.ChannelConnectivity]:
    states: list[grpc.ChannelConnectivity] = []
    lock = threading.Lock()

    def seen(state: grpc.ChannelConnectivity) -> None:
        with lock:
            states.append(state)

    channel.subscribe(seen, try_to_connect=False)
    return states


def test_idle_grpc_connections_are_closed_and_open_sync_streams_are_not(svc: DecisionService) -> None:
    idle = hostile.connection(svc.port)
    good = hostile.GoodTenant(svc.port)  # its Sync stream stays open, a batch only now and then
    try:
        from rpc_harness import register

        register(idle, "rm-idle")  # one RPC, then nothing
        idle_states = _watch(idle)
        good_states = _watch(good.channel)
        good.round()
        time.sleep(3.0)  # three idle timeouts; the good tenant's stream is open but sends nothing
        closed = grpc.ChannelConnectivity.IDLE in idle_states  # the server's GOAWAY
        _idle_row(closed, True)
        placed, _ = good.round()  # the same stream still answers
        cut = any(s is not grpc.ChannelConnectivity.READY for s in good_states)
        _idle_row(cut, False)
        assert closed, idle_states
        assert placed > 0 and not cut, good_states
    finally:
        good.close()
        idle.close()
