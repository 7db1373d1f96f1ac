"""The cluster benchmark's JVM options and its class-data archive (pyscheduler.deploy.cds), made once from
warm-up jobs of the benchmark's own job class and shared by every cluster of the run.

The warm-ups run on a cluster of their own with the DollyMP shim, before the measured clusters: one job
under MapReduce's own ApplicationMaster (what the CapacityScheduler half runs) and one under the DollyMP
AM helper (``mapreduce.framework.name=dollymp``, what the DollyMP half runs). The archive holds the
classes of both, so each half's AMs and tasks find theirs in it: an archive of one half's classes only
would leave the other half's JVMs loading and verifying theirs from the jars at every start.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from pyscheduler.deploy import cds
from pyscheduler.deploy.cputally import kind_of
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.processes import cmdline, processes_under

TASK_JVM_OPTS = "-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1"
AM_JVM_OPTS = "-Xmx384m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1"
# the warm-up jobs: name -> the job options of its AM kind (the MapReduce AM; the DollyMP AM helper)
WARMUPS: dict[str, dict[str, str]] = {
    "mapreduce-am": {},
    "dollymp-am": {"mapreduce.framework.name": "dollymp"},
}

ClusterFactory = Callable[[str, Path], LocalCluster]  # (scheduler, base dir) -> a cluster not yet started


class ArchiveCache:
    """The class-data archive of the bench's JVMs (``cds``), dumped once before the first measured
    cluster on a warm-up cluster that `make_cluster` builds, then shared."""

    def __init__(self, enabled: bool, work_dir: Path, job_class: str, make_cluster: ClusterFactory) -> None:
        self.enabled, self.dir, self.job_class = enabled, work_dir / "cds", job_class
        self.make_cluster = make_cluster
        self.archive: cds.Archive | None = None

    def opts(self, cluster: LocalCluster, show: Display) -> str:
        """The JVM options of `cluster`'s containers ("" without the archive)."""
        if not self.enabled:
            return ""
        if self.archive is None:
            self.archive = self._dump(show)
        return self.archive.jvm_opts(cluster.conf_dir)

    def _dump(self, show: Display) -> cds.Archive:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        show.say("class-data archive: warm-up jobs list the classes the task and AM JVMs load")
        with self.make_cluster("dollymp", self.dir / "cluster") as cluster:
            jars = cluster.classpath_jars()
            files = [f for name in WARMUPS for f in self._warm_up(cluster, jars, name)]
            return cds.dump(cluster.java, jars, files, self.dir / "jvms.jsa", show.say)

    def _warm_up(self, cluster: LocalCluster, jars: list[str], name: str) -> list[Path]:
        """Run warm-up job `name` (1 map, 1 reduce, 1 s each); its JVMs' class lists."""
        out = self.dir / name
        out.mkdir()
        lists = cds.list_opts(jars, cluster.conf_dir, out)
        props = {
            "dollymp.straggler.maps": 1,
            "dollymp.straggler.reduces": 1,
            "dollymp.straggler.map.base-ms": 1000,
            "dollymp.straggler.reduce.base-ms": 1000,
            "dollymp.straggler.cap": 1,
            "mapreduce.map.java.opts": f"{TASK_JVM_OPTS} {lists['map']}",
            "mapreduce.reduce.java.opts": f"{TASK_JVM_OPTS} {lists['reduce']}",
            "yarn.app.mapreduce.am.command-opts": f"{AM_JVM_OPTS} {lists['am']}",
            **WARMUPS[name],
        }
        result = cluster.run_job(name, self.job_class, [*(f"-D{k}={v}" for k, v in props.items()), name])
        if not result.ok:
            status = f"{result.final_status} ({result.log})"
            raise RuntimeError(f"the class-list warm-up job {name} failed: {status}")
        _await_jvms_gone(cluster)
        files = {k: cds.lists_of(out, k) for k in cds.KINDS}
        missing = [k for k, fs in files.items() if not fs]
        if missing:
            kinds = ", ".join(missing)
            raise RuntimeError(f"the warm-up job {name}'s {kinds} JVMs wrote no class list in {out}")
        return [f for fs in files.values() for f in fs]


def _await_jvms_gone(cluster: LocalCluster, timeout_s: float = 60.0) -> None:
    """Wait until the cluster's AM and task JVMs have exited. YARN reports a job finished when its AM
    unregisters, before the JVMs exit, and a JVM appends to its class list until it does."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = [p for p in processes_under(cluster.base) if kind_of(cmdline(p) or "") in ("am", "task")]
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the warm-up job's JVMs still run {timeout_s:g} s after it finished: {left}")
        time.sleep(0.5)
