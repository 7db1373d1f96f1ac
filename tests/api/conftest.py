"""Fixtures: the HTTP API served by uvicorn on a real socket, over a real SQLite decision log, with the
state fixed by apikit.StaticState (a plain implementation of the StateProvider protocol; the decision
service's implementation is tested with the service), so that these tests decide what the live state is.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from apikit import ADMIN_TOKEN, READ_TOKEN, Api, StaticState, sample_state

from pyscheduler.api import ApiServer, ApiSettings, create_app
from pyscheduler.store import open_store


def _serve(tmp_path: Path, settings: ApiSettings) -> Iterator[Api]:
    store = open_store(f"sqlite:///{tmp_path}/decisions.db")
    state = StaticState(sample_state())
    server = ApiServer(create_app(store, state, settings), settings.host, 0)
    server.start()
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield Api(store, state, server, client)
    server.stop()
    store.close()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    yield from _serve(tmp_path, ApiSettings(stream_poll_s=0.05))


@pytest.fixture
def api_with_token(tmp_path: Path) -> Iterator[Api]:
    yield from _serve(tmp_path, ApiSettings(token="s3cret-token"))


@pytest.fixture
def api_with_roles(tmp_path: Path) -> Iterator[Api]:
    yield from _serve(tmp_path, ApiSettings(token=READ_TOKEN, admin_token=ADMIN_TOKEN))


@pytest.fixture
def api_admin_only(tmp_path: Path) -> Iterator[Api]:
    """Loopback, no read token: reads stay open, admin endpoints need the admin token."""
    yield from _serve(tmp_path, ApiSettings(admin_token=ADMIN_TOKEN))
