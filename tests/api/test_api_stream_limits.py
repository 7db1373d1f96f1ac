"""Live decision streams are bounded in total and per caller (issue 57 item 5): a real uvicorn server on a
socket with small limits; streams are real HTTP connections read line by line."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from apikit import ADMIN_TOKEN, READ_TOKEN, Api, StaticState, decision, sample_state
from fastapi import FastAPI

from pyscheduler.api import ApiServer, ApiSettings, create_app
from pyscheduler.store import open_store

STREAM = "/v1/decisions/stream"
_APPS: dict[int, FastAPI] = {}  # each running server's application (ApiServer wraps it in middleware)


def _serve(tmp_path: Path, settings: ApiSettings) -> Iterator[Api]:
    store = open_store(f"sqlite:///{tmp_path}/decisions.db")
    state = StaticState(sample_state())
    app = create_app(store, state, settings)
    server = ApiServer(app, settings.host, 0)
    server.start()
    _APPS[id(server)] = app
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield Api(store, state, server, client)
    server.stop()
    store.close()
    del _APPS[id(server)]


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[Api]:
    yield from _serve(
        tmp_path,
        ApiSettings(
            token=READ_TOKEN,
            admin_token=ADMIN_TOKEN,
            stream_poll_s=0.05,
            stream_max_total=3,
            stream_max_per_caller=2,
        ),
    )


def _open(stack: ExitStack, client: httpx.Client, token: str) -> tuple[httpx.Response, Iterator[str]]:
    """An open stream and its line iterator (kept: dropping the iterator closes the connection)."""
    r = stack.enter_context(client.stream("GET", STREAM, headers={"Authorization": f"Bearer {token}"}))
    assert r.status_code == 200, r.read()
    lines = r.iter_lines()
    next(lines)  # the opening comment: the stream is registered
    return r, lines


def _refused(client: httpx.Client, token: str) -> str:
    r = client.get(STREAM, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 429, r.text
    assert r.headers.get("retry-after")
    return str(r.json()["detail"])


def _wait_admitted(client: httpx.Client, token: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with client.stream("GET", STREAM, headers=headers) as r:
            if r.status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError("the slot of a closed stream was not freed within 10 s")


def test_streams_are_limited_per_caller_and_in_total(limited: Api) -> None:
    with ExitStack() as stack:
        read_streams = [_open(stack, limited.client, READ_TOKEN) for _ in range(2)]
        detail = _refused(limited.client, READ_TOKEN)
        assert detail == "live streams of caller role:read: 2 open, limit 2 (http.stream_max_per_caller)"
        admin_stream = _open(
            stack, limited.client, ADMIN_TOKEN
        )  # another caller still has room: 3 open in total
        detail = _refused(limited.client, ADMIN_TOKEN)
        assert detail == "live streams: 3 open, limit 3 (http.stream_max_total)"
        # other queries are answered while streams are full
        r = limited.client.get("/v1/decisions", headers={"Authorization": f"Bearer {READ_TOKEN}"})
        assert r.status_code == 200
        # the open streams still deliver, each event once
        ids = limited.store.append([decision(i) for i in range(3)])
        got: list[int] = []
        for line in read_streams[0][1]:
            if line.startswith("data: "):
                got.append(json.loads(line[6:])["id"])
                if len(got) == 3:
                    break
        assert got == ids
        assert admin_stream[0].status_code == 200
        # a subscriber that leaves frees its slot
        read_streams[1][0].close()
        _wait_admitted(limited.client, READ_TOKEN)
    _wait_admitted(limited.client, ADMIN_TOKEN)


def test_unauthenticated_callers_are_counted_by_address(tmp_path: Path) -> None:
    for api in _serve(tmp_path, ApiSettings(stream_poll_s=0.05, stream_max_per_caller=1)):
        with api.client.stream("GET", STREAM) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            next(lines)
            refused = api.client.get(STREAM)
            assert refused.status_code == 429
            assert refused.json()["detail"] == (
                "live streams of caller address:127.0.0.1: 1 open, limit 1 (http.stream_max_per_caller)"
            )


def test_a_subscriber_that_does_not_read_is_dropped_not_buffered(tmp_path: Path) -> None:
    """A client that stops reading: its stream is ended after stream_queue_events decisions unread,
    the hub holds nothing more for it, and its slot is freed."""
    for api in _serve(tmp_path, ApiSettings(stream_poll_s=0.02, stream_queue_events=100, stream_max_total=1)):
        hub = _APPS[id(api.server)].state.stream_hub
        with api.client.stream("GET", STREAM) as r:
            lines = r.iter_lines()
            next(lines)
            deadline = time.monotonic() + 30
            # fill the socket buffers and then the subscriber's queue without reading
            while time.monotonic() < deadline and hub.subscribers:
                api.store.append([decision(i, app="x" * 200) for i in range(200)])
                time.sleep(0.02)
            assert hub.subscribers == 0, "the unread stream was never dropped"
            tail = [line for line in lines if line.startswith("event: error") or "too slow" in line]
            assert any("http.stream_queue_events" in line for line in tail)
        _wait_admitted(api.client, "")
