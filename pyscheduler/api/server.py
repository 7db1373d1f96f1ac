"""Serve the HTTP API with uvicorn on a thread of the service process.

    server = ApiServer(create_app(store, provider, settings), host="127.0.0.1", port=0)
    server.start()          # returns once the socket listens; server.port is the bound port
    ...
    server.stop()           # closes open streams and joins the thread

uvicorn's own signal handlers are not installed (the service owns SIGTERM/SIGINT). Connections are
bounded by pyscheduler.api.connection: a request head past `header_bytes` is answered 431, a connection
with no request in progress is closed after `idle_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
from collections.abc import Iterator

import uvicorn
from fastapi import FastAPI

from pyscheduler.api.connection import HeadLimit, bounded_h11


class _ThreadServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # the service process handles signals itself
        yield


class ApiServer:
    def __init__(
        self,
        app: FastAPI,
        host: str = "127.0.0.1",
        port: int = 0,
        log_level: str = "warning",
        header_bytes: int = 64 * 1024,  # limits.http_header_bytes
        idle_s: float = 30.0,  # http.idle_timeout_s
    ) -> None:
        config = uvicorn.Config(
            HeadLimit(app, header_bytes),
            host=host,
            port=port,
            http=bounded_h11(header_bytes, idle_s),
            h11_max_incomplete_event_size=header_bytes,
            timeout_keep_alive=max(1, math.ceil(idle_s)),  # BoundedH11 closes idle ones at idle_s itself
            log_level=log_level,
            access_log=False,  # request lines carry application ids: none above debug (issue 5)
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = _ThreadServer(config)
        self._thread = threading.Thread(target=self._run, name="http-api", daemon=True)
        self._error: BaseException | None = None
        self.host = host
        self.port = port

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve())
        except BaseException as exc:  # reported by start()
            self._error = exc

    def start(self, timeout: float = 30.0) -> None:
        self._thread.start()
        deadline = threading.Event()
        for _ in range(int(timeout / 0.01)):
            if self._server.started or not self._thread.is_alive():
                break
            deadline.wait(0.01)
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"HTTP API did not start on {self.host}:{self.port}: {self._error!r}")
        sockets = [s for srv in self._server.servers for s in srv.sockets]
        self.port = int(sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._server.force_exit = True  # do not wait for SSE streams that never end by themselves
        if self._thread.is_alive():
            self._thread.join(timeout)
