"""The ResourceManager's own web UI and REST API show the DollyMP shim's true figures: a real RM process
(Hadoop's web app, not the mini cluster, whose several Guice web apps in one JVM shadow each other's
REST resources) with the shim, two NodeManagers and the decision service; one SleepJob run."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest

from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.rest import get_json

pytestmark = pytest.mark.slow


def test_rm_rest_and_ui_describe_the_shim(tmp_path: Path) -> None:
    with LocalCluster(nodes=2, scheduler="dollymp", policy="dollymp", base_dir=tmp_path / "c") as cluster:
        result = cluster.run_sleep(maps=2, reduces=1, map_ms=300, reduce_ms=300)
        assert result.ok, result
        rm = f"http://127.0.0.1:{cluster.rm_web_port}"
        sched = get_json(f"{rm}/ws/v1/cluster/scheduler")["scheduler"]["schedulerInfo"]
        nodes = cluster.running_nodes()
        total_mb = sum(int(n["usedMemoryMB"]) + int(n["availMemoryMB"]) for n in nodes)
        total_vcores = sum(int(n["usedVirtualCores"]) + int(n["availableVirtualCores"]) for n in nodes)
        assert sched["type"] == "dollympScheduler" and sched["scheduler"] == "DollyMP Scheduler", sched
        assert sched["sessionState"] == "RUNNING", sched
        assert sched["numNodes"] == 2 and sched["totalMemoryMB"] == total_mb, sched
        assert sched["totalVirtualCores"] == total_vcores, sched
        assert sched["containersCommitted"] >= 4, sched  # AM + 2 maps + 1 reduce, placed by the service
        deadline = time.monotonic() + 60  # the job client returns before the AM has unregistered
        metrics = get_json(f"{rm}/ws/v1/cluster/metrics")["clusterMetrics"]
        while metrics["appsCompleted"] < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
            metrics = get_json(f"{rm}/ws/v1/cluster/metrics")["clusterMetrics"]
        assert metrics["totalMB"] == total_mb and metrics["totalVirtualCores"] == total_vcores, metrics
        assert metrics["appsCompleted"] == 1, metrics
        with urllib.request.urlopen(f"{rm}/cluster/scheduler", timeout=20) as resp:
            page = resp.read().decode()
        assert "DollyMP Scheduler" in page and "Decision service session" in page
        # yarn.scheduler.dollymp.ui.address (set by LocalCluster): the page links to the service's page
        assert f'href="{cluster.service_api_url}/ui/"' in page, page[-3000:]
        # ... and the application's diagnostics carry its latest decision and the link to its timeline
        diagnostics = get_json(f"{rm}/ws/v1/cluster/apps/{result.app_id}")["app"]["diagnostics"]
        assert diagnostics.startswith("DollyMP: "), diagnostics
        assert diagnostics.endswith(f"Decisions: {cluster.service_api_url}/ui/#app={result.app_id}"), (
            diagnostics
        )
