"""`dollymp bench am`: one large job's AM plan requests beside a cluster's RM rounds.

A `dollymp serve` process (loopback, no HTTP API, the default configuration) is driven by the shim-like
load of `dollymp bench service` (pyscheduler.bench.service_load: a pretend RM of `--nodes` nodes and
`--apps` applications, a busy cluster handed over, one batch a tick). Its full resync also mirrors one
more application, in the same queue, with no asks of its own: the measured job's. In the `am` phase
another process is that job's AM helper and makes the calls the project's helper makes
(yarn-plugin's CloningSpeculator and CloneBook), for a MapReduce job of `--tasks` tasks (nine maps to
one reduce; the reduces start once every map finished) running at most `--am-containers` originals at
once, each 5 to 30 s of work after 1 s of start-up:

* once the RM mirrors the application: ReportJobProfile (phases map and reduce, reduce after map, the
  project's AM: clones preemptible), then one ReportAttempts with every attempt so far (the job is half
  way through its maps: as the helper after the service lost the job, which sends every attempt again);
* every `--am-poll` seconds (dollymp.am.poll-ms, 200 ms) the attempts that changed since their last
  report, as CloneBook.changes picks them: a change of state or container, another tenth of progress,
  or progress grown since a report `PROGRESS_REPORT_S` old (dollymp.am.progress-report-ms), and clones
  still waiting for a container; sent as one ReportAttempts, which the service answers with a plan;
* with nothing to report, a GetClonePlan once `--am-interval` seconds (dollymp.am.plan-poll-ms, 1 s)
  passed since the last plan;
* each plan is adopted as the helper does: the clones per phase and per task it grants are launched
  (at most two a task, three live copies), wait `CLONE_WAIT_S` for a container, then run; the first copy
  to finish wins and the others are killed. A call the service does not know the job for (NOT_FOUND,
  FAILED_PRECONDITION) sends the profile and every attempt again; any other failure (a deadline of
  `RPC_TIMEOUT_S`, dollymp.am.rpc.timeout-ms) keeps the helper quiet for `RETRY_S` (dollymp.am.retry-ms).

The `quiet` phase runs the same load without the AM helper. Each repeat runs both phases, each on a fresh
service, in alternating order. Measured per phase after `--warmup`: the service's rounds (SYNC_STATS:
round wall and CPU p50/p99, the rounds' apply and decide CPU), the pretend RM's batch-to-plan p99, the
service's CPU per second; in the `am` phase, client side, each call's time to its answer (or its failure)
per kind, p50 and p99, and the calls answered fresh, deferred (over the AM CPU budget,
appmaster.app_cpu_ms_per_s: an answer with the last plan and the reason) or refused.
`am_plan_p99_ms` is over every call answered with a plan after the profile (ReportAttempts and
GetClonePlan: the helper adopts either's plan), `am_report_p99_ms` over the ReportAttempts alone.

Prints, per figure, the median over the repeats and the spread [min, max], and last one JSON line.
Not a timed test: run it by hand (a shared machine's noise is larger than 10% on single runs: use
repeats, and judge costs by the CPU figures).

Measured (2 cores, load average 0.4 to 1.3; the defaults, 3 repeats, median [min, max]): before the
service kept what a job's reports imply (service/state/amkept.py), a call's p50 8.90 ms, p99 125.86 ms
[120.83, 134.25], 35 of 302 calls deferred by the AM's CPU budget (a deferred call is answered after its
budget's wait: the p99), the rounds' CPU p99 8.42 ms with the AM against 5.73 without, their decide CPU
0.72 s against 0.33 s per window; since, p50 6.00 ms, p99 8.57 ms [8.36, 10.03], no call deferred, round
CPU p99 7.66 against 6.54 ms, decide CPU 0.46 against 0.35 s. At 10,000 nodes x 1,000 applications (one
repeat, 30 s after 60 s) 56 of 123 calls were deferred before, 23 of 128 since, p50 17 ms: a call there
takes ~5 ms of CPU, over 20 ms a second at five calls a second, and waits for rounds of ~15 ms.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import multiprocessing
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pyscheduler.bench.service_load import drive, paired_phases, start_serve, stop_serve, wait_address
from pyscheduler.bench.shim_model import CONTAINER_CORES, CONTAINER_MEM, ShimModel
from pyscheduler.objects import MAX_CLONES
from pyscheduler.service.rmproxy.stats import percentile
from pyscheduler.wire import pb

AM_APP = 999_998  # the measured job's application number (pyscheduler.bench.shim_model ids)
CLUSTER_TS = "1700000000000"
REDUCE_SHARE = 0.1  # one task in ten is a reduce
DONE_SHARE = 0.5  # the maps done when the helper first reports
TASK_S = (5.0, 30.0)  # a copy's work, uniform (as the pretend RM's containers)
STARTUP_S = 1.0  # a copy's start-up in its container before its work (progress 0)
CLONE_WAIT_S = 1.0  # a clone waits this long for its container
PROGRESS_REPORT_S = 3.0  # dollymp.am.progress-report-ms
RPC_TIMEOUT_S = 2.0  # dollymp.am.rpc.timeout-ms
RETRY_S = 2.0  # dollymp.am.retry-ms
_NUMBERS = re.compile(r"\d+(\.\d+)?")
KINDS = ("profile", "attempts", "plan")  # ReportJobProfile, ReportAttempts, GetClonePlan
FINAL = (pb.ATTEMPT_SUCCEEDED, pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED)


def app_id() -> str:
    return f"application_{CLUSTER_TS}_{AM_APP:06d}"


class _WithAm(ShimModel):
    """The pretend RM whose resync also mirrors the measured job's application (no asks: its AM helper's
    attempts are played by AmJob)."""

    def full_resync(self, session_id: str) -> Any:
        batch = super().full_resync(session_id)
        batch.apps_upserted.append(self._app(AM_APP))
        return batch


@dataclass(slots=True)
class _Copy:
    """One attempt of a task, as the AM holds it."""

    attempt_id: str
    task: int  # index into AmJob.tasks
    is_clone: bool
    state: int = pb.ATTEMPT_WAITING
    container_id: str = ""
    node_id: str = ""
    asked_s: float = 0.0  # when a clone was launched (it waits for its container from then)
    launch_s: float = 0.0  # its container's start (epoch s)
    end_s: float = 0.0  # when its work ends (running) or when it ended (final)
    reported: tuple[int, str, int] | None = None  # (state, container, tenth) of its last report
    sent: tuple[float, float] | None = None  # (progress, time) of its last report while running


@dataclass(slots=True)
class _Task:
    task_id: str
    phase: str  # "map" or "reduce"
    copies: list[_Copy] = field(default_factory=list)
    won: str = ""  # the attempt that succeeded first
    clones_sent: int = 0


class AmJob:
    """A MapReduce job as the project's AM helper sees it and reports it (module docstring)."""

    def __init__(
        self, tasks: int, containers: int, nodes: int, seed: int, now: float, name: str = ""
    ) -> None:
        self.name = name  # the job's name, as the RM knows the application
        reduces = int(tasks * REDUCE_SHARE)
        self.maps = tasks - reduces
        self.containers = containers
        self.nodes = nodes
        self.rng = random.Random(seed)
        self.tasks = [
            _Task(f"task_{CLUSTER_TS}_{AM_APP:06d}_{'m' if i < self.maps else 'r'}_{i:06d}", ph)
            for i in range(tasks)
            for ph in ("map" if i < self.maps else "reduce",)
        ]
        self.copies: dict[str, _Copy] = {}
        self.live: dict[str, _Copy] = {}  # copies not final
        self.unsettled: dict[str, _Copy] = {}  # copies not yet reported final
        self.pending = list(range(self.maps - 1, -1, -1))  # a stack: the next map last
        self.maps_left = self.maps
        self.running_originals = 0
        self.next_container = 1
        self.per_phase: dict[str, int] = {}
        self.granted: dict[str, int] = {}  # task id -> clones named per task (kept once seen)
        # warm: the first maps done, then as many running as the job's containers take, at random progress
        for _ in range(int(self.maps * DONE_SHARE)):
            c = self._launch(self.pending.pop(), False, now - 2 * (STARTUP_S + TASK_S[1]))
            self._end(c, c.end_s)
            del self.live[c.attempt_id]
        while self.pending and self.running_originals < self.containers:
            self._launch(self.pending.pop(), False, now - self.rng.uniform(0.0, STARTUP_S + TASK_S[1]))
        self.step(now)

    # ---- the job's own course ---------------------------------------------------------------------

    def _copy(self, i: int, is_clone: bool) -> _Copy:
        t = self.tasks[i]
        c = _Copy(f"attempt{t.task_id[4:]}_{len(t.copies)}", i, is_clone)
        t.copies.append(c)
        self.copies[c.attempt_id] = c
        self.live[c.attempt_id] = c
        self.unsettled[c.attempt_id] = c
        return c

    def _launch(self, i: int, is_clone: bool, at: float, c: _Copy | None = None) -> _Copy:
        """A copy of task `i` in a container from `at` (an original is made here, a clone was)."""
        c = c if c is not None else self._copy(i, is_clone)
        c.state = pb.ATTEMPT_RUNNING
        c.container_id = f"container_{CLUSTER_TS}_{AM_APP:06d}_01_{self.next_container:08d}"
        self.next_container += 1
        c.node_id = ShimModel.node_id(self.rng.randrange(self.nodes))
        c.launch_s = at
        c.end_s = at + STARTUP_S + self.rng.uniform(*TASK_S)
        self.running_originals += not is_clone
        return c

    def _end(self, c: _Copy, at: float) -> None:
        """`c` finished its work at `at`: it wins its task if no copy did, else it is one killed."""
        t = self.tasks[c.task]
        c.end_s = at
        if t.won:
            c.state = pb.ATTEMPT_KILLED
        else:
            c.state = pb.ATTEMPT_SUCCEEDED
            t.won = c.attempt_id
            if t.phase == "map":
                self.maps_left -= 1
                if self.maps_left == 0:  # the reduces start once every map finished
                    self.pending = list(range(len(self.tasks) - 1, self.maps - 1, -1))
        if c.container_id:
            self.running_originals -= not c.is_clone

    def step(self, now: float) -> None:
        """The job at `now`: copies whose work ended win or are killed (the losers of a task as soon as
        it is won), clones whose wait is over get a container, free containers take the next tasks."""
        for c in [c for c in self.live.values() if c.state == pb.ATTEMPT_RUNNING and c.end_s <= now]:
            if c.attempt_id not in self.live:
                continue  # killed just now: its task was won
            self._end(c, c.end_s)
            del self.live[c.attempt_id]
            for other in self.tasks[c.task].copies:
                if other.attempt_id in self.live:
                    self._end(other, now)
                    del self.live[other.attempt_id]
        for c in self.live.values():
            if c.state == pb.ATTEMPT_WAITING and now - c.asked_s >= CLONE_WAIT_S:
                self._launch(c.task, True, now, c)
        while self.pending and self.running_originals < self.containers:
            self._launch(self.pending.pop(), False, now)

    @property
    def done(self) -> bool:
        return self.maps_left == 0 and all(t.won for t in self.tasks)

    # ---- the helper's calls ----------------------------------------------------------------------

    def profile(self) -> Any:
        reduces = len(self.tasks) - self.maps
        demand = pb.Resource(memory_mb=CONTAINER_MEM, vcores=CONTAINER_CORES)
        out = pb.JobProfile(
            application_id=app_id(),
            job_name=self.name,
            submit_time_ms=1_700_000_000_000 + AM_APP,
            clones_preemptible=True,  # the project's AM: its DelayedKillDispatcher lets clones yield
        )
        out.phases.add(phase_id="map", tasks=self.maps, demand=demand, yarn_priority=20)  # JobProfiles
        if reduces:
            out.phases.add(phase_id="reduce", tasks=reduces, demand=demand, parents=["map"], yarn_priority=10)
        return out

    def _progress(self, c: _Copy, now: float) -> float:
        work = c.end_s - c.launch_s - STARTUP_S
        return min(1.0, max(0.0, (now - c.launch_s - STARTUP_S) / work)) if work > 0 else 0.0

    def changes(self, now: float) -> Any:
        """The AttemptReports of the attempts CloneBook.changes would report at `now`."""
        out = pb.AttemptReports(application_id=app_id())
        ms = int(now * 1000)
        for c in list(self.unsettled.values()):
            final = c.state in FINAL
            if final:
                del self.unsettled[c.attempt_id]  # reported now, or never (a clone that had no container)
            if not c.container_id and not (c.is_clone and not final):
                continue  # an original waiting for its container: its ask is all the service needs
            running = c.state == pb.ATTEMPT_RUNNING
            p = self._progress(c, now) if running else 0.0
            key = (c.state, c.container_id, math.floor(10 * p) if running else 0)
            due = running and c.sent is not None and p > c.sent[0] and now - c.sent[1] >= PROGRESS_REPORT_S
            if key == c.reported and not due:
                continue
            c.reported, c.sent = key, ((p, now) if running else None)
            t = self.tasks[c.task]
            out.attempts.add(
                task_id=t.task_id,
                attempt_id=c.attempt_id,
                phase_id=t.phase,
                container_id=c.container_id,
                node_id=c.node_id,
                is_clone=c.is_clone,
                state=c.state,
                duration_s=c.end_s - c.launch_s if final and c.container_id else 0.0,
                time_ms=ms,
                progress=p,
                launch_time_ms=int(c.launch_s * 1000) if c.container_id else 0,
                won=c.state == pb.ATTEMPT_SUCCEEDED and t.won == c.attempt_id,
            )
        return out

    def unreport(self, attempt_ids: Any) -> None:
        """Forget these reports so they are sent again (CloneBook.unreport: the call failed)."""
        for a in attempt_ids:
            c = self.copies[a]
            c.reported = c.sent = None
            self.unsettled[a] = c

    def adopt(self, plan: Any, now: float) -> None:
        """A plan's clones, launched as CloneBook.toClone does (simplified: no launch floor, no relaunch of
        a clone that yielded): a running task with no success gets the larger of its phase's count and its
        own, at most MAX_CLONES in all and 1 + MAX_CLONES live copies."""
        self.per_phase = dict(plan.clones_per_phase)
        for tc in plan.task_clones:
            self.granted[tc.task_id] = max(self.granted.get(tc.task_id, 0), tc.clones)
        running = {c.task for c in self.live.values() if c.state == pb.ATTEMPT_RUNNING}
        for i in sorted(running):
            t = self.tasks[i]
            want = min(MAX_CLONES, max(self.per_phase.get(t.phase, 0), self.granted.get(t.task_id, 0)))
            live = sum(1 for c in t.copies if c.attempt_id in self.live)
            for _ in range(min(want - t.clones_sent, 1 + MAX_CLONES - live)):
                self._copy(i, True).asked_s = now
                t.clones_sent += 1


# ---- the AM helper's process ------------------------------------------------------------------------


def _am_helper(address: str, spec: dict[str, Any], events: tuple[Any, Any, Any], out: Connection) -> None:
    """The measured job's AM helper, in a process of its own: starts when `events[0]` is set (the RM
    mirrors the job), measures the calls that start once `events[1]` is, stops when `events[2]` is;
    sends its figures."""
    import grpc

    from pyscheduler.wire import pb_grpc

    go, measure, stop = events
    if not go.wait(600):
        out.send({})
        return
    job = AmJob(spec["tasks"], spec["containers"], spec["nodes"], spec["seed"], time.time(), spec["name"])
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    counts = {"calls": 0, "fresh": 0, "deferred": 0, "refused": 0, "attempts_reported": 0, "clones": 0}
    reasons: dict[str, int] = {}
    unknown = False
    with grpc.insecure_channel(
        address,
        options=[("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20)],
    ) as ch:
        stub = pb_grpc.AppMasterServiceStub(ch)
        rpcs: dict[str, Callable[..., Any]] = {
            "profile": stub.ReportJobProfile,
            "attempts": stub.ReportAttempts,
            "plan": stub.GetClonePlan,
        }
        quiet_until = 0.0

        def call(kind: str, request: Any) -> Any:
            nonlocal quiet_until, unknown
            if time.monotonic() < quiet_until:
                return None  # backing off after a failure (AmServiceClient)
            measured = measure.is_set()
            t0 = time.perf_counter()
            plan, why = None, ""
            try:
                plan = rpcs[kind](request, timeout=RPC_TIMEOUT_S)
            except grpc.RpcError as exc:
                why = f"{kind} {exc.code().name}: {(exc.details() or '')[:80]}"
                if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION):
                    unknown = True
                else:
                    quiet_until = time.monotonic() + RETRY_S
            if not measured:
                return plan
            times[kind].append((time.perf_counter() - t0) * 1000.0)  # a failure's time too
            counts["calls"] += 1
            if plan is None:
                counts["refused"] += 1
            elif plan.detail.startswith("deferred"):
                counts["deferred"] += 1
                why = f"{kind} {_NUMBERS.sub('N', plan.detail)}"  # one line per reason, not per debt
            else:
                counts["fresh"] += 1
            if why:
                reasons[why] = reasons.get(why, 0) + 1
            return plan

        profile_sent = False
        last_plan = 0.0
        while not stop.is_set():
            tick = time.monotonic()
            now = time.time()
            if not profile_sent and (plan := call("profile", job.profile())) is not None:
                profile_sent = True
                job.adopt(plan, now)
                last_plan = time.monotonic()
            job.step(now)
            reports = job.changes(now)
            if reports.attempts:
                plan = call("attempts", reports) if profile_sent else None
                if plan is None:
                    job.unreport(a.attempt_id for a in reports.attempts)
                else:
                    if measure.is_set():
                        counts["attempts_reported"] += len(reports.attempts)
                    job.adopt(plan, now)
                    last_plan = time.monotonic()
            elif profile_sent and time.monotonic() - last_plan >= spec["interval"]:
                plan = call("plan", pb.ClonePlanRequest(application_id=app_id()))
                if plan is not None:
                    job.adopt(plan, now)
                    last_plan = time.monotonic()
            if unknown:  # the service lost the job: its profile and every attempt again
                unknown, profile_sent = False, False
                job.unreport(list(job.copies))
            time.sleep(max(0.0, tick + spec["poll"] - time.monotonic()))
    counts["clones"] = sum(t.clones_sent for t in job.tasks)
    figures: dict[str, Any] = {**counts, "reasons": reasons, "job_done": job.done}
    for kind, ts in (*((k, times[k]) for k in KINDS), ("plans", times["attempts"] + times["plan"])):
        figures[f"{kind}_calls"] = len(ts)
        figures[f"{kind}_p50_ms"] = round(percentile(ts, 50), 2) if ts else None
        figures[f"{kind}_p99_ms"] = round(percentile(ts, 99), 2) if ts else None
    out.send(figures)
    out.close()


# ---- the phases ------------------------------------------------------------------------------------


def _phase(args: argparse.Namespace, name: str, tmp: Path, index: int) -> dict[str, Any]:
    """Phase `name` (quiet, am) on a fresh `dollymp serve`: its figures."""
    with_am = name == "am"
    proc, port_file = start_serve(tmp, f"phase{index}")
    helper: Any = None
    ctx = multiprocessing.get_context("spawn")
    go, measure, stop = ctx.Event(), ctx.Event(), ctx.Event()
    receive: Connection | None = None
    try:
        address = wait_address(proc, port_file)
        if address is None:
            raise RuntimeError("the service did not start")
        model = _WithAm(args.nodes, args.apps, args.seed, start="warm")
        if with_am:
            receive, send = ctx.Pipe(duplex=False)
            spec = {
                "tasks": args.tasks,
                "containers": args.am_containers,
                "nodes": args.nodes,
                "seed": args.seed,
                "poll": args.am_poll,
                "interval": args.am_interval,
                "name": model._app(AM_APP).name,
            }
            helper = ctx.Process(
                target=_am_helper, args=(address, spec, (go, measure, stop), send), daemon=True
            )
            helper.start()
        result = drive(
            address, model, args.seconds, 2.0 * args.nodes, 0.1, proc.pid, args.warmup, go.set, measure.set
        )
        stop.set()
        calls: dict[str, Any] = {}
        if receive is not None and receive.poll(120):
            calls = receive.recv()
    finally:
        stop.set()
        stats = stop_serve(proc)
        if helper is not None:
            helper.join(10)
            if helper.is_alive():
                helper.terminate()
    return {
        "round_p50_ms": stats.get("round_p50_ms"),
        "round_p99_ms": stats.get("round_p99_ms"),
        "round_cpu_p50_ms": stats.get("round_cpu_p50_ms"),
        "round_cpu_p99_ms": stats.get("round_cpu_p99_ms"),
        "rounds": stats.get("rounds"),
        "decide_cpu_s": stats.get("decide_cpu_s"),
        "apply_cpu_s": stats.get("apply_cpu_s"),
        "batch_p99_ms": result["round_p99_ms"],
        "service_cpu_per_s": result["service_cpu_per_s"],
        "load_avg": result["load_avg"],
        "am": calls,
    }


# per phase: the service's rounds (wall and CPU), the pretend RM's batch-to-plan time, the service's CPU
PHASE_FIGURES = (
    "round_p50_ms",
    "round_p99_ms",
    "round_cpu_p50_ms",
    "round_cpu_p99_ms",
    "decide_cpu_s",
    "batch_p99_ms",
    "service_cpu_per_s",
)
# (flag, lowest, highest): every size and time must be in range
BOUNDS: tuple[tuple[str, float, float], ...] = (
    ("nodes", 1, 100_000),
    ("apps", 1, 10_000),
    # every attempt of the job goes in one report after the profile: within limits.attempts_per_report
    ("tasks", 1, 10_000),
    ("am_containers", 1, 10_000),
    ("am_poll", 0.01, 60.0),
    ("am_interval", 0.01, 600.0),
    ("seconds", 0.5, 3600.0),
    ("warmup", 0.0, 3600.0),
    ("repeats", 1, 20),
)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=2000, help="the pretend RM's nodes (default 2000)")
    p.add_argument("--apps", type=int, default=200, help="its applications, besides the job (default 200)")
    p.add_argument("--tasks", type=int, default=1000, help="the measured job's tasks (default 1000)")
    p.add_argument(
        "--am-containers", type=int, default=100, help="the job's originals running at once (default 100)"
    )
    p.add_argument(
        "--am-poll", type=float, default=0.2, help="seconds between the helper's looks (dollymp.am.poll-ms)"
    )
    p.add_argument(
        "--am-interval",
        type=float,
        default=1.0,
        help="seconds between plan requests with nothing to report (dollymp.am.plan-poll-ms; default 1)",
    )
    p.add_argument("--seconds", type=float, default=20.0, help="measured seconds per phase (default 20)")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds driven before measuring (default 10)")
    p.add_argument("--repeats", type=int, default=3, help="runs of both phases (default 3)")
    p.add_argument("--seed", type=int, default=0)


def _check(args: argparse.Namespace) -> str | None:
    for name, low, high in BOUNDS:
        v = getattr(args, name)
        if not (math.isfinite(v) and low <= v <= high):
            return f"--{name.replace('_', '-')} must be in [{low:g}, {high:g}], got {v:g}"
    return None


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def run(args: argparse.Namespace) -> int:
    why = _check(args)
    if why is not None:
        print(f"dollymp bench am: {why}", file=sys.stderr)
        return 2
    runs = paired_phases("am", args.repeats, ("quiet", "am"), functools.partial(_phase, args))
    if runs is None:
        return 1
    summary: dict[str, Any] = {
        "tasks": args.tasks,
        "nodes": args.nodes,
        "apps": args.apps,
        "repeats": args.repeats,
        "am_containers": args.am_containers,
        "am_poll_s": args.am_poll,
        "am_interval_s": args.am_interval,
        "load_avg": os.getloadavg()[0],
    }
    spreads: dict[str, dict[str, float]] = {}
    print(
        f"{args.tasks}-task job's AM beside {args.nodes} nodes x {args.apps} applications, median [min, max]"
    )
    for name, figs in runs.items():
        suffix = "quiet" if name == "quiet" else "with_am"
        for key in PHASE_FIGURES:
            values = [float(f[key]) for f in figs if f[key] is not None]
            if values:
                spreads[f"{key}_{suffix}"] = s = _spread(values)
                summary[f"{key}_{suffix}"] = s["median"]
                print(f"  {key + '_' + suffix:28s} {s['median']:.2f} [{s['min']:.2f}, {s['max']:.2f}]")
        summary[f"rounds_{suffix}"] = sum(int(f["rounds"] or 0) for f in figs)
    ams = [f["am"] for f in runs["am"] if f["am"]]
    for kind, key in (("plans", "am_plan"), ("attempts", "am_report"), ("plan", "am_getplan")):
        for q in ("p50", "p99"):
            values = [float(a[f"{kind}_{q}_ms"]) for a in ams if a.get(f"{kind}_{q}_ms") is not None]
            if values:
                spreads[f"{key}_{q}_ms"] = s = _spread(values)
                summary[f"{key}_{q}_ms"] = s["median"]
                print(f"  {key + '_' + q + '_ms':28s} {s['median']:.2f} [{s['min']:.2f}, {s['max']:.2f}]")
    for count in ("calls", "fresh", "deferred", "refused", "attempts_reported", "clones"):
        summary[f"am_{count}"] = sum(int(a.get(count, 0)) for a in ams)
    for kind in (*KINDS, "plans"):
        summary[f"am_{kind}_calls"] = sum(int(a.get(f"{kind}_calls", 0)) for a in ams)
    reasons: dict[str, int] = {}
    for a in ams:
        for why_, n in a.get("reasons", {}).items():
            reasons[why_] = reasons.get(why_, 0) + n
    summary["am_reasons"] = reasons
    summary["spread"] = spreads
    print(
        f"  AM calls over the repeats: {summary['am_calls']} ({summary['am_attempts_calls']} ReportAttempts, "
        f"{summary['am_plan_calls']} GetClonePlan), {summary['am_fresh']} fresh, {summary['am_deferred']} "
        f"deferred, {summary['am_refused']} refused; {summary['am_attempts_reported']} attempts reported, "
        f"{summary['am_clones']} clones launched"
    )
    for why_, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:5]:
        print(f"    {n} x {why_}")
    quiet, with_am = summary.get("round_p99_ms_quiet"), summary.get("round_p99_ms_with_am")
    if quiet and with_am:
        summary["am_effect_on_round_p99"] = round(with_am / quiet - 1.0, 3)
        print(f"  the cluster's round p99: {summary['am_effect_on_round_p99']:+.1%} with the AM")
    print(json.dumps(summary))
    return 0
