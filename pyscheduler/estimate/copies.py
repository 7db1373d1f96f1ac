"""One estimator of running copies: when a copy's work began, when it finishes, whether it is stalled, what a
fresh copy of its phase takes, and which copy of a task leads.

Every live rule that reads a copy's progress uses these functions: the AM's clone plan
(service/round/amplan.py), the copies the service may preempt (service/round/yielding.py) and the copies it
releases when beaten. Inputs are typed records (`CopyReport`, built from the AM helper's reports at the wire
boundary), times in seconds on the AM's clock; no gRPC, no mirror.

Progress is Hadoop's progress score (fraction of a task's work done, LATE, Zaharia et al., OSDI'08,
Sec. 4). It grows in steps (a map's records, the StragglerJob's twentieths), after a JVM start-up that
reports nothing; so a copy's rate is taken between two reports that show progress (`work_start`), and
before a second step only its earliest finish is known (`finish_at_least`).
"""

from __future__ import annotations

import enum
import math
import statistics
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

from pyscheduler.estimate.medians import LeaveOut

Report = tuple[float, float]  # (time s, progress) of one progress report


class Kind(enum.Enum):
    """Where a reported attempt is in its life, as far as the estimates care."""

    WAITING_CLONE = "waiting_clone"  # a clone the AM launched that still waits for a container
    RUNNING = "running"  # in a container
    SUCCEEDED = "succeeded"
    ENDED = "ended"  # failed or killed
    OTHER = "other"  # anything else (an original not yet in a container)


@dataclass(frozen=True, slots=True)
class CopyReport:
    """One attempt as its AM last reported it."""

    attempt_id: str
    task_id: str
    phase_id: str
    kind: Kind
    is_clone: bool
    time_s: float  # of the report
    launch_s: float  # of the container; the report's time when unknown
    progress: float  # 0..1
    duration_s: float = 0.0  # run time of a finished attempt
    first: Report | None = None  # its first report with progress


def work_start(launch_s: float, first: Report | None, last: Report) -> float | None:
    """When an attempt's work began, seen from two of its progress reports: the rate between the first
    report with progress and the latest, extended back to progress 0, never before its launch. None until
    two reports show progress growing.

    Why not the launch: a task JVM's start-up (seconds on a busy node) reports no progress, and LATE's
    estimate from the launch time counts it as slowness, so every young copy looks late. Why not the
    first report minus the usual start-up (`StartupEstimate`): on a busy node a JVM that took longer than
    the median looks late at once, and on the cluster benchmark that cloned all four maps of a job
    18-20 s after their launch, every clone losing."""
    if first is None:
        return None
    (t1, p1), (t2, p2) = first, last
    if not (p2 > p1 > 0 and t2 > t1):
        return None
    return max(launch_s, t2 - p2 * (t2 - t1) / (p2 - p1))


def finish_at_rate(c: CopyReport) -> float | None:
    """When copy `c` finishes at the rate its progress grew since its work began (`work_start`), s; None
    until two reports show progress growing."""
    began = work_start(c.launch_s, c.first, (c.time_s, c.progress))
    if began is None or c.progress <= 0:
        return None
    return began + (c.time_s - began) / min(c.progress, 1.0)


def finish_at_least(c: CopyReport) -> float | None:
    """The earliest copy `c` can finish, s, from its first report with progress (t1, p1) and its latest
    (t, p): its work, begun after its launch, takes at least (t - t1) / p. None before a report with
    progress.

    Why a bound: the rate (`finish_at_rate`) needs a second step, which a straggler reaches late (a map
    whose copy drew 752 s showed its second step 75 s after its work began). The bound holds when one
    step is at most p1 (progress below p + p1 at t and at least p1 at t1, at a constant rate:
    D > (t - t1) / p), and grows with every report that shows no new step."""
    if c.first is None or c.progress <= 0:
        return None
    return c.launch_s + max(0.0, c.time_s - c.first[0]) / min(c.progress, 1.0)


class StartupEstimate:
    """How long recent attempts took from their launch to their first report with progress: the median of
    the last `keep`, once `least` were seen. It covers the JVM start-up, the first unit of work and the
    report's delay, and errs on the long side as the cost a clone pays before it works
    (`Snapshot.startup_s`), so clones come less eagerly than with the start of work extrapolated from two
    reports (which came out at about 5 s where copies showed no progress for 15 s)."""

    def __init__(self, keep: int = 64, least: int = 3) -> None:
        self._seen: deque[float] = deque(maxlen=keep)
        self.least = least

    def add(self, seconds: float) -> None:
        if math.isfinite(seconds) and seconds >= 0:
            self._seen.append(seconds)

    def median(self) -> float | None:
        return statistics.median(self._seen) if len(self._seen) >= self.least else None


# Hadoop's MapTask splits its progress score in two when its job has reduces: reading its input (its "map"
# phase, 0.667 of the score) and sorting its output (0.333).
MAP_PHASE_SHARE = 0.667


def work_progress(progress: float, share: float = MAP_PHASE_SHARE) -> float:
    """A map copy's progress through its map phase, from the progress score of a MapTask whose job has
    reduces: min(1, progress / share). Every estimate here extends a copy's rate to progress 1, but a
    map's score reaches only 0.667 when its input is read, so without this a map copy's run, and a fresh
    copy's, was taken for 1.5 x its length. The sort that follows is not timed (short where a map's
    output is small; a real map with a long sort is taken for shorter than it is)."""
    return min(1.0, progress / share) if progress > 0 else progress


# Hadoop's ReduceTask splits its progress score in three equal parts: copy (the shuffle), sort and reduce.
REDUCE_PHASE_FROM = 2.0 / 3.0


def reduce_work_progress(progress: float, start: float = REDUCE_PHASE_FROM) -> float:
    """A reduce copy's progress through its reduce phase, from a ReduceTask's progress score:
    (progress - 2/3) / (1/3), 0 until its copy and sort are done. Every estimate here extends a copy's
    rate back to progress 0 as its work's start; a reduce's score stands at 2/3 once its shuffle is done,
    so from the raw score a reduce copy looked two-thirds done as its reduce began, and two copies of
    one reduce with run times 20 s and 60 s looked due within 2 s of each other."""
    return max(0.0, min(1.0, (progress - start) / (1.0 - start)))


class Left(NamedTuple):
    """A running copy's time left, s (None: no report with progress yet), and whether its rate is known
    (`finish_at_rate`) or only its earliest finish (`finish_at_least`)."""

    s: float | None
    rated: bool


# A running copy still at progress 0 after this much work (its launch plus the usual start-up) and this
# fraction of a fresh copy's run time is stalled: it has at least a fresh copy's time left (`time_left`).
STALL_MIN_S = 10.0
STALL_FRAC = 0.15


def stalled(work_s: float, fresh_s: float | None) -> bool:
    """Whether a copy that has worked `work_s` without a first progress step is stalled, against a fresh
    copy's run time `fresh_s` of its phase (None: no fresh-copy estimate, never stalled). Progress comes
    in steps, and a copy whose first step takes 0.15 of a fresh copy's whole run is a straggler by any
    step count above six."""
    return fresh_s is not None and work_s > max(STALL_MIN_S, STALL_FRAC * fresh_s)


@dataclass(frozen=True, slots=True)
class CopyTimes:
    """What `time_left` reads of a job's copies that does not change with the time: per running copy, in
    the copies' order, (task id, its report's time, progress, launch, the later of its finish at its rate
    and its earliest finish (None: neither known), whether its rate is known); and per task with a running
    copy, what a fresh copy of its phase takes (where its phase has other copies to tell). A job's reports
    change only when its AM reports, so readers at many moments (every RM round) keep one per report
    (service/state/amregistry.py)."""

    running: tuple[tuple[str, float, float, float, float | None, bool], ...]
    fresh: Mapping[str, float]


def copy_times(copies: Sequence[CopyReport]) -> CopyTimes:
    """`CopyTimes` of `copies`: a fresh copy's time is the median run time, launch to finish, of the phase's
    other tasks' copies, finished ones and running ones at their rates."""
    finished: dict[str, list[tuple[str, float]]] = {}
    running: list[CopyReport] = []
    for c in copies:
        if c.kind is Kind.SUCCEEDED and c.duration_s > 0:
            finished.setdefault(c.phase_id, []).append((c.task_id, c.duration_s))
        elif c.kind is Kind.RUNNING:
            running.append(c)
    return copy_times_of(running, {phase_id: LeaveOut(pairs) for phase_id, pairs in finished.items()})


def copy_times_of(running: Sequence[CopyReport], finished: Mapping[str, LeaveOut]) -> CopyTimes:
    """`copy_times` of the running copies `running` (in their order) and, per phase, the run times of its
    copies that succeeded (`finished`, which a caller may keep as copies succeed: never changed here)."""
    phase_of: dict[str, str] = {}
    times: list[tuple[str, float, float, float, float | None, bool]] = []
    rated: dict[str, list[tuple[str, float]]] = {}
    for c in running:
        t = c.task_id
        phase_of[t] = c.phase_id  # (the tasks a fresh copy's time is read for)
        ends, least = finish_at_rate(c), finish_at_least(c)
        if ends is not None:
            rated.setdefault(c.phase_id, []).append((t, ends - c.launch_s))
        known = [e for e in (ends, least) if e is not None]
        finish = max(known) if known else None
        times.append((t, c.time_s, c.progress, c.launch_s, finish, ends is not None))
    medians: dict[str, LeaveOut] = {}
    for phase_id in set(phase_of.values()):
        base, pairs = finished.get(phase_id), rated.get(phase_id, [])
        if base is not None and base.values:
            medians[phase_id] = base.joined(pairs)
        elif pairs:
            medians[phase_id] = LeaveOut(pairs)
    fresh: dict[str, float] = {}
    for t, phase_id in phase_of.items():  # a fresh copy's time is read against running copies only
        m = medians[phase_id].median_without(t) if phase_id in medians else None
        if m is not None:
            fresh[t] = m
    return CopyTimes(tuple(times), fresh)


def time_left(
    copies: Sequence[CopyReport] | CopyTimes, now_s: float, startup_s: float | None = None
) -> tuple[dict[str, list[Left]], dict[str, float]]:
    """Per task: its running copies' time left, each at the later of its rate since its work began and its
    earliest finish; and what a fresh copy of its phase takes (`copy_times`; only for tasks with a running
    copy whose phase has such copies). A copy with no progress yet, once the usual start-up (`startup_s`)
    is known, is `stalled` (time left infinite, not rated) or unknown. `copies` may be their `CopyTimes`
    already."""
    times = copies if isinstance(copies, CopyTimes) else copy_times(copies)
    left: dict[str, list[Left]] = {}
    at_zero: dict[str, list[float]] = {}  # task -> work done at progress 0, s, per such copy
    for t, time_s, progress, launch_s, finish, rated in times.running:
        at = max(now_s, time_s)
        if finish is None and progress <= 0 and startup_s is not None:
            at_zero.setdefault(t, []).append(at - launch_s - startup_s)
            continue
        left.setdefault(t, []).append(Left(finish - at if finish is not None else None, rated))
    fresh = dict(times.fresh)
    for t, works in at_zero.items():
        left.setdefault(t, []).extend(
            Left(math.inf if stalled(w, fresh.get(t)) else None, False) for w in works
        )
    return left, fresh


def judge(
    copies: Sequence[CopyReport] | CopyTimes, now_s: float, startup_s: float | None = None
) -> tuple[set[str], set[str]]:
    """(tasks straggling, tasks covered), from `time_left` (`judge_left`)."""
    return judge_left(*time_left(copies, now_s, startup_s))


def judge_left(left: dict[str, list[Left]], fresh: dict[str, float]) -> tuple[set[str], set[str]]:
    """(tasks straggling, tasks covered) from `time_left`'s answer. A task straggles when a running copy
    has more time left than a fresh copy of its phase takes and no copy timed at its rate has not (a young
    clone without a rate whose earliest finish does not say it straggles is left out). A task is covered
    when a copy timed at its rate has at most a fresh copy's run time left: it finishes about as soon as a
    clone launched now could, so its clones are worth the least to its job."""
    slow_tasks: set[str] = set()
    covered: set[str] = set()
    for t, mine in left.items():
        if t not in fresh:
            continue
        slow = [c.s is not None and c.s > fresh[t] for c in mine]
        if any(slow) and all(s or not c.rated for c, s in zip(mine, slow, strict=True)):
            slow_tasks.add(t)
        if any(c.rated and c.s is not None and c.s <= fresh[t] for c in mine):
            covered.add(t)
    return slow_tasks, covered


def slow_waiting(
    copies: Sequence[CopyReport],
    now_s: float,
    skip: Collection[str],
    startup_s: float | None = None,
    times: CopyTimes | None = None,
) -> dict[str, int]:
    """Tasks whose clones still wait for a container while every running copy of the task has more time
    left than a fresh copy of its phase takes (`time_left`): task id -> its live clones (not failed or
    killed). Tasks in `skip` are left out. The core judges a task late only below its copy cap, and a
    waiting clone counts as a copy, so a task whose clones wait was never late however far its original
    straggled; named as a late copy, its waiting clones go before clones at launch. `times`: the copies'
    `CopyTimes`, when the caller keeps them."""
    waiting: dict[str, int] = {}
    live: dict[str, int] = {}
    for c in copies:
        if c.is_clone and c.kind is not Kind.ENDED:
            live[c.task_id] = live.get(c.task_id, 0) + 1
        if c.kind is Kind.WAITING_CLONE:
            waiting[c.task_id] = waiting.get(c.task_id, 0) + 1
    if not waiting:  # nothing to name (and `time_left` walks every copy)
        return {}
    left, fresh = time_left(copies if times is None else times, now_s, startup_s)
    out: dict[str, int] = {}
    for t in sorted(waiting):
        mine = left.get(t, [])
        if t in skip or t not in fresh or not mine:
            continue
        if all(c.s is not None and c.s > fresh[t] for c in mine):
            out[t] = live.get(t, 0)
    return out


class Timed(Protocol):
    """A running copy of a task as the preemption rules see it (service/round/yielding.py `Copy`)."""

    @property
    def attempt_id(self) -> str: ...
    @property
    def is_clone(self) -> bool: ...
    @property
    def progress(self) -> float: ...
    @property
    def launch_ms(self) -> int: ...
    @property
    def finish_est_ms(self) -> float | None: ...


def finish_ms(c: Timed, now_ms: int) -> float | None:
    """When copy `c` finishes, ms: at its rate since its work began when two reports showed it
    (`finish_est_ms`), else LATE's estimate (its progress rate since launch); None without either."""
    if c.finish_est_ms is not None:
        return c.finish_est_ms
    if c.progress <= 0 or c.launch_ms <= 0 or now_ms <= c.launch_ms:
        return None
    return c.launch_ms + (now_ms - c.launch_ms) / min(c.progress, 1.0)


T = TypeVar("T", bound=Timed)


def lead(copies: Sequence[T], now_ms: int) -> T:
    """The copy of one task expected to finish first (`finish_ms`); without an estimate, the original if
    it runs, else the oldest copy."""
    timed = [(f, c.attempt_id, c) for c in copies if (f := finish_ms(c, now_ms)) is not None]
    if timed:
        return min(timed, key=lambda t: (t[0], t[1]))[2]
    originals = [c for c in copies if not c.is_clone]
    pool = originals or list(copies)
    return min(pool, key=lambda c: (c.launch_ms <= 0, c.launch_ms, c.attempt_id))
