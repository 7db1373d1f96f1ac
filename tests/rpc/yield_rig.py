"""A service's Mirror with containers, asks and running copies as the shim and the AM helper report them,
for the tests of which clones yield to waiting originals (service/round/yielding.py,
service/round/waiting.py)."""

from __future__ import annotations

from round_memories import run_round
from rpc_harness import app, ask, attempt, full_batch, node, res

from pyscheduler.policies import get_policy
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.waiting import STEADY_S
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.wire import pb

APP1 = "application_1700000000000_0001"
APP2 = "application_1700000000000_0002"
NOW_MS = 100_000


def container(cid: str, n: int, mem: int = 1024, cores: int = 1, am: bool = False) -> object:
    return pb.ContainerInfo(
        container_id=cid, attempt_id=attempt(n), node_id="h1:1", priority=20, resource=res(mem, cores),
        am_container=am, start_time_ms=1,
    )  # fmt: skip


def mirror_of(containers: list[object], asks: list[object], cores: int = 4) -> Mirror:
    """One node of `cores` vcores, as many taken as there are `containers` (1 vcore each)."""
    used = len(containers)
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1", mem=cores * 1024, cores=cores, alloc=(used * 1024, used))],
            apps_upserted=[app(1, submit_ms=1000), app(2, submit_ms=2000)],
            asks=asks,
            containers_allocated=containers,
        )
    )
    return m


def completed(m: Mirror, cid: str) -> None:
    """The shim reports container `cid` completed (e.g. preempted); its node's figures are not updated."""
    m.apply(
        pb.StateBatch(
            session_id="s", seq=2, rm_time_ms=2,
            containers_completed=[pb.ContainerCompletion(container_id=cid, finish_time_ms=2)],
        )
    )  # fmt: skip


def running_copy(cid: str, task: str, clone: bool, progress: float = 0.0, launch_ms: int = 50_000) -> Copy:
    return Copy(APP1, task, f"attempt_{cid}", cid, clone, progress, launch_ms)


PLACED = (("o1", "h1:1"), ("c1", "h1:1"), ("o2", "h2:1"), ("c2", "h2:1"))


def two_nodes(placed: tuple[tuple[str, str], ...] = PLACED, apps: int = 1) -> Mirror:
    """Two full nodes of 2 vcores holding application 1's containers `placed` (id, node; 1 vcore each: by
    default o1 and c1 on h1, o2 and c2 on h2), applications 1..`apps` known."""
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[
                node("h1:1", mem=2048, cores=2, alloc=(2048, 2)),
                node("h2:1", mem=2048, cores=2, alloc=(2048, 2)),
            ],
            apps_upserted=[app(i, submit_ms=1000 * i) for i in range(1, apps + 1)],
            containers_allocated=[
                pb.ContainerInfo(
                    container_id=cid, attempt_id=attempt(1), node_id=n, priority=20, resource=res(1024, 1),
                    start_time_ms=1,
                )
                for cid, n in placed
            ],
        )
    )  # fmt: skip
    return m


def rated(cid: str, task: str, clone: bool, progress: float, finish_s: float, **kw: bool) -> Copy:
    """A copy launched at 50 s whose rate since its work began says it finishes at `finish_s`."""
    return Copy(
        APP1, task, f"attempt_{cid}", cid, clone, progress, 50_000, finish_est_ms=finish_s * 1000, **kw
    )


def kills_once_steady(containers: list[object], hint: PhaseHint, copies: list[Copy]) -> list[str]:
    """The containers a round of the paper's DollyMP asks the shim to preempt for APP2's waiting map ask
    (priority 20, `hint`): none before the ask waited STEADY_S, then these."""
    m = mirror_of(containers, [ask(2, 20, 1)])
    clock = [NOW_MS / 1000.0 - STEADY_S]
    round_fn = core_round(
        get_policy("dollymp"),
        hints=lambda app_id: {20: hint} if app_id == APP2 else {},
        clock=lambda: clock[0],
        copies=lambda: copies,
    )
    assert run_round(round_fn, m).kills == []
    clock[0] = NOW_MS / 1000.0
    return [k.container_id for k in run_round(round_fn, m).kills]
