"""`dollymp simulate`'s two mechanisms on trace jobs (pyscheduler/sim/live/fromtrace.py): the service's
round (the default) in-process and over real gRPC decides alike, its copies run the trace engine's run
times, and where it differs from the policy-only engine (`--mechanism core`) the difference is the
mechanism's: a plan's placements start as the plan arrives, a tick after the AM's ask, and an AM asks
for a phase's tasks at the tick after it can."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.live.fromtrace import VCORE_UNITS, phase_priority, service_options, trace_workload
from pyscheduler.sim.live.run import run
from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.runner import compare, draw_bases, scale_cluster
from pyscheduler.sim.straggler import StragglerModel, parse_straggler
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec, load_cluster

ROOT = Path(__file__).resolve().parents[2]
FB2010 = ROOT.parent / "shared" / "traces" / "swim_facebook" / "FB-2010_samples_24_times_1hr_0.tsv"
PARETO = parse_straggler("pareto:alpha=1.5,cap=20")
NONE = parse_straggler("none")


def _fb(jobs: int, nodes_share: float) -> tuple[list[JobSpec], ClusterSpec]:
    specs, _ = load_workload(FB2010, "swim", limit=jobs)
    cluster = scale_cluster(
        load_cluster(ROOT / "pyscheduler" / "sim" / "clusters" / "fb3000.json"), nodes_share
    )
    return list(specs), cluster


def test_the_service_round_in_process_and_over_grpc_decides_alike() -> None:
    jobs, cluster = _fb(12, 0.006)  # 18 nodes: room for clones beside the two large jobs
    config = SimConfig(straggler=PARETO, seed=3)
    wl = trace_workload(jobs, cluster, draw_bases(jobs, config), PARETO, 3, config.bandwidth_mb_s)
    opts = service_options("dollymp", {}, 1.0, max(j.submit_s for j in wl.jobs))
    direct = run(wl, opts)
    over_grpc = run(wl, dataclasses.replace(opts, transport="grpc"))
    assert direct.placements == over_grpc.placements
    assert direct.containers == over_grpc.containers
    assert direct.clones == over_grpc.clones
    assert direct.kills == over_grpc.kills
    assert direct.key() == over_grpc.key()
    # not trivial: every job finished, the paper's DollyMP cloned and the AMs killed the losing copies
    assert len(direct.flowtimes) == len(jobs)
    assert direct.clones
    assert any(k[4] == "am" and k[5] == "task won" for k in direct.kills)


def test_copies_run_the_trace_engines_run_times() -> None:
    """Base x the engine's slowdown of the same (job, phase, task, n-th copy) / the node's speed, then the
    shuffle read; tasks ask for their cpu in tenths of a vcore."""
    jobs, _ = _fb(6, 0.003)
    cluster = ClusterSpec((NodeSpec(16, 32768, 1.0), NodeSpec(8, 16384, 0.75)))
    config = SimConfig(straggler=PARETO, seed=5)
    bases = draw_bases(jobs, config)
    wl = trace_workload(jobs, cluster, bases, PARETO, 5, config.bandwidth_mb_s)
    model = StragglerModel(PARETO, 5)
    assert [(wl.capacity(i), wl.speed(i)) for i in range(2)] == [((32768, 160), 1.0), ((16384, 80), 0.75)]
    for j, job in enumerate(jobs):
        for k, ph in enumerate(job.phases):
            live = wl.jobs[j].phases[k]
            assert live.priority == phase_priority(k)
            assert live.vcores == round(ph.cpu * VCORE_UNITS)
            read = ph.read_mb / config.bandwidth_mb_s if ph.parents and ph.read_mb > 0 else 0.0
            for t in range(min(ph.tasks, 3)):
                for nth in (0, 1):
                    want = bases[j][k][t] * model.slowdown_of(j, k, t, nth) / 0.75 + read
                    assert wl.run_s(j, k, t, nth, nth > 0, node=1) == pytest.approx(want, rel=1e-12)


def _one_job(arrival: float, phases: tuple[PhaseSpec, ...]) -> list[JobSpec]:
    return [JobSpec("j1", arrival, phases, "one")]


def _both(jobs: list[JobSpec], policy: str = "fifo") -> tuple[float, float, float, float]:
    cluster = ClusterSpec(tuple(NodeSpec(4, 8192) for _ in range(4)))
    config = SimConfig(straggler=NONE, seed=1)
    core = compare(jobs, cluster, [policy], config, mechanism="core").results[policy]
    service = compare(jobs, cluster, [policy], config, mechanism="service").results[policy]
    return core.avg_flowtime, service.avg_flowtime, core.resource_s, service.resource_s


def test_a_plan_starts_as_it_arrives() -> None:
    """One phase of 8 tasks of 10 s, alone, no stragglers. The engine starts them at the arrival's round;
    through the service, the AM asks for them at the first tick (0.5 s later) and the round at the next tick
    places them, committed as the plan arrives (the shim's commit=plan, not a heartbeat later): 1.5 s more,
    the same work."""
    map_only = (PhaseSpec("map", 8, 1.0, 1024, 10.0, 0.0),)
    core, service, core_rs, service_rs = _both(_one_job(0.5, map_only))
    assert core == pytest.approx(10.0)
    assert service == pytest.approx(10.0 + 0.5 + 1.0)
    assert service_rs == pytest.approx(core_rs)


def test_a_downstream_phase_waits_for_the_tick_after_its_parents() -> None:
    """Map then reduce: the reduces become ready when the maps end (10.0 s after they started), which the
    AM sees at once (the maps end on a tick), and that tick's round places them, started as its plan arrives:
    the map phase's 1.5 s and nothing more for the reduces."""
    phases = (
        PhaseSpec("map", 8, 1.0, 1024, 10.0, 0.0),
        PhaseSpec("reduce", 2, 1.0, 1024, 5.0, 0.0, ("map",)),
    )
    core, service, core_rs, service_rs = _both(_one_job(0.5, phases))
    assert core == pytest.approx(15.0)
    assert service == pytest.approx(15.0 + 1.5)
    assert service_rs == pytest.approx(core_rs)
    assert math.isfinite(service)


def test_simulate_runs_the_service_round_unless_told_core(capsys: pytest.CaptureFixture[str]) -> None:
    from pyscheduler.cli import main

    cluster = ROOT / "pyscheduler" / "sim" / "clusters" / "fb3000.json"
    args = [
        "simulate",
        "--workload",
        str(FB2010),
        "--format",
        "swim",
        "--cluster",
        str(cluster),
        "--limit",
        "3",
    ]
    args += ["--cluster-scale", "0.002", "--policies", "fifo", "--straggler", "none", "--quiet"]
    assert main(args) == 0
    service = capsys.readouterr().out
    assert main([*args, "--mechanism", "core"]) == 0
    core = capsys.readouterr().out
    assert "mechanism service" in service and "mechanism core" in core
    with pytest.raises(SystemExit) as refused:  # argparse: not a mechanism
        main([*args, "--mechanism", "both"])
    assert refused.value.code == 2
    assert "--mechanism: invalid choice: 'both'" in capsys.readouterr().err


def test_the_mechanisms_benchmark_prints_both_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    from pyscheduler.cli import main

    args = ["bench", "mechanisms", "--limit", "4", "--seeds", "2", "--policies", "fifo,dollymp"]
    assert main([*args, "--reference", "fifo", "--stragglers", "none"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    data = json.loads(out[-1])
    assert data["seeds"] == 2 and data["jobs"] == 4
    row = data["models"]["none"]["dollymp"]
    for key in ("core_avg_s", "service_avg_s", "service_over_core", "core_over_fifo", "service_over_fifo"):
        assert row[key]["min"] <= row[key]["median"] <= row[key]["max"]
    # no stragglers, nothing to clone: the service's flowtimes are the engine's plus its ticks
    assert 1.0 <= row["service_over_core"]["median"] < 2.0
    assert data["models"]["none"]["fifo"]["core_over_fifo"]["median"] == 1.0


def test_dag_jobs_run_through_the_service_round() -> None:
    """Multi-phase DAGs with joins (sim/synthetic_dag.py) through the service's round: phases beyond map
    and reduce ask at priorities of their own, every job finishes, and the service and the engine agree
    on the useful work done when nothing straggles (not on each job's flowtime: the two order jobs apart by
    the ticks' delays; nor on the clones' waste, which depends on when a copy starts)."""
    from pyscheduler.sim.synthetic import synthetic_workload

    jobs, _ = synthetic_workload("dag:jobs=6", seed=3)
    assert max(len(j.phases) for j in jobs) >= 3  # a DAG beyond map and reduce
    cluster = ClusterSpec(tuple(NodeSpec(16, 32768) for _ in range(6)))
    config = SimConfig(straggler=NONE, seed=4)
    core = compare(jobs, cluster, ["dollymp"], config, mechanism="core").results["dollymp"]
    service = compare(jobs, cluster, ["dollymp"], config, mechanism="service").results["dollymp"]
    assert service.jobs_completed == core.jobs_completed == len(jobs)
    # the same work, but for YARN's units: a task's cpu in tenths of a vcore and its memory in whole MB
    assert service.useful_resource_s == pytest.approx(core.useful_resource_s, rel=0.01)
