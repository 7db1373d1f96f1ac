"""Shuffle reads of the simulator (Dolly, paper 001, Section 4): how long a downstream copy waits for and
reads its upstream outputs under contention cloning (cc), contention-avoidance cloning (cac) or delay
assignment (delay); see sim/engine.py's docstring for the three modes."""

from __future__ import annotations

import math

from pyscheduler.objects import Job
from pyscheduler.sim.copies import ALIVE, END, RunCopy


class ShuffleReads:
    """The shuffle-read part of `Simulation` (a mixin: the attributes below are the simulation's)."""

    now: float
    shuffle_mode: str
    bandwidth: float
    default_omega: float
    avail: dict[tuple[int, int], list[float]]
    ready_at: dict[tuple[int, int], float]
    omega: dict[str, float]
    copies: dict[tuple[int, int, int], list[RunCopy]]

    def _read_delay(self, jidx: int, job: Job, k: int, c: int, read_mb: float) -> float:
        """Waiting for an exclusive upstream copy plus the read itself (Dolly Sec. 4)."""
        bw = self.bandwidth
        contended = read_mb / (bw / (c + 1))
        mode = self.shuffle_mode
        if c == 0 or mode == "cc":
            return read_mb / bw if c == 0 else contended
        avail = self.avail.get((jidx, k))
        t_ex = avail[c] if avail is not None and c < len(avail) else math.inf
        if mode == "cac":
            return contended if math.isinf(t_ex) else max(0.0, t_ex - self.now) + read_mb / bw
        ready = self.ready_at.get((jidx, k), self.now)
        deadline = ready + self.omega.get(job.job_id, self.default_omega)
        if t_ex <= deadline:
            return max(0.0, t_ex - self.now) + read_mb / bw
        return max(0.0, deadline - self.now) + contended

    def _prepare_exclusive(self, jidx: int, job: Job, c: int) -> None:
        """avail[c]: when every upstream task of phase c has c+1 finished copies (from known end times)."""
        avail = [self.now]
        for extra in (1, 2, 3):
            worst = self.now
            for q in job.parent_idx[c]:
                for t in range(job.phases[q].num_tasks):
                    ends = sorted(x[END] for x in self.copies.get((jidx, q, t), ()) if x[ALIVE])
                    if len(ends) < extra:
                        worst = math.inf
                        break
                    worst = max(worst, ends[extra - 1])
                if math.isinf(worst):
                    break
            avail.append(worst)
        self.avail[(jidx, c)] = avail
