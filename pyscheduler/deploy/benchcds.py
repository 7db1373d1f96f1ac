"""The cluster benchmark's JVM options and its class-data archive (pyscheduler.deploy.cds), made once from
a warm-up job of the benchmark's own job class and shared by every cluster of the run."""

from __future__ import annotations

import shutil
from pathlib import Path

from pyscheduler.deploy import cds
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster

TASK_JVM_OPTS = "-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1"
AM_JVM_OPTS = "-Xmx384m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1"


class ArchiveCache:
    """The class-data archive of the bench's JVMs (``cds``), dumped once on the first cluster, shared."""

    def __init__(self, enabled: bool, work_dir: Path, job_class: str) -> None:
        self.enabled, self.dir, self.job_class = enabled, work_dir / "cds", job_class
        self.archive: cds.Archive | None = None

    def opts(self, cluster: LocalCluster, show: Display) -> str:
        if not self.enabled:
            return ""
        if self.archive is None:
            self.archive = self._dump(cluster, show)
        return self.archive.jvm_opts(cluster.conf_dir)

    def _dump(self, cluster: LocalCluster, show: Display) -> cds.Archive:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        jars = cluster.classpath_jars()
        lists = cds.list_opts(jars, cluster.conf_dir, self.dir)
        name = "cds-warmup"
        props = {
            "dollymp.straggler.maps": 1,
            "dollymp.straggler.reduces": 1,
            "dollymp.straggler.map.base-ms": 1000,
            "dollymp.straggler.reduce.base-ms": 1000,
            "dollymp.straggler.cap": 1,
            "mapreduce.map.java.opts": f"{TASK_JVM_OPTS} {lists['map']}",
            "mapreduce.reduce.java.opts": f"{TASK_JVM_OPTS} {lists['reduce']}",
            "yarn.app.mapreduce.am.command-opts": f"{AM_JVM_OPTS} {lists['am']}",
        }
        show.say("  a warm-up job lists the classes the task and AM JVMs load (class-data archive)")
        result = cluster.run_job(name, self.job_class, [*(f"-D{k}={v}" for k, v in props.items()), name])
        if not result.ok:
            raise RuntimeError(f"the class-list warm-up job failed: {result.final_status} (see {result.log})")
        files = [self.dir / f"{k}.classlist" for k in cds.KINDS]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            raise RuntimeError(f"the warm-up job wrote no class list: {', '.join(missing)}")
        return cds.dump(cluster.java, jars, files, self.dir / "jvms.jsa", show.say)
