"""One run of the live mechanism in simulated time: the simulated cluster (cluster.py) and AM helpers
(appmaster.py) drive the real decision service (service/rmproxy/service.py) on a manual clock, tick by tick.

A tick (every `tick_s`, the nodes' heartbeat interval), in order: the last plan's kills are carried out;
copies whose work ended complete (the first of a task wins, the AM kills the others) and phases whose
parents finished launch; a job that finished has its AM report its last attempts (as the AM helper's
last tick does when it stops), the plan unused; jobs due arrive (an AM acts from its `ready_s`: at once,
or once its own container started and its start-up passed, cluster.py); every node heartbeats (the last plan's
placements committed or dropped); the tick's StateBatch goes to the service and its Plan comes back (under
`commit` "plan", the shim's default, carried out at once: its kills, then its placements);
new jobs' AMs report their profiles, and every `am_interval_s` the running jobs' AMs report their
attempts, each acting on the ClonePlan it gets back (its attempts' changes, or with none the plan alone).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscheduler.core.clock import ManualClock
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.rmproxy.session import RoundRecords
from pyscheduler.sim.live.appmaster import AppMaster
from pyscheduler.sim.live.cluster import SHIM_COMMIT, Cluster
from pyscheduler.sim.live.records import EPOCH_S, LiveRecord
from pyscheduler.sim.live.transport import Tap, Tapped, Transport, connect, service_of
from pyscheduler.sim.live.workload import Workload
from pyscheduler.wire import pb


@dataclass(frozen=True)
class LiveOptions:
    transport: str = "direct"  # "direct" or "grpc" (transport.py)
    tick_s: float = 1.0  # node heartbeats and StateBatches
    am_interval_s: float = 1.0  # the AM helper's report interval (dollymp.am.plan-poll-ms)
    max_s: float = 3600.0  # give up after this much simulated time
    service: dict[str, Any] = field(default_factory=dict)  # further service configuration keys
    # the AMs speculate as Hadoop's stock MRAppMaster does (speculator.py): the cluster benchmark's
    # CapacityScheduler half, with `service` {"policy.name": "capacity"}
    am_speculation: bool = False
    # With no job in the cluster, go straight to the next arrival's tick (a trace's idle hours) instead
    # of heartbeating through them: those rounds have nothing to decide
    skip_idle: bool = False
    count_waits: bool = False  # count the rounds that leave an original waiting for room (records.py)
    # when the simulated shim carries out a plan: as it arrives ("plan", the shim's default) or at the next
    # tick's heartbeat ("heartbeat"): the shim's yarn.scheduler.dollymp.commit (cluster.py)
    commit: str = SHIM_COMMIT


class Unfinished(RuntimeError):
    """The run passed `LiveOptions.max_s` with jobs unfinished; `record` holds what it decided."""

    def __init__(self, message: str, record: LiveRecord) -> None:
        super().__init__(message)
        self.record = record


def _hear_kills(svc: DecisionService, why: dict[str, str]) -> None:
    """The reasons of the plans' kills (the decision log's, before each plan is sent: the wire carries
    only the containers) into `why`, by container; the log is written as before."""
    log_first = svc.servicer.before_send

    def tee(records: list[RoundRecords]) -> None:
        for r in records:
            for d in r.others:
                if d.kind is DecisionKind.KILL:
                    why[str(d.inputs["container_id"])] = d.reason
        if log_first is not None:
            log_first(records)

    svc.servicer.before_send = tee


def run(
    wl: Workload, opts: LiveOptions | None = None, store_dir: Path | None = None, tap: Tap | None = None
) -> LiveRecord:
    """Run `wl` through the service; the record of everything decided (records.py). With `tap`, every
    answer of the service is also handed to it (transport.py `Tapped`: the run itself unchanged)."""
    opts = opts or LiveOptions()
    if store_dir is None:
        with tempfile.TemporaryDirectory(prefix="dollymp-live-") as tmp:
            return run(wl, opts, Path(tmp), tap)
    clock = ManualClock(EPOCH_S)
    svc = service_of(store_dir, clock, dict(opts.service))
    record = LiveRecord()
    cluster = Cluster(wl, record, commit=opts.commit)
    _hear_kills(svc, cluster.kill_why)
    transport: Transport = connect(opts.transport, svc)
    if tap is not None:
        transport = Tapped(transport, tap, cluster.kill_why)
    try:
        reg = transport.register(pb.RegisterRequest(rm_id="sim-rm", tick_ms=round(opts.tick_s * 1000)))
        arriving = sorted(range(len(wl.jobs)), key=lambda j: (wl.jobs[j].submit_s, j))
        submits = [j.submit_s for j in wl.jobs]
        span = (min(submits, default=0.0), max(submits, default=0.0))
        running: list[AppMaster] = []
        booting: list[AppMaster] = []  # submitted, their AM not up yet
        seq, step, next_report = 0, 0, 0.0
        while True:
            t = step * opts.tick_s
            if t > opts.max_s:
                raise Unfinished(f"{len(running)} job(s) unfinished after {opts.max_s:g} s", record)
            clock.set(EPOCH_S + t)
            cluster.preempt(t)
            if step:
                cluster.advance(t, opts.tick_s)
            cluster.end_work(t)
            for am in running:  # a finished job's AM reports its last attempts as it stops (the helper's
                if am.finish_s is not None:  # last tick), so its last phase's run times reach the history
                    last = am.report(t)
                    if last.attempts:
                        transport.report_attempts(last)
            running = [am for am in running if am.finish_s is None]
            for am in running:
                am.start_ready(t)
                am.speculate(t)
            while arriving and wl.jobs[arriving[0]].submit_s <= t:
                am = AppMaster(wl, arriving.pop(0), record, speculation=opts.am_speculation)
                cluster.submit(am, t)
                booting.append(am)
            new = [am for am in booting if am.ready_s is not None and am.ready_s <= t]
            booting = [am for am in booting if am not in new]
            if not running and not new and not arriving and not booting:
                break
            if opts.skip_idle and not running and not new and not booting and not cluster.busy():
                due = math.ceil(wl.jobs[arriving[0]].submit_s / opts.tick_s - 1e-9)
                if due > step:
                    step = due
                    continue
            cluster.heartbeat(t)
            seq += 1
            plan = transport.sync(cluster.batch(reg.session_id, seq, t))
            record.rounds += 1
            if opts.count_waits and span[0] <= t <= span[1]:
                record.span_rounds += 1
                record.wait_rounds += cluster.an_original_waits(plan)
            if plan.status != pb.BATCH_ACCEPTED:
                raise RuntimeError(f"batch {seq} not accepted: {plan.detail}")
            cluster.take_plan(plan, t)
            if t >= next_report:
                for am in running:
                    reports = am.report(t)
                    if reports.attempts:
                        am.act(transport.report_attempts(reports), t)
                    else:  # nothing changed: the plan again (a task may have become late meanwhile)
                        am.act(transport.get_clone_plan(pb.ClonePlanRequest(application_id=am.app_id)), t)
                next_report = t + opts.am_interval_s
            for am in new:
                am.start_ready(t)
                am.act(transport.report_job_profile(am.profile()), t)
            running.extend(new)
            step += 1
        record.end_s = t
    finally:
        transport.close()
    return record
