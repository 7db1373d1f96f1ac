"""Task statistics: recurring-job history, first tasks of a phase, framework priors, the Pareto fit,
Dolly's measured straggler rate, and the estimates of running copies (copies.py: work start, finish,
stalled, a fresh copy's time, the lead copy)."""

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
