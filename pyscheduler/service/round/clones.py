"""Clone asks: the part of an application's pending containers that the AM helper asked for clones.

YARN asks are counts per scheduler key, so the RM cannot tell a clone's container from an original's.
The AM helper reports every clone it launched that still waits for a container (ATTEMPT_WAITING); the
service takes that many of the pending containers at the phase's YARN priority as *clone asks*
(`clone_counts`) and keeps them out of the core's round, so originals are placed first (DollyMP,
paper 000 Alg. 2: the first pass places original tasks in priority order; clones only get the
capacity left idle afterwards).

`place_clones` is that last pass. Choices (tested in tests/rpc/test_clone_asks.py):
- clones are placed only when no original container of any application is still waiting this round
  (a deferral other than "infeasible"): idle capacity means capacity nobody's original task can use;
- first-fit, each ask capped at its clone count: first the clones of tasks judged on their own (a late
  copy, the phase tail) and of a job's last stage (`CloneAsks.alone`, service/state/amregistry.py
  `AppState.waits_alone`; the task is known to straggle, or it is what its job waits for), in FCFS order of
  the applications (submit time); then the clones at launch that would be their task's first running clone,
  of a task not covered (`CloneAsks.first`: a task's second copy is worth 1.5 x its base by the papers'
  model, a third copy about 0.2 x; service/round/yielding.py `cheap`), newest ask first; then the other clones
  at launch, newest ask first (the order its key appeared in the mirror,
  latest first: `AskRec.arrival`). A clone at launch is a fresh draw raced against its task's original,
  which keeps running meanwhile: the longer it waited, the more head start it must make up, and an
  original that turns out to straggle is named on its own (estimate/copies.py `slow_waiting`) and served
  first anyway. So a phase that has just asked (a new job's maps) goes before the clones an older phase
  still waits for. A choice on that argument: the cluster benchmark does not isolate it (the
  containers freed at a new job's arrival go mostly to older jobs' late copies, which go first either
  way);
- which attempt gets a granted container is the AM's choice (containers of one key are fungible); the
  service controls the counts, so at most the originals' count is placed outside idle capacity;
- with `appmaster.late_first` (off by default) the clones judged alone are not clone asks: translate.py
  leaves them in their job's pending tasks, so the core places them with its originals, in its priority
  order (`CloneAsks.ahead`), the live form of the core policy's `late_first` extension;
- a clone reported after its ask reached the RM is counted from the next round on (the AM helper
  reports on its own poll): until then its container counts as an original's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from pyscheduler.service.round.placer import fcfs_order, place
from pyscheduler.service.round.plan import DeferralChoice, PlacementChoice, RoundResult
from pyscheduler.service.state.mirror import AskKey, AskRec, Mirror
from pyscheduler.wire import pb

# Deferrals that do not mean "an original container is waiting for room".
_NOT_WAITING = frozenset({pb.REASON_INFEASIBLE})


class CloneAsks(dict[AskKey, int]):
    """Clone containers per ask (the mapping), and `alone`: how many of them are clones of tasks judged on
    their own (a late copy, the phase tail), which `place_clones` places before clones at launch and
    for which clones at launch yield their containers (service/round/yielding.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.alone: dict[AskKey, int] = {}
        # of the others (clones at launch), those that would be their task's first running clone, of a task
        # not covered (phasehints.PhaseHint.waiting_first): clones worth the least yield to them
        self.first: dict[AskKey, int] = {}
        # with appmaster.late_first: the clones judged alone that the core's round places with their job's
        # originals (left out of this mapping and of `alone`; translate.py's `_app_job`)
        self.ahead: dict[AskKey, int] = {}


def clone_counts(
    asks: Iterable[AskRec], waiting_by_priority: Mapping[int, int], cap: Mapping[AskKey, int] | None = None
) -> dict[AskKey, int]:
    """Clone containers among each ask's pending ones: the application's waiting clones at the ask's
    YARN priority, handed to its asks in key order, never more than an ask has pending (or `cap` says)."""
    left = dict(waiting_by_priority)
    out: dict[AskKey, int] = {}
    for a in sorted(asks, key=lambda a: (a.key[1], a.key[2], a.key[0])):
        want = left.get(a.key[1], 0)
        pending = a.num_containers - a.outstanding if cap is None else cap.get(a.key, 0)
        k = min(want, pending)
        if k > 0:
            out[a.key] = k
            left[a.key[1]] = want - k
    return out


def originals_waiting(result: RoundResult) -> int:
    """How many asks still have original containers waiting after the round's passes."""
    return sum(1 for d in result.deferrals if d.reason not in _NOT_WAITING)


def place_clones(
    mirror: Mirror, clones: Mapping[AskKey, int], result: RoundResult
) -> tuple[list[PlacementChoice], list[DeferralChoice]]:
    """The idle-capacity pass for clone asks, after every original placement of the round."""
    if not clones:
        return [], []
    waiting = originals_waiting(result)
    if waiting:
        detail = f"clone waits for idle capacity: originals of {waiting} ask(s) still waiting"
        return [], [DeferralChoice(key, pb.REASON_LOWER_PRIORITY, detail) for key in sorted(clones)]
    alone = clones.alone if isinstance(clones, CloneAsks) else {}
    firsts = clones.first if isinstance(clones, CloneAsks) else {}
    fcfs = [a for a in fcfs_order(mirror) if a.key in clones]
    newest = sorted(fcfs, key=lambda a: -a.arrival)  # stable: FCFS among asks of one arrival
    placements: list[PlacementChoice] = []
    deferrals: list[DeferralChoice] = []
    done: dict[AskKey, int] = {}
    # the first pass's counts come on top of nothing; each later pass's count is what its ask wants in all
    # (alone, then alone + first, then every clone), less what the passes before placed
    with_first = {k: alone.get(k, 0) + n for k, n in firsts.items()}
    passes = (
        (alone, fcfs, "late copy or phase tail"),
        (with_first, newest, "tasks' first clones"),
        (clones, newest, ""),
    )
    for want, asks, why in passes:
        order = [
            dataclasses.replace(a, num_containers=a.outstanding + n)
            for a in asks
            if (n := min(want.get(a.key, 0), clones.get(a.key, 0)) - done.get(a.key, 0)) > 0
        ]
        extra = place(mirror, order, pb.REASON_CLONE_IDLE_CAPACITY, taken=[*result.placements, *placements])
        for p in extra.placements:
            done[p.key] = done.get(p.key, 0) + p.count
        detail = "clone in idle capacity" + (f" ({why} first)" if why else "")
        placements.extend(dataclasses.replace(p, detail=detail) for p in extra.placements)
        if not why:
            deferrals.extend(extra.deferrals)
    return placements, deferrals
