"""Where a benchmark run's CPU went: the CPU-seconds (user + system, /proc/<pid>/stat) of a local
cluster's processes while its job mix ran, by kind (the decision service, the ResourceManager, the
NodeManagers, the MapReduce AMs, the task JVMs, the job clients).

Sampled: each process's CPU time as last seen, so a process that exits between samples loses at most
one interval's CPU (the daemons live through the run; a task JVM's start-up, most of its CPU, is seen).
On a 2-core machine the total against 2 x the run's length says how contended the run was."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.deploy.processes import cmdline

# (marker in the command line, kind), first match wins
KINDS = (
    ("ResourceManager", "rm"),
    ("NodeManager", "nm"),
    ("MRAppMaster", "am"),
    ("DollyMPAppMaster", "am"),  # the AM helper's (mapreduce.framework.name=dollymp)
    ("YarnChild", "task"),
    ("CoarseGrainedExecutorBackend", "task"),
    ("pyscheduler", "service"),
)
OTHER = "client"


def kind_of(cmdline: str) -> str:
    return next((kind for marker, kind in KINDS if marker in cmdline), OTHER)


def cpu_seconds(pid: int, proc: Path = Path("/proc")) -> float | None:
    """User + system CPU time of `pid`, s (None once it is gone)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state is field 3
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


@dataclass
class CpuTally:
    first: dict[int, float] = field(default_factory=dict)  # pid -> CPU s when first seen
    last: dict[int, float] = field(default_factory=dict)  # pid -> CPU s when last seen
    kinds: dict[int, str] = field(default_factory=dict)

    def sample(self, pids: Iterable[int], proc: Path = Path("/proc")) -> None:
        first_sample = not self.kinds
        for pid in pids:
            cpu = cpu_seconds(pid, proc)
            if cpu is None:
                continue
            if pid not in self.kinds:
                cmd = cmdline(pid, proc)
                if cmd is None:
                    continue
                self.kinds[pid] = kind_of(cmd)
                # a process already running at the first sample counts from then; a new one from its start
                self.first[pid] = cpu if first_sample else 0.0
            self.last[pid] = cpu

    def by_kind(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, kind in self.kinds.items():
            out[kind] = out.get(kind, 0.0) + self.last.get(pid, 0.0) - self.first.get(pid, 0.0)
        return {k: round(v, 1) for k, v in sorted(out.items())}


def cpu_line(label: str, tally: CpuTally, every_s: float) -> str:
    """The report's line for one half: its CPU-seconds by kind of process while the mix ran."""
    text = ", ".join(f"{k} {v:g}" for k, v in tally.by_kind().items())
    return f"{label}: CPU-seconds while the mix ran (sampled every {every_s:g} s): {text}"
