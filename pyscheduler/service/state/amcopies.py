"""The running copies of tasks as the AM helpers reported them (`Copy`), which the round's clone yielding,
released beaten clones and the queues' reclaim decide among."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Copy:
    """A running attempt as the AM helper last reported it."""

    app_id: str
    task_id: str
    attempt_id: str
    container_id: str
    is_clone: bool
    progress: float  # 0..1
    launch_ms: int  # 0: unknown
    per_task: bool = False  # its task was named per task (a late copy, the phase tail): the AM relaunches it
    last_stage: bool = False  # of a phase with parents that no phase waits for: the job's last tasks
    # when it finishes at the rate its progress grew since its work began (estimate.copies.work_start: the
    # JVM's start-up left out), ms on the AM's clock; None until two reports show progress growing
    finish_est_ms: float | None = None
    # its task is known to straggle (estimate.copies.judge: its copies have more time left than a fresh
    # copy of its phase takes): the task's clones at launch are its way out, and do not yield
    straggling: bool = False
    # its task is covered (estimate.copies.judge): a copy timed at its rate has at most a fresh copy's run
    # time of its phase left, so a clone of it is worth the least (its clones yield first among their kind)
    covered: bool = False


# the running copies (of the applications passed, when core_round is told `scoped`)
CopySource = Callable[..., list[Copy]]
