"""End to end: the local multi-process cluster (RM with the DollyMP shim, NodeManagers, the decision
service) runs a real Hadoop job, the service logs decisions for it, and stop() leaves no process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.processes import processes_under
from pyscheduler.deploy.rest import get_json

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_shim_cluster_runs_a_job_and_leaves_no_process(tmp_path: Path) -> None:
    base = tmp_path / "cluster"
    cluster = LocalCluster(nodes=2, scheduler="dollymp", policy="dollymp", base_dir=base)
    seen: set[int] = set()
    with cluster:
        nodes = cluster.running_nodes()
        assert len(nodes) == 2
        # Distinct NodeManagers on one host: include-port-in-node-name gives distinct node ids.
        assert len({n["id"] for n in nodes}) == 2
        api = cluster.service_api_url
        assert api is not None
        # The shim registered with the service and mirrored both nodes to it.
        deadline = time.monotonic() + 30
        while len(get_json(f"{api}/v1/state")["nodes"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        state = get_json(f"{api}/v1/state")
        assert len(state["nodes"]) == 2, state
        assert list(state["sessions"].values()) == ["active"], state["sessions"]

        job = cluster.submit_sleep(maps=2, reduces=1, map_ms=500, reduce_ms=500, name="deploy-e2e-sleep")
        deadline = time.monotonic() + 240
        while job.alive() and time.monotonic() < deadline:
            seen.update(cluster.pids())  # daemons, job client, containers while they run
            time.sleep(0.5)
        result = job.wait(timeout_s=10)
        assert result.ok, f"{result}\n{result.log.read_text()[-3000:]}"
        assert result.app_id is not None

        page = get_json(f"{api}/v1/decisions?application={result.app_id}&limit=500")
        assert page["items"], f"no decision logged for {result.app_id}"
        assert any(d["kind"] == "placement" for d in page["items"]), page["items"][:5]
        assert cluster.service_db.exists()
        daemons = {d.pid for d in cluster.daemons}
    assert daemons <= seen
    assert len(seen) > len(daemons), "no job client or container process was ever seen"
    left = [p for p in seen if _alive(p)]
    assert left == [], f"processes left after stop: {left}"
    assert processes_under(base) == []
    assert os.path.exists(base / "logs" / "rm.log")
