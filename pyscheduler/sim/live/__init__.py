"""The live mechanism in the simulator: a YARN cluster and the project's AM helper, simulated, driving the
real decision service (pyscheduler/service) on simulated time, in-process or over gRPC: on its own small
workloads (workload.py, `python -m pyscheduler.sim.live`) and on a trace's (fromtrace.py, `dollymp
simulate`'s default mechanism)."""

from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.run import LiveOptions, Unfinished, run
from pyscheduler.sim.live.workload import (
    WORKLOADS,
    JobSpec,
    PhaseSpec,
    Workload,
    mixed_sizes,
    small_mapreduce,
)

__all__ = [
    "WORKLOADS",
    "JobSpec",
    "LiveOptions",
    "LiveRecord",
    "PhaseSpec",
    "Unfinished",
    "Workload",
    "mixed_sizes",
    "run",
    "small_mapreduce",
]
