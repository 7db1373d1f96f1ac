"""Scheduling policies: DollyMP and every baseline, each a pure function of a snapshot, registered by name.

Contract
--------
A policy is any object with a `name` and `decide(snapshot: Snapshot) -> Decisions`. It must not mutate the
snapshot (it works on copies of node state) and must not read clocks or globals: time comes from
`snapshot.time`. The same policy runs under the live service (service/round/coreround.py and amplan.py call
`decide` inside the service's round) and the simulator (pyscheduler.core.DecisionLoop).
A policy object may keep caches that do not change its answers (DollyMP keeps the array view of the last
two job lists, Algorithm 1's classes until a job arrives, and omega per statistics); `decide` may be
called from several threads.

Registry (one file per policy; adding a policy = adding a file here plus one import line below)::

    @register_policy("mypolicy")
    class MyPolicy:
        name = "mypolicy"
        def __init__(self, some_option: int = 1) -> None: ...
        def decide(self, snapshot: Snapshot) -> Decisions: ...

    policy = get_policy("dollymp", max_clones=1)     # ValueError naming unknown policies / bad options
    policy_names()                                    # ["dolly", "dollymp", "fcfs", ...]

Snapshot (pyscheduler.policies.base.Snapshot)
    time      float seconds on the driver's clock
    cluster   pyscheduler.objects.ClusterState: numpy (M x D) `capacity`, `free`, `active` mask, `node_ids`,
              `index` (node id -> row). Build with ClusterState.from_nodes([Node(...)]) or .from_arrays(...);
              drivers keep one and update it incrementally (upsert / set_free / allocate / release / remove).
    jobs      active pyscheduler.objects.Job (DAG of Phase; per-task state and running copies as numpy arrays,
              updated with Phase.start_copy / Phase.end_copy)
    attempts  running pyscheduler.objects.Attempt records (for kill decisions; optional)
    estimator optional PhaseEstimator (pyscheduler.estimate.TaskStatistics) supplying theta/sigma per phase
              (TaskStatistics also carries `stragglers`, the straggler rate the "dolly" policy reads)
    `snapshot.validate()` raises SnapshotError (a ValueError naming the field) on malformed input; objects
    validate themselves at construction (negative/NaN demands, zero capacity, DAG cycles).

Decisions (pyscheduler.policies.base.Decisions), every item with a machine-readable `reason`:
    priorities    [Priority(job_id, priority, rank, reason)]  lower priority value runs first
    placements    columns of (job, phase, task, node row, is_clone); `.placements` / `.iter_placements()` give
                  Placement(job_id, phase_id, task_index, node_id, is_clone, reason); `.num_placements`
    clone_grants  [CloneGrant(job_id, phase_id, clones, reason)]  DollyMP: one per phase that runs tasks
    omegas        [OmegaDecision(job_id, omega, reason)]      delay-assignment wait (Dolly Section 4.4)
    kills         [Kill(attempt_id, job_id, phase_id, task_index, node_id, reason)]
    wake_at       time of the next round the policy wants although nothing changes (inf: none)
    deferrals     [Deferral(job_id, phase_id, tasks, reason, detail)]  reason "waiting_for_resources" or
                  "infeasible" (larger than every node)
    `.to_records()` converts everything to pyscheduler.objects.Decision for the decision log.

A placement is a proposal: the driver commits it (starting a copy with Phase.start_copy and
ClusterState.allocate) or drops it. Core policies: "fcfs", "dollymp" (the DollyMP paper; options
max_clones 0..3 for DollyMP0..3, clone_rule "paper" (default) | "idle" | "none" | "dolly", and the
extensions, each off, see dollymp.py), "default" (the production configuration, production.py),
"dollymp-ext" (dollymp with every extension on but the orders "size_class_volume" and "volume"),
"dolly" (arrival order with Dolly's budgeted cloning, options beta, tau, epsilon, straggler_p);
baselines (tetris, drf, carbyne, capacity, mantri, srewc, redundant-small, straggler-relaunch, ...) in
their own files.
"""

from pyscheduler.policies import (  # noqa: F401  (each import registers its policies)
    capacity_late,
    carbyne,
    dollymp,
    dollymp_variants,
    drf,
    fcfs,
    fifo,
    mantri,
    production,
    redundant_small,
    srewc,
    srpt,
    straggler_relaunch,
    svf,
    tetris,
)
from pyscheduler.policies.base import (
    CloneGrant,
    Decisions,
    Deferral,
    Kill,
    OmegaDecision,
    PhaseEstimator,
    Placement,
    Policy,
    Priority,
    Snapshot,
    SnapshotError,
    get_policy,
    policy_names,
    register_policy,
)

__all__ = [
    "CloneGrant",
    "Decisions",
    "Deferral",
    "Kill",
    "OmegaDecision",
    "PhaseEstimator",
    "Placement",
    "Policy",
    "Priority",
    "Snapshot",
    "SnapshotError",
    "get_policy",
    "policy_names",
    "register_policy",
]
