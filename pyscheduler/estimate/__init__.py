"""Task statistics: recurring-job history, first tasks of a phase, framework priors, the Pareto fit, and
Dolly's measured straggler rate."""

from pyscheduler.estimate.pareto import fit_pareto, quantile_samples, speedup, straggler_probability
from pyscheduler.estimate.stats import RunningStats, TaskStatistics
from pyscheduler.estimate.stragglers import StragglerRate

__all__ = [
    "RunningStats",
    "StragglerRate",
    "TaskStatistics",
    "fit_pareto",
    "quantile_samples",
    "speedup",
    "straggler_probability",
]
