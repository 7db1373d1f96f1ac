"""Fixtures: the HTTP API served by uvicorn on a real socket, over a real SQLite decision log.

`StaticState` is a plain implementation of the StateProvider protocol holding fixed views (the rpc
service's implementation is tested with the service); it lets these tests decide what the live state is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from pyscheduler.api import (
    ApiServer,
    ApiSettings,
    ApplicationView,
    AskView,
    NodeView,
    StateView,
    create_app,
)
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import DecisionLog, open_store


@dataclass
class StaticState:
    view: StateView = field(default_factory=StateView)
    is_ready: bool = True
    reason: str = ""

    def ready(self) -> tuple[bool, str]:
        return self.is_ready, self.reason

    def state(self) -> StateView:
        return self.view

    def application(self, application_id: str) -> ApplicationView | None:
        return next((a for a in self.view.applications if a.application_id == application_id), None)


def sample_state() -> StateView:
    return StateView(
        nodes=[
            NodeView("host1:8041", {"memory-mb": 8192, "vcores": 8}, {"memory-mb": 2048, "vcores": 2}, 3),
            NodeView("host2:8041", {"memory-mb": 8192, "vcores": 8}, {"memory-mb": 0, "vcores": 0}, 4),
        ],
        applications=[
            ApplicationView(
                "application_1_0001",
                job_id="j1",
                name="wordcount",
                priority=0.5,
                position=0,
                running_containers=4,
            ),
            ApplicationView(
                "application_1_0002",
                job_id="j2",
                name="sort",
                priority=2.5,
                position=1,
                pending_asks=1,
                waiting_for="resources",
                detail="no node has 4096 MB free",
            ),
        ],
        pending_asks=[
            AskView("application_1_0002", {"memory-mb": 4096, "vcores": 1}, 3, locality=("host1",))
        ],
        clones_running=1,
        sessions={"rm1": "active"},
    )


def decision(
    i: int, app: str = "application_1_0001", kind: DecisionKind = DecisionKind.PLACEMENT
) -> Decision:
    return Decision(
        time=float(i),
        kind=kind,
        reason="best_fit",
        application_id=app,
        job_id=app.replace("application", "job"),
        task_id=f"t{i}",
        node_id=f"host{i % 2 + 1}:8041",
        inputs={"free_mb": 2048 - i},
    )


@dataclass
class Api:
    store: DecisionLog
    state: StaticState
    server: ApiServer
    client: httpx.Client


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


READ_TOKEN = "r3ad-token"
ADMIN_TOKEN = "adm1n-token"


@pytest.fixture
def api_with_roles(tmp_path: Path) -> Iterator[Api]:
    yield from _serve(tmp_path, ApiSettings(token=READ_TOKEN, admin_token=ADMIN_TOKEN))


@pytest.fixture
def api_admin_only(tmp_path: Path) -> Iterator[Api]:
    """Loopback, no read token: reads stay open, admin endpoints need the admin token."""
    yield from _serve(tmp_path, ApiSettings(admin_token=ADMIN_TOKEN))
