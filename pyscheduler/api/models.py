"""Response and request bodies of the HTTP API (pydantic models, shown in the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import Page, StoredDecision


class DecisionOut(BaseModel):
    id: int = Field(description="Log id: increases in commit order, never reused")
    time: float = Field(description="Seconds on the driver's clock when the decision was made")
    kind: DecisionKind
    reason: str = Field(description="Machine-readable reason, e.g. best_fit, infeasible")
    application_id: str
    job_id: str
    task_id: str
    node_id: str
    detail: str
    inputs: dict[str, Any] = Field(description="The inputs that mattered")

    @classmethod
    def of(cls, stored: StoredDecision) -> DecisionOut:
        d = stored.decision
        return cls(
            id=stored.id,
            time=d.time,
            kind=d.kind,
            reason=d.reason,
            application_id=d.application_id,
            job_id=d.job_id,
            task_id=d.task_id,
            node_id=d.node_id,
            detail=d.detail,
            inputs=dict(d.inputs),
        )


class DecisionPage(BaseModel):
    items: list[DecisionOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null when none follows")

    @classmethod
    def of(cls, page: Page) -> DecisionPage:
        return cls(
            items=[DecisionOut.of(s) for s in page.items],
            next_cursor=str(page.next_cursor) if page.next_cursor is not None else None,
        )


class _View(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class NodeOut(_View):
    node_id: str
    capacity: dict[str, float]
    free: dict[str, float]
    running_containers: int
    state: str


class AskOut(_View):
    application_id: str
    capability: dict[str, float]
    count: int
    priority: int
    locality: list[str]
    task_id: str


class ApplicationOut(_View):
    application_id: str
    job_id: str
    name: str
    queue: str
    state: str
    priority: float | None = Field(description="The policy's job priority (DollyMP Algorithm 1)")
    position: int | None = Field(description="Rank in the current priority order; 0 runs first")
    pending_asks: int
    running_containers: int
    clones_running: int
    waiting_for: str = Field(description="Machine-readable: nothing, resources, higher_priority, ...")
    detail: str


class StateOut(_View):
    nodes: list[NodeOut]
    applications: list[ApplicationOut]
    pending_asks: list[AskOut]
    clones_running: int
    sessions: dict[str, str]


class WhyOut(BaseModel):
    application_id: str
    known: bool = Field(description="Whether the live service knows the application now")
    application: ApplicationOut | None
    last_decisions: list[DecisionOut] = Field(description="Newest first")


class Problem(BaseModel):
    """An error answer: `detail` says what was wrong, naming the parameter or field."""

    detail: str


class Health(BaseModel):
    status: str
    reason: str = ""


class ConfigCheck(BaseModel):
    valid: bool
    key: Annotated[str | None, Field(description="The first invalid key, when not valid")] = None
    problem: str | None = None
    values: Annotated[dict[str, Any] | None, Field(description="The validated settings (secrets masked)")] = (
        None
    )
