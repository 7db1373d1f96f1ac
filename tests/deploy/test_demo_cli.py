"""The demo's summary table and argument checks, and Ctrl-C on `dollymp local-cluster`: every process
of the cluster (daemons, service) is gone afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyscheduler.bench import demo_sls
from pyscheduler.cli import main
from pyscheduler.deploy import amrecords, demo
from pyscheduler.deploy.jobs import JobResult
from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.processes import pid_alive, processes_under


def _result(name: str, seconds: float, status: str = "SUCCEEDED") -> JobResult:
    return JobResult(name, f"application_1_{name}", 0, status, seconds + 3, seconds, Path("/dev/null"))


def test_summary_is_side_by_side_with_ratios_and_medians() -> None:
    cap = demo.Run("capacity", {j.name: _result(j.name, 40.0) for j in demo.MIX})
    dmp = demo.Run("dollymp", {j.name: _result(j.name, 30.0) for j in demo.MIX}, {"wordcount": 5})
    dmp.results["straggler-small"] = _result("straggler-small", 20.0, "FAILED")
    text = demo.summary([cap, dmp])
    lines = text.splitlines()
    assert "CapacityScheduler" in lines[0] and "DollyMP" in lines[0] and "ratio" in lines[0]
    wc = next(line for line in lines if line.startswith("wordcount"))
    assert wc.split()[-1] == "0.75"  # 30 / 40
    assert "FAILED" in next(line for line in lines if line.startswith("straggler-small"))
    median = next(line for line in lines if line.startswith("median"))
    assert median.split()[-1] == "0.75"  # median(30, 30, 20) / median(40, 40, 40)
    assert "5 placements decided by the decision service" in text


def test_a_contended_machine_gets_no_ratio_but_says_why() -> None:
    """Where the machine's load average passed its cores as a mix ended, CPU decided the real jobs' times:
    the summary prints them without a ratio and says so (issue 56: no ratio printed as a result)."""
    cap = demo.Run("capacity", {j.name: _result(j.name, 40.0) for j in demo.MIX}, load_avg=1.5)
    dmp = demo.Run("dollymp", {j.name: _result(j.name, 30.0) for j in demo.MIX}, load_avg=5.0)
    text = demo.summary([cap, dmp], cores=2)
    lines = text.splitlines()
    assert "ratio" not in lines[0]
    assert next(line for line in lines if line.startswith("wordcount")).split()[-2:] == ["30.0", "s"]
    assert "No ratio: this machine's CPU decided these times (load average 5.0 on 2 cores" in text
    assert "ratio" in demo.summary([cap, dmp], cores=8).splitlines()[0]  # 5.0 on 8 cores: not contended


def test_the_demos_sls_part_prints_each_scheduler_and_the_prediction() -> None:
    r = {
        "jobs": 80,
        "nodes": 500,
        "jobs_finished": {"capacity": 80, "fair": 80, "dollymp": 80},
        "capacity_avg_s": 40.0,
        "fair_avg_s": 50.0,
        "dollymp_avg_s": 30.0,
        "small_jobs_avg_s": {"capacity": 10.0, "fair": 12.0, "dollymp": 8.0},
        "extra_copies": {"capacity": {"launched": 3, "won": 1, "killed": 2}, "dollymp": {"launched": 9}},
        "ratio_capacity": 0.75,
        "ratio_fair": 0.6,
        "predicted_ratio_capacity": 0.7,
        "predicted_ratio_fair": 0.65,
        "round_p50_ms": 2.0,
        "round_p99_ms": 9.0,
        "stale_frac": 0.001,
        "heartbeat_p99_added_ms": 0.02,
    }
    text = "\n".join(demo_sls.lines(r))
    assert "80 jobs of the FB-2010 day on 500 simulated NodeManagers" in text
    dmp = next(line for line in text.splitlines() if line.startswith("DollyMP "))
    assert dmp.split()[1:4] == ["30.0s", "8.0s", "9"] and dmp.endswith("80/80")
    assert "DollyMP / CapacityScheduler 0.75 (simulate predicted 0.70)" in text
    assert "round p50/p99 2.0/9.0 ms, 0.10% of proposals stale" in text


def test_the_demo_refuses_bad_sls_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--sls-jobs", "-1"]) == 2
    assert "--sls-jobs must be >= 0" in capsys.readouterr().err


def test_demo_rejects_an_unknown_scheduler(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--schedulers", "fair"]) == 2
    assert "--schedulers" in capsys.readouterr().err


def test_local_cluster_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="nodes"):
        LocalCluster(nodes=0)
    with pytest.raises(ValueError, match="scheduler"):
        LocalCluster(scheduler="fair")


@pytest.mark.slow
def test_ctrl_c_on_local_cluster_leaves_no_process(tmp_path: Path) -> None:
    base = tmp_path / "lc"
    argv = [sys.executable, "-m", "pyscheduler", "local-cluster", "--nodes", "1", "--base-dir", str(base)]
    log = tmp_path / "out.log"
    with open(log, "wb") as out:
        # SIGINT as in a terminal: a test run started in the background inherits it ignored, and Python
        # then installs no KeyboardInterrupt handler (Ctrl-C would do nothing).
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        deadline = time.monotonic() + 450  # a cold start builds the plugin jar: over 240 s beside Maven
        while "Ctrl-C stops" not in log.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.5)
        assert "Ctrl-C stops" in log.read_text(), log.read_text()
        running = processes_under(base)
        assert len(running) >= 3  # service, RM, NM
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert processes_under(base) == []
    assert [p for p in running if pid_alive(p)] == []


def test_demo_points_at_the_operator_page() -> None:
    from pyscheduler.deploy.demo import page_url

    assert page_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/ui/"
    app = "application_1700000000000_0001"
    assert page_url("http://127.0.0.1:8080", app) == f"http://127.0.0.1:8080/ui/#app={app}"


def test_summary_ends_with_the_operator_page_and_the_cloned_jobs_timelines() -> None:
    api = "http://127.0.0.1:8080"
    dmp = demo.Run("dollymp", {j.name: _result(j.name, 30.0) for j in demo.MIX}, api=api)
    dmp.missions = {
        "wordcount": amrecords.Mission(attempts=4),  # no clone: no timeline line
        "straggler-large": amrecords.Mission(attempts=9, clones=3, clones_won=1),
    }
    lines = demo.summary([dmp]).splitlines()
    page = next(i for i, line in enumerate(lines) if line.startswith("Operator page: "))
    assert lines[page].split()[2] == f"{api}/ui/"
    timelines = [line.split() for line in lines[page + 1 :] if "timeline" in line]
    assert timelines == [["straggler-large", "timeline", f"{api}/ui/#app=application_1_straggler-large"]]
    cap = demo.Run("capacity", {j.name: _result(j.name, 40.0) for j in demo.MIX})
    assert "Operator page" not in demo.summary([cap])  # no service, no page
