"""Clones yield to waiting originals, and beaten clones are released: running clone containers the service
asks the shim to preempt (Plan.kill_container_ids; the RM reports them PREEMPTED and MapReduce counts a
killed attempt, not a failure). The rationale and the history of each rule: docs/history/clone-rules.md.

The live path places clones only in idle capacity (service/round/clones.py; DollyMP Sec. 5, Algorithm 2:
clones start "if there still exist extra idle resources"). Capacity is idle for a clone only while no original
wants it, so when originals still wait for room after a round, running clones yield (`choose`). Dolly
(Sec. 5.5) measures preempting clones for other jobs' tasks as slightly ahead of its admission control.
Only jobs whose AM is the project's (mapreduce.framework.name=dollymp; JobProfile.clones_preemptible) have
clones preempted: its AM drops Hadoop's replacement of a preempted clone whose task still runs another
copy. On by default (`appmaster.clone_yield`).

Which clone yields (the papers do not say; tests/rpc/test_yielding.py):
- only clones the AM helper reported RUNNING (`Copy.is_clone`), never the copy of its task expected to
  finish first (estimate/copies.py `lead`), never a known straggler's clone unless beaten
  (`Copy.straggling`), never for a container of the clone's own ask (its job's phase), and only for a
  container that has waited STEADY_S (`steady`; AMs of new jobs and phases not yet started count at once);
- clones at launch first, then the clones `held_back` (of a task named on its own, `Copy.per_task`, or of
  the job's last stage, `Copy.last_stage`), which yield to originals only and never leave their task with
  fewer than two copies: by the papers' Pareto(1.5) model a task's second copy is worth about 1.5 x the
  base time, a third about 0.2 x;
- within each kind (`ranked`): beaten clones, then clones of tasks `covered` (a copy timed at its rate has
  at most a fresh copy's time left), then those whose task has the most copies left, then the youngest;
- clones worth the least (`cheap`: beaten or covered) also yield to a waiting clone that would be its
  task's first running clone (`Waiting.first`); the last clone of a task not covered does not yield to a
  waiting clone of a job's last stage (`keeps_company`); clones at launch yield to clones judged alone
  (a late copy, the phase tail, the last stage) still waiting after the clone pass;
- per waiting container: nothing if a node has room for it once the preemptions in flight are done
  (`room_after`, counted from the mirrored containers), else the node giving up the fewest clones held back,
  then of tasks not covered, then the fewest clones.

Beaten clones (`beaten`, `appmaster.release_beaten_clones`, default on): a clone at launch whose task's
lead copy will clearly finish first is released at once, whether or not anything waits: Mantri's test
(a copy's remaining time against another copy's) turned around, so the container goes back to the
cluster. Only clones at launch; rates from the work's start (`Copy.finish_est_ms`); both copies past
BEATEN_MIN_PROGRESS; "clearly" is later by more than BEATEN_MARGIN_S and BEATEN_MARGIN_FRAC of the lead's
run time, so two copies near a tie both run on (`BeatenRule`, the appmaster.beaten_* keys). With
`appmaster.release_beaten_originals` (default off), an original whose task's lead is a clone is released
by the same test.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyscheduler.estimate.copies import finish_ms
from pyscheduler.estimate.copies import lead as lead_of
from pyscheduler.service.round.plan import KillChoice, PlacementChoice
from pyscheduler.service.round.waiting import Waiting
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import Mirror, application_of_attempt
from pyscheduler.service.state.resources import Res, res_add

REASON_CLONE_YIELDS = "clone_yields"
REASON_CLONE_BEATEN = "clone_beaten"
REASON_ORIGINAL_BEATEN = "original_beaten"  # appmaster.release_beaten_originals
# A clone at launch is beaten (`beaten`) when, at its rate, it finishes more than the larger of these after
# its task's lead copy, both having done BEATEN_MIN_PROGRESS of their work (the defaults of BeatenRule).
BEATEN_MARGIN_S = 10.0
BEATEN_MARGIN_FRAC = 0.2  # of the lead's run time, launch to estimated finish
BEATEN_MIN_PROGRESS = 0.2
# A preemption still mirrored after this long is asked for again (the shim may have refused it).
IN_FLIGHT_S = 30.0


def by_task(copies: Iterable[Copy], mirror: Mirror) -> list[list[Copy]]:
    """The copies in live, non-ApplicationMaster containers, per task with at least two of them."""
    by_task: dict[tuple[str, str], list[Copy]] = {}
    for c in copies:
        rec = mirror.containers.get(c.container_id)
        if rec is not None and not rec.am_container:
            by_task.setdefault((c.app_id, c.task_id), []).append(c)
    return [task for task in by_task.values() if len(task) >= 2]


def _at_launch(c: Copy, lead: Copy) -> bool:
    """A clone at launch that is not its task's lead copy: the only copies released when beaten, and the
    first to yield."""
    return c.is_clone and c is not lead and not held_back(c)


def held_back(c: Copy) -> bool:
    """A clone that yields only to a waiting original, and after every clone at launch that can: one of a
    task named on its own (`Copy.per_task`: a late copy, the phase tail) or of the job's last stage
    (`Copy.last_stage`) (module docstring)."""
    return c.per_task or c.last_stage


@dataclass(frozen=True, slots=True)
class BeatenRule:
    """When a clone at launch is beaten (`beaten`): it finishes, at its rate, more than the larger of
    `margin_s` and `margin_frac` of the lead's run time after its task's lead copy, both copies having done
    `min_progress` of their work (appmaster.beaten_margin_s, appmaster.beaten_margin_frac,
    appmaster.beaten_min_progress). With `originals` (appmaster.release_beaten_originals), an original
    that a clone of its task clearly beats is released the same way: the AM helper does not replace a
    preempted copy whose task still runs another."""

    margin_s: float = BEATEN_MARGIN_S
    margin_frac: float = BEATEN_MARGIN_FRAC
    min_progress: float = BEATEN_MIN_PROGRESS
    originals: bool = False

    def releasable(self, c: Copy, lead: Copy) -> bool:
        """Whether `c` may be released when `lead` clearly beats it: a clone at launch, or with
        `originals` an original whose task's lead is a clone."""
        return _at_launch(c, lead) or (self.originals and not c.is_clone and lead.is_clone)


BEATEN_RULE = BeatenRule()


def beaten(
    copies: Iterable[Copy], mirror: Mirror, now_ms: int, rule: BeatenRule = BEATEN_RULE
) -> list[KillChoice]:
    """Clones at launch that their task's lead copy has clearly beaten, released at once (module
    docstring, "Beaten clones"); remembered as in flight, so `choose` counts their room as coming."""
    flight = in_flight(mirror, now_ms)
    out: list[KillChoice] = []
    for task in by_task(copies, mirror):
        lead = lead_of(task, now_ms)
        ends = lead.finish_est_ms
        if ends is None or lead.progress < rule.min_progress:
            continue
        took = ends - lead.launch_ms if lead.launch_ms > 0 else 0.0
        margin = max(rule.margin_s * 1000.0, rule.margin_frac * took)
        for c in task:
            mine = c.finish_est_ms
            if (
                not rule.releasable(c, lead)
                or c.container_id in flight
                or mine is None
                or c.progress < rule.min_progress
                or mine - ends <= margin
            ):
                continue
            node_id = mirror.containers[c.container_id].node_id
            why = (
                f"is beaten: at its rate it finishes {(mine - ends) / 1000.0:.1f} s after "
                f"{lead.attempt_id} (margin {margin / 1000.0:.1f} s)"
            )
            reason = REASON_CLONE_BEATEN if c.is_clone else REASON_ORIGINAL_BEATEN
            out.append(preempt(mirror, flight, c, node_id, now_ms, reason, why))
    return out


def preemptible(copies: Iterable[Copy], mirror: Mirror, now_ms: int) -> list[Copy]:
    """`ranked`'s clones, in its order."""
    return [c for c, _, _ in ranked(copies, mirror, now_ms)]


def ranked(copies: Iterable[Copy], mirror: Mirror, now_ms: int) -> list[tuple[Copy, bool, bool]]:
    """Running clones that may yield: clones at launch first, then the clones `held_back` (a late copy,
    a phase tail's clone, a clone of the job's last stage); within each, those beaten by their task's
    lead first, then those of tasks `Copy.covered`, then those whose task has the most copies when they
    yield (counting the task's clones before them in this order: each task gives up one clone before any
    gives up its second), then youngest first. Never a task's lead copy,
    nor a known straggler's clone that is not beaten, nor a clone held back whose task would keep fewer
    than two copies; container mirrored (live) and not an ApplicationMaster's. Each with whether it
    `keeps_company` and whether it is `cheap`."""
    out: list[tuple[bool, bool, bool, int, int, str, Copy]] = []
    for task in by_task(copies, mirror):
        lead = lead_of(task, now_ms)
        ends = finish_ms(lead, now_ms)
        mine: list[tuple[bool, bool, int, str, Copy]] = []
        for c in task:
            if c.is_clone and c is not lead:
                f = finish_ms(c, now_ms)
                # like with like: a young clone's estimate from its launch counts its JVM's start-up as
                # slow work, so against a lead timed by its rate it would look beaten
                same = (c.finish_est_ms is None) == (lead.finish_est_ms is None)
                beaten = same and ends is not None and f is not None and f > ends
                if c.straggling and not beaten:
                    continue  # a known straggler's fresh draw (module docstring)
                mine.append((held_back(c), not beaten, -c.launch_ms, c.attempt_id, c))
        mine.sort(key=lambda t: t[:4])
        for j, (held, not_beaten, young, attempt_id, c) in enumerate(mine):
            if held and len(task) - (j + 1) < 2:
                break  # a clone held back is never one of its task's last two copies
            out.append((held, not_beaten, not c.covered, j - len(task), young, attempt_id, c))
    out.sort(key=lambda t: t[:6])
    return [(t[6], keeps_company(t[6], t[1], t[3]), cheap(t[6], t[1])) for t in out]


def cheap(c: Copy, not_beaten: bool) -> bool:
    """Whether clone `c`, at launch, is worth the least: beaten by its task's lead (`ranked`) or of a task
    `Copy.covered`. Such a clone also yields to a waiting clone at launch that would be its task's first
    running clone, of a task not covered (`Waiting.first`); no other clone at launch does.

    Why, by the papers' model (Pareto(1.5) draws of base b; module docstring): a task's second copy,
    beside an original not timed yet, is worth 1.5 b to its job in expectation; a clone beside a copy
    known to finish within a fresh copy's run time L <= 1.25 b is worth E[L - min(L, X)], about 0.04 b,
    and a beaten clone nothing; so a new job's first clone need not wait while other jobs' covered
    clones hold the room."""
    return not held_back(c) and (not not_beaten or c.covered)


def keeps_company(c: Copy, not_beaten: bool, order: int) -> bool:
    """Whether clone `c` at launch, not beaten, is the last clone of a task not `Copy.covered` (`order`,
    `ranked`'s: minus one more than the copies its task keeps when it yields). Such a clone does not
    yield to a waiting clone of a job's last stage (`choose`), only to an original or to a late copy or
    a phase tail's clone.

    Why, by the papers' model (Pareto(1.5) draws of base b; the mean least of k draws is
    b x 1.5k / (1.5k - 1)): the second copy of a task whose copies are not timed yet is worth 1.5 b to its
    job in expectation, and a map's base is twice a reduce's here; a reduce's third copy is worth 0.21 of
    its base. It still yields to originals (a new job's maps would otherwise wait behind it) and to a
    late copy, a known straggler's, worth more."""
    return not held_back(c) and not_beaten and not c.covered and order >= -2


def _covers(have: Res, need: Res) -> bool:
    return have.memory_mb >= need.memory_mb and have.vcores >= need.vcores


def in_flight(mirror: Mirror, now_ms: int) -> dict[str, tuple[int, str]]:
    """The preemptions asked for in the last IN_FLIGHT_S: container id -> (when, its node). An entry
    outlives its container in the mirror, so its node's coming room is still looked at (`choose`); one
    still mirrored after IN_FLIGHT_S may be asked for again (the shim may have refused it)."""
    flight = mirror.kills_in_flight
    for cid in [k for k, (t, _) in flight.items() if now_ms - t > IN_FLIGHT_S * 1000]:
        del flight[cid]
    return flight


def preempt(
    mirror: Mirror,
    flight: dict[str, tuple[int, str]],
    c: Copy,
    node_id: str,
    now_ms: int,
    reason: str,
    why: str,
) -> KillChoice:
    """Clone `c`'s preemption, remembered as in flight on its node."""
    flight[c.container_id] = (now_ms, node_id)
    app_id = application_of_attempt(mirror.containers[c.container_id].attempt_id)
    return KillChoice(
        c.container_id, app_id, reason, f"clone {c.attempt_id} of {c.task_id} on {node_id} {why}"
    )


def room_after(
    mirror: Mirror, nodes: Iterable[str], taken: Iterable[PlacementChoice], freeing: Iterable[str]
) -> dict[str, Res]:
    """Room per node after the round's placements `taken`, plus the containers `freeing` (preemptions in
    flight, which the RM will hand back). Counted from the mirrored containers (`Mirror.room_soon_of`),
    not the RM's `allocated`: a preempted clone leaves the mirror when the shim completes it, but the
    RM's figures for its node until its NodeManager's next heartbeat, and in between the clone is
    neither in flight nor free room (counted as neither, one waiting container would take a clone per
    round until the NodeManagers' heartbeats landed)."""
    ids = {n for n in nodes if n in mirror.nodes}
    room = mirror.room_soon_of(ids)
    for p in taken:
        if p.node_id in room:
            room[p.node_id] = res_add(room[p.node_id], p.capability, -p.count)
    for cid in freeing:
        rec = mirror.containers.get(cid)
        if rec is not None and rec.node_id in room:
            room[rec.node_id] = res_add(room[rec.node_id], rec.resource)
    return room


def choose(
    mirror: Mirror,
    waiting: Sequence[Res | Waiting],
    copies: Iterable[Copy],
    now_ms: int,
    taken: Sequence[PlacementChoice] = (),
) -> list[KillChoice]:
    """The clones to preempt this round (module docstring); remembers them as in flight in the mirror.

    Per waiting original container, in turn: none if some node's room (after the round's placements,
    with the in-flight preemptions' containers counted as free) already holds it; else the node where the
    fewest preemptible clones, youngest first, free enough room with what the node has free."""
    flight = in_flight(mirror, now_ms)
    copies = list(copies)
    last_stage_asks = {  # (application, YARN priority) of the running copies of jobs' last stages
        (c.app_id, rec.priority)
        for c in copies
        if c.last_stage and (rec := mirror.containers.get(c.container_id)) is not None
    }
    by_node: dict[str, list[Copy]] = {}
    company: set[str] = set()
    cheap_ids: set[str] = set()
    for c, keeps, worth_least in ranked(copies, mirror, now_ms):
        if c.container_id not in flight:
            by_node.setdefault(mirror.containers[c.container_id].node_id, []).append(c)
            if keeps:
                company.add(c.container_id)
            if worth_least:
                cheap_ids.add(c.container_id)
    if not by_node:
        return []
    # every node with a preemption in flight counts its room too, also once the shim reported the clone
    # gone: the waiting container may take the room a clone yields there (before: only nodes with clones
    # left to preempt, so a second and a third clone yielded to one waiting container)
    freeing = [cid for cid in flight if cid in mirror.containers]
    room = room_after(mirror, {*by_node, *(node for _, node in flight.values())}, taken, freeing)
    out: list[KillChoice] = []
    for w in waiting:
        wait = w if isinstance(w, Waiting) else Waiting(w)
        need = wait.res
        # a waiting clone of a job's last stage: of the ask of a running copy of the last stage
        stage = (
            not wait.original
            and wait.key is not None
            and (application_of_attempt(wait.key[0]), wait.key[1]) in last_stage_asks
        )
        fits = next((n for n, r in room.items() if _covers(r, need)), None)
        if fits is not None:
            room[fits] = res_add(room[fits], need, -1)
            continue
        best: tuple[tuple[int, int, int], str, Res, list[Copy]] | None = None
        for node_id, candidates in by_node.items():
            # never for an ask of the clone's own phase: a job's originals are placed before its clones,
            # so such an ask is a clone the AM has not reported yet, or Hadoop's replacement of a clone
            # that yielded, which the AM drops (else one job's clones yield in turn to its own phase's
            # asks); and a clone held back yields to an original only
            victims = [
                c
                for c in candidates
                if not wait.of_same_ask(mirror, c)
                and (wait.original or not held_back(c))
                and not (stage and c.container_id in company)
                and (not wait.first or c.container_id in cheap_ids)
            ]
            r, k = room.get(node_id, Res()), 0
            while not _covers(r, need) and k < len(victims):
                r = res_add(r, mirror.containers[victims[k].container_id].resource)
                k += 1
            # the node that gives up the fewest clones held back, then of tasks not covered, then the
            # fewest clones
            cost = (sum(held_back(c) for c in victims[:k]), sum(not c.covered for c in victims[:k]), k)
            if _covers(r, need) and (best is None or cost < best[0]):
                best = (cost, node_id, r, victims[:k])
        if best is None:
            continue
        _, node_id, r, chosen = best
        room[node_id] = res_add(r, need, -1)
        kind = "original" if wait.original else "task's first clone" if wait.first else "clone judged alone"
        why = (
            f"yields to a waiting {kind} ({need.memory_mb} MB, {need.vcores} vcores; {len(waiting)} waiting)"
        )
        for c in chosen:
            out.append(preempt(mirror, flight, c, node_id, now_ms, REASON_CLONE_YIELDS, why))
        by_node[node_id] = [c for c in by_node[node_id] if c not in chosen]
    return out
