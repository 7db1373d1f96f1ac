"""Clones yield to waiting originals: running clone containers the service asks the shim to preempt.

The live path places clones only in idle capacity (rpc/clones.py: DollyMP, paper 000, Sec. 5 and Alg. 2,
clones start "if there still exist extra idle resources" once no task can be scheduled). Once running,
though, a clone kept its container until its task finished, so an original that arrived later waited
behind other jobs' clones (bench-cluster run b33: a job's maps started up to 30 s late, a reduce waited
21 s). Capacity is idle for a clone only while no original wants it; so when originals still wait for
room after a round, the service names running clones for the shim to preempt (Plan.kill_container_ids;
the RM reports them PREEMPTED and MapReduce counts a killed attempt, not a failure). Dolly (paper 001,
Sec. 5.5) measures this policy, preempting clones for other jobs' tasks, as slightly ahead of its
admission control (43% against 42% on the Facebook workload) at the cost of the clones' work.

Only jobs whose AM is the project's (mapreduce.framework.name=dollymp; JobProfile.clones_preemptible)
have clones preempted: Hadoop's TaskImpl replaces every killed attempt of an unfinished task, and the
project's AM drops that replacement's scheduling when the killed attempt was a preempted clone whose
task still runs another copy (DelayedKillDispatcher); with Hadoop's own AM the replacement would ask for
a container in its turn.

On by default (`appmaster.clone_yield`). Cluster bench with launch clones for every job: 0.747 x
CapacityScheduler's flowtime (run b41), against 0.94 with the same clones never taken back (b33); the
defaults before (no launch clones) gave 0.844-0.867 (docs/operators-guide.md). On the session-10 machine
b41's code gave 0.899 (b45), the choices below 0.861 (b46).

Choices (the papers do not say which clone to preempt; tested in tests/rpc/test_yielding.py):
- clones at launch (ClonePlan.clones_per_phase) first. The clones `held_back` come after every clone at
  launch that can yield, and yield to a waiting original only (a task's first attempt, an AM), never to
  another clone: a clone of a task the plan named on its own (`Copy.per_task`: a late task, the phase
  tail), which the AM asks for again after it yields, and a clone of the job's last stage
  (`Copy.last_stage`: its reduces), which the job's finish waits for (bench run b41: a job's reduce
  clones were preempted 1-4 s after they started and its lone original reduce ran 48 s). Until session
  13 they never yielded, and a new job's AM or maps waited while every running clone was one of these
  (bench run b57: job 4's AM waited 13.5 s and job 6's maps 23 s, with no preemption in between; in b58 and
  b59 the last original map of two and three jobs started 21-35 s after its job's submission, against
  at most 12 s under CapacityScheduler). The
  trade, by the model of the papers (Pareto(1.5) draws): a third copy taken from a task costs its job
  the difference between the least of three draws and of two, about 0.2 x the base in expectation
  (the mean least of k draws is base x 1.5k / (1.5k - 1)), while the waiting original's job gains the
  whole wait. A task keeps two copies, though: the second copy is worth 1.5 x the base (3 x against
  1.5 x), more than a wait (bench run b60, where a held-back clone could be a task's last: two jobs'
  reduces lost both clones to waiting maps, and their originals ran 41 s and 40 s where the least of
  three draws was 25.5 s and 30.6 s). A known straggler's clones stay (below);
- only containers the AM helper reported as a RUNNING clone attempt (`Copy.is_clone`), and never the
  copy of its task expected to finish first: the LATE estimate launch + elapsed / progress (Zaharia et
  al., LATE, Sec. 4: progress rate) of each copy that reported progress, else the original if it runs,
  else the oldest copy. So no task loses its last copy, nor the copy most likely to win;
- first the clones already beaten: their own LATE estimate is later than their task's lead's (the
  progress rate of a StragglerJob copy, as of a real task on one node, tells its run time soon after its
  start: such a clone can win only if the lead stalls), then the youngest clone first (launched last):
  the least work thrown away, of a copy whose draw is not known yet; and among those, first the clones
  of tasks with the most copies running: two copies keep most of three's gain (the least of two
  Pareto(1.5) draws has a median of 1.26 x the base, of three 1.17 x, of one 1.59 x), so a task keeps
  one clone while another has two (bench run b43: clones at launch preempted within 10 s of their start
  left a 239 s straggler alone for 150 s); counted as the copies a task has left when the clone yields,
  so every task gives up one clone before any gives up its second (run b49: both clones of one map
  yielded to three waiting maps while other maps kept two);
- never a clone of a task that is known to straggle, unless the clone is beaten (`Copy.straggling`: a
  copy of its task has more time left than a fresh copy of its phase takes, at its rate or by its
  earliest finish, and no copy timed at its rate has less, appmaster._straggling; a young clone without
  a rate is left out of that test): such a task's young clones are what it can finish by (bench run b54:
  a map whose original drew 752 s had two clones at launch yielded 3 s after their start, twice, and a
  clone won only from 87 s after the original started; another's clones yielded at 28 and 38 s, and the
  original ran 135 s);
- after the beaten clones and before any other (session 14), the clones of tasks `covered`: a copy of
  the task, timed at its rate, has at most a fresh copy's run time of its phase left (appmaster._judge).
  Such a task finishes about as soon as a clone launched now could, so a clone of it is worth the least;
  a clone of a task none of whose copies is timed yet (all young, or at progress 0) may be all its task
  finishes by. By the papers' model (Pareto(1.5) draws, base b), a young clone beside a copy known to
  finish in L seconds is worth E[L - min(L, X)] for a fresh draw X, about 0.04 b at L = 1.25 b and 0.5 b
  at L = 2.5 b, against 1.5 b beside a copy of unknown length (the mean of one draw, 3 b, less the mean
  least of two, 1.5 b). Before, the youngest clone yielded first: bench run b64, a map's only clone,
  within a second of its launch, beside an original that drew 603 s, while the clone of another job's map
  whose original had about 37 s left (a 71.9 s draw, 43 s after its launch) kept its container, and lost
  to that original; the next clone drew 141 s and the job took 204 s, where the least of three draws
  allowed 75 s. On a node, too, the fewest clones held back, then of
  tasks not covered, then the fewest clones;
- the last clone at launch of a task not covered does not yield to a waiting clone of a job's last
  stage (`keeps_company`, session 14; bench run b69);
- a clone at launch worth the least (`cheap`: beaten, or of a task covered) also yields to a waiting
  clone at launch of another phase that would be its task's first running clone, of a task not covered
  (`Waiting.first`, session 15; bench run b72); no other clone at launch yields to a clone at launch;
- clones at launch yield to the clones of tasks judged on their own (a late copy, the phase tail) and of
  a job's last stage (clones.CloneAsks.alone, appmaster._waits_alone) still waiting after the clone
  pass, too: a late task is known to straggle and a last-stage task is what its job's finish waits for,
  while a clone at launch is a fresh draw of unknown length (bench run b42: a 150 s straggler's late
  copy waited about 60 s for room that other jobs' clones at launch held);
- never to a container of the clone's own ask (its job's phase): a job's originals are placed before its
  clones, so such a container is a clone the AM has not reported yet or Hadoop's replacement of a clone
  that yielded (run b50: six clones of one job yielded in turn, in two seconds, to its own phase's asks);
- only for a container that has waited STEADY_S (3 s) or more, counted as the least number waiting over
  that time: the AM helper's reports lag its asks by a poll, so a clone's fresh ask looks like an
  original's for a moment. Two kinds count at once, as no clone can be among them: an AM's container,
  and the containers of a phase none of whose tasks has a container yet (`_phase_started`): a job's maps
  as it starts, its reduces as its maps end (bench runs b55-b59: in every run, the AMs of 3 to 5 of the
  8 jobs waited 3.2-3.8 s for room that clones held; b57: 4 of 8 reduces started about 4 s after their
  maps ended, against under 1 s for the others);
- per original container still waiting (asks deferred for room, clone asks left out): nothing if a node
  has room for it once the preemptions already asked for are done (room counted from the mirrored
  containers, so a preempted clone counts as coming room while it is still mirrored and after the shim
  reported it gone but before its NodeManager did; `_room`), else the fewest clones on one node that
  free enough room there with what the node has free (an AM container may need more than one task's
  container).

Beaten clones (`beaten`, `appmaster.release_beaten_clones`, default on): a clone at launch whose task's
lead copy will clearly finish first is released at once, whether or not anything waits. Dolly (paper
001, Sec. 3) keeps every clone until the first copy finishes: its clones are independent draws whose
lengths are unknown. Once two progress reports give a copy's rate, though, its draw is known (a
StragglerJob copy sleeps at a constant rate; a real task's rate is LATE's estimate, Zaharia et al.,
OSDI'08, Sec. 4), and a copy that finishes after another copy of its task can only waste its container.
That is Mantri's test turned around (paper 002, Sec. 6 describes it: Mantri acts on a copy's remaining
time t_rem against another copy's): the container goes back to the cluster instead of waiting for the
lead to finish, so a later job's originals find room without preempting a clone still in the race
(bench run b47: 38 of 74 clones were preempted for waiting originals, most while beaten copies of other
tasks held their containers to the end). Choices:
- only clones at launch, as for yielding (a late or tail clone would be launched again; a reduce's
  progress mixes its shuffle with its work);
- rates from the work's start (`Copy.finish_est_ms`, appmaster.work_start), not from launch: a JVM that
  started slowly is not work done slowly;
- both the lead and the clone have done at least BEATEN_MIN_PROGRESS (0.2) of their work, so each rate
  spans several progress steps;
- "clearly": the clone's estimate is later than the lead's by more than BEATEN_MARGIN_S (10 s) and
  BEATEN_MARGIN_FRAC (0.2) of the lead's run time, so two copies near a tie both run on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyscheduler.rpc.mirror import AskKey, Mirror, application_of_attempt
from pyscheduler.rpc.placer import KillChoice, PlacementChoice, RoundResult
from pyscheduler.rpc.res import Res, res_add
from pyscheduler.wire import pb

REASON_CLONE_YIELDS = "clone_yields"
REASON_CLONE_BEATEN = "clone_beaten"
# A clone at launch is beaten (`beaten`) when, at its rate, it finishes more than the larger of these after
# its task's lead copy, both having done BEATEN_MIN_PROGRESS of their work.
BEATEN_MARGIN_S = 10.0
BEATEN_MARGIN_FRAC = 0.2  # of the lead's run time, launch to estimated finish
BEATEN_MIN_PROGRESS = 0.2
# Deferrals that mean "an original container waits for room" (clone asks are subtracted per key).
_WAITING = frozenset({pb.REASON_WAITING_FOR_RESOURCES, pb.REASON_LOWER_PRIORITY})
# A preemption still mirrored after this long is asked for again (the shim may have refused it).
IN_FLIGHT_S = 30.0
_CACHE = "yield_kills"
# A container must have waited this long before a clone yields to it (`steady`): the AM helper reports a
# clone it added (ATTEMPT_WAITING) on its next poll, and a clone that got its container likewise, so for
# a second or two a clone's ask looks like an original's (or a late copy's that still waits). Bench run
# b44: clones preempted for such asks and for a job's own reduce clones, within a second of their start.
STEADY_S = 3.0
_STEADY = "yield_waiting"


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
    # when it finishes at the rate its progress grew since its work began (appmaster.work_start: the
    # JVM's start-up left out), ms on the AM's clock; None until two reports show progress growing
    finish_est_ms: float | None = None
    # its task is known to straggle (appmaster._straggling: its copies have more time left than a fresh
    # copy of its phase takes): the task's clones at launch are its way out, and do not yield
    straggling: bool = False
    # its task is covered (appmaster._judge): a copy timed at its rate has at most a fresh copy's run time
    # of its phase left, so a clone of it is worth the least (its clones yield first among their kind)
    covered: bool = False


# the running copies (of the applications passed, when core_round is told `scoped`)
CopySource = Callable[..., list[Copy]]


@dataclass(frozen=True, slots=True)
class Waiting:
    """A container that waits for room (`steady`): its size, and the ask it is of."""

    res: Res
    key: AskKey | None = None
    # an original's container (a task's first attempt, an AM): every preemptible clone may yield to it;
    # False for a clone judged alone, to which only clones at launch yield (`held_back`)
    original: bool = True
    # a clone at launch that would be its task's first running clone, of a task not covered (`first`):
    # only clones worth the least yield to it (`ranked`'s cheap ones)
    first: bool = False

    def of_same_ask(self, mirror: Mirror, c: Copy) -> bool:
        """Whether clone `c` is of this ask's application and YARN priority (the same phase of one job)."""
        rec = mirror.containers.get(c.container_id)
        return (
            self.key is not None
            and rec is not None
            and rec.priority == self.key[1]
            and c.app_id == application_of_attempt(self.key[0])
        )


def waiting_originals(mirror: Mirror, result: RoundResult, clones: Mapping[AskKey, int]) -> dict[AskKey, int]:
    """Original containers still waiting for room after the round, per ask."""
    placed: dict[AskKey, int] = {}
    for p in result.placements:
        placed[p.key] = placed.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key in sorted({d.key for d in result.deferrals if d.reason in _WAITING}):
        a = mirror.asks.get(key)
        if a is None:
            continue
        n = a.num_containers - a.outstanding - clones.get(key, 0) - placed.get(key, 0)
        if n > 0:
            out[key] = n
    return out


def waiting_alone(
    mirror: Mirror, alone: Mapping[AskKey, int], placed: Sequence[PlacementChoice]
) -> dict[AskKey, int]:
    """Clones judged alone (a late copy, the phase tail, the last stage: CloneAsks.alone) still waiting
    after the round's clone pass (`placed`, which serves them first), per ask."""
    got: dict[AskKey, int] = {}
    for p in placed:
        got[p.key] = got.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key, n in sorted(alone.items()):
        if key in mirror.asks and n > got.get(key, 0):
            out[key] = n - got.get(key, 0)
    return out


def waiting_first(
    clones: Mapping[AskKey, int], alone: Mapping[AskKey, int], placed: Sequence[PlacementChoice]
) -> dict[AskKey, int]:
    """Clones at launch that would be their task's first running clone (CloneAsks.first) still waiting
    after the round's clone pass, per ask: of an ask's clones not placed, those not judged alone
    (`alone`, still waiting), at most the ask's first ones. Which waiting clone a container goes to is
    the AM's choice, so this is a count, not a list of tasks."""
    first: Mapping[AskKey, int] = getattr(clones, "first", {})
    got: dict[AskKey, int] = {}
    for p in placed:
        got[p.key] = got.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key, n in sorted(first.items()):
        left = min(n, clones.get(key, 0) - got.get(key, 0) - alone.get(key, 0))
        if left > 0:
            out[key] = left
    return out


def steady(mirror: Mirror, waiting: Mapping[tuple[str, AskKey], int], now_ms: int) -> list[Waiting]:
    """The capability of every container that has waited at least STEADY_S: per (kind, ask), the least
    count seen over the last STEADY_S, once it has been waiting that long (module docstring)."""
    seen: dict[tuple[str, AskKey], list[tuple[int, int]]] = mirror.cache.setdefault(_STEADY, {})
    for k in [k for k in seen if waiting.get(k, 0) <= 0]:
        del seen[k]
    window = int(STEADY_S * 1000)
    out: list[Waiting] = []
    for k, n in sorted(waiting.items(), key=lambda kv: (kv[0][0] == "first", kv[0])):  # first ones last
        a = mirror.asks.get(k[1])
        if n <= 0 or a is None:
            continue
        hist = seen.setdefault(k, [])
        if hist and now_ms - hist[-1][0] > window:  # no round for a while: a new wait
            hist.clear()
        hist.append((now_ms, n))
        while len(hist) > 1 and hist[1][0] <= now_ms - window:
            del hist[0]
        original, first = k[0] == "original", k[0] == "first"
        if original and (a.am_container or not _phase_started(mirror, k[1])):
            out.extend([Waiting(a.capability, k[1], original)] * n)  # no clone can be among them
        elif hist[0][0] <= now_ms - window:
            out.extend([Waiting(a.capability, k[1], original, first)] * min(c for _, c in hist))
    return out


def _phase_started(mirror: Mirror, key: AskKey) -> bool:
    """Whether a task container of ask `key`'s application attempt and YARN priority (one phase of one
    job) is mirrored. Until one is, the ask holds no clone: the AM helper adds a task's clone only once
    the task runs, in a container of its phase's priority (CloningSpeculator.launch)."""
    return any(c.priority == key[1] and not c.am_container for c in mirror.containers_of_attempt(key[0]))


def _finish_ms(c: Copy, now_ms: int) -> float | None:
    """When copy `c` finishes: at its rate since its work began when two reports showed it
    (`Copy.finish_est_ms`), else LATE's estimate (its progress rate since launch); None without either."""
    if c.finish_est_ms is not None:
        return c.finish_est_ms
    if c.progress <= 0 or c.launch_ms <= 0 or now_ms <= c.launch_ms:
        return None
    return c.launch_ms + (now_ms - c.launch_ms) / min(c.progress, 1.0)


def _lead(copies: Sequence[Copy], now_ms: int) -> Copy:
    """The copy of one task expected to finish first (module docstring)."""
    timed = [(f, c.attempt_id, c) for c in copies if (f := _finish_ms(c, now_ms)) is not None]
    if timed:
        return min(timed, key=lambda t: (t[0], t[1]))[2]
    originals = [c for c in copies if not c.is_clone]
    pool = originals or list(copies)
    return min(pool, key=lambda c: (c.launch_ms <= 0, c.launch_ms, c.attempt_id))


def _by_task(copies: Iterable[Copy], mirror: Mirror) -> list[list[Copy]]:
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


def beaten(copies: Iterable[Copy], mirror: Mirror, now_ms: int) -> list[KillChoice]:
    """Clones at launch that their task's lead copy has clearly beaten, released at once (module
    docstring, "Beaten clones"); remembered as in flight, so `choose` counts their room as coming."""
    flight = _in_flight(mirror, now_ms)
    out: list[KillChoice] = []
    for task in _by_task(copies, mirror):
        lead = _lead(task, now_ms)
        ends = lead.finish_est_ms
        if ends is None or lead.progress < BEATEN_MIN_PROGRESS:
            continue
        took = ends - lead.launch_ms if lead.launch_ms > 0 else 0.0
        margin = max(BEATEN_MARGIN_S * 1000.0, BEATEN_MARGIN_FRAC * took)
        for c in task:
            mine = c.finish_est_ms
            if (
                not _at_launch(c, lead)
                or c.container_id in flight
                or mine is None
                or c.progress < BEATEN_MIN_PROGRESS
                or mine - ends <= margin
            ):
                continue
            node_id = mirror.containers[c.container_id].node_id
            why = (
                f"is beaten: at its rate it finishes {(mine - ends) / 1000.0:.1f} s after "
                f"{lead.attempt_id} (margin {margin / 1000.0:.1f} s)"
            )
            out.append(_preempt(mirror, flight, c, node_id, now_ms, REASON_CLONE_BEATEN, why))
    return out


def preemptible(copies: Iterable[Copy], mirror: Mirror, now_ms: int) -> list[Copy]:
    """`ranked`'s clones, in its order."""
    return [c for c, _, _ in ranked(copies, mirror, now_ms)]


def ranked(copies: Iterable[Copy], mirror: Mirror, now_ms: int) -> list[tuple[Copy, bool, bool]]:
    """Running clones that may yield: clones at launch first, then the clones `held_back` (a late copy,
    a phase tail's clone, a clone of the job's last stage); within each, those beaten by their task's
    lead first, then those of tasks `Copy.covered`, then those whose task has the most copies when they
    yield (counting the task's clones
    before them in this order: each task gives up one clone before any gives up its second; bench run b49
    took both clones of one map for three waiting maps), then youngest first. Never a task's lead copy,
    nor a known straggler's clone that is not beaten, nor a clone held back whose task would keep fewer
    than two copies; container mirrored (live) and not an ApplicationMaster's. Each with whether it
    `keeps_company` and whether it is `cheap`."""
    out: list[tuple[bool, bool, bool, int, int, str, Copy]] = []
    for task in _by_task(copies, mirror):
        lead = _lead(task, now_ms)
        ends = _finish_ms(lead, now_ms)
        mine: list[tuple[bool, bool, int, str, Copy]] = []
        for c in task:
            if c.is_clone and c is not lead:
                f = _finish_ms(c, now_ms)
                # like with like: a young clone's estimate from its launch counts its JVM's start-up as
                # slow work, so against a lead timed by its rate it would look beaten (bench run b52: the
                # clone that drew 40 s yielded 16 s after its start, its task's original ran 111 s)
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
    running clone, of a task not covered (`Waiting.first`, session 15); no other clone at launch does.

    Why, by the papers' model (Pareto(1.5) draws of base b; module docstring): a task's second copy,
    beside an original not timed yet, is worth 1.5 b to its job in expectation; a clone beside a copy
    known to finish within a fresh copy's run time L <= 1.25 b is worth E[L - min(L, X)], about 0.04 b,
    and a beaten clone nothing. Before, clones at launch yielded to originals and to clones judged
    alone only, so a new job's first clones waited while other jobs' covered clones held the room
    (bench run b72: the first clones of three jobs' maps started 13-20 s after their originals, and
    those jobs' maps ended 16-24 s after their best of three draws allowed)."""
    return not held_back(c) and (not not_beaten or c.covered)


def keeps_company(c: Copy, not_beaten: bool, order: int) -> bool:
    """Whether clone `c` at launch, not beaten, is the last clone of a task not `Copy.covered` (`order`,
    `ranked`'s: minus one more than the copies its task keeps when it yields). Such a clone does not
    yield to a waiting clone of a job's last stage (`choose`), only to an original or to a late copy or
    a phase tail's clone (session 14).

    Why, by the papers' model (Pareto(1.5) draws of base b; the mean least of k draws is
    b x 1.5k / (1.5k - 1)): the second copy of a task whose copies are not timed yet is worth 1.5 b to its
    job in expectation, and a map's base is twice a reduce's here; a reduce's third copy is worth 0.21 of
    its base. Bench run b69: a map's only clone (a 54.3 s draw) yielded 5 s after its start to another
    job's reduce clone, its task's third copy; the map's original drew 140.1 s, its clone named late
    after that drew 94.3 s, and the job's maps took 140.5 s where the least of three draws allowed 61.9 s.
    Not to originals as well: run b68 kept such clones from originals too, and a new job's second or
    third map waited 10-16 s in three of the 8 jobs (submission to the last original map: 82 s summed
    over the jobs, less 5 s each, against 51 s in b69). A late copy is a known straggler's, worth more."""
    return not held_back(c) and not_beaten and not c.covered and order >= -2


def _covers(have: Res, need: Res) -> bool:
    return have.memory_mb >= need.memory_mb and have.vcores >= need.vcores


def _in_flight(mirror: Mirror, now_ms: int) -> dict[str, tuple[int, str]]:
    """The preemptions asked for in the last IN_FLIGHT_S: container id -> (when, its node). An entry
    outlives its container in the mirror, so its node's coming room is still looked at (`choose`); one
    still mirrored after IN_FLIGHT_S may be asked for again (the shim may have refused it)."""
    flight: dict[str, tuple[int, str]] = mirror.cache.setdefault(_CACHE, {})
    for cid in [k for k, (t, _) in flight.items() if now_ms - t > IN_FLIGHT_S * 1000]:
        del flight[cid]
    return flight


def _preempt(
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


def _room(
    mirror: Mirror, nodes: Iterable[str], taken: Iterable[PlacementChoice], freeing: Iterable[str]
) -> dict[str, Res]:
    """Room per node after the round's placements `taken`, plus the containers `freeing` (preemptions in
    flight, which the RM will hand back). Counted from the mirrored containers (`Mirror.room_soon_of`),
    not the RM's `allocated`: a preempted clone leaves the mirror when the shim completes it, but the
    RM's figures for its node until its NodeManager's next heartbeat, and in between the clone is
    neither in flight nor free room (bench run b47: two waiting maps took six clones, two per round
    0.1 s apart, until the NodeManagers' heartbeats landed)."""
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
    flight = _in_flight(mirror, now_ms)
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
    # left to preempt, so a second and a third clone yielded to one waiting container, bench run b46; and
    # b48, where three more clones yielded 0.1 s after three, to the same three waiting maps)
    freeing = [cid for cid in flight if cid in mirror.containers]
    room = _room(mirror, {*by_node, *(node for _, node in flight.values())}, taken, freeing)
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
            # that yielded, which the AM drops (bench run b50: one job's clones yielded in turn, six in
            # two seconds, to its own phase's asks, while its late copies took the room); and a clone
            # held back yields to an original only
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
            out.append(_preempt(mirror, flight, c, node_id, now_ms, REASON_CLONE_YIELDS, why))
        by_node[node_id] = [c for c in by_node[node_id] if c not in chosen]
    return out
