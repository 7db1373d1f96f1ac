"""Dolly (paper 001): budgeted task-level cloning with admission control (Pseudocode 1), and the "dolly"
policy (jobs in arrival order, each job's clones launched right with its originals, as Dolly does).

Pseudocode 1: c = ceil(log(1 - (1 - eps)^(1/n)) / log p); clone only if (B_U + c n) <= C beta and
(U + c n) <= tau. Choices for a multi-resource cluster and for our copy counting:
* c is the number of *copies* per task, since the derivation is 1 - (1 - p^c)^n <= eps (every one of c
  copies straggles with probability p); the clones per task are c - 1, capped at max_clones.
* "slots" become dominant shares (Eq. 15 of DollyMP): a clone of a task costs its dominant share, the
  budget B_U is the dominant share held by running clones, U the cluster's dominant utilisation
  (max over dimensions of used / capacity); beta and tau are fractions of the cluster. Only the
  clones are charged ((c - 1) n), the originals run anyway.
* Admission happens when a phase's first task is to run (no task started yet); a phase admitted earlier
  (it had clones) stays admitted; a phase that started without clones is denied (reason says so).
* p is measured, as Dolly Sec. 3.2 does: the cluster-wide fraction of tasks that finished in the last hour
  slower than twice their phase's median (estimate/stragglers.py, read through `Snapshot.estimator`;
  `DollyBudget.observed_p`). Prior, while fewer than the tracker's `min_samples` tasks can be judged (or the
  driver gives no estimator with a straggler rate, as the live service today): Pr{Theta > 2 median} of the
  phase's Pareto fit of its (theta, sigma) (`straggler_probability`). A fixed cluster-wide p may be given.
* Defaults are the paper's: beta = 5%, tau = 80% (Sec. 5.2: "the cloning budget beta is 5% and utilization
  threshold tau is 80%"), epsilon = 5% (Sec. 3.2: "We aim for an epsilon of 5% in our experiments").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyscheduler.estimate.pareto import fit_pareto, straggler_probability
from pyscheduler.policies.base import Snapshot

REASON_ADMITTED = "dolly_admitted"
REASON_STICKY = "dolly_admitted_earlier"
REASON_BUDGET = "dolly_budget_exhausted"
REASON_CEILING = "dolly_utilization_ceiling"
REASON_STARTED = "dolly_phase_started_without_clones"
REASON_NOT_NEEDED = "dolly_no_straggler_risk"


def copies_needed(n: int, p: float, epsilon: float) -> int:
    """c = ceil(log(1 - (1 - eps)^(1/n)) / log p) (Dolly Pseudocode 1, step 2); at least 1."""
    if n < 1:
        raise ValueError(f"copies_needed: n must be >= 1, got {n!r}")
    if not 0 < epsilon < 1:
        raise ValueError(f"copies_needed: epsilon must be in (0, 1), got {epsilon!r}")
    if not 0 <= p < 1:
        raise ValueError(f"copies_needed: p must be in [0, 1), got {p!r}")
    if p == 0:
        return 1
    per_task = 1.0 - (1.0 - epsilon) ** (1.0 / n)  # allowed straggling probability per task
    return max(1, math.ceil(math.log(per_task) / math.log(p) - 1e-12))


@dataclass(slots=True)
class DollyBudget:
    """Budget state of Pseudocode 1 for one round: beta, tau and the shares in use."""

    beta: float = 0.05
    tau: float = 0.8
    epsilon: float = 0.05
    p: float | None = None
    used_by_clones: float = 0.0  # B_U
    utilization: float = 0.0  # U

    def __post_init__(self) -> None:
        if not 0 <= self.beta <= 1:
            raise ValueError(f"dolly option beta must be in [0, 1], got {self.beta!r}")
        if not 0 <= self.tau <= 1:
            raise ValueError(f"dolly option tau must be in [0, 1], got {self.tau!r}")
        if not 0 < self.epsilon < 1:
            raise ValueError(f"dolly option epsilon must be in (0, 1), got {self.epsilon!r}")
        if self.p is not None and not 0 <= self.p < 1:
            raise ValueError(f"dolly option p must be in [0, 1), got {self.p!r}")

    @staticmethod
    def observed_p(snapshot: Snapshot) -> float | None:
        """Dolly's measured p at the snapshot's time (estimate/stragglers.py), from the estimator's
        `stragglers` tracker; None when it has none or too few tasks finished in its window (then the
        prior)."""
        tracker = getattr(snapshot.estimator, "stragglers", None)
        if tracker is None or not math.isfinite(snapshot.time):
            return None
        p: float | None = tracker.rate(snapshot.time)
        return p

    def straggler_p(self, theta: float, sigma: float) -> float:
        """p: the given (or measured) cluster-wide value, else the prior from the phase's Pareto fit."""
        if self.p is not None:
            return self.p
        if theta <= 0:
            return 0.0
        return straggler_probability(fit_pareto(theta, sigma)[1])

    def admit(self, n: int, share: float, theta: float, sigma: float, max_clones: int) -> tuple[int, str]:
        """Pseudocode 1 steps 2-4 for a phase of n tasks of dominant share `share` -> (clones, reason)."""
        c = copies_needed(n, self.straggler_p(theta, sigma), self.epsilon)
        clones = min(max_clones, c - 1)
        if clones <= 0:
            return 0, REASON_NOT_NEEDED
        cost = clones * n * share
        if self.used_by_clones + cost > self.beta:
            return 0, REASON_BUDGET
        if self.utilization + cost > self.tau:
            return 0, REASON_CEILING
        self.used_by_clones += cost
        self.utilization += cost
        return clones, REASON_ADMITTED
