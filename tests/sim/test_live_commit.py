"""When the simulated shim carries out a plan (sim/live/cluster.py `commit`), and that its default is the
real shim's (yarn.scheduler.dollymp.commit in ShimConfig.java)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pyscheduler.sim.live.appmaster import AppMaster
from pyscheduler.sim.live.cluster import AM_PRIORITY, SHIM_COMMIT, Cluster, attempt_of
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.run import LiveOptions
from pyscheduler.sim.live.workload import WORKLOADS
from pyscheduler.wire import pb

ROOT = Path(__file__).resolve().parents[2]
SHIM_CONFIG = ROOT / "yarn-plugin/src/main/java/io/dollymp/yarn/scheduler/ShimConfig.java"


def test_the_simulators_default_is_the_shims() -> None:
    java = re.search(r'DEFAULT_COMMIT = "(\w+)"', SHIM_CONFIG.read_text())
    assert java is not None, "ShimConfig.java declares no DEFAULT_COMMIT"
    assert java.group(1) == SHIM_COMMIT
    assert LiveOptions().commit == SHIM_COMMIT


def _am_placed(commit: str) -> tuple[Cluster, AppMaster, pb.Plan]:
    wl = dataclasses.replace(WORKLOADS["light"](1), am_mem_mb=1024)
    cluster = Cluster(wl, LiveRecord(), commit=commit)
    am = AppMaster(wl, 0, cluster.record)
    cluster.submit(am, 0.0)
    placement = pb.Placement(
        placement_id="p1",
        attempt_id=attempt_of(am.spec.n),
        node_id=Cluster.node_id(0),
        priority=AM_PRIORITY,
        count=1,
        capability=pb.Resource(memory_mb=1024, vcores=1),
    )
    return cluster, am, pb.Plan(placements=[placement])


def test_under_plan_a_placement_starts_as_the_plan_arrives() -> None:
    cluster, am, plan = _am_placed("plan")
    cluster.take_plan(plan, 3.0)
    assert am.am_container_id, "the AM container was not started with the plan"
    assert cluster.proposals == []


def test_under_heartbeat_it_waits_for_the_next_heartbeat() -> None:
    cluster, am, plan = _am_placed("heartbeat")
    cluster.take_plan(plan, 3.0)
    assert not am.am_container_id
    cluster.heartbeat(4.0)
    assert am.am_container_id


def test_an_unknown_commit_is_refused() -> None:
    with pytest.raises(ValueError, match="commit"):
        Cluster(WORKLOADS["light"](1), LiveRecord(), commit="asap")
