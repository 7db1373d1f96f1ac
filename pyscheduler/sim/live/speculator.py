"""Hadoop MapReduce's stock speculation as the simulated AM plays it: the CapacityScheduler half of the
cluster benchmark, whose MRAppMaster runs its DefaultSpeculator with the legacy run-time estimator
(Hadoop's defaults, mapreduce.job.speculative.*), modelled from its documented behaviour:

* a round every `RETRY_AFTER_NO_SPECULATE_S` (1 s), or `RETRY_AFTER_SPECULATE_S` (15 s) after a round
  that speculated;
* per task type (a phase here), nothing until one of its attempts succeeded; then a task whose only
  running attempt reports progress p > 0 after t seconds since its launch is estimated to run t / p in
  all; it is slow when that exceeds the mean plus `SLOW_TASK_THRESHOLD` standard deviations of the
  phase's succeeded attempts' run times (launch to finish);
* a slow task's speculation value is its estimated end less a fresh attempt's (now + that mean); each
  round speculates the task of highest value (at least 0) per task type, while the job's speculative
  attempts running stay below max(`MINIMUM_ALLOWED_TASKS`, `CAP_TOTAL_TASKS` x its tasks,
  `CAP_RUNNING_TASKS` x its running tasks).

A speculative attempt asks for a container at its phase's priority like any other attempt; the first
attempt of a task to finish wins and the AM kills the others. Progress is what the AM reports (a map of a
job with reduces reaches 0.667 at its input's end, as Hadoop scores it), so maps look slower to the
estimator than they are, as they do to Hadoop's.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

RETRY_AFTER_NO_SPECULATE_S = 1.0  # mapreduce.job.speculative.retry-after-no-speculate (1000 ms)
RETRY_AFTER_SPECULATE_S = 15.0  # mapreduce.job.speculative.retry-after-speculate (15000 ms)
SLOW_TASK_THRESHOLD = 1.0  # mapreduce.job.speculative.slowtaskthreshold (standard deviations)
MINIMUM_ALLOWED_TASKS = 10  # mapreduce.job.speculative.minimum-allowed-tasks
CAP_RUNNING_TASKS = 0.1  # mapreduce.job.speculative.speculative-cap-running-tasks
CAP_TOTAL_TASKS = 0.01  # mapreduce.job.speculative.speculative-cap-total-tasks


@dataclass(frozen=True, slots=True)
class TaskView:
    """One unfinished task as the speculator sees it: its phase, its running attempts' (launch s,
    progress), and whether an attempt of it still waits for a container."""

    phase: int
    task: int
    running: tuple[tuple[float, float], ...]
    waiting: bool = False


def allowed(total_tasks: int, running_tasks: int) -> int:
    """How many speculative attempts a job may have running at once."""
    return max(
        MINIMUM_ALLOWED_TASKS,
        int(CAP_TOTAL_TASKS * total_tasks),
        int(CAP_RUNNING_TASKS * running_tasks),
    )


def speculate(
    tasks: Iterable[TaskView], succeeded: Mapping[int, Sequence[float]], total_tasks: int, now: float
) -> list[tuple[int, int]]:
    """The (phase, task) pairs to give a speculative attempt this round: at most one per phase, the task
    of highest speculation value among the slow ones, within the job's allowance (module docstring).
    `succeeded`: per phase, its succeeded attempts' run times, s."""
    tasks = list(tasks)
    underway = sum(1 for t in tasks if len(t.running) > 1 or (t.running and t.waiting))
    running = sum(1 for t in tasks if t.running)
    room = allowed(total_tasks, running) - underway
    best: dict[int, tuple[float, int]] = {}
    for t in tasks:
        times = succeeded.get(t.phase, ())
        if len(t.running) != 1 or t.waiting or not times:
            continue
        launch, progress = t.running[0]
        if progress <= 0.0 or now <= launch:
            continue
        mean = statistics.fmean(times)
        sd = statistics.pstdev(times) if len(times) > 1 else 0.0
        estimated = (now - launch) / progress
        if estimated <= mean + SLOW_TASK_THRESHOLD * sd:
            continue
        value = (launch + estimated) - (now + mean)
        if value >= 0.0 and (t.phase not in best or value > best[t.phase][0]):
            best[t.phase] = (value, t.task)
    out = []
    for phase in sorted(best):
        if room <= 0:
            break
        out.append((phase, best[phase][1]))
        room -= 1
    return out
