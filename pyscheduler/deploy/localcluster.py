"""A local YARN cluster of separate processes: RM, N NodeManagers, optional JobHistoryServer and service.

Everything binds 127.0.0.1 on free ports and uses the ``file://`` filesystem under one base directory;
the daemons run from Hadoop's Maven jars (:mod:`pyscheduler.deploy.artifacts`) with the plugin jar on
the RM's classpath. The scheduler is the DollyMP shim or CapacityScheduler, so benchmarks can run
both on the same cluster shape::

    with LocalCluster(nodes=4, scheduler="dollymp", policy="default") as cluster:
        result = cluster.run_sleep(maps=4, reduces=1, map_ms=1000, reduce_ms=500)
        print(result.app_id, result.final_status, result.elapsed_s)

``stop()`` (also on leaving the ``with`` block, on SIGTERM while started in the main thread, and at
interpreter exit) stops job clients, NodeManagers, the history server, the RM and the service, then
kills any container process still running under the base directory: no process is left behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from pyscheduler.deploy import artifacts, hadoopconf
from pyscheduler.deploy.jobs import JobHandle, JobResult, JobsMixin
from pyscheduler.deploy.processes import Daemon, kill_pids, processes_under
from pyscheduler.deploy.rest import get_json

RM_MAIN = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NM_MAIN = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
JHS_MAIN = "org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer"

__all__ = ["ClusterError", "JobHandle", "JobResult", "LocalCluster"]


class ClusterError(RuntimeError):
    """A daemon failed to start or the cluster did not become ready; the message has its log tail."""


class LocalCluster(JobsMixin):
    """RM + `nodes` NodeManagers (+ JobHistoryServer, + decision service) as local processes."""

    def __init__(
        self,
        nodes: int = 4,
        *,
        scheduler: str = "dollymp",
        service: bool | None = None,
        policy: str = "default",
        history_server: bool = False,
        base_dir: Path | None = None,
        nm_memory_mb: int = 2048,
        nm_vcores: int = 4,
        task_memory_mb: int = 384,
        am_memory_mb: int = 512,
        heartbeat_ms: int = 250,
        dollymp_conf: Mapping[str, str | int] | None = None,
        service_args: Sequence[str] = (),
        daemon_heap_mb: int = 384,
        keep_dir: bool | None = None,
        slow_nodes: int = 0,
        progress: Callable[[str], None] = lambda _m: None,
    ) -> None:
        if nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {nodes}")
        if scheduler not in artifacts.SCHEDULER_CLASSES:
            raise ValueError(
                f"scheduler must be one of {sorted(artifacts.SCHEDULER_CLASSES)}, got {scheduler!r}"
            )
        self.nodes = nodes
        self.scheduler = scheduler
        self.with_service = scheduler == "dollymp" if service is None else service
        self.policy = policy
        self.with_history = history_server
        self.nm_memory_mb, self.nm_vcores = nm_memory_mb, nm_vcores
        self.task_memory_mb, self.am_memory_mb = task_memory_mb, am_memory_mb
        self.heartbeat_ms = heartbeat_ms
        self.dollymp_conf = dict(dollymp_conf or {})
        self.service_args = list(service_args)
        self.daemon_heap_mb = daemon_heap_mb
        self.progress = progress
        self.slow_nodes = slow_nodes  # the first `slow_nodes` NMs (and their containers) run at nice 19
        self._own_dir = base_dir is None
        self.keep_dir = (not self._own_dir) if keep_dir is None else keep_dir
        self.base = Path(base_dir or tempfile.mkdtemp(prefix="dollymp-cluster-")).resolve()
        self.conf_dir = self.base / "conf"
        self.log_dir = self.base / "logs"
        self.daemons: list[Daemon] = []
        self.service_proc: Daemon | None = None
        self.grpc_port: int | None = None
        self.http_port: int | None = None
        self.rm_web_port = 0
        self.jhs_web_port: int | None = None
        self.classpath: list[str] = []
        self.java = "java"
        self.flags: list[str] = []
        self.env: dict[str, str] = {}
        self.lib = Path()
        self.plugin: artifacts.PluginJar | None = None
        self._started = False
        self._stopped = False
        self._lock = threading.Lock()
        self._old_sigterm: Any = None
        self._jobs: list[JobHandle] = []

    # ---- addresses ------------------------------------------------------------------------------
    @property
    def rm_web_url(self) -> str:
        return f"http://{hadoopconf.LOOPBACK}:{self.rm_web_port}"

    @property
    def service_api_url(self) -> str | None:
        return f"http://{hadoopconf.LOOPBACK}:{self.http_port}" if self.http_port else None

    @property
    def history_url(self) -> str | None:
        return f"http://{hadoopconf.LOOPBACK}:{self.jhs_web_port}" if self.jhs_web_port else None

    @property
    def service_db(self) -> Path:
        return self.base / "service" / "decisions.db"

    # ---- life cycle -----------------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        try:
            self.start()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Build/collect the jars, write the configuration and start every process (not yet ready)."""
        if self._started:
            raise ClusterError("cluster already started")
        self._started = True
        atexit.register(self.stop)
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
        self.lib = artifacts.hadoop_lib(self.progress)
        self.plugin = artifacts.plugin_jar(self.progress)
        self.flags = artifacts.jdk17_flags()
        home = artifacts.java_home()
        self.java = str(home / "bin" / "java")
        self.env = {**os.environ, "JAVA_HOME": str(home), "HADOOP_CONF_DIR": str(self.conf_dir)}
        for var in ("CLASSPATH", "HADOOP_HOME", "HADOOP_CLASSPATH", "HADOOP_OPTS", "JAVA_TOOL_OPTIONS"):
            self.env.pop(var, None)
        self.classpath = [str(self.plugin.path), f"{self.lib}/*"]
        for sub in ("staging", "history", "tmp", "app-logs"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        if self.with_service:
            self._start_service()
        self._write_conf()
        self.progress(f"starting ResourceManager ({self.scheduler}) and {self.nodes} NodeManagers")
        self._java_daemon("rm", RM_MAIN, {})
        nm_ports = hadoopconf.free_ports(2 * self.nodes)
        for i in range(self.nodes):
            ports = {"localizer": nm_ports[2 * i], "web": nm_ports[2 * i + 1]}
            overrides = hadoopconf.nodemanager_overrides(self.base, i, ports)
            self._java_daemon(f"nm-{i}", NM_MAIN, overrides, nice=i < self.slow_nodes)
        if self.with_history:
            self._java_daemon("jhs", JHS_MAIN, {})

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.stop()
        raise SystemExit(128 + signum)

    def _start_service(self) -> None:
        self.progress(f"starting the decision service (policy {self.policy})")
        work = self.base / "service"
        work.mkdir(parents=True, exist_ok=True)
        port_file = work / "grpc.port"
        argv = [
            sys.executable,
            "-m",
            "pyscheduler",
            "serve",
            "--grpc-host",
            hadoopconf.LOOPBACK,
            "--grpc-port",
            "0",
            "--port-file",
            str(port_file),
            "--http-port",
            "0",
            "--db",
            str(self.service_db),
            "--policy",
            self.policy,
            *self.service_args,
        ]
        env = {**self.env, "PYTHONUNBUFFERED": "1"}
        self.service_proc = Daemon("service", argv, self.log_dir / "service.log", env=env, cwd=work)
        self.daemons.append(self.service_proc)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            self._check_alive(self.service_proc)
            m = re.search(r"HTTP_PORT=(\d+)", self.service_proc.log_tail(200))
            if port_file.exists() and m:
                self.grpc_port = int(port_file.read_text().strip())
                self.http_port = int(m.group(1))
                return
            time.sleep(0.2)
        raise ClusterError(f"decision service did not start in 120 s:\n{self.service_proc.log_tail()}")

    def _write_conf(self) -> None:
        names = ("rm", "scheduler", "tracker", "admin", "web", "jhs-rpc", "jhs-web", "jhs-admin")
        ports = dict(zip(names, hadoopconf.free_ports(len(names)), strict=True))
        self.rm_web_port = ports["web"]
        jhs = None
        if self.with_history:
            jhs = {"rpc": ports["jhs-rpc"], "web": ports["jhs-web"], "admin": ports["jhs-admin"]}
            self.jhs_web_port = jhs["web"]
        dollymp: dict[str, str | int] = {}
        if self.scheduler == "dollymp":
            address = f"{hadoopconf.LOOPBACK}:{self.grpc_port or 50051}"
            dollymp = {"yarn.scheduler.dollymp.service.address": address}
            if self.service_api_url:  # diagnostics and the RM's scheduler page link to the service's page
                dollymp["yarn.scheduler.dollymp.ui.address"] = self.service_api_url
            dollymp.update(self.dollymp_conf)
        yarn = hadoopconf.yarn_site(
            base=self.base,
            conf_dir=self.conf_dir,
            classpath=self.classpath,
            scheduler_class=artifacts.SCHEDULER_CLASSES[self.scheduler],
            rm_ports=ports,
            nm_memory_mb=self.nm_memory_mb,
            nm_vcores=self.nm_vcores,
            heartbeat_ms=self.heartbeat_ms,
            dollymp=dollymp,
        )
        mapred = hadoopconf.mapred_site(
            base=self.base,
            conf_dir=self.conf_dir,
            classpath=self.classpath,
            jhs_ports=jhs,
            task_memory_mb=self.task_memory_mb,
            am_memory_mb=self.am_memory_mb,
            heartbeat_ms=self.heartbeat_ms,
        )
        files: dict[str, hadoopconf.Props] = {
            "core-site.xml": hadoopconf.core_site(self.base),
            "yarn-site.xml": yarn,
            "mapred-site.xml": mapred,
            "capacity-scheduler.xml": dict(hadoopconf.CAPACITY_SCHEDULER),
        }
        hadoopconf.write_conf(self.conf_dir, files)

    def classpath_jars(self) -> list[str]:
        """The cluster's class path without its configuration directory, wildcards expanded (sorted)."""
        jars: list[str] = []
        for entry in self.classpath:
            if entry.endswith("/*"):
                jars += sorted(str(p) for p in Path(entry[:-2]).glob("*.jar"))
            else:
                jars.append(entry)
        return jars

    def java_argv(self, main: str, args: Sequence[str] = (), heap_mb: int | None = None) -> list[str]:
        """A JVM command line on the cluster's classpath (conf dir first) with the JDK 17 flags."""
        cp = os.pathsep.join([str(self.conf_dir), *self.classpath])
        heap = heap_mb or self.daemon_heap_mb
        return [self.java, *self.flags, f"-Xmx{heap}m", "-cp", cp, main, *args]

    def _java_daemon(self, name: str, main: str, overrides: Mapping[str, str], nice: bool = False) -> Daemon:
        # The RM/NM/JHS mains parse generic options: `-Dkey=value` after the main class overrides the
        # site files (a JVM system property before it would not).
        argv = self.java_argv(main, [f"-D{k}={v}" for k, v in overrides.items()])
        argv[1:1] = [f"-Dhadoop.log.dir={self.log_dir}", f"-Dyarn.log.dir={self.log_dir}"]
        if nice:  # a slow, contended machine: containers inherit the NM's niceness
            argv = ["nice", "-n", "19", *argv]
        daemon = Daemon(name, argv, self.log_dir / f"{name}.log", env=self.env, cwd=self.base)
        self.daemons.append(daemon)
        return daemon

    def _check_alive(self, daemon: Daemon) -> None:
        if not daemon.alive():
            raise ClusterError(
                f"{daemon.name} exited with {daemon.proc.returncode}; log {daemon.log}:\n{daemon.log_tail()}"
            )

    def running_nodes(self) -> list[dict[str, Any]]:
        """The RM's RUNNING nodes (REST /ws/v1/cluster/nodes)."""
        doc = get_json(f"{self.rm_web_url}/ws/v1/cluster/nodes")
        nodes = ((doc or {}).get("nodes") or {}).get("node") or []
        return [n for n in nodes if n.get("state") == "RUNNING"]

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        """Until every NodeManager is RUNNING at the RM (and the history server answers, if any)."""
        deadline = time.monotonic() + timeout_s
        while True:
            for d in self.daemons:
                self._check_alive(d)
            try:
                up = len(self.running_nodes())
                hist_ok = self.history_url is None or get_json(f"{self.history_url}/ws/v1/history/info")
            except OSError:
                up, hist_ok = 0, False
            if up >= self.nodes and hist_ok:
                self.progress(f"cluster ready: {up} NodeManagers registered, RM UI {self.rm_web_url}")
                return
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- {d.name}\n{d.log_tail(15)}" for d in self.daemons)
                raise ClusterError(f"{up}/{self.nodes} NodeManagers registered after {timeout_s} s\n{tails}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop everything; idempotent and safe from a signal handler or atexit."""
        with self._lock:
            if self._stopped or not self._started:
                return
            self._stopped = True
        self.progress("stopping the cluster")
        for job in self._jobs:
            job.kill()
        # NodeManagers first (they stop their containers), then the history server, RM, service.
        order = [d for d in self.daemons if d.name.startswith("nm-")]
        order += [d for d in self.daemons if d.name == "jhs"]
        order += [d for d in self.daemons if d.name == "rm"]
        order += [d for d in self.daemons if d.name == "service"]
        nms = [d for d in order if d.name.startswith("nm-")]
        for d in nms:  # signal every NM at once; they stop in parallel
            d.signal_group(signal.SIGTERM)
        for d in order:
            # A NodeManager spends ~10 s on shutdown chores after stopping its containers; anything
            # it leaves behind is swept below, so it gets less grace than the RM and the service.
            d.stop(grace_s=8.0 if d.name.startswith("nm-") else 15.0)
        leftover = processes_under(self.base)
        if leftover:
            kill_pids(leftover)
        with contextlib.suppress(ValueError):
            atexit.unregister(self.stop)
        if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._old_sigterm)
        if not self.keep_dir:
            shutil.rmtree(self.base, ignore_errors=True)

    def thread_dump(self, name: str = "rm") -> Path | None:
        """``jcmd <pid> Thread.print`` of daemon `name` into logs/<name>-threads-<n>.txt (for diagnosis)."""
        daemon = next((d for d in self.daemons if d.name == name and d.alive()), None)
        jcmd = Path(self.java).with_name("jcmd")
        if daemon is None or not jcmd.exists():
            return None
        out = self.log_dir / f"{name}-threads-{int(time.time())}.txt"
        with open(out, "wb") as f:
            subprocess.run(
                [str(jcmd), str(daemon.pid), "Thread.print"], stdout=f, stderr=f, timeout=60, check=False
            )
        return out

    def pids(self) -> list[int]:
        """Pids of every live process of this cluster: daemons, job clients and containers."""
        own = {d.pid for d in self.daemons if d.alive()} | {j.proc.pid for j in self._jobs if j.alive()}
        return sorted(own | set(processes_under(self.base)))
