"""Clones for running tasks whose expected remaining time pays for the clone (DollyMP Eq. 2-3).

DollyMP launches clones "for the scheduled tasks if there still exist extra idle resources" (Section 5)
once "all the tasks of a job have been scheduled", but does not say which running tasks come first, nor
when a clone of a long-running task is worth its resources (Section 4.1 asks "when is cloning helpful?"
only for copies launched together, Eq. 4). Choice, under the paper's own run-time model, a Type-I
Pareto(x_m, alpha) fitted to the phase's (theta, sigma) (Eq. 2-3): a copy that has run s >= x_m seconds has
expected remaining time R(s) = E[Theta - s | Theta > s] = s / (alpha - 1) (the Pareto's mean residual
life); a fresh copy takes theta in expectation. With factor f, a running task gets one more copy once
R(s) >= f theta, i.e. s >= f (alpha - 1) theta:
* f = 1: the clone is expected to finish first;
* f = 2 (default): the clone is also expected to cost no extra resources. It runs E[min(R, Theta')] <=
  theta and, when it wins, frees the original's remaining R - min(R, Theta'); the extra is
  2 E[min(R, Theta')] - E[R] <= 2 theta - f theta <= 0. This keeps clones within the issue's 5% budget at
  high load without a load parameter.
The start time s is the first round in which the policy saw a copy of the task running (the policy keeps
it; in the simulator every round's snapshot holds the running copies, in the live service the AM plan's
snapshot of a job does, its reported attempts replayed onto its phases: service/round/amplan.py). When a
task gets another copy its clock restarts: a further copy needs the newest copy to be late as well.

Extension (`late_copies`, `fresh_copy_time`; used by policies/late.py): the same rule with the copy's time
left observed instead of inferred, by LATE's progress-rate estimate (Zaharia et al., OSDI'08) when copies
report progress (DollyMP Sec. 5.2 has the AM report task statistics); copies without progress keep the
elapsed-time rule above.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import numpy.typing as npt

from pyscheduler.estimate.pareto import fit_pareto
from pyscheduler.objects import Phase
from pyscheduler.policies.jit import observe_starts

REASON_RESIDUAL = "eq2_residual_life"
REASON_PROGRESS = "late_progress_rate"


def residual_threshold(theta: float, sigma: float, factor: float = 1.0) -> float:
    """Seconds a copy must have run before its expected remaining time reaches factor x theta:
    factor (alpha - 1) theta, from E[Theta - s | Theta > s] = s / (alpha - 1) (Pareto mean residual life of
    DollyMP Eq. 2, alpha by the fit of Eq. 3's model). inf when the phase has no variation or estimate."""
    if not (math.isfinite(theta) and theta > 0 and math.isfinite(sigma)) or sigma <= 0:
        return math.inf
    _, alpha = fit_pareto(theta, sigma)
    return factor * (alpha - 1.0) * theta if math.isfinite(alpha) else math.inf


def residual_thresholds(
    theta: npt.NDArray[np.float64], sigma: npt.NDArray[np.float64], factor: float = 1.0
) -> npt.NDArray[np.float64]:
    """`residual_threshold` for many phases at once (same formula, Eq. 2-3's fit done elementwise)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ok = np.isfinite(theta) & (theta > 0) & np.isfinite(sigma) & (sigma > 0)
        cv2 = np.where(ok, (sigma / np.where(ok, theta, 1.0)) ** 2, 1.0)
        alpha = 1.0 + np.sqrt(1.0 + 1.0 / cv2)  # fit_pareto: alpha = 1 + sqrt(1 + 1/CV^2)
        out: npt.NDArray[np.float64] = np.where(ok, factor * (alpha - 1.0) * theta, math.inf)
    return out


class StartTimes:
    """When each task was first seen running, per (job id, phase index); forgotten with the job."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # per key: (first seen, copies at the last observe, the Phase and its version then); a phase whose
        # copies have not changed since (same Phase, same version) needs no update (speed)
        self._seen: dict[
            tuple[str, int], tuple[npt.NDArray[np.float64], npt.NDArray[np.int8], Phase, int]
        ] = {}

    def observe(self, job_id: str, k: int, phase: Phase, now: float) -> npt.NDArray[np.float64]:
        """Record `now` for tasks running now and not seen before; a task with no copy is forgotten (a
        relaunch after a failure starts afresh). Returns the start times (inf: not running)."""
        key = (job_id, k)
        with self._lock:
            entry = self._seen.get(key)
            if entry is not None and entry[2] is phase and entry[3] == phase.version:
                return entry[0]  # copies as at the last observe: the update below would be a no-op
            if entry is None or entry[0].size != phase.num_tasks:
                seen, count = np.full(phase.num_tasks, math.inf), np.zeros(phase.num_tasks, np.int8)
            else:
                seen, count = entry[0], entry[1]
            observe_starts(seen, count, phase.copies, now)  # (copies > 0) & (new or more copies): now
            self._seen[key] = (seen, count, phase, phase.version)
            return seen

    def keep_only(self, job_ids: set[str]) -> None:
        with self._lock:
            for key in [k for k in self._seen if k[0] not in job_ids]:
                del self._seen[key]

    def __len__(self) -> int:
        return len(self._seen)


def progress_remaining(
    progress: npt.NDArray[np.float64], elapsed: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """LATE's estimate of a copy's time left (Zaharia et al., OSDI'08, Sec. 4.2): progress rate p / elapsed,
    time left (1 - p) / (p / elapsed). inf where p is unknown (nan) or <= 0, or nothing has elapsed."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = np.isfinite(progress) & (progress > 0) & (elapsed > 0)
        p = np.where(ok, np.minimum(progress, 1.0), 1.0)
        out: npt.NDArray[np.float64] = np.where(ok, elapsed * (1.0 - p) / p, math.inf)
    return out


def late_copies(
    progress: npt.NDArray[np.float64],
    elapsed: npt.NDArray[np.float64],
    theta: npt.NDArray[np.float64],
    threshold: npt.NDArray[np.float64],
    factor: float,
    min_elapsed: float,
    startup: float = 0.0,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """Per running copy: is it late, and in how many seconds can it next turn late (inf: never by waiting).

    The rule of this module with the copy's own progress when it reports one (an extension of the
    elapsed-time rule above): a copy that reports progress p > 0 and has run at least `min_elapsed` seconds
    is late when LATE's time-left estimate (`progress_remaining`) reaches factor x theta, theta being a
    fresh copy's expected time. Same factor, same reading as above: f = 2 makes a clone expected to cost
    no extra resources, now with the remaining time observed instead of inferred from elapsed time alone.
    A copy with no usable progress (nan: the driver does not report it; 0: nothing reported yet) falls back
    to the elapsed-time rule, elapsed >= `threshold` (`residual_thresholds`), except a stalled copy: one
    that reports progress 0 after `min_elapsed` seconds of work is late (LATE's rate 0, time left
    infinite; choice: LATE and Hadoop's speculator have no estimate for it and wait for a finished task,
    which on a job of a few tasks is the straggler itself). The simulator's copies report p > 0 once
    they run, so only the live AM's copies, whose work start the AM knows (service/round/amplan.py), stall.
    A copy that reports progress but has run less than `min_elapsed` is not judged yet (its rate is not
    trusted): it may turn late in min_elapsed - elapsed seconds. `startup` (s, 0 in the simulator): what a
    fresh copy spends before its work starts (the live AM measures the JVM start-up, service/round/amplan.py);
    a copy is late only if its time left also pays for that (factor x theta + startup). A judged copy that
    is not late is left
    (its time left only shrinks while its rate holds; a later round judges it again)."""
    known = np.isfinite(progress) & (progress > 0)
    judged = known & (elapsed >= min_elapsed)
    left = progress_remaining(progress, elapsed)
    stalled = (progress == 0) & (elapsed >= min_elapsed) & (elapsed > 0)
    late = np.where(known, judged & (left >= factor * theta + startup), stalled | (elapsed >= threshold))
    with np.errstate(invalid="ignore"):
        wait = np.where(known, min_elapsed - elapsed, threshold - elapsed)
    wait = np.where(late | (known & judged) | ~np.isfinite(wait), math.inf, np.maximum(wait, 0.0))
    return late, wait


def fresh_copy_time(
    theta: npt.NDArray[np.float64],
    finished: npt.NDArray[np.int64],
    progress: npt.NDArray[np.float64],
    elapsed: npt.NDArray[np.float64],
    phase: npt.NDArray[np.int64],
    min_elapsed: float,
) -> npt.NDArray[np.float64]:
    """Expected run time of a fresh copy, per running copy: the mean over its phase's finished tasks (theta,
    the estimator's mean of `finished` of them) and the phase's *other* running copies judged by progress
    (projected total time elapsed / p, LATE's rate estimate), weighted by count.

    Why: finished tasks alone are the fast ones while a phase runs (its stragglers have not finished), so
    their mean underestimates what a clone will take and the rule above would clone too eagerly; every
    copy is an independent draw of the same run time, so the projected totals of the running copies
    complete the sample. The copy being judged is left out of its own estimate (choice): its projection is
    the very straggle in question, and in a phase of two or three tasks it would raise the bar it is judged
    against until no straggler could pass it. With nothing else to go on it is theta (the declared or
    history estimate). `phase[i]` is the phase (index into theta/finished) of copy i."""
    known = np.isfinite(progress) & (progress > 0) & (elapsed >= min_elapsed) & (elapsed > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(known, elapsed / np.where(known, progress, 1.0), 0.0)
    m = theta.size
    s = np.bincount(phase, weights=total, minlength=m)[phase] - total  # the other copies' projections
    c = np.bincount(phase, weights=known, minlength=m)[phase] - known
    w = finished.astype(np.float64)[phase]
    th = theta[phase]
    out: npt.NDArray[np.float64] = np.where((w + c) > 0, (w * th + s) / np.maximum(w + c, 1.0), th)
    return out
