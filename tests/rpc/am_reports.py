"""AttemptReports and job profiles as the MapReduce AM helper sends them, the copy estimator
(estimate/copies.py) read through them with times in ms, and a real service whose DollyMP clones late
copies with an AM stub on it: shared by the AM plan's tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rpc_harness import FORMER, am_session, app, in_process_service, node

from pyscheduler.estimate.copies import finish_at_least, finish_at_rate, judge, slow_waiting
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.state.amreports import copy_report, copy_reports
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"


# The copy estimator (estimate/copies.py) on AttemptReports as the AM sends them, times in ms.
def finish_at_rate_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    at = finish_at_rate(copy_report(a, first))
    return None if at is None else at * 1000.0


def finish_at_least_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    at = finish_at_least(copy_report(a, first))
    return None if at is None else at * 1000.0


def judge_reports(attempts: Any, first: Any, now_s: float, startup_s: float | None = None) -> Any:
    return judge(copy_reports(attempts, first), now_s, startup_s)


def straggling(attempts: Any, first: Any, now_s: float, startup_s: float | None = None) -> set[str]:
    return set(judge_reports(attempts, first, now_s, startup_s)[0])


def slow_waiting_reports(
    attempts: Any, first: Any, now_s: float, skip: Any, startup_s: float | None = None
) -> Any:
    return slow_waiting(copy_reports(attempts, first), now_s, skip, startup_s)


def attempt(phase: str, task: int, copy: int, state: int, clone: bool = False) -> Any:
    kind = "m" if phase == "map" else "r"
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0001_{kind}_{task:06d}",
        attempt_id=f"attempt_1700000000000_0001_{kind}_{task:06d}_{copy}",
        phase_id=phase,
        container_id=f"container_{task}_{copy}",
        is_clone=clone,
        state=state,
        duration_s=20.0 if state != pb.ATTEMPT_RUNNING else 0.0,
        time_ms=5,
    )


def phase_profile(phase_id: str, tasks: int, priority: int, parents: tuple[str, ...] = ()) -> Any:
    demand = pb.Resource(memory_mb=1024, vcores=1)
    return pb.PhaseProfile(
        phase_id=phase_id, tasks=tasks, demand=demand, parents=parents, yarn_priority=priority
    )


@contextmanager
def late_rule_am(
    tmp_path: Path, small_job_clones: int = 0, full: bool = False, **service: Any
) -> Iterator[tuple[DecisionService, Any]]:
    """A real service whose DollyMP clones late copies (and, with `small_job_clones`, every task of a job
    of at most that many tasks at launch) and an AM stub on it, 4 nodes (idle; with `full`, every vcore
    taken), application 1 known; `service`: further configuration keys."""
    options = {**FORMER, "small_job_clones": small_job_clones, "tail_tasks": small_job_clones}
    svc = in_process_service(tmp_path, **{"policy.name": "dollymp-ext", "policy.options": options, **service})
    alloc = (8192, 8) if full else (0, 0)
    try:
        with am_session(
            svc.port,
            nodes_upserted=[node(f"h{i}:1", 8192, 8, alloc=alloc) for i in range(4)],
            apps_upserted=[app(1)],
        ) as (_reg, _s, am):
            yield svc, am
    finally:
        svc.stop()


def map_report(i: int, state: int, now_ms: int, run_s: float, ago_s: float = 0.0, **more: Any) -> Any:
    """Map i's original: launched `run_s` before `now_ms`, reported `ago_s` before it."""
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0001_m_{i:06d}",
        attempt_id=f"attempt_1700000000000_0001_m_{i:06d}_0",
        phase_id="map",
        container_id=f"container_{i}",
        state=state,
        time_ms=now_ms - int(ago_s * 1000),
        launch_time_ms=now_ms - int(run_s * 1000),
        **more,
    )


def running_map(i: int, now_ms: int, ago_s: float, progress: float) -> Any:
    """Map i's original, launched 40 s ago, at `progress` when reported `ago_s` ago."""
    return map_report(i, pb.ATTEMPT_RUNNING, now_ms, 40.0, ago_s, node_id=f"h{i % 2}:1", progress=progress)
