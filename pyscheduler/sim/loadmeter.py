"""How loaded a run actually was, measured rather than labelled (the offered load is a label: it comes from
declared task times over the arrival span, and says nothing of how the arrivals bunch or how long the
cluster is really busy).

Both measures cover the arrival span [first arrival, last arrival] (cut at the end of the run if it stopped
earlier), the stretch where the cluster sees the trace's load; the drain after the last arrival is left out.

* `utilisation`: the time average of the cluster's dominant utilisation. At each instant, per dimension
  (CPU, memory) the resources held by running copies (originals and clones) summed over the nodes, over
  the nodes' summed capacity; the largest of the dimensions is the dominant utilisation. It is piecewise
  constant between copy starts and ends, so it is integrated exactly at those instants, not sampled. The
  engine logs each round's started copies with their planned ends (a copy that finishes ends then) and,
  for a copy killed earlier, the correction; the steps are sorted by time once, after the run.
* `wait_rounds`: the share of decision rounds in which an original was still waiting for room after the
  round's placements were applied. An original is a pending task (no copy running, not finished) of a
  ready phase (every parent phase finished) whose demand fits some node's capacity (so it can ever run);
  it waits for room when its demand fits no node's free resources. The rounds counted are every round the
  engine ran at a time inside the arrival span: arrival- and copy-end-driven rounds and heartbeat rounds
  alike, whatever the policy did in them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import Job

FloatArray = npt.NDArray[np.float64]
_EPS = 1e-9  # the engine's slack when it checks that a placement fits
# rounds of started copies kept as Python lists before they become arrays (speed: a run that kept every
# round's lists to the end was a few percent slower, although making them cost far less)
LOG_ROUNDS = 64


class LoadMeter:
    """Measures one run's utilisation and wait_rounds (module docstring). While `now <= until` the engine
    reports each round's started copies to `started` and copies killed before their planned end to
    `cut_short`; it calls `after_round` after every round."""

    __slots__ = (
        "_blocks",
        "_feasible",
        "_log",
        "capacity",
        "cuts",
        "first",
        "rounds",
        "total",
        "until",
        "waiting",
    )

    def __init__(self, arrivals: Iterable[float], capacity: FloatArray, total: FloatArray) -> None:
        """`capacity`: the distinct (cpu, memory) capacities of the nodes; `total`: their sum over nodes."""
        times = list(arrivals)
        self.first = min(times) if times else 0.0
        self.until = max(times) if times else 0.0  # the last arrival: later changes are not needed
        self.capacity = capacity
        self.total = total
        self._log: list[tuple[float, Sequence[float], Sequence[float], Sequence[float]]] = []
        self._blocks: list[tuple[FloatArray, FloatArray, FloatArray, FloatArray]] = []  # _log as arrays
        self.cuts: list[tuple[float, float, float, float]] = []  # (kill time, planned end, cpu, memory)
        self.rounds = 0
        self.waiting = 0
        self._feasible: dict[tuple[float, ...], bool] = {}

    def started(
        self, now: float, ends: Sequence[float], cpus: Sequence[float], mems: Sequence[float]
    ) -> None:
        """Copies started at `now`, each holding its cpu and memory until its planned end."""
        log = self._log
        log.append((now, ends, cpus, mems))
        if len(log) == LOG_ROUNDS:
            self._blocks.append(_as_arrays(log))
            log.clear()

    def cut_short(self, now: float, end: float, cpu: float, mem: float) -> None:
        """A copy logged as held until `end` was killed at `now`."""
        if now <= self.until:
            self.cuts.append((now, end, cpu, mem))

    def after_round(self, now: float, jobs: Iterable[Job], free: FloatArray) -> None:
        """Count the round run at `now` (after its placements; `free` per node) if inside the span."""
        if self.first <= now <= self.until:
            self.rounds += 1
            if self._an_original_waits(jobs, free):
                self.waiting += 1

    def _an_original_waits(self, jobs: Iterable[Job], free: FloatArray) -> bool:
        feasible = self._feasible
        room: dict[tuple[float, ...], bool] = {}  # demand -> fits some node's free resources this round
        for job in jobs:
            phases = job.phases
            k = -1
            for ph in phases:
                k += 1
                if not ph.num_pending:
                    continue
                ready = True  # job.ready(k), inlined (speed: read for every pending phase every round)
                for q in job.parent_idx[k]:
                    if phases[q].num_finished != phases[q].num_tasks:
                        ready = False
                        break
                if not ready:
                    continue
                d = ph.demand.values
                ok = feasible.get(d)
                if ok is None:
                    ok = feasible[d] = _fits_some(self.capacity, d)
                if not ok:
                    continue
                fits = room.get(d)
                if fits is None:
                    fits = room[d] = _fits_some(free, d)
                if not fits:
                    return True
        return False

    def utilisation(self, end_of_run: float) -> float:
        """Time-weighted dominant utilisation over the arrival span (NaN if the span is empty)."""
        return self.by_resource(end_of_run)["dominant"]

    def by_resource(self, end_of_run: float) -> dict[str, float]:
        """Time-weighted utilisation of cpu, memory and the dominant of the two at each moment, over the
        arrival span (NaN if the span is empty)."""
        lo, hi = self.first, min(self.until, end_of_run)
        if not hi > lo:
            return {"cpu": math.nan, "mem": math.nan, "dominant": math.nan}
        if not (self._log or self._blocks):
            return {"cpu": 0.0, "mem": 0.0, "dominant": 0.0}
        t, cpu, mem = self._steps()
        order = np.argsort(t)  # (the order of equal times does not matter: nothing holds between them)
        cpu, mem = np.cumsum(cpu[order]) / self.total[0], np.cumsum(mem[order]) / self.total[1]
        dominant = np.maximum(np.maximum(cpu, mem), 0.0)  # held from each step to the next (rounding < 0)
        edges = np.diff(np.clip(np.append(t[order], hi), lo, hi))
        # plain sums: np.dot starts BLAS threads
        return {
            "cpu": float((edges * np.maximum(cpu, 0.0)).sum()) / (hi - lo),
            "mem": float((edges * np.maximum(mem, 0.0)).sum()) / (hi - lo),
            "dominant": float((edges * dominant).sum()) / (hi - lo),
        }

    def _steps(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Every change of the held resources: its time, cpu and memory deltas (unsorted)."""
        blocks = [*self._blocks, _as_arrays(self._log)] if self._log else self._blocks
        t0, t1, cpu, mem = (np.concatenate(col) for col in zip(*blocks, strict=True))
        times, d_cpu, d_mem = [t0, t1], [cpu, -cpu], [mem, -mem]
        if self.cuts:
            cut = np.array(self.cuts, dtype=np.float64)
            times += [cut[:, 0], cut[:, 1]]
            d_cpu += [-cut[:, 2], cut[:, 2]]
            d_mem += [-cut[:, 3], cut[:, 3]]
        return np.concatenate(times), np.concatenate(d_cpu), np.concatenate(d_mem)

    def wait_rounds(self) -> float:
        """Share of the span's rounds with an original waiting for room (NaN if no round in the span)."""
        return self.waiting / self.rounds if self.rounds else math.nan


def _fits_some(rows: FloatArray, demand: tuple[float, ...]) -> bool:
    """Some row (a node's capacity or free resources) holds `demand` in every dimension."""
    ok = rows[:, 0] >= demand[0] - _EPS
    for i in range(1, len(demand)):
        ok &= rows[:, i] >= demand[i] - _EPS
    return bool(ok.any())


def _as_arrays(
    log: Sequence[tuple[float, Sequence[float], Sequence[float], Sequence[float]]],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Logged rounds as arrays: each copy's start, planned end, cpu and memory."""
    starts, ends, cpus, mems = zip(*log, strict=True)
    sizes = [len(e) for e in ends]
    n = sum(sizes)
    return (
        np.repeat(np.array(starts, dtype=np.float64), sizes),
        np.fromiter(chain.from_iterable(ends), np.float64, n),
        np.fromiter(chain.from_iterable(cpus), np.float64, n),
        np.fromiter(chain.from_iterable(mems), np.float64, n),
    )
