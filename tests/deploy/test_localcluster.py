"""End to end: the compose topology as local processes -- the decision service, a ResourceManager with
the DollyMP shim, three NodeManagers and the JobHistoryServer -- runs Hadoop's wordcount and SleepJob at
once; the service logs placements for both, the compose health checks pass against the real daemons,
and stop() leaves no process behind."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pyscheduler.bench import sls_trace
from pyscheduler.cli import main
from pyscheduler.deploy import jobs
from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.processes import pid_alive, processes_under
from pyscheduler.deploy.rest import get_json
from pyscheduler.sim.loaders import load_workload

from . import staticcheck as sc

pytestmark = pytest.mark.slow
HEALTHCHECK = sc.ROOT / "docker" / "healthcheck.sh"


def _health(port: int, path: str, expect: str) -> int:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run([bash, str(HEALTHCHECK), str(port), path, expect], check=False).returncode


def _record_and_replay(cluster: LocalCluster, tmp_path: Path) -> None:
    """The two jobs' history, recorded from the real history server and RM (`bench record-history`), read
    back (format yarn-history): each job with its maps and its reduce, its tasks' times those of their
    successful attempts, named by queue, user and job name; and converted to an SLS slice."""
    saved = tmp_path / "history.jsonl"
    assert cluster.history_url is not None
    argv = ["bench", "record-history", "--history", cluster.history_url, "--rm", cluster.rm_web_url]
    assert main([*argv, "--out", str(saved)]) == 0
    loaded, _ = load_workload(saved, "yarn-history")
    by_name = {j.name.rsplit("/", 1)[-1]: j for j in loaded}
    queues = {a["queue"] for a in get_json(f"{cluster.rm_web_url}/ws/v1/cluster/apps")["apps"]["app"]}
    # the job names MapReduce gave them (mapreduce.job.name: the examples' own)
    assert set(by_name) == {"word count", "Sleep job"}, [j.name for j in loaded]
    for job, maps in ((by_name["word count"], 2), (by_name["Sleep job"], 2)):
        assert job.name.split("/")[0] in queues, (job.name, queues)  # the queue the RM ran it in
        tasks = {p.id: p.tasks for p in job.phases}
        assert tasks == {"map": maps, "reduce": 1}, (job.id, tasks)
    sleep_maps = next(p for p in by_name["Sleep job"].phases if p.id == "map")
    assert sleep_maps.durations is not None and min(sleep_maps.durations) >= 0.5, sleep_maps
    shutil.copy(saved, cluster.log_dir / saved.name)  # kept beside the daemons' logs
    out = sls_trace.convert(saved, "yarn-history", tmp_path / "sls", jobs=2)
    assert len((out / "trace.json").read_text().splitlines()) == 2


def test_compose_topology_as_local_processes(tmp_path: Path) -> None:
    base = tmp_path / "cluster"
    cluster = LocalCluster(nodes=3, scheduler="dollymp", policy="dollymp", history_server=True, base_dir=base)
    seen: set[int] = set()
    with cluster:
        nodes = cluster.running_nodes()
        assert len(nodes) == 3
        assert len({n["id"] for n in nodes}) == 3  # include-port-in-node-name: distinct ids on one host
        api = cluster.service_api_url
        assert api is not None
        deadline = time.monotonic() + 30
        while len(get_json(f"{api}/v1/state")["nodes"]) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
        state = get_json(f"{api}/v1/state")
        assert len(state["nodes"]) == 3, state  # the shim mirrored every node to the service
        assert list(state["sessions"].values()) == ["active"], state["sessions"]

        # The compose health checks, run against the real daemons.
        assert _health(cluster.rm_web_port, "/ws/v1/cluster/info", "STARTED") == 0
        nm_port = int(nodes[0]["nodeHTTPAddress"].rsplit(":", 1)[1])
        assert _health(nm_port, "/ws/v1/node/info", '"nodeHealthy":true') == 0
        assert cluster.jhs_web_port is not None
        assert _health(cluster.jhs_web_port, "/ws/v1/history/info", "hadoopVersion") == 0

        expected = jobs.write_text(tmp_path / "wc-in", files=2, words_per_file=3000)
        wc = cluster.submit_wordcount(tmp_path / "wc-in", tmp_path / "wc-out", reduces=1, name="e2e-wc")
        sleep = cluster.submit_sleep(maps=2, reduces=1, map_ms=500, reduce_ms=500, name="e2e-sleep")
        deadline = time.monotonic() + 300
        while (wc.alive() or sleep.alive()) and time.monotonic() < deadline:
            seen.update(cluster.pids())  # daemons, job clients, containers while they run
            time.sleep(0.5)
        if wc.alive() or sleep.alive():  # stuck: keep the RM's threads for diagnosis before stopping
            dump = cluster.thread_dump("rm")
            pytest.fail(f"jobs not finished after 300 s; RM thread dump {dump}, logs {cluster.log_dir}")
        results = [wc.wait(timeout_s=10), sleep.wait(timeout_s=10)]
        for r in results:
            assert r.ok, f"{r}\n{r.log.read_text()[-3000:]}"
            assert r.app_id is not None
            page = get_json(f"{api}/v1/decisions?application={r.app_id}&limit=500")
            kinds = {d["kind"] for d in page["items"]}
            assert "placement" in kinds, (r.app_id, kinds)
        assert jobs.read_counts(tmp_path / "wc-out") == expected
        # The history server archived the jobs (the AM wrote them to the shared done dirs).
        history = get_json(f"{cluster.history_url}/ws/v1/history/mapreduce/jobs")
        deadline = time.monotonic() + 30
        while len((history.get("jobs") or {}).get("job") or []) < 2 and time.monotonic() < deadline:
            time.sleep(1)
            history = get_json(f"{cluster.history_url}/ws/v1/history/mapreduce/jobs")
        assert len(history["jobs"]["job"]) == 2, history
        _record_and_replay(cluster, tmp_path)
        daemons = {d.pid for d in cluster.daemons}
    assert len(daemons) == 6  # service, RM, 3 NMs, history server
    assert daemons <= seen
    assert len(seen) > len(daemons) + 2, "no container process was ever seen"
    left = [p for p in seen if pid_alive(p)]
    assert left == [], f"processes left after stop: {left}"
    assert processes_under(base) == []
