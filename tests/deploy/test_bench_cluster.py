"""bench_cluster's pure parts: percentiles, clone overhead from the AM records, the JSON summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from pyscheduler.deploy import bench_cluster as bc
from pyscheduler.deploy.jobs import JobResult

HEADER = "task_id\tphase\tattempt_id\tis_clone\tcontainer_id\tnode_id\tstate\tlaunch_ms\tfinish_ms\twinner"


def test_p90_nearest_rank() -> None:
    assert bc.p90([float(x) for x in range(1, 11)]) == 9.0
    assert bc.p90([5.0]) == 5.0


def test_clone_overhead_counts_clone_container_seconds(tmp_path: Path) -> None:
    rows = [
        "# job_state=SUCCEEDED",
        HEADER,
        "t0\tmap\ta0\tfalse\tc1\tn\tSUCCEEDED\t1000\t5000\ttrue",
        "t0\tmap\ta1\ttrue\tc2\tn\tKILLED\t2000\t5000\tfalse",
        "t1\tmap\tb0\tfalse\t\t\tKILLED\t0\t0\tfalse",  # never launched: no container time
    ]
    (tmp_path / "application_1_0001.tsv").write_text("\n".join(rows) + "\n")
    assert bc.clone_overhead(tmp_path) == (3.0, 7.0, 1)


def _result(name: str, s: float) -> JobResult:
    return JobResult(name, "application_1_1", 0, "SUCCEEDED", s, s, Path("log"))


def test_report_last_line_fields() -> None:
    cap, dmp = bc.Run("capacity"), bc.Run("dollymp", clone_s=10.0, attempt_s=100.0, clones=2)
    for j in bc.MIX:
        cap.results[j.name] = _result(j.name, 100.0)
        dmp.results[j.name] = _result(j.name, 50.0)
    _, out = bc.report({"capacity": cap, "dollymp": dmp})
    assert out["ratio"] == 0.5
    assert out["clone_extra_container_s_frac"] == 0.1
    assert out["capacity_avg_flowtime_s"] == 100.0 and out["dollymp_p90_flowtime_s"] == 50.0


def test_dollymp_jobs_opt_in_through_the_framework_name(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    bc.add_arguments(parser)
    args = parser.parse_args(["--base-ms", "2000", "--cap", "10", "--clone-after-start-ms", "7000"])
    d = bc.job_args(args, "dollymp", tmp_path, bc.MIX[0])
    c = bc.job_args(args, "capacity", tmp_path, bc.MIX[0])
    assert "-Dmapreduce.framework.name=dollymp" in d and not any("framework" in a for a in c)
    assert "-Ddollymp.am.clone.after-start-ms=7000" in d and not any("dollymp.am" in a for a in c)
    assert "-Ddollymp.straggler.map.base-ms=2000" in d and "-Ddollymp.straggler.map.base-ms=2000" in c
    assert d[-1] == c[-1] == bc.MIX[0].name
