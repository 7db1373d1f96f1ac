"""A job's own time (sim/owntime.py) against the engine, and the split of a run's flowtime."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pyscheduler.cli import main
from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.owntime import decompose, own_times
from pyscheduler.sim.runner import compare, draw_bases
from pyscheduler.sim.straggler import StragglerModel, parse_straggler
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec

MODELS = ("pareto:alpha=1.5,cap=20", "empirical", "none")


def _maps(n: int) -> tuple[float, ...]:
    return tuple(8.0 + 3 * t for t in range(n))


def spaced_jobs(n: int, gap: float) -> list[JobSpec]:
    """Two-phase jobs with spread task times and a shuffle read, each arriving after the last is done."""
    return [
        JobSpec(
            f"j{i}",
            i * gap,
            (
                PhaseSpec("map", 3 + i % 3, 1.0, 1024.0, 0.0, 0.0, durations=_maps(3 + i % 3)),
                PhaseSpec("reduce", 2, 1.0, 1024.0, 0.0, 0.0, ("map",), durations=(6.0, 9.0), read_mb=50.0),
            ),
        )
        for i in range(n)
    ]


CLUSTER = ClusterSpec(tuple(NodeSpec(4.0, 8192.0) for _ in range(4)))


@pytest.mark.parametrize("model", MODELS)
def test_own_time_is_what_a_job_alone_without_clones_takes(model: str) -> None:
    """On an idle cluster, one job at a time and no clones, every job's flowtime is its own time (up to
    the decision rounds' spacing): the same originals' run times as the engine draws."""
    jobs = spaced_jobs(8, gap=2000.0)
    config = SimConfig(straggler=parse_straggler(model), seed=4, tick=0.5)
    cmp = compare(jobs, CLUSTER, ["dollymp0"], config)
    m = cmp.results["dollymp0"]
    own = own_times(jobs, draw_bases(jobs, config), CLUSTER, StragglerModel(config.straggler, 4), 100.0)
    assert m.jobs_completed == len(jobs)
    assert np.all(m.flowtimes >= own - 1e-6)
    assert np.all(m.flowtimes - own <= 3 * config.tick + 1e-6)  # a round per phase start at most
    split = m.extra["flowtime_split"]
    assert split["saved"] == pytest.approx(0.0, abs=1e-9) and split["own"] == pytest.approx(float(own.mean()))
    assert cmp.settings["own_time_avg"] == pytest.approx(float(own.mean()))


def test_own_time_uses_each_original_s_own_straggler_draw() -> None:
    """Under Pareto the original of task t of phase k of job j runs base x its copy-0 slowdown
    (StragglerModel.copy_time with the run's common random numbers): the longest sets the phase."""
    jobs = spaced_jobs(3, gap=1.0)
    config = SimConfig(straggler=parse_straggler("pareto:alpha=1.5,cap=20"), seed=9)
    bases = draw_bases(jobs, config)
    model = StragglerModel(config.straggler, 9)
    own = own_times(jobs, bases, CLUSTER, model, 100.0)
    for j, job in enumerate(jobs):
        runs = [
            [model.copy_time(b, bases[j][k], False, (j, k, t, 0)) for t, b in enumerate(bases[j][k])]
            for k in range(len(job.phases))
        ]
        assert own[j] == pytest.approx(max(runs[0]) + 50.0 / 100.0 + max(runs[1]))
    assert not np.allclose(own, own_times(jobs, bases, CLUSTER, StragglerModel(config.straggler, 10), 100.0))


def test_clones_show_as_time_saved_below_the_originals() -> None:
    """With heavy-tailed originals and room to spare, DollyMP2's clones finish jobs before their own
    originals would: the split says so, and flowtime = own + waiting - saved on average."""
    jobs = spaced_jobs(12, gap=500.0)
    config = SimConfig(straggler=parse_straggler("pareto:alpha=1.1,cap=50"), seed=2, tick=0.5)
    cmp = compare(jobs, CLUSTER, ["dollymp0", "dollymp2"], config)
    no, two = (cmp.results[p].extra["flowtime_split"] for p in ("dollymp0", "dollymp2"))
    assert no["saved"] == pytest.approx(0.0, abs=1e-9) and two["saved"] > 1.0
    for m in cmp.results.values():
        d = m.extra["flowtime_split"]
        assert m.avg_flowtime == pytest.approx(d["own"] + d["waiting"] - d["saved"])


def test_split_of_waiting_and_its_top_share() -> None:
    own = np.array([10.0, 10.0, 20.0, 5.0] * 50)
    flow = own.copy()
    flow[0] += 1000.0  # one job waits long
    flow[1:10] += 1.0  # nine wait a little
    flow[10] -= 2.0  # one finished early (a clone won)
    d = decompose(flow, own)
    assert d.waiting == pytest.approx(1009.0 / 200) and d.saved == pytest.approx(2.0 / 200)
    assert d.top_share == pytest.approx(1001.0 / 1009.0)  # the top 1%: two jobs of 200
    assert flow.mean() == pytest.approx(d.own + d.waiting - d.saved)
    assert decompose(own, own).top_share == 0.0


def test_refusals_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="differ in length: 3 and 2"):
        decompose(np.zeros(3), np.zeros(2))
    jobs = spaced_jobs(1, 1.0)
    config = SimConfig(straggler=parse_straggler("none"))
    with pytest.raises(ValueError, match="bandwidth_mb_s must be > 0"):
        own_times(jobs, draw_bases(jobs, config), CLUSTER, StragglerModel(config.straggler, 1), 0.0)


def test_simulate_prints_and_writes_the_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`dollymp simulate` prints each policy's waiting and saved under the table and writes them in --json,
    with the room clones have: own time less the lower bound's critical path."""
    wl, cl, out = tmp_path / "w.jsonl", tmp_path / "c.json", tmp_path / "r.json"
    jobs = [
        {
            "id": f"j{i}",
            "arrival": 3.0 * i,
            "phases": [{"id": "m", "tasks": 1 + i % 4, "cpu": 1, "mem_mb": 1024, "mean": 8.0, "sd": 3.0}],
        }
        for i in range(30)
    ]
    wl.write_text("\n".join(json.dumps(j) for j in jobs) + "\n")
    cl.write_text('{"nodes": [{"count": 2, "cpu": 4, "mem_mb": 8192, "speed": 1.0}]}')
    args = ["simulate", "--workload", str(wl), "--cluster", str(cl), "--policies", "fifo,dollymp2"]
    assert main([*args, "--json", str(out), "--quiet", "--straggler", "pareto:alpha=1.5,cap=20"]) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    own = data["settings"]["own_time_avg"]
    floor = data["lower_bound"]["critical_path_total"] / 30
    assert f"own time avg {own:.1f} s" in text and f"at most {own - floor:.1f} s" in text
    for name, rec in data["policies"].items():
        split = rec["flowtime_split"]
        assert rec["avg_flowtime"] == pytest.approx(split["own"] + split["waiting"] - split["saved"])
        row = next(line for line in text.splitlines()[-3:] if line.startswith(name))
        assert row.split()[1:3] == [f"{split['waiting']:.1f}", f"{split['saved']:.1f}"]


@pytest.mark.parametrize("model", ["pareto:alpha=1.5,cap=20", "empirical"])
def test_two_clones_from_the_start_is_what_every_task_cloned_twice_at_once_takes(model: str) -> None:
    """clone_rule "idle" gives every running task its two clones in the round its original starts; alone
    on an idle cluster each job then takes its own time with two clones (the first of copies 0..2 of each
    task, the engine's own draws), never less, and no more than a round per phase and the reduce copies'
    shared shuffle read (50 MB at 100 MB/s, read by up to three copies) later."""
    jobs = spaced_jobs(10, gap=3000.0)
    config = SimConfig(straggler=parse_straggler(model), seed=6, tick=0.5)
    bases = draw_bases(jobs, config)
    sm = StragglerModel(config.straggler, 6)
    own, own2 = (own_times(jobs, bases, CLUSTER, sm, 100.0, clones=c) for c in (0, 2))
    assert np.all(own2 <= own) and own2.mean() < own.mean()
    m = compare(jobs, CLUSTER, ["dollymp(clone_rule=idle)"], config).results["dollymp(clone_rule=idle)"]
    assert np.all(m.flowtimes >= own2 - 1e-6)
    assert np.all(m.flowtimes - own2 <= 3 * config.tick + 2 * 0.5 + 1e-6)
    with pytest.raises(ValueError, match=r"clones must be an integer 0\.\.3"):
        own_times(jobs, bases, CLUSTER, sm, 100.0, clones=4)
