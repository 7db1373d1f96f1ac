"""Task statistics: recurring-job history, first tasks of a phase, framework priors, the Pareto fit."""

from pyscheduler.estimate.pareto import fit_pareto, quantile_samples, speedup, straggler_probability
from pyscheduler.estimate.stats import RunningStats, TaskStatistics

__all__ = [
    "RunningStats",
    "TaskStatistics",
    "fit_pareto",
    "quantile_samples",
    "speedup",
    "straggler_probability",
]
