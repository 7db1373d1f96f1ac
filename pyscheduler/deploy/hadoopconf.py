"""Hadoop configuration for a local multi-process cluster: site files, per-daemon overrides, ports.

One conf dir is shared by every daemon; what must differ per NodeManager (localizer and web ports,
local and log dirs) is passed as ``-D`` overrides, which the RM/NM/JHS ``main`` methods accept.
See ../shared/notes/hadoop-yarn.md section 8 for why each key is here.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias
from xml.sax.saxutils import escape

Props: TypeAlias = dict[str, str | int | float | bool]
LOOPBACK = "127.0.0.1"


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
PORTS_FROM = 10000  # the lowest port free_ports chooses


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (Linux's default where it cannot be read)."""
    try:
        lo, hi = (int(x) for x in path.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return 32768, 60999
    return lo, hi


def free_ports(count: int, rng: random.Random | None = None) -> list[int]:
    """`count` distinct free TCP ports on 127.0.0.1 for daemons that bind them seconds later.

    They are chosen below the kernel's ephemeral range: a port the kernel handed out (bind to port 0) can
    be taken, before the daemon binds it, as the local port of any outgoing connection on the machine,
    and the daemon would fail with "Address already in use". Each is tried by binding it, and all are
    held until every port is chosen; with no room below the range, the kernel chooses."""
    lo, _ = ephemeral_range()
    if lo - PORTS_FROM < 64 * max(count, 1):
        return _kernel_ports(count)
    pick = rng or random.SystemRandom()
    socks: list[socket.socket] = []
    try:
        for _ in range(100 * max(count, 1)):
            if len(socks) == count:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((LOOPBACK, pick.randrange(PORTS_FROM, lo)))
            except OSError:  # taken (or held by a port of this call)
                s.close()
                continue
            socks.append(s)
        if len(socks) < count:
            raise OSError(f"free_ports: no {count} free TCP ports in [{PORTS_FROM}, {lo})")
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _kernel_ports(count: int) -> list[int]:
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def site_xml(props: Mapping[str, str | int | float | bool]) -> str:
    """A Hadoop ``*-site.xml`` document with one ``<property>`` per key, in the given order."""
    lines = ['<?xml version="1.0"?>', "<configuration>"]
    for key, value in props.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        lines.append(f"  <property><name>{escape(key)}</name><value>{escape(text)}</value></property>")
    lines.append("</configuration>")
    return "\n".join(lines) + "\n"


LOG4J = """\
# Daemons and job clients log to stderr; the launcher redirects each process to its own file.
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.org.apache.hadoop.metrics2=WARN
log4j.logger.org.eclipse.jetty=WARN
"""

CAPACITY_SCHEDULER: Props = {
    "yarn.scheduler.capacity.root.queues": "default",
    "yarn.scheduler.capacity.root.default.capacity": 100,
    "yarn.scheduler.capacity.root.default.maximum-capacity": 100,
    # Hadoop's default 0.1 would run one AM at a time on a small cluster; the shim has no such cap.
    "yarn.scheduler.capacity.maximum-am-resource-percent": 0.5,
    # Count vcores as well as memory, as the shim does (Hadoop's default calculator looks at memory only
    # and would run more containers per NodeManager than it has vcores: not the same cluster).
    "yarn.scheduler.capacity.resource-calculator": (
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
    ),
}


def core_site(base: Path) -> Props:
    return {"fs.defaultFS": "file:///", "hadoop.tmp.dir": str(base / "tmp")}


def yarn_site(
    *,
    base: Path,
    conf_dir: Path,
    classpath: list[str],
    scheduler_class: str,
    rm_ports: Mapping[str, int],
    nm_memory_mb: int,
    nm_vcores: int,
    heartbeat_ms: int,
    dollymp: Mapping[str, str | int],
) -> Props:
    """yarn-site.xml shared by the RM and every NM; `dollymp` holds ``yarn.scheduler.dollymp.*`` keys."""
    rm: Props = {
        "yarn.resourcemanager.hostname": LOOPBACK,
        "yarn.resourcemanager.address": f"{LOOPBACK}:{rm_ports['rm']}",
        "yarn.resourcemanager.scheduler.address": f"{LOOPBACK}:{rm_ports['scheduler']}",
        "yarn.resourcemanager.resource-tracker.address": f"{LOOPBACK}:{rm_ports['tracker']}",
        "yarn.resourcemanager.admin.address": f"{LOOPBACK}:{rm_ports['admin']}",
        "yarn.resourcemanager.webapp.address": f"{LOOPBACK}:{rm_ports['web']}",
        "yarn.resourcemanager.scheduler.class": scheduler_class,
        "yarn.resourcemanager.recovery.enabled": False,
        "yarn.resourcemanager.work-preserving-recovery.enabled": False,
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": heartbeat_ms,
        "yarn.scheduler.minimum-allocation-mb": 256,
        "yarn.scheduler.maximum-allocation-mb": nm_memory_mb,
        "yarn.scheduler.include-port-in-node-name": True,
        # The RM's node-attribute store defaults to file:///tmp/hadoop-yarn-${user}/node-attribute, one
        # folder for every RM of the user on the machine; two starting at once race on its mirror file
        # (FileNotFoundException on nodeattribute.mirror.writing, and the RM exits). Each cluster its own.
        "yarn.node-attribute.fs-store.root-dir": (base / "node-attribute").as_uri(),
    }
    nm: Props = {
        "yarn.nodemanager.hostname": LOOPBACK,
        "yarn.nodemanager.address": f"{LOOPBACK}:0",
        "yarn.nodemanager.resource.memory-mb": nm_memory_mb,
        "yarn.nodemanager.resource.cpu-vcores": nm_vcores,
        "yarn.nodemanager.aux-services": "mapreduce_shuffle",
        "yarn.nodemanager.aux-services.mapreduce_shuffle.class": "org.apache.hadoop.mapred.ShuffleHandler",
        "yarn.nodemanager.vmem-check-enabled": False,
        "yarn.nodemanager.pmem-check-enabled": False,
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 99.5,
        "yarn.nodemanager.delete.debug-delay-sec": 600,
        "yarn.nodemanager.sleep-delay-before-sigkill.ms": 250,
        "yarn.nodemanager.remote-app-log-dir": str(base / "app-logs"),
        "yarn.log-aggregation-enable": False,
        "yarn.timeline-service.enabled": False,
        "yarn.application.classpath": ",".join([str(conf_dir), *classpath]),
        "yarn.nodemanager.env-whitelist": (
            "JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,CLASSPATH_PREPEND_DISTCACHE,"
            "HADOOP_YARN_HOME,HADOOP_MAPRED_HOME,PATH,LANG,TZ"
        ),
    }
    return {**rm, **nm, **dollymp}


def mapred_site(
    *,
    base: Path,
    conf_dir: Path,
    classpath: list[str],
    jhs_ports: Mapping[str, int] | None,
    task_memory_mb: int,
    am_memory_mb: int,
    heartbeat_ms: int,
) -> Props:
    """mapred-site.xml for the job clients, the AMs and the history server."""
    heap = max(128, task_memory_mb * 2 // 3)
    am_heap = max(128, am_memory_mb * 3 // 4)
    props: Props = {
        "mapreduce.framework.name": "yarn",
        "mapreduce.application.classpath": ",".join([str(conf_dir), *classpath]),
        "yarn.app.mapreduce.am.staging-dir": str(base / "staging"),
        "mapreduce.jobhistory.intermediate-done-dir": str(base / "history" / "intermediate"),
        "mapreduce.jobhistory.done-dir": str(base / "history" / "done"),
        "mapreduce.shuffle.port": 0,
        "yarn.app.mapreduce.am.resource.mb": am_memory_mb,
        "yarn.app.mapreduce.am.command-opts": f"-Xmx{am_heap}m",
        "mapreduce.map.memory.mb": task_memory_mb,
        "mapreduce.reduce.memory.mb": task_memory_mb,
        "mapreduce.map.java.opts": f"-Xmx{heap}m",
        "mapreduce.reduce.java.opts": f"-Xmx{heap}m",
        "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms": heartbeat_ms,
        "mapreduce.client.progressmonitor.pollinterval": 250,
        "mapreduce.client.completion.pollinterval": 250,
        "mapreduce.job.ubertask.enable": False,
    }
    if jhs_ports is None:
        # No history server: an empty address makes the job client read the final state from the RM
        # instead of retrying a history server that does not exist.
        props["mapreduce.jobhistory.address"] = ""
    else:
        props["mapreduce.jobhistory.address"] = f"{LOOPBACK}:{jhs_ports['rpc']}"
        props["mapreduce.jobhistory.webapp.address"] = f"{LOOPBACK}:{jhs_ports['web']}"
        props["mapreduce.jobhistory.admin.address"] = f"{LOOPBACK}:{jhs_ports['admin']}"
    return props


def nodemanager_overrides(base: Path, index: int, ports: Mapping[str, int]) -> dict[str, str]:
    """``-D`` overrides that make NodeManager `index` unique on a shared host."""
    home = base / f"nm-{index}"
    return {
        "yarn.nodemanager.localizer.address": f"{LOOPBACK}:{ports['localizer']}",
        "yarn.nodemanager.webapp.address": f"{LOOPBACK}:{ports['web']}",
        "yarn.nodemanager.local-dirs": str(home / "local"),
        "yarn.nodemanager.log-dirs": str(home / "logs"),
        "yarn.nodemanager.recovery.dir": str(home / "recovery"),
        "mapreduce.shuffle.port": "0",
    }


def write_conf(conf_dir: Path, files: Mapping[str, Mapping[str, str | int | float | bool]]) -> None:
    """Write each ``name -> props`` site file plus log4j.properties into `conf_dir`."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    for name, props in files.items():
        (conf_dir / name).write_text(site_xml(props), encoding="utf-8")
    (conf_dir / "log4j.properties").write_text(LOG4J, encoding="utf-8")
