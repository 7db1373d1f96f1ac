"""θ and σ of a phase that no AM helper describes, in DollyMP Section 5.2's order of sources.

Sec. 5.2: "First, recurring jobs ... apply task statistics measured in prior runs"; second, "the first few
tasks" of the phase itself; third, a prior. For an application without an AM helper (Spark,
DistributedShell, MapReduce under framework `yarn`) a phase is a YARN priority, the recurring job is
the application's name within its queue (pyscheduler.store.runhistory), the first tasks are its own
containers that succeeded (pyscheduler.service.state.mirror), and the prior is the framework's: "AM simply
uses all the prior jobs from the same application framework to calculate both the mean and the standard
deviation" (Sec. 5.2), i.e. every earlier application of the same YARN application type in the same
queue at the same YARN priority (the queue keeps one tenant's runs out of another's prior). With none of
the three, 1 s with no spread (nothing measured). Pure: the callers look the figures up.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Protocol

HISTORY = "history"  # the recurring job's earlier runs (same name, same queue, same YARN priority)
FIRST_TASKS = "first_tasks"  # the phase's own containers that succeeded so far
FRAMEWORK = "framework"  # earlier applications of the same type (framework) in the queue, same priority
PRIOR = "prior"  # nothing measured
AM_HELPER = "am_helper"  # the AM helper's job profile (pyscheduler.service.state.amregistry), not chosen here

PRIOR_MEAN_S = 1.0
PRIOR_SD_S = 0.0


class Moments(Protocol):
    """Run-time moments: estimate.stats.RunningStats and store.history.PhaseMoments both are."""

    @property
    def count(self) -> int: ...

    @property
    def mean(self) -> float: ...

    @property
    def sd(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Estimate:
    """θ (mean) and σ (SD) in seconds, the source that gave them, and how many run times it holds."""

    mean: float
    sd: float
    source: str
    samples: int = 0

    def describe(self) -> str:
        """A short text for a decision's detail."""
        return describe(self.mean, self.sd, self.source, self.samples)


@functools.lru_cache(maxsize=4096)  # a round's deferrals repeat the same few figures: one text each
def describe(mean: float, sd: float, source: str, samples: int) -> str:
    """Where θ/σ came from and their values, for a decision's detail."""
    figures = f"θ {mean:.3g} s, σ {sd:.3g} s"
    times = f"{samples} run time{'' if samples == 1 else 's'}"
    if source == HISTORY:
        return f"{figures} from the recurring-job history ({times})"
    if source == FIRST_TASKS:
        return f"{figures} from the phase's first tasks ({times})"
    if source == FRAMEWORK:
        return f"{figures} from the framework-wide prior ({times} of earlier applications of its type)"
    if source == AM_HELPER:
        return f"{figures} from the AM helper"
    return f"{figures}: prior, nothing measured"


PRIOR_ESTIMATE = Estimate(PRIOR_MEAN_S, PRIOR_SD_S, PRIOR)


def theta_sigma(
    history: Moments | None, first_tasks: Moments | None, framework: Moments | None = None
) -> Estimate:
    """The recurring-job history when it holds a run time, else the phase's first tasks when one has
    finished, else the framework-wide prior when it holds one, else 1 s and 0 (Sec. 5.2's order)."""
    if history is not None and history.count > 0:
        return Estimate(history.mean, history.sd, HISTORY, history.count)
    if first_tasks is not None and first_tasks.count > 0:
        return Estimate(first_tasks.mean, first_tasks.sd, FIRST_TASKS, first_tasks.count)
    if framework is not None and framework.count > 0:
        return Estimate(framework.mean, framework.sd, FRAMEWORK, framework.count)
    return PRIOR_ESTIMATE
