"""Jobs as DAGs of phases, their tasks and task attempts (originals and clones). State only, no policy.

Task state is kept array-native per phase (one int8 per task for its state, one for its running copies)
so that a job with 10,000 tasks costs two small numpy arrays rather than 10,000 objects. `Task` and
`Attempt` are the record views drivers (simulator, service) exchange.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from pyscheduler.objects.resources import Resources
from pyscheduler.wire import pb

Int8Array = npt.NDArray[np.int8]

# At most this many clones of a task, three copies in all (DollyMP Sec. 4, Corollary 4.1): the cap of the
# service's clone plans (service/round/amplan.py), of the simulated AM helper (sim/live/appmaster.py) and
# of the real one (yarn-plugin AmConfig.HARD_MAX_CLONES). Defined once, in the wire contract
# (proto/dollymp/v1/scheduler.proto, CloneCap.MAX_CLONES_PER_TASK); Python's one name for it is this.
MAX_CLONES: int = pb.MAX_CLONES_PER_TASK


class TaskState(enum.IntEnum):
    PENDING = 0  # no running copy, not finished (never started, or every copy failed)
    RUNNING = 1  # at least one copy (the original or a clone) running
    FINISHED = 2  # some copy finished; the remaining copies are losers to kill


_PENDING, _RUNNING, _FINISHED = int(TaskState.PENDING), int(TaskState.RUNNING), int(TaskState.FINISHED)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One running copy of a task. `is_clone` is False for the first copy launched (the original)."""

    attempt_id: str
    job_id: str
    phase_id: str
    task_index: int
    node_id: str
    is_clone: bool
    start_time: float


@dataclass(frozen=True, slots=True)
class Task:
    """A read-only view of one task of a phase."""

    job_id: str
    phase_id: str
    index: int
    state: TaskState
    running_copies: int

    @property
    def task_id(self) -> str:
        return f"{self.job_id}/{self.phase_id}/{self.index}"


def _check_stat(owner: str, name: str, value: float) -> float:
    f = float(value)
    if not math.isfinite(f) or f < 0:
        raise ValueError(f"{owner}.{name} must be finite and >= 0, got {value!r}")
    return f


@dataclass(eq=False, slots=True)
class Phase:
    """A phase phi_j^k: n tasks with the same demand; theta (mean) and sigma (SD) of the task run time.

    `mean`/`sd` are the statistics the job declared (or the estimator supplied); policies may override them
    with pyscheduler.estimate. `parents` names upstream phases of the same job (DAG edges).
    """

    phase_id: str
    num_tasks: int
    demand: Resources
    mean: float
    sd: float
    parents: tuple[str, ...] = ()
    state: Int8Array = field(init=False, repr=False)
    copies: Int8Array = field(init=False, repr=False)
    peak: Int8Array = field(init=False, repr=False)  # most copies each task ever had at once
    num_pending: int = field(init=False)
    num_finished: int = field(init=False)
    num_losers: int = field(init=False)  # running copies of finished tasks (losers of the race)
    version: int = field(init=False)  # bumped whenever a copy starts or ends (readers cache on it)
    _peak_min: tuple[int, int] = field(init=False, repr=False)  # (version, peak.min()) cache

    def __post_init__(self) -> None:
        owner = f"Phase[{self.phase_id!r}]"
        if not self.phase_id:
            raise ValueError("Phase.phase_id must be non-empty")
        if isinstance(self.num_tasks, bool) or int(self.num_tasks) != self.num_tasks or self.num_tasks < 1:
            raise ValueError(f"{owner}.num_tasks must be an integer >= 1, got {self.num_tasks!r}")
        if self.demand.is_zero():
            raise ValueError(f"{owner}.demand must be non-zero in some dimension")
        self.mean = _check_stat(owner, "mean", self.mean)
        self.sd = _check_stat(owner, "sd", self.sd)
        self.parents = tuple(self.parents)
        self.state = np.zeros(self.num_tasks, dtype=np.int8)
        self.copies = np.zeros(self.num_tasks, dtype=np.int8)
        self.peak = np.zeros(self.num_tasks, dtype=np.int8)
        self.num_pending = self.num_tasks
        self.num_finished = 0
        self.num_losers = 0
        self.version = 0
        self._peak_min = (-1, 0)

    @property
    def num_remaining(self) -> int:
        """n_j^k(t): tasks not finished (Eq. 16)."""
        return self.num_tasks - self.num_finished

    @property
    def finished(self) -> bool:
        return self.num_finished == self.num_tasks

    def peak_min(self) -> int:
        """int(peak.min()): the fewest copies any task of the phase ever had at once (cached per version)."""
        at, value = self._peak_min
        if at != self.version:
            value = int(self.peak.min())
            self._peak_min = (self.version, value)
        return value

    def task(self, job_id: str, index: int) -> Task:
        return Task(job_id, self.phase_id, index, TaskState(int(self.state[index])), int(self.copies[index]))

    def start_copy(self, index: int) -> bool:
        """Record one more running copy of task `index`; returns True if it is a clone."""
        st = self.state.item(index)  # (.item: Python ints, faster to compare: speed)
        if st == _FINISHED:
            raise ValueError(f"Phase[{self.phase_id!r}]: task {index} already finished")
        if st == _PENDING:
            self.state[index] = _RUNNING
            self.num_pending -= 1
        c = self.copies.item(index) + 1
        self.copies[index] = c
        self.version += 1
        if c > self.peak.item(index):
            self.peak[index] = c
        return c > 1

    def end_copy(self, index: int, succeeded: bool) -> None:
        """A copy of task `index` ended; success finishes the task (other copies become losers)."""
        c = self.copies.item(index)
        if self.state.item(index) == _FINISHED:
            if c > 0:
                self.copies[index] = c - 1
                self.num_losers -= 1
                self.version += 1
            return
        if c <= 0:
            raise ValueError(f"Phase[{self.phase_id!r}]: task {index} has no running copy")
        self.copies[index] = c - 1
        self.version += 1
        if succeeded:
            self.state[index] = _FINISHED
            self.num_finished += 1
            self.num_losers += c - 1
        elif c == 1:
            self.state[index] = _PENDING
            self.num_pending += 1


@dataclass(eq=False, slots=True)
class Job:
    """A job j: arrival a_j, a name (recurring jobs share it), and a DAG of phases.

    The constructor validates the DAG (unknown parents, duplicate ids, cycles) and stores a topological
    order of phase indices (`topo`) plus each phase's parent indices (`parent_idx`).
    """

    job_id: str
    arrival: float
    phases: list[Phase]
    name: str = ""
    application_id: str = ""
    app_priority: int = 0  # YARN application priority (higher first), a tie-break among equal classes
    topo: tuple[int, ...] = field(init=False, repr=False)
    parent_idx: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    phase_index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        owner = f"Job[{self.job_id!r}]"
        if not self.job_id:
            raise ValueError("Job.job_id must be non-empty")
        a = float(self.arrival)
        if not math.isfinite(a):
            raise ValueError(f"{owner}.arrival must be finite, got {self.arrival!r}")
        self.arrival = a
        if isinstance(self.app_priority, bool) or not isinstance(self.app_priority, int):
            raise ValueError(f"{owner}.app_priority must be an int, got {self.app_priority!r}")
        if not self.phases:
            raise ValueError(f"{owner}.phases must be non-empty")
        self.phase_index = {}
        for i, p in enumerate(self.phases):
            if p.phase_id in self.phase_index:
                raise ValueError(f"{owner}.phases: duplicate phase id {p.phase_id!r}")
            self.phase_index[p.phase_id] = i
        dims = self.phases[0].demand.dims
        parents: list[tuple[int, ...]] = []
        for p in self.phases:
            if p.demand.dims != dims:
                raise ValueError(
                    f"{owner}.phases[{p.phase_id!r}].demand has {p.demand.dims} dims, not {dims}"
                )
            idx = []
            for name in p.parents:
                if name not in self.phase_index:
                    raise ValueError(f"{owner}.phases[{p.phase_id!r}].parents: unknown phase {name!r}")
                idx.append(self.phase_index[name])
            parents.append(tuple(idx))
        self.parent_idx = tuple(parents)
        self.topo = _topological_order(owner, self.phases, self.parent_idx)

    @property
    def finished(self) -> bool:
        for p in self.phases:  # noqa: SIM110 -- a plain loop is faster; read for every job every round
            if p.num_finished != p.num_tasks:
                return False
        return True

    def phase(self, phase_id: str) -> Phase:
        try:
            return self.phases[self.phase_index[phase_id]]
        except KeyError:
            raise KeyError(f"Job[{self.job_id!r}] has no phase {phase_id!r}") from None

    def ready(self, k: int) -> bool:
        """Phase k may run: every parent phase has finished (Eq. 7)."""
        phases = self.phases
        return all(phases[q].num_finished == phases[q].num_tasks for q in self.parent_idx[k])

    def total_tasks(self) -> int:
        return sum(p.num_tasks for p in self.phases)


def _topological_order(
    owner: str, phases: Sequence[Phase], parent_idx: Sequence[tuple[int, ...]]
) -> tuple[int, ...]:
    n = len(phases)
    indeg = [len(set(ps)) for ps in parent_idx]
    children: list[list[int]] = [[] for _ in range(n)]
    for k, ps in enumerate(parent_idx):
        for q in set(ps):
            children[q].append(k)
    order = [k for k in range(n) if indeg[k] == 0]
    i = 0
    while i < len(order):
        for c in children[order[i]]:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
        i += 1
    if len(order) != n:
        stuck = sorted(phases[k].phase_id for k in range(n) if indeg[k] > 0)
        raise ValueError(f"{owner}.phases: the DAG has a cycle through {stuck}")
    return tuple(order)
