"""Clones yield to waiting originals by value (`appmaster.yield_model = "value"`): the alternative to the
rules of service/round/yielding.py, built on the value model (pyscheduler/value).

Per original container that has waited `steady`'s STEADY_S (service/round/waiting.py) and finds no room after
the round: its value is the time it would otherwise wait, the expected time until the first running copy of
any task frees its container (E[min] of every running copy's remaining time); each running clone's value
is what its task's finish is expected to slip without it (value.value_of_copy, under its phase's fitted
Pareto, DollyMP Eq. 1-3). Eligible clones (value.eligible: never a task's lead copy, never for the clone's
own ask, not already preempted) are chosen per node in ascending value until the container fits, on the
node whose victims are worth least, and only when that is below the waiting container's value by
`yield.margin_s` (value.select_victims). Clones judged alone and clones at launch get no preemption here:
clones wait for idle capacity (DollyMP Algorithm 2). A task gives up at most one copy per round, as its
other copies' values change once one goes.

A copy's remaining time: a copy timed at its rate (`Copy.finish_est_ms`) has a known time left; any other
copy a Pareto draw of its phase (`Copy.mean_s`, `Copy.sd_s`; the phase's SD unknown: `yield.prior_cv` of
its mean) of which the work since its start-up is done. A copy of a phase with no estimate has infinite
value (never a victim), and a task's only copy likewise."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pyscheduler.estimate.copies import lead as lead_of
from pyscheduler.service.round.plan import KillChoice, PlacementChoice
from pyscheduler.service.round.waiting import Waiting
from pyscheduler.service.round.yielding import REASON_CLONE_YIELDS, by_task, in_flight, preempt, room_after
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import Mirror, application_of_attempt
from pyscheduler.service.state.resources import Res, res_add
from pyscheduler.value import Candidate, Draw, ValueOptions, eligible, expected_min, remaining, select_victims
from pyscheduler.value import value_of_copy as copy_value

# service/round/yielding.py `choose`'s signature: (mirror, waiting, running copies, now ms, the round's
# placements)
Chooser = Callable[
    [Mirror, Sequence[Res | Waiting], Sequence[Copy], int, Sequence[PlacementChoice]], list[KillChoice]
]
PRIOR_CV = 1.0  # a phase's SD when only its mean is known: CV 1 (a Pareto with alpha = 1 + sqrt(2))


def draw_of(c: Copy, now_ms: int, opts: ValueOptions) -> Draw | None:
    """Copy `c`'s remaining time (module docstring); None when its phase has no estimate."""
    if c.finish_est_ms is not None:
        return remaining(max(c.mean_s, 1e-3), 0.0, left_s=max(0.0, (c.finish_est_ms - now_ms) / 1000.0))
    if not c.mean_s > 0:
        return None
    sd = c.sd_s if c.sd_s > 0 else PRIOR_CV * c.mean_s
    startup = c.startup_s if c.startup_s > 0 else opts.startup_s
    worked = max(0.0, (now_ms - c.launch_ms) / 1000.0 - startup) if c.launch_ms > 0 else 0.0
    return remaining(c.mean_s, sd, worked_s=worked)


def _size(r: Res) -> tuple[float, float]:
    return (float(r.memory_mb), float(r.vcores))


def _covers(have: Res, need: Res) -> bool:
    return have.memory_mb >= need.memory_mb and have.vcores >= need.vcores


def choose_by_value(
    mirror: Mirror,
    waiting: Sequence[Res | Waiting],
    copies: Sequence[Copy],
    now_ms: int,
    taken: Sequence[PlacementChoice] = (),
    opts: ValueOptions | None = None,
) -> list[KillChoice]:
    """The clones to preempt this round for waiting originals (module docstring); remembered as in
    flight in the mirror like service/round/yielding.py's."""
    opts = opts or ValueOptions()
    flight = in_flight(mirror, now_ms)
    draws = {c.container_id: draw_of(c, now_ms, opts) for c in copies}
    known = [d for d in draws.values() if d is not None]
    room_wait = expected_min(known, opts.horizon) if known else math.inf  # until a container frees
    candidates: list[tuple[Candidate, tuple[str, str], Copy]] = []
    for task in by_task(copies, mirror):
        lead = lead_of(task, now_ms)
        for c in task:
            mine, others = draws[c.container_id], [draws[o.container_id] for o in task if o is not c]
            value = math.inf
            if mine is not None and all(d is not None for d in others):
                value = copy_value(mine, [d for d in others if d is not None], opts.horizon)
            rec = mirror.containers[c.container_id]
            cand = Candidate(
                c.container_id,
                rec.node_id,
                _size(rec.resource),
                value,
                c.is_clone,
                c is lead,
                (c.app_id, rec.priority),
                c.container_id in flight,
            )
            candidates.append((cand, (c.app_id, c.task_id), c))
    if not candidates:
        return []
    freeing = [cid for cid in flight if cid in mirror.containers]
    nodes = {cand.node_id for cand, _, _ in candidates} | {node for _, node in flight.values()}
    room = room_after(mirror, nodes, taken, freeing)
    out: list[KillChoice] = []
    gone: set[tuple[str, str]] = set()  # tasks that gave up a copy this round
    for w in waiting:
        wait = w if isinstance(w, Waiting) else Waiting(w)
        if not wait.original:
            continue
        need = _size(wait.res)
        fits = next((n for n, r in room.items() if _covers(r, wait.res)), None)
        if fits is not None:
            room[fits] = res_add(room[fits], wait.res, -1)
            continue
        ask = None if wait.key is None else (application_of_attempt(wait.key[0]), wait.key[1])
        pool = [
            cand
            for cand, key, _ in candidates
            if key not in gone and eligible(cand, ask, opts.min_wait_s, opts.min_wait_s)
        ]
        got = select_victims(need, room_wait, {n: _size(r) for n, r in room.items()}, pool, opts.margin_s)
        if got is None:
            continue
        chosen = [(cand, key, c) for cand, key, c in candidates if cand.container_id in got.container_ids]
        freed = room.get(got.node_id, Res())
        for cand, key, c in chosen:
            freed = res_add(freed, mirror.containers[cand.container_id].resource)
            gone.add(key)
            why = (
                f"yields to a waiting original ({wait.res.memory_mb} MB, {wait.res.vcores} vcores): "
                f"its value {cand.value_s:.1f} s (of {got.value_s:.1f} s for the victims) is below the "
                f"{room_wait:.1f} s the original would wait, by more than {opts.margin_s:.1f} s"
            )
            out.append(preempt(mirror, flight, c, got.node_id, now_ms, REASON_CLONE_YIELDS, why))
        room[got.node_id] = res_add(freed, wait.res, -1)
        candidates = [t for t in candidates if t[0].container_id not in got.container_ids]
    return out


def chooser_by_value(opts: ValueOptions) -> Chooser:
    def choose(
        mirror: Mirror,
        waiting: Sequence[Res | Waiting],
        copies: Sequence[Copy],
        now_ms: int,
        taken: Sequence[PlacementChoice],
    ) -> list[KillChoice]:
        return choose_by_value(mirror, waiting, copies, now_ms, taken, opts)

    return choose
