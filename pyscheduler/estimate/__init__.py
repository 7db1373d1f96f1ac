"""Task statistics: recurring-job history, first tasks of a phase, framework priors, the Pareto fit,
Dolly's measured straggler rate, the estimates of running copies (copies.py: work start, finish,
stalled, a fresh copy's time, the lead copy), and the order of θ/σ's sources for applications without an
AM helper (runtimes.py)."""

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
