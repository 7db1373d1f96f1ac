"""The decision service's side of the HTTP API: pyscheduler.api.provider.StateProvider over the sessions.

Every view is copied under the session's lock, so the HTTP threads never see a half-applied batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscheduler.api.provider import ApplicationView, AskView, NodeView, StateView
from pyscheduler.service.rmproxy.session import Session, SessionRegistry, SessionState
from pyscheduler.service.state.mirror import Mirror, application_of_attempt
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb

_WAITING = {
    pb.REASON_WAITING_FOR_RESOURCES: ("resources", "no node has room for it now"),
    pb.REASON_INFEASIBLE: ("resources", "larger than every running node: it can never run as asked"),
    pb.REASON_LOWER_PRIORITY: ("higher_priority", "higher-priority applications took the free room"),
    pb.REASON_PARENT_PHASE_UNFINISHED: ("parent_phase", "a parent phase has not finished"),
    pb.REASON_AM_SHARE_CAP: ("resources", "the AM share cap is reached"),
}


def _yarn(r: Res) -> dict[str, float]:
    return {"memory-mb": float(r.memory_mb), "vcores": float(r.vcores), **{k: float(v) for k, v in r.others}}


class SessionStateProvider:
    def __init__(
        self,
        registry: SessionRegistry,
        log_problem: Callable[[], str | None] | None = None,
        authenticated: Callable[[str], bool] | None = None,
    ) -> None:
        self.registry = registry
        self.log_problem = log_problem  # why decisions cannot be written now (service/rmproxy/durable.py)
        self.authenticated = authenticated  # pyscheduler.service.rmproxy.auth.Guard.authenticated

    def ready(self) -> tuple[bool, str]:
        """Ready: decisions can be written, and a session an authenticated shim registered has completed
        its full resync."""
        problem = self.log_problem() if self.log_problem is not None else None
        if problem is not None:
            return False, problem
        sessions = self.registry.sessions()
        if self.authenticated is not None:
            sessions = [s for s in sessions if self.authenticated(s.session_id)]
        if not sessions:
            return False, "no authenticated ResourceManager session"
        if any(s.state is SessionState.ACTIVE for s in sessions):
            return True, "ok"
        return False, "awaiting the shim's full resync"

    def state(self) -> StateView:
        nodes: list[NodeView] = []
        apps: list[ApplicationView] = []
        asks: list[AskView] = []
        states: dict[str, str] = {}
        for s in self.registry.sessions():
            with s.lock:
                states[s.rm_id] = s.state.value
                m = s.mirror
                nodes.extend(_node(m, nid) for nid in sorted(m.nodes))
                apps.extend(_app(s, app_id) for app_id in sorted(m.apps))
                asks.extend(_ask(a) for _, a in sorted(m.asks.items()))
        return StateView(nodes=nodes, applications=apps, pending_asks=asks, sessions=states)

    def application(self, application_id: str) -> ApplicationView | None:
        for s in self.registry.sessions():
            with s.lock:
                if application_id in s.mirror.apps or application_id in s.mirror.app_ids_with_asks():
                    return _app(s, application_id)
        return None


def _node(m: Mirror, node_id: str) -> NodeView:
    n = m.nodes[node_id]
    free = n.free()
    state = pb.NodeState.Name(n.state).removeprefix("NODE_STATE_").lower()
    return NodeView(node_id, _yarn(n.capacity), _yarn(free), m.containers_on(node_id), state)


def _ask(a: Any) -> AskView:
    attempt, prio, _ = a.key
    return AskView(
        application_of_attempt(attempt),
        _yarn(a.capability),
        a.num_containers,
        prio,
        tuple(a.locations),
    )


def _app(s: Session, app_id: str) -> ApplicationView:
    m = s.mirror
    rec = m.apps.get(app_id)
    keys = [k for k in m.asks if application_of_attempt(k[0]) == app_id]
    pending = sum(m.asks[k].num_containers for k in keys)
    waiting, detail = "nothing", "running as asked" if not pending else "placements sent, awaiting the shim"
    if s.state is not SessionState.ACTIVE:
        waiting, detail = "resync", "the service waits for the shim's full resync"
    else:
        for k in keys:
            reason = s.last_deferral(k)
            if reason in _WAITING:
                waiting, detail = _WAITING[reason]
                break
    priority, position = s.priority_of(app_id)
    return ApplicationView(
        application_id=app_id,
        job_id=app_id,
        name=rec.name if rec is not None else "",
        queue=rec.queue if rec is not None else "",
        state=s.state.value,
        priority=priority,
        position=position,
        pending_asks=pending,
        running_containers=m.containers_of(app_id),
        waiting_for=waiting,
        detail=detail,
    )
