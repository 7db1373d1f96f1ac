"""The straggler model: run time of an attempt = base time x per-attempt slowdown / node speed.

design.md: "base time x per-attempt slowdown (e.g. Pareto with tail index alpha, independent per attempt, so
clones draw afresh) / node speed". Models (selected with `--straggler SPEC`):

* `pareto:alpha=A[,xm=1][,cap=C]` -- slowdown S ~ Pareto(xm, alpha), P(S > s) = (xm/s)^alpha (DollyMP Eq. 2;
  the runtime-variability model of paper 003, Sec. II, with minimum 1). `cap` truncates S (bounded Pareto) to
  keep single samples of 10^4x out of the workload; default no cap.
* `empirical` -- the papers' trace replay (DollyMP Sec. 6.3, SREW+C Sec. 5): an original runs for its own
  base time; every extra copy runs for the base time of a task drawn uniformly from the same phase.
* `none` -- slowdown 1.

Draws come from one numpy Generator seeded by `--seed`, pre-drawn in blocks for speed; every policy in a run
gets a fresh model with the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_BLOCK = 1 << 16


@dataclass(frozen=True, slots=True)
class StragglerSpec:
    kind: str = "pareto"
    alpha: float = 1.5
    xm: float = 1.0
    cap: float = math.inf

    @property
    def mean_slowdown(self) -> float:
        """E[S] (for the offered-load computation); for Pareto alpha/(alpha-1)*xm, infinite if alpha <= 1."""
        if self.kind != "pareto":
            return 1.0
        a, xm, cap = self.alpha, self.xm, self.cap
        if math.isinf(cap):
            return a * xm / (a - 1) if a > 1 else math.inf
        # bounded Pareto on [xm, cap]
        if a == 1:
            return xm * math.log(cap / xm) / (1 - xm / cap)
        return float((xm**a / (1 - (xm / cap) ** a)) * a / (a - 1) * (xm ** (1 - a) - cap ** (1 - a)))

    def describe(self) -> str:
        if self.kind != "pareto":
            return self.kind
        text = f"pareto:alpha={self.alpha:g}"
        if self.xm != 1.0:
            text += f",xm={self.xm:g}"
        if math.isfinite(self.cap):
            text += f",cap={self.cap:g}"
        return text


def parse_straggler(text: str) -> StragglerSpec:
    """Parse `pareto:alpha=1.5,cap=50`, `empirical` or `none`; errors name the offending key."""
    kind, _, params = text.partition(":")
    kind = kind.strip().lower()
    if kind in ("none", "empirical"):
        if params:
            raise ValueError(f"--straggler {kind} takes no parameters, got {params!r}")
        return StragglerSpec(kind=kind)
    if kind != "pareto":
        raise ValueError(f"--straggler: unknown model {kind!r} (use pareto:alpha=A, empirical or none)")
    values: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in params.split(","))):
        key, eq, val = item.partition("=")
        if not eq or key not in ("alpha", "xm", "cap"):
            raise ValueError(f"--straggler pareto: unknown parameter {item!r} (alpha, xm, cap)")
        try:
            values[key] = float(val)
        except ValueError:
            raise ValueError(f"--straggler pareto: '{key}' must be a number, got {val!r}") from None
        if not values[key] > 0 or math.isnan(values[key]):
            raise ValueError(f"--straggler pareto: '{key}' must be > 0, got {val!r}")
    spec = StragglerSpec(
        "pareto", values.get("alpha", 1.5), values.get("xm", 1.0), values.get("cap", math.inf)
    )
    if spec.cap < spec.xm:
        raise ValueError("--straggler pareto: 'cap' must be >= 'xm'")
    return spec


class StragglerModel:
    """Draws slowdowns and base times for one simulation run."""

    def __init__(self, spec: StragglerSpec, seed: int) -> None:
        self.spec = spec
        self.rng = np.random.default_rng(seed)
        self._slow: list[float] = []
        self._unif: list[float] = []

    def _refill_slowdowns(self) -> None:
        s = self.spec
        u = self.rng.random(_BLOCK)
        if s.kind == "pareto":
            if math.isinf(s.cap):
                vals = s.xm * (1.0 - u) ** (-1.0 / s.alpha)  # inverse CDF of Eq. 2
            else:  # inverse CDF of the Pareto truncated to [xm, cap]
                h = (s.xm / s.cap) ** s.alpha
                vals = s.xm * (1.0 - u * (1.0 - h)) ** (-1.0 / s.alpha)
            self._slow = vals.tolist()
        else:
            self._slow = [1.0] * _BLOCK

    def slowdown(self) -> float:
        if not self._slow:
            self._refill_slowdowns()
        return self._slow.pop()

    def uniform(self) -> float:
        if not self._unif:
            self._unif = self.rng.random(_BLOCK).tolist()
        return self._unif.pop()

    def base_times(self, n: int, mean: float, sd: float, durations: Sequence[float] | None) -> list[float]:
        """Base run times of a phase's tasks: the trace's durations, else lognormal with the given mean/sd."""
        if durations is not None:
            return list(durations)
        if sd <= 0 or mean <= 0:
            return [mean] * n
        sigma2 = math.log1p((sd / mean) ** 2)
        mu = math.log(mean) - sigma2 / 2
        out: list[float] = self.rng.lognormal(mu, math.sqrt(sigma2), n).tolist()
        return out

    def copy_time(self, base: float, phase_bases: Sequence[float], is_clone: bool) -> float:
        """Run time at speed 1 of one copy of a task with base time `base`."""
        if self.spec.kind == "empirical":
            if not is_clone:
                return base
            return phase_bases[min(len(phase_bases) - 1, int(self.uniform() * len(phase_bases)))]
        return base * self.slowdown()
