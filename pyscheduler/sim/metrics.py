"""Measures of a run (design.md, "Measures that count").

* flowtime of job j = completion - arrival; average, p50/p90/p99; makespan = last completion - first arrival;
* by Dolly's job-size bins (Dolly Table 3: 1-10, 11-50, 51-150, 151-500, >500 tasks);
* clone extra resource fraction = resource-seconds of copies that lost (killed, or finished after their task
  had already finished) over all resource-seconds used, where a copy's resource-seconds are its dominant share
  of the cluster (DollyMP Eq. 15) times its run time. Resource-seconds are dominant-share-seconds so CPU- and
  memory-bound tasks count alike. This is design.md's measure; it charges a straggler that a clone beat with
  all the time it ran, although without the clone it would have run longer still;
* extra resources vs no cloning (DollyMP Sec. 6.3.1, Fig. 10: "reduced by 10% under cloning with 2% of extra
  resource consumption", DollyMP2 against DollyMP0): all resource-seconds of the run over those of the same
  workload, cluster and seed run without clones, minus 1 (`extra_vs`). The paper sums normalised CPU and
  memory; we use the dominant share, as above. Negative when clones kill stragglers that would have held
  their containers longer than the clones did.
* measured load (sim/loadmeter.py): `utilisation`, the time-weighted dominant utilisation of the cluster
  over the arrival span, and `wait_rounds`, the share of the span's decision rounds that left an original
  task waiting for room. The offered load says what the trace asks for; these say what the run met.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

DOLLY_BINS: tuple[tuple[str, int, int], ...] = (
    ("1-10", 1, 10),
    ("11-50", 11, 50),
    ("51-150", 51, 150),
    ("151-500", 151, 500),
    (">500", 501, 1 << 62),
)


def bin_of(tasks: int) -> str:
    for name, lo, hi in DOLLY_BINS:
        if lo <= tasks <= hi:
            return name
    return DOLLY_BINS[0][0]


@dataclass(slots=True)
class RunMetrics:
    """Everything one policy's run produced; `as_dict` is the `--json` record."""

    policy: str
    flowtimes: np.ndarray
    sizes: np.ndarray
    arrivals: np.ndarray
    completions: np.ndarray
    useful_resource_s: float
    wasted_resource_s: float
    clones_launched: int
    speculative_launched: int
    jobs_completed: int
    jobs_unfinished: int
    wall_seconds: float
    rounds: int
    utilisation: float = float("nan")
    wait_rounds: float = float("nan")
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def avg_flowtime(self) -> float:
        return float(self.flowtimes.mean()) if self.flowtimes.size else float("nan")

    def pct(self, q: float) -> float:
        return float(np.percentile(self.flowtimes, q)) if self.flowtimes.size else float("nan")

    @property
    def clone_extra_resource_frac(self) -> float:
        total = self.useful_resource_s + self.wasted_resource_s
        return self.wasted_resource_s / total if total > 0 else 0.0

    @property
    def resource_s(self) -> float:
        """All dominant-share-seconds used (winners and losers)."""
        return self.useful_resource_s + self.wasted_resource_s

    def extra_vs(self, reference: RunMetrics) -> float:
        """Resource-seconds over those of `reference` (the same run without clones), minus 1."""
        return self.resource_s / reference.resource_s - 1 if reference.resource_s > 0 else float("nan")

    @property
    def makespan(self) -> float:
        if not self.completions.size:
            return float("nan")
        return float(self.completions.max() - self.arrivals.min())

    def by_bin(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for name, lo, hi in DOLLY_BINS:
            mask = (self.sizes >= lo) & (self.sizes <= hi)
            n = int(mask.sum())
            if n:
                out[name] = {"jobs": n, "avg_flowtime": float(self.flowtimes[mask].mean())}
        return out

    def as_dict(self, lower_bound_avg: float | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {
            "avg_flowtime": self.avg_flowtime,
            "p50_flowtime": self.pct(50),
            "p90_flowtime": self.pct(90),
            "p99_flowtime": self.pct(99),
            "makespan": self.makespan,
            "clone_extra_resource_frac": self.clone_extra_resource_frac,
            "resource_seconds": self.resource_s,
            "clones_launched": self.clones_launched,
            "speculative_launched": self.speculative_launched,
            "jobs_completed": self.jobs_completed,
            "jobs_unfinished": self.jobs_unfinished,
            "by_bin": self.by_bin(),
            "wall_seconds": self.wall_seconds,
            "decision_rounds": self.rounds,
            "utilisation": self.utilisation,
            "wait_rounds": self.wait_rounds,
        }
        if lower_bound_avg:
            d["lower_bound_ratio"] = self.avg_flowtime / lower_bound_avg
        d.update(self.extra)
        return d
