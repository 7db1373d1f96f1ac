"""Task statistics (DollyMP Section 5.2) feeding theta (mean) and sigma (SD) of each phase.

Sources, in the order used by `TaskStatistics.estimate` (Sec. 5.2's order: "First, recurring jobs ...
Second, ... the first few tasks ... Third, ... all the prior jobs from the same application framework"):
1. the history of recurring jobs: statistics of the same phase in prior runs of jobs with the same name;
2. the first finished tasks of the phase itself, once `min_live` have finished, updated as more finish;
3. the phase's declared mean/SD (from the AM or the trace), when it declared a positive mean: the paper's
   AM has no such source; a trace's recorded statistics and an AM's description stand in for it here;
4. framework-wide priors: every task duration observed for the job's framework;
5. `default_mean` / `default_sd` when nothing at all is known.
Observed durations are the winning copies' run times, stragglers included, so sigma carries the tail that
clones cut. Durations must be finite and >= 0 (ValueError naming the job and phase otherwise).

A task reported with its end time also feeds `stragglers` (estimate/stragglers.py): Dolly's cluster-wide
straggler probability p over the last hour, which the Dolly policy reads through `Snapshot.estimator`.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from pyscheduler.estimate.stragglers import StragglerRate
from pyscheduler.objects import Job, Phase


@dataclass(slots=True)
class RunningStats:
    """Welford's running mean and variance."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0

    def add(self, x: float) -> None:
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)

    def merge(self, other: RunningStats) -> None:
        if other.count == 0:
            return
        n = self.count + other.count
        delta = other.mean - self.mean
        self.m2 += other.m2 + delta * delta * self.count * other.count / n
        self.mean += delta * other.count / n
        self.count = n

    @property
    def sd(self) -> float:
        return math.sqrt(self.m2 / (self.count - 1)) if self.count > 1 else 0.0


class TaskStatistics:
    """Implements pyscheduler.policies.PhaseEstimator from observed task durations."""

    def __init__(
        self,
        min_live: int = 3,
        default_mean: float = 30.0,
        default_sd: float = 15.0,
        framework: str = "mapreduce",
        stragglers: StragglerRate | None = None,
    ) -> None:
        if min_live < 1:
            raise ValueError(f"TaskStatistics.min_live must be >= 1, got {min_live!r}")
        if not (default_mean > 0 and default_sd >= 0 and math.isfinite(default_mean + default_sd)):
            raise ValueError("TaskStatistics.default_mean must be > 0 and default_sd >= 0 (finite)")
        self.min_live = min_live
        self.default = (float(default_mean), float(default_sd))
        self.framework = framework
        self.live: dict[tuple[str, str], RunningStats] = {}
        self.history: dict[tuple[str, str], RunningStats] = {}
        self.prior: dict[str, RunningStats] = {}
        self._names: dict[str, str] = {}
        self._recent: dict[tuple[str, str], deque[float]] = {}
        self.stragglers = stragglers if stragglers is not None else StragglerRate()

    def record_task(
        self,
        job: Job,
        phase_id: str,
        duration: float,
        framework: str | None = None,
        end: float | None = None,
    ) -> None:
        """A task (its winning copy) of `job`'s phase finished after `duration` seconds (at time `end`, when
        given: then it also counts towards the straggler rate)."""
        if not math.isfinite(duration) or duration < 0:
            raise ValueError(
                f"duration of Job[{job.job_id!r}].phases[{phase_id!r}] must be finite >= 0, got {duration!r}"
            )
        self._names[job.job_id] = job.name
        key = (job.job_id, phase_id)
        live = self.live.get(key)  # get, not setdefault: no throw-away default per call (hot path)
        if live is None:
            live = self.live[key] = RunningStats()
        live.add(duration)
        recent = self._recent.get(key)
        if recent is None:
            recent = self._recent[key] = deque(maxlen=64)
        recent.append(duration)
        fw = framework or self.framework
        prior = self.prior.get(fw)
        if prior is None:
            prior = self.prior[fw] = RunningStats()
        prior.add(duration)
        if end is not None:
            self.stragglers.record(key, duration, end)

    def job_finished(self, job: Job) -> None:
        """Fold the job's live statistics into the recurring-job history under its name."""
        for p in job.phases:
            live = self.live.pop((job.job_id, p.phase_id), None)
            self._recent.pop((job.job_id, p.phase_id), None)
            if live is not None and job.name:
                self.history.setdefault((job.name, p.phase_id), RunningStats()).merge(live)
        self._names.pop(job.job_id, None)

    def samples(self, job: Job, phase: Phase) -> list[float]:
        """The most recent observed durations of the phase (up to 64), once `min_live` have finished."""
        recent = self._recent.get((job.job_id, phase.phase_id))
        return list(recent) if recent is not None and len(recent) >= self.min_live else []

    def estimate(self, job: Job, phase: Phase) -> tuple[float, float]:
        hist = self.history.get((job.name, phase.phase_id)) if job.name else None
        if hist is not None and hist.count > 0:
            return hist.mean, hist.sd
        live = self.live.get((job.job_id, phase.phase_id))
        if live is not None and live.count >= self.min_live:
            return live.mean, live.sd
        if phase.mean > 0:
            return phase.mean, phase.sd
        prior = self.prior.get(self.framework)
        if prior is not None and prior.count > 1:
            return prior.mean, prior.sd
        return self.default
