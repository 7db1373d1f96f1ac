"""What the HTTP API needs from the running service: the `StateProvider` protocol and its views.

The decision service implements `StateProvider` (plain methods returning these frozen dataclasses, no web
types), and passes it to `pyscheduler.api.create_app`. Every method is called from a worker thread of
the HTTP server, concurrently with the decision loop: return a consistent copy taken under the
service's own lock, never live mutable state. Resources are maps from YARN resource name to amount
(e.g. {"memory-mb": 4096, "vcores": 2}).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class NodeView:
    node_id: str
    capacity: Mapping[str, float]
    free: Mapping[str, float]
    running_containers: int = 0
    state: str = "running"  # YARN node state as the shim reports it


@dataclass(frozen=True, slots=True)
class AskView:
    """A pending resource request of an application (YARN ResourceRequest / SchedulingRequest)."""

    application_id: str
    capability: Mapping[str, float]
    count: int
    priority: int = 0  # YARN's request priority (not DollyMP's job priority)
    locality: Sequence[str] = ()  # preferred nodes/racks; empty: anywhere
    task_id: str = ""


@dataclass(frozen=True, slots=True)
class ApplicationView:
    """One application as the scheduler sees it, including why it waits.

    `priority` is the policy's score for the job (DollyMP Algorithm 1: smaller runs first) and
    `position` its rank in the current priority order (0 runs first); None where the policy gives none.
    `waiting_for` is machine-readable, e.g. "nothing" (running as asked), "resources" (no node fits),
    "higher_priority" (others come first), "parent_phase" (DAG parent unfinished), "resync" (the
    service waits for the shim's full state), "omega" (delay assignment); `detail` says it in words.
    """

    application_id: str
    job_id: str = ""
    name: str = ""
    queue: str = ""
    state: str = ""
    priority: float | None = None
    position: int | None = None
    pending_asks: int = 0
    running_containers: int = 0
    clones_running: int = 0
    waiting_for: str = "nothing"
    detail: str = ""


@dataclass(frozen=True, slots=True)
class StateView:
    nodes: Sequence[NodeView] = ()
    applications: Sequence[ApplicationView] = ()
    pending_asks: Sequence[AskView] = ()
    clones_running: int = 0
    sessions: Mapping[str, str] = field(default_factory=dict)  # rm_id -> session state


class StateProvider(Protocol):
    """Implemented by the decision service (service/rmproxy/provider.py); see the module docstring for
    threading rules."""

    def ready(self) -> tuple[bool, str]:
        """(ready, reason): ready once a ResourceManager session has resynced and decisions flow;
        the reason says what is missing otherwise (e.g. "no session", "awaiting resync")."""
        ...

    def state(self) -> StateView:
        """The live state: nodes, applications, pending asks, clones running."""
        ...

    def application(self, application_id: str) -> ApplicationView | None:
        """One application (None if the service does not know it)."""
        ...


class EmptyState:
    """A provider for a service with no ResourceManager attached (and for tools that only read the log)."""

    def __init__(self, reason: str = "no ResourceManager session") -> None:
        self.reason = reason

    def ready(self) -> tuple[bool, str]:
        return False, self.reason

    def state(self) -> StateView:
        return StateView()

    def application(self, application_id: str) -> ApplicationView | None:
        return None
