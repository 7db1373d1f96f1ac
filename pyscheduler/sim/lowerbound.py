"""A lower bound on the total (and average) flowtime of any schedule of a run.

SREW+C (paper 002) Eq. 18 bounds the total flowtime of jobs that all arrive at 0 on M unit machines by the
larger of (Eq. 8) the sum of each job's own minimum processing time, and (Eq. 17) the flowtime of serving
the jobs' total work one after another, smallest first, on one machine as fast as the whole cluster.

Extension used here (documented choice):
* multiple resources: a job's work in resource r is sum over its tasks of base time x demand_r, divided by
  the speed-weighted cluster capacity in r (sum_i C_i^r x speed_i), i.e. its volume in *shares* of r --
  DollyMP's dominant-share volume (Eq. 9/10/14) taken resource by resource. One resource alone yields a valid
  bound (the cluster cannot process more than one unit of r-share per second), so the bound is the maximum
  over resources; it equals the dominant-share bound whenever all jobs share the same dominant resource.
  (Using every job's dominant share against a capacity of 1 would *not* be a valid bound when jobs with
  different dominant resources can run side by side.)
* arrivals: Eq. 17 is the transient case of preemptive SRPT on that single fast machine; with release times
  we run preemptive SRPT (optimal for 1|r_j,pmtn|sum C_j), which reduces to Eq. 17 when all a_j = 0.
* Eq. 8 with Delta = the fastest node and the smallest slowdown the straggler model allows: a job takes at
  least its critical path, each phase lasting as long as its longest task at that best speed, plus the
  shuffle read at full bandwidth.
Cloning cannot beat either term: every copy does a task's whole work and the first copy still needs it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from pyscheduler.sim.workload import ClusterSpec, JobSpec


@dataclass(frozen=True, slots=True)
class LowerBound:
    total: float
    critical_path_total: float  # Eq. 8 term
    volume_total: float  # Eq. 17 term (max over resources)
    jobs: int

    @property
    def avg(self) -> float:
        return self.total / self.jobs if self.jobs else 0.0


def srpt_total_flowtime(arrivals: Sequence[float], sizes: Sequence[float]) -> float:
    """Sum of flowtimes of preemptive SRPT on one unit-rate machine (jobs sorted by arrival)."""
    order = sorted(range(len(arrivals)), key=lambda i: arrivals[i])
    heap: list[tuple[float, int]] = []
    t = 0.0
    total = 0.0
    i = 0
    n = len(order)
    while i < n or heap:
        if not heap:
            t = max(t, arrivals[order[i]])
        while i < n and arrivals[order[i]] <= t:
            j = order[i]
            heapq.heappush(heap, (sizes[j], j))
            i += 1
        rem, j = heapq.heappop(heap)
        next_arrival = arrivals[order[i]] if i < n else float("inf")
        if t + rem <= next_arrival:
            t += rem
            total += t - arrivals[j]
        else:
            heapq.heappush(heap, (rem - (next_arrival - t), j))
            t = next_arrival
    return total


def lower_bound(
    jobs: Sequence[JobSpec],
    bases: Sequence[Sequence[Sequence[float]]],
    cluster: ClusterSpec,
    min_slowdown: float,
    bandwidth_mb_s: float,
) -> LowerBound:
    """`bases[j][k]` are the base times of job j's phase k as the run uses them."""
    fastest = max(n.speed for n in cluster.nodes)
    cap_cpu = sum(n.cpu * n.speed for n in cluster.nodes)
    cap_mem = sum(n.mem_mb * n.speed for n in cluster.nodes)
    arrivals = [j.arrival for j in jobs]
    vol_cpu: list[float] = []
    vol_mem: list[float] = []
    cp_total = 0.0
    for job, jb in zip(jobs, bases, strict=True):
        vc = vm = 0.0
        finish: dict[str, float] = {}
        order = _topo(job)
        for k in order:
            p = job.phases[k]
            work = sum(jb[k]) * min_slowdown
            vc += work * p.cpu
            vm += work * p.mem_mb
            start = max((finish[q] for q in p.parents), default=0.0)
            read = p.read_mb / bandwidth_mb_s if (p.parents and p.read_mb > 0) else 0.0
            finish[p.id] = start + read + max(jb[k]) * min_slowdown / fastest
        cp_total += max(finish.values())
        vol_cpu.append(vc / cap_cpu)
        vol_mem.append(vm / cap_mem)
    vol_total = max(srpt_total_flowtime(arrivals, vol_cpu), srpt_total_flowtime(arrivals, vol_mem))
    return LowerBound(
        total=max(cp_total, vol_total), critical_path_total=cp_total, volume_total=vol_total, jobs=len(jobs)
    )


def _topo(job: JobSpec) -> list[int]:
    idx = {p.id: i for i, p in enumerate(job.phases)}
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(job.phases):
        progressed = False
        for i, p in enumerate(job.phases):
            if i not in done and all(idx[q] in done for q in p.parents):
                done.add(i)
                order.append(i)
                progressed = True
        if not progressed:
            raise ValueError(f"job {job.id}: phase graph has a cycle")
    return order
