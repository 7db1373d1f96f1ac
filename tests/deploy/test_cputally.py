"""CPU-seconds by kind of process (pyscheduler/deploy/cputally.py), read from the real /proc of real
child processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pyscheduler.deploy import bench_cluster as bc
from pyscheduler.deploy.cputally import CpuTally, cpu_seconds, kind_of
from pyscheduler.deploy.jobs import JobResult

# Burns `s` CPU-seconds, says so on stdout, then idles: the test waits for the line, not for a fixed time
# (on a loaded machine a burn of 0.5 s can take several seconds of wall time).
BURN = (
    "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"
    "print('burnt', flush=True)\ntime.sleep(60)"
)


def _burner(seconds: float, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", BURN.format(s=seconds), *args], stdout=subprocess.PIPE, text=True
    )


def _burnt(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None and proc.stdout.readline().strip() == "burnt"


def test_kinds_by_command_line() -> None:
    assert kind_of("python -m pyscheduler serve --config x") == "service"
    assert kind_of("java ... org.apache.hadoop.yarn.server.resourcemanager.ResourceManager") == "rm"
    assert kind_of("java ... org.apache.hadoop.mapred.YarnChild 127.0.0.1 4 attempt_1") == "task"
    assert kind_of("java ... org.apache.hadoop.mapreduce.v2.app.MRAppMaster") == "am"
    assert kind_of("java -cp /x/dollymp-yarn-plugin.jar io.dollymp.yarn.am.DollyMPAppMaster") == "am"
    assert kind_of("java ... org.apache.hadoop.util.RunJar job.jar") == "client"


def test_a_process_started_after_the_first_sample_counts_from_its_start() -> None:
    before = _burner(0.6)
    try:
        _burnt(before)  # `before` burnt its 0.6 s before the first sample: none of it counts
        tally = CpuTally()
        tally.sample([before.pid])
        late = _burner(0.5, "YarnChild")
        try:
            _burnt(late)
            tally.sample([before.pid, late.pid, 2**22 + 7])  # a pid that is not there is skipped
            got = tally.by_kind()
            assert got["client"] < 0.2
            assert 0.45 <= got["task"] <= 1.0, got  # its burn and its interpreter's start
            assert cpu_seconds(late.pid) is not None and cpu_seconds(2**22 + 7) is None
        finally:
            late.kill()
    finally:
        before.kill()


def test_the_report_prints_each_halfs_cpu() -> None:
    cap, dmp = bc.Run("capacity"), bc.Run("dollymp")
    for j in bc.MIX:
        cap.results[j.name] = dmp.results[j.name] = JobResult(
            j.name, "application_1_1", 0, "SUCCEEDED", 10.0, 10.0, Path("log")
        )
    dmp.cpu.kinds, dmp.cpu.first, dmp.cpu.last = {1: "service", 2: "task"}, {1: 5.0, 2: 0.0}, {1: 9.5, 2: 3.0}
    table, out = bc.report({"capacity": cap, "dollymp": dmp})
    assert out["dollymp_cpu_s"] == {"service": 4.5, "task": 3.0} and out["capacity_cpu_s"] == {}
    assert "dollymp: CPU-seconds while the mix ran (sampled every 2 s): service 4.5, task 3" in table
