"""The policy interface: Snapshot in, Decisions out; a name -> factory registry.

See the package docstring (pyscheduler/policies/__init__.py) for the contract.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import ClusterState, Decision, DecisionKind, Job, Phase
from pyscheduler.objects.job import Attempt
from pyscheduler.policies.attempts import AttemptColumns

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class SnapshotError(ValueError):
    """A snapshot that no policy can reason about (names the offending field)."""


@runtime_checkable
class PhaseEstimator(Protocol):
    """Supplies (theta, sigma): mean and SD of a phase's task run time (see pyscheduler.estimate)."""

    def estimate(self, job: Job, phase: Phase) -> tuple[float, float]: ...


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a policy sees: the clock time, the cluster (array-native), active jobs, running attempts.

    `jobs` are the active jobs (arrived, not finished), in any order. `attempts` are running copies (needed
    only for kill decisions). `estimator` overrides the phases' declared mean/SD when given.
    """

    time: float
    cluster: ClusterState
    jobs: Sequence[Job]
    attempts: Sequence[Attempt] = ()
    estimator: PhaseEstimator | None = None
    # what a fresh copy spends before its work starts, s (the live AM measures task JVM start-ups,
    # service/round/amplan.py; 0 in the simulator): the late-copy rules count it against a clone
    startup_s: float = 0.0

    def validate(self) -> None:
        """Raise SnapshotError naming the field if the snapshot is malformed."""
        if not math.isfinite(self.time):
            raise SnapshotError(f"Snapshot.time must be finite, got {self.time!r}")
        if not (math.isfinite(self.startup_s) and self.startup_s >= 0):
            raise SnapshotError(f"Snapshot.startup_s must be finite >= 0, got {self.startup_s!r}")
        dims = len(self.cluster.dims)
        jobs = self.jobs
        # a quick pass first; the loop in _check_jobs names the culprit
        if len({j.job_id for j in jobs}) != len(jobs) or any(
            p.demand.dims != dims for j in jobs for p in j.phases
        ):
            self._check_jobs(dims)
        if self.cluster.size and not np.isfinite(self.cluster.free).all():
            raise SnapshotError("Snapshot.cluster.free must be finite")

    def _check_jobs(self, dims: int) -> None:
        seen: set[str] = set()
        for j in self.jobs:
            if j.job_id in seen:
                raise SnapshotError(f"Snapshot.jobs: duplicate job id {j.job_id!r}")
            seen.add(j.job_id)
            for p in j.phases:
                if p.demand.dims != dims:
                    raise SnapshotError(
                        f"Job[{j.job_id!r}].phases[{p.phase_id!r}].demand has {p.demand.dims} dims, "
                        f"cluster has {dims} ({', '.join(self.cluster.dims)})"
                    )

    def attempt_columns(self) -> AttemptColumns:
        """`attempts` as numpy columns (policies/attempts.py): the driver's own when its sequence has them
        (the simulator's), else built from the Attempt objects."""
        # ColumnSource's test, without a runtime Protocol check's cost (twice a round in the simulator)
        columns = getattr(self.attempts, "columns", None)
        if callable(columns):
            result: AttemptColumns = columns(self.jobs)
            return result
        return AttemptColumns.from_attempts(self.attempts, self.jobs)

    def theta_sigma(self, job: Job, phase: Phase) -> tuple[float, float]:
        if self.estimator is None:
            return phase.mean, phase.sd
        theta, sigma = self.estimator.estimate(job, phase)
        if not (math.isfinite(theta) and math.isfinite(sigma)) or theta < 0 or sigma < 0:
            raise SnapshotError(
                f"estimate for Job[{job.job_id!r}].phases[{phase.phase_id!r}]: {theta!r}, {sigma!r}"
            )
        return theta, sigma


class Priority(NamedTuple):  # NamedTuple: one per job per round, cheap to create
    job_id: str
    priority: int  # lower runs first (DollyMP: the size class p_j of Algorithm 1)
    rank: int  # position in the global order
    reason: str


@dataclass(frozen=True, slots=True)
class Placement:
    job_id: str
    phase_id: str
    task_index: int
    node_id: str
    is_clone: bool
    reason: str


class CloneGrant(NamedTuple):
    job_id: str
    phase_id: str
    clones: int  # clones per task allowed (0..max_clones)
    reason: str


@dataclass(frozen=True, slots=True)
class OmegaDecision:
    job_id: str
    omega: float  # seconds a downstream clone waits for an exclusive upstream copy (Dolly Section 4.4)
    reason: str


@dataclass(frozen=True, slots=True)
class Kill:
    attempt_id: str
    job_id: str
    phase_id: str
    task_index: int
    node_id: str
    reason: str


class Deferral(NamedTuple):
    job_id: str
    phase_id: str
    tasks: int  # tasks of this phase left waiting
    reason: str  # "waiting_for_resources", "infeasible", ...
    detail: str = ""


class _OfJob(Protocol):
    @property
    def job_id(self) -> str: ...


_D = TypeVar("_D", bound=_OfJob)  # a decision of one job (Decisions.to_records)


@dataclass(slots=True)
class _PlacementChunk:
    job_pos: IntArray  # position in Snapshot.jobs
    phase_k: IntArray
    task_index: IntArray
    node_row: IntArray
    is_clone: BoolArray
    reason: str


@dataclass(slots=True)
class Decisions:
    """The output of one policy round. Placements are stored as columns (numpy) and materialised on demand."""

    time: float
    jobs: Sequence[Job]
    node_ids: Sequence[str]
    priorities: list[Priority] = field(default_factory=list)
    clone_grants: list[CloneGrant] = field(default_factory=list)
    omegas: list[OmegaDecision] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    deferrals: list[Deferral] = field(default_factory=list)
    chunks: list[_PlacementChunk] = field(default_factory=list)
    # (job id, phase id, task index) of the running tasks the policy judged late this round (a late copy's
    # candidates, e.g. policies/late.py): the live AM plan names these per task (service/round/amplan.py)
    late: list[tuple[str, str, int]] = field(default_factory=list)
    # earliest time the policy wants another round although nothing else changed (a timer, e.g. a running
    # task becoming late); inf: only events matter. Drivers may run that round later (their tick).
    wake_at: float = math.inf

    def add_placements(
        self,
        job_pos: IntArray,
        phase_k: IntArray,
        task_index: IntArray,
        node_row: IntArray,
        is_clone: BoolArray,
        reason: str,
    ) -> None:
        if len(task_index):
            self.chunks.append(_PlacementChunk(job_pos, phase_k, task_index, node_row, is_clone, reason))

    @property
    def num_placements(self) -> int:
        return sum(len(c.task_index) for c in self.chunks)

    def iter_placements(self, job_id: str | None = None, clones_only: bool = False) -> Iterator[Placement]:
        """The placements in their order; with `job_id`, that job's only, with `clones_only` clones only (the
        others are not materialised: an AM plan decides among the whole cluster's jobs and reads its own
        job's clones, service/round/amplan.py)."""
        pos = None if job_id is None else [p for p, j in enumerate(self.jobs) if j.job_id == job_id]
        for c in self.chunks:
            cols: list[npt.NDArray[Any]] = [c.job_pos, c.phase_k, c.task_index, c.node_row, c.is_clone]
            if pos is not None or clones_only:
                keep = np.isin(c.job_pos, pos) if pos is not None else np.ones(len(c.job_pos), dtype=bool)
                if clones_only:
                    keep &= c.is_clone
                cols = [col[keep] for col in cols]
            for jp, k, t, n, cl in zip(*(col.tolist() for col in cols), strict=True):
                job = self.jobs[jp]
                yield Placement(job.job_id, job.phases[k].phase_id, t, self.node_ids[n], bool(cl), c.reason)

    @property
    def placements(self) -> list[Placement]:
        return list(self.iter_placements())

    def to_records(self, job_id: str | None = None, clones_only: bool = False) -> list[Decision]:
        """Every decision as a pyscheduler.objects.Decision for the decision log; with `job_id`, that job's
        only, with `clones_only` no placement of an original (the same records in the same order as those
        of the whole list that these keep)."""
        t = self.time
        app = {j.job_id: j.application_id for j in self.jobs}

        def mine(items: Sequence[_D]) -> Sequence[_D]:
            return items if job_id is None else [d for d in items if d.job_id == job_id]

        out: list[Decision] = [
            Decision(
                t,
                DecisionKind.PRIORITY,
                p.reason,
                app.get(p.job_id, ""),
                p.job_id,
                inputs={"priority": p.priority, "rank": p.rank},
            )
            for p in mine(self.priorities)
        ]
        for pl in self.iter_placements(job_id, clones_only):
            out.append(
                Decision(
                    t,
                    DecisionKind.PLACEMENT,
                    pl.reason,
                    app.get(pl.job_id, ""),
                    pl.job_id,
                    f"{pl.job_id}/{pl.phase_id}/{pl.task_index}",
                    pl.node_id,
                    inputs={"is_clone": pl.is_clone},
                )
            )
        for g in mine(self.clone_grants):
            out.append(
                Decision(
                    t,
                    DecisionKind.CLONE_GRANT,
                    g.reason,
                    app.get(g.job_id, ""),
                    g.job_id,
                    inputs={"phase_id": g.phase_id, "clones": g.clones},
                )
            )
        for o in mine(self.omegas):
            out.append(
                Decision(
                    t,
                    DecisionKind.OMEGA,
                    o.reason,
                    app.get(o.job_id, ""),
                    o.job_id,
                    inputs={"omega": o.omega},
                )
            )
        for k in mine(self.kills):
            out.append(
                Decision(
                    t,
                    DecisionKind.KILL,
                    k.reason,
                    app.get(k.job_id, ""),
                    k.job_id,
                    f"{k.job_id}/{k.phase_id}/{k.task_index}",
                    k.node_id,
                    inputs={"attempt_id": k.attempt_id},
                )
            )
        for d in mine(self.deferrals):
            out.append(
                Decision(
                    t,
                    DecisionKind.DEFERRAL,
                    d.reason,
                    app.get(d.job_id, ""),
                    d.job_id,
                    detail=d.detail,
                    inputs={"phase_id": d.phase_id, "tasks": d.tasks},
                )
            )
        return out


class Policy(Protocol):
    """A scheduling policy: a pure function of a snapshot (it must not mutate the snapshot).

    A policy may set a class attribute `timer_driven = False` when its decisions change only with events
    (arrivals, copies ending) or at its own `Decisions.wake_at`; drivers then skip periodic heartbeat rounds
    for it. Without the attribute a policy is treated as timer-driven (speculation that watches progress).
    """

    name: str

    def decide(self, snapshot: Snapshot) -> Decisions: ...


PolicyFactory = Callable[..., Policy]
_REGISTRY: dict[str, PolicyFactory] = {}


def register_policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Decorator: register a factory (a class or function taking keyword options) under `name`."""

    def deco(factory: PolicyFactory) -> PolicyFactory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"policy {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory

    return deco


def get_policy(name: str, **options: Any) -> Policy:
    """Build the policy registered as `name` with its options; unknown names/options raise ValueError."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(policy_names())}") from None
    try:
        return factory(**options)
    except TypeError as e:
        raise ValueError(f"policy {name!r}: bad options {sorted(options)}: {e}") from e


def policy_names() -> list[str]:
    return sorted(_REGISTRY)
