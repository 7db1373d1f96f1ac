"""The straggler model: run time of an attempt = base time x per-attempt slowdown / node speed.

design.md: "base time x per-attempt slowdown (e.g. Pareto with tail index alpha, independent per attempt, so
clones draw afresh) / node speed". Models (selected with `--straggler SPEC`):

* `pareto:alpha=A[,xm=1][,cap=C]` -- slowdown S ~ Pareto(xm, alpha), P(S > s) = (xm/s)^alpha (DollyMP Eq. 2;
  the runtime-variability model of paper 003, Sec. II, with minimum 1). `cap` truncates S (bounded Pareto) to
  keep single samples of 10^4x out of the workload; default no cap.
* `empirical` -- the papers' trace replay (DollyMP Sec. 6.3, SREW+C Sec. 5): an original runs for its own
  base time; every extra copy runs for the base time of a task drawn uniformly from the same phase.
* `none` -- slowdown 1.

Common random numbers: the slowdown of a copy (and, for `empirical`, the task whose base time a clone
takes) is a function of (seed, job, phase, task, n-th copy of that task), hashed (`copy_unit`), not the next
draw of a stream. So every policy in a run sees the same slowdown for the same copy whatever order it starts
copies in: the original of a task straggles under every policy alike, clones and relaunches draw afresh
(copy n >= 1 has its own draw). With one shared stream (before), a policy that started tasks in another order
gave a 3,715 s task another slowdown (8x instead of 1x under Tetris on the FB-2010 slice), one job moving
the average flowtime by 10%. `slowdown()`/`uniform()` (a seeded stream) remain for callers without a key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

_BLOCK = 1 << 16
_MASK = (1 << 64) - 1


def _mix64(x: int) -> int:
    """SplitMix64's finaliser (Steele et al., OOPSLA'14): a bijective 64-bit mixer."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def copy_unit(seed: int, job: int, phase: int, task: int, nth: int, stream: int = 0) -> float:
    """A uniform number in [0, 1) fixed by (seed, job, phase, task, n-th copy, stream): the copy's own
    random draw, the same under every policy (common random numbers, see the module docstring)."""
    x = _mix64((seed & _MASK) ^ 0x9E3779B97F4A7C15)
    for part in (job, phase, task, nth, stream):
        x = _mix64((x + (part & _MASK) * 0x9E3779B97F4A7C15) & _MASK)
    return (x >> 11) * (1.0 / (1 << 53))


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _mix64_u(x: np.uint64) -> np.uint64:
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _copy_unit_u(seed: int, job: int, phase: int, task: int, nth: int, stream: int) -> float:
    """`copy_unit` compiled (speed: one call per copy started): the same arithmetic on uint64, which
    wraps modulo 2**64 as the masked Python ints do; arguments within int64 (`_as_int64`)."""
    g = np.uint64(0x9E3779B97F4A7C15)
    x = _mix64_u(np.uint64(seed) ^ g)
    x = _mix64_u(x + np.uint64(job) * g)
    x = _mix64_u(x + np.uint64(phase) * g)
    x = _mix64_u(x + np.uint64(task) * g)
    x = _mix64_u(x + np.uint64(nth) * g)
    x = _mix64_u(x + np.uint64(stream) * g)
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)  # 2**-53


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _copy_units_u(
    seed: int,
    job: npt.NDArray[np.int64],
    phase: npt.NDArray[np.int64],
    task: npt.NDArray[np.int64],
    nth: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """`_copy_unit_u` (stream 0) of many copies in one call."""
    out = np.empty(job.shape[0], np.float64)
    for i in range(job.shape[0]):
        out[i] = _copy_unit_u(seed, job[i], phase[i], task[i], nth[i], 0)
    return out


def _as_int64(v: int) -> int:
    """The int64 with v's low 64 bits (what `copy_unit` keeps of v: v & _MASK)."""
    v &= _MASK
    return v - (1 << 64) if v >= 1 << 63 else v


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


def _pareto_inverse(s: StragglerSpec, u: Any) -> Any:
    """Inverse CDF of the slowdown (float or array u in [0, 1))."""
    if math.isinf(s.cap):
        return s.xm * (1.0 - u) ** (-1.0 / s.alpha)  # inverse CDF of Eq. 2
    h = (s.xm / s.cap) ** s.alpha  # inverse CDF of the Pareto truncated to [xm, cap]
    return s.xm * (1.0 - u * (1.0 - h)) ** (-1.0 / s.alpha)


class StragglerModel:
    """Draws slowdowns and base times for one simulation run."""

    def __init__(self, spec: StragglerSpec, seed: int) -> None:
        self.spec = spec
        self.seed = seed
        self._seed64 = _as_int64(seed)
        self.rng = np.random.default_rng(seed)
        self._slow: list[float] = []
        self._unif: list[float] = []
        # _pareto_inverse's constants, for slowdown_of (the same operations, so the same values)
        self._xm, self._expo, self._scale = 1.0, 0.0, 1.0
        if spec.kind == "pareto" and spec.alpha > 0:
            self._xm, self._expo = spec.xm, -1.0 / spec.alpha
            self._scale = 1.0 if math.isinf(spec.cap) else 1.0 - (spec.xm / spec.cap) ** spec.alpha

    def _refill_slowdowns(self) -> None:
        if self.spec.kind == "pareto":
            self._slow = _pareto_inverse(self.spec, self.rng.random(_BLOCK)).tolist()
        else:
            self._slow = [1.0] * _BLOCK

    def slowdown_of(self, job: int, phase: int, task: int, nth: int) -> float:
        """The slowdown of the nth copy (0 = the original) of a task: the same under every policy."""
        if self.spec.kind != "pareto":
            return 1.0
        u = _copy_unit_u(self._seed64, job, phase, task, nth, 0)
        # _pareto_inverse inlined (u x 1.0 = u exactly: the uncapped formula)
        return float(self._xm * (1.0 - u * self._scale) ** self._expo)

    def slowdowns_of(
        self, jobs: Sequence[int], phases: Sequence[int], tasks: Sequence[int], nths: Sequence[int]
    ) -> list[float]:
        """`slowdown_of` of many copies (the same values: the draws in one compiled call, then the same
        float operations in Python; speed). Indices within int64."""
        if self.spec.kind != "pareto":
            return [1.0] * len(jobs)
        units: list[float] = _copy_units_u(
            self._seed64, *(np.asarray(c, dtype=np.int64) for c in (jobs, phases, tasks, nths))
        ).tolist()
        xm, scale, expo = self._xm, self._scale, self._expo
        return [xm * (1.0 - u * scale) ** expo for u in units]

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

    def copy_time(
        self,
        base: float,
        phase_bases: Sequence[float],
        is_clone: bool,
        key: tuple[int, int, int, int] | None = None,
    ) -> float:
        """Run time at speed 1 of one copy of a task with base time `base`; `key` = (job, phase, task, n-th
        copy) makes it the copy's common random number (module docstring), else the stream's next draw."""
        if self.spec.kind == "empirical":
            if not is_clone:
                return base
            u = self.uniform() if key is None else _copy_unit_u(self._seed64, *key, 1)
            return phase_bases[min(len(phase_bases) - 1, int(u * len(phase_bases)))]
        return base * (self.slowdown() if key is None else self.slowdown_of(*key))
