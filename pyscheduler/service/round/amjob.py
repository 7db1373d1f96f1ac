"""An AM-helper job as the core sees it: the profile as a core Job, the reported attempts replayed onto
it (copy by copy, or from their counts per task), the running copies as snapshot attempts, and the
reports as the copy estimator's records (estimate/copies.py, through service/state/amreports.py). Pure
translation of what the AM reported; no state, no gRPC."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pyscheduler.estimate.copies import Report, work_start
from pyscheduler.objects import Attempt, Job, Phase, Resources, TaskState
from pyscheduler.service.roundsfirst import EVERY, checkpoint
from pyscheduler.service.state.amreports import task_index, waiting_clone
from pyscheduler.wire import pb

_PENDING, _RUNNING, _FINISHED = int(TaskState.PENDING), int(TaskState.RUNNING), int(TaskState.FINISHED)
_INT8_MAX = 127  # Phase.copies and Phase.peak are int8
IntArray = npt.NDArray[np.int64]


def job_of(p: Any, stats: Mapping[str, tuple[float, float]]) -> Job:
    """The profile as a core Job, θ and σ per phase from `stats` (1 s and 0 where none is known)."""
    phases = []
    for ph in p.phases:
        checkpoint()  # a phase's arrays are made here: RM rounds first (service/roundsfirst.py)
        phases.append(
            Phase(
                ph.phase_id,
                ph.tasks,
                Resources((float(ph.demand.vcores), float(ph.demand.memory_mb))),
                *stats.get(ph.phase_id, (1.0, 0.0)),
                tuple(ph.parents),
            )
        )
    return Job(p.application_id, p.submit_time_ms / 1000.0, phases, p.job_name, p.application_id)


def replay(job: Job, attempts: Sequence[Any]) -> None:
    """Puts the AM's reported attempts on the job's phases, so the core sees the job as it runs: copies
    started (one per attempt that had a container, and per clone waiting for one), losers ended, a
    success finishing its task. A phase whose parents all finished becomes runnable, and its clones are
    bounded by the parents' copies (Dolly 3.2), as in the simulator. Attempts of unknown tasks are
    ignored."""
    by_task: dict[tuple[str, int], list[int]] = {}  # task -> [copies, failed or killed, succeeded]
    for n, a in enumerate(attempts):
        if n % EVERY == EVERY - 1:
            checkpoint()  # RM rounds first (service/roundsfirst.py), here and below
        state = a.state
        if state == pb.ATTEMPT_WAITING and not a.is_clone:
            continue  # an original waiting for its container (a waiting clone counts: `waiting_clone`)
        i = task_index(a.task_id)
        if i is None:
            continue
        counts = by_task.get((a.phase_id, i))
        if counts is None:
            counts = by_task[(a.phase_id, i)] = [0, 0, 0]
        counts[0] += 1
        if state in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED):
            counts[1] += 1
        elif state == pb.ATTEMPT_SUCCEEDED:
            counts[2] = 1
    phases = {ph.phase_id: ph for ph in job.phases}
    for n, ((phase_id, i), (copies, ended, won)) in enumerate(by_task.items()):
        if n % EVERY == EVERY - 1:
            checkpoint()
        ph = phases.get(phase_id)
        if ph is None or i >= ph.num_tasks:
            continue
        for _ in range(copies):
            ph.start_copy(i)
        for _ in range(ended):
            ph.end_copy(i, False)
        if won:
            ph.end_copy(i, True)


def replay_counted(job: Job, counts: Mapping[str, IntArray], attempts: Sequence[Any]) -> None:
    """`replay` from the copies counted per task as the AM reported them: per phase id, one row per task
    (its index, copies, copies failed or killed, copies succeeded: `KeptReports.task_rows`,
    service/state/amkept.py). The same phase state, set per phase at once instead of one copy at a time, so
    that a plan's cost follows the job's tasks, not its attempts one by one. `job` is fresh from `job_of`
    (no copy started yet). When a task has more copies than a phase's int8 counters hold, the job is
    replayed from `attempts` copy by copy, as `replay` would (and fails as it would)."""
    rows: list[tuple[Phase, IntArray]] = []
    for ph in job.phases:
        got = counts.get(ph.phase_id)
        if got is None or not len(got):
            continue
        got = got[got[:, 0] < ph.num_tasks]  # (tasks the profile does not have: ignored)
        if (got[:, 1] > _INT8_MAX).any():
            replay(job, attempts)
            return
        rows.append((ph, got))
    checkpoint()  # RM rounds first (service/roundsfirst.py)
    for ph, got in rows:
        i, c, e, w = got[:, 0], got[:, 1], got[:, 2], (got[:, 3] > 0).astype(np.int64)
        live = c - e  # copies not failed or killed: one of them won, when the task did
        won = w > 0
        state = np.where(won, _FINISHED, np.where(live > 0, _RUNNING, _PENDING))
        ph.state[i] = state
        ph.copies[i] = live - w  # the winner ended; the others are the race's losers
        ph.peak[i] = c  # every copy started before any ended
        ph.num_pending = ph.num_tasks - len(i) + int(np.count_nonzero(state == _PENDING))
        ph.num_finished = int(np.count_nonzero(won))
        ph.num_losers = int((live - w)[won].sum())
        ph.version = int((c + e + w).sum())  # one step per copy started and per copy ended


@dataclass(frozen=True, slots=True)
class ReportedAttempt(Attempt):
    """A running attempt as the AM reported it, with Hadoop's progress score (fraction of its work done):
    the attribute policies read for a copy's progress, as from the simulator's attempts."""

    progress: float = 0.0


def running(
    job_id: str,
    attempts: Sequence[Any],
    first: Mapping[str, Report],
    now: float,
    startup_s: float | None = None,
) -> list[ReportedAttempt]:
    """The job's copies for the snapshot: the running ones (in a container) with the start of their work
    (`work_start`) and progress, and the clones still waiting for a container (progress nan, from when
    they were reported: in the simulator a clone runs once placed, and a late task gets its next clone
    only when that one is late as well; counted as nothing, a waiting clone let the same task get its
    second clone a round later). A copy still at progress 0 once the usual start-up (`startup_s`) is over
    carries progress 0 from launch + startup_s: after the policy's progress_after seconds of such work it
    is stalled, so late (`residual.late_copies`; at 0 progress LATE has no rate). Any other copy without a
    rate yet carries progress nan (judged by the elapsed-time rule from its launch)."""
    out: list[ReportedAttempt] = []
    for n, a in enumerate(attempts):
        if n % EVERY == EVERY - 1:
            checkpoint()  # RM rounds first (service/roundsfirst.py)
        if a.state != pb.ATTEMPT_RUNNING and a.state != pb.ATTEMPT_WAITING:
            continue  # neither running nor a clone waiting (speed: most reports are of ended attempts)
        i = task_index(a.task_id)
        if i is None:
            continue
        if waiting_clone(a):  # a copy asked for: not late, so it holds off the next clone
            at = min(a.time_ms / 1000.0, now)
            out.append(ReportedAttempt(a.attempt_id, job_id, a.phase_id, i, "", True, at, math.nan))
            continue
        if a.state != pb.ATTEMPT_RUNNING or not a.container_id:
            continue
        launch = (a.launch_time_ms or a.time_ms) / 1000.0
        began = work_start(launch, first.get(a.attempt_id), (a.time_ms / 1000.0, a.progress))
        if began is not None:
            start, progress = began, a.progress
        elif a.progress == 0 and startup_s is not None and launch + startup_s < now:
            start, progress = launch + startup_s, 0.0  # stalled once progress_after has passed
        else:
            start, progress = launch, math.nan
        out.append(
            ReportedAttempt(
                a.attempt_id, job_id, a.phase_id, i, a.node_id, a.is_clone, min(start, now), progress
            )
        )
    return out


def no_data_means(job: Job, known: frozenset[str], running: Sequence[ReportedAttempt], now: float) -> None:
    """A phase with no finished task and no recurring-job history has no estimate of a fresh copy's run
    time (`job_of` puts 1 s there, a placeholder): it takes the median projected run time (elapsed work /
    progress, LATE's rate) of its own running copies that report progress. Against 1 s, any task alone
    in its phase, or judged before its siblings reported twice, looked late and got clones at once. As
    Hadoop's speculator, which estimates from the job's finished tasks of the same type, a phase with
    nothing to compare against gets no late clone by progress: a lone copy cannot be late against
    itself."""
    by_phase: dict[str, list[float]] = {}  # one pass over the copies, not one per phase
    for i, a in enumerate(running):
        if i % EVERY == 0:
            checkpoint()
        if math.isfinite(a.progress) and a.progress > 0 and now > a.start_time:
            by_phase.setdefault(a.phase_id, []).append((now - a.start_time) / a.progress)
    for ph in job.phases:
        if ph.phase_id in known:
            continue
        totals = by_phase.get(ph.phase_id)
        if totals:
            ph.mean = statistics.median(totals)
