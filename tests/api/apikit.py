"""What the HTTP API tests share: a fixed StateProvider (`StaticState`), sample views and decisions, the
served API (`Api`) and the tokens the fixtures of conftest.py configure. Imported as `apikit` (not from
conftest, whose module name other test folders' conftest files share)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from pyscheduler.api import (
    ApiServer,
    ApplicationView,
    AskView,
    NodeView,
    StateView,
)
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import DecisionLog


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


READ_TOKEN = "r3ad-token"
ADMIN_TOKEN = "adm1n-token"
