"""AppMasterService: the gRPC face of the AM helper's calls. It validates each message
(service/rmproxy/ambounds.py, naming the field and its limit), keeps what it reports in the AM registry
(service/state/amregistry.py), writes the attempts' outcomes and the recurring-job history, and answers with
the AM plan (service/round/amplan.py). The AM asks again every `dollymp.am.plan-poll-ms`.

The recurring-job history (pyscheduler.store.history) is keyed by the tenant the RM's mirror of the
application gives (`rm_job`: its queue, user and name, pyscheduler.service.rmproxy.auth), looked up again with
every report, never by what the AM says of itself: an AM proves which application it is (its AMRMToken), not
its queue or user. An application the RM does not know, or whose AM reports another job name, neither
writes nor reads any history."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from pyscheduler.core.clock import Clock
from pyscheduler.echo import detail, shown
from pyscheduler.objects.decision import DecisionKind, DecisionRecorder
from pyscheduler.policies import Policy
from pyscheduler.service.limits import DEFAULTS, Limits, Refusal
from pyscheduler.service.rmproxy import ambounds, validate
from pyscheduler.service.rmproxy.amgate import AmGate, call_cpu_s
from pyscheduler.service.rmproxy.servicer import Malformed, lenient
from pyscheduler.service.rmproxy.session import SessionRegistry
from pyscheduler.service.round.amplan import AmPlanner, PlanBudget
from pyscheduler.service.roundsfirst import checkpoint
from pyscheduler.service.state.amregistry import AmRegistry, UnknownPhase
from pyscheduler.service.state.amreports import FINAL, waiting_clone
from pyscheduler.store.history import JobKey
from pyscheduler.wire import pb

SERVICE_NAME = "dollymp.v1.AppMasterService"
log = logging.getLogger("dollymp.appmaster")


class AppMasterServicer:
    def __init__(
        self,
        registry: SessionRegistry,
        policy: Policy | None,
        recorder: DecisionRecorder,
        history: Any | None = None,
        max_apps: int = 10_000,
        budget: PlanBudget | None = None,
        limits: Limits = DEFAULTS,
        clock: Clock | None = None,
        reduce_phase: bool = False,
        framework_prior: bool = False,
    ) -> None:
        self.limits = limits
        self.recorder = recorder
        # `clock`: the plans' time (default wall time); `reduce_phase`: appmaster.reduce_phase_progress;
        # `framework_prior`: appmaster.framework_prior
        self.am = AmRegistry(history, max_apps, clock, reduce_phase, framework_prior)
        self.planner = AmPlanner(self.am, registry.plan_view, policy, recorder, budget)
        # The queue, user and name the RM knows an application by, None if it knows none
        # (pyscheduler.service.rmproxy.auth): the recurring-job history is kept only for such applications, by
        # that key.
        self.rm_job: Callable[[str], JobKey | None] | None = None
        # One application's hints and the running copies, read on their own (RM rounds read both at once,
        # `self.am.round_view`, service/state/amview.py)
        self.hints = self.am.hints
        self.running_copies = self.am.running_copies
        # The AM calls' CPU budgets per application and queue (service/rmproxy/amgate.py): the gRPC path only
        self.gate: AmGate | None = None

    def _put_profile(self, request: Any, context: grpc.ServicerContext) -> None:
        self._check(request, lambda p: ambounds.profile(p, self.limits, ambounds.check_profile), context)
        self.am.put_profile(request, self._rm_key(request.application_id))

    def report_job_profile(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._put_profile(request, context)
        plan = self.planner.plan(request.application_id)
        log.info(
            "ReportJobProfile %s (%s): phases %s -> clones %s, omega %.3g s",
            request.application_id,
            request.job_name,
            {ph.phase_id: ph.tasks for ph in request.phases},
            dict(plan.clones_per_phase),
            plan.delay_assignment_wait_s,
        )
        return plan

    def report_attempts(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._record(request, context)
        return self.planner.plan(request.application_id)

    def _record(self, request: Any, context: grpc.ServicerContext) -> None:
        self._check(request, lambda r: ambounds.reports(r, self.limits, ambounds.check_reports), context)
        try:
            finished, key, outcomes = self.am.record(
                request, self.limits, self._rm_key(request.application_id)
            )
        except KeyError:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                detail(
                    f"application_id: no job profile for {shown(request.application_id)}; report it first"
                ),
            )
        except UnknownPhase as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(str(exc)))
        except Refusal as exc:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, detail(str(exc)))
        checkpoint()  # RM rounds first (service/roundsfirst.py), here and between the steps below
        if outcomes:
            self.recorder.append(outcomes)
            checkpoint()
        if self.am.history is not None and key is not None:  # else: unknown to the RM, or by another name
            for phase_id, ds in finished.items():
                self.am.history.record(key, phase_id, ds)
                checkpoint()
            self.am.forget_priors(key.queue, finished)  # the queue's prior is read again, with these
        if not log.isEnabledFor(logging.INFO):  # the counts below walk every attempt of the report
            return
        log.info(
            "ReportAttempts %s: %d attempt(s), %d clone(s) (%d waiting for a container), %d finished, "
            "%d map read(s)",
            request.application_id,
            len(request.attempts),
            sum(1 for a in request.attempts if a.is_clone),
            sum(1 for a in request.attempts if waiting_clone(a)),
            sum(1 for a in request.attempts if a.state in FINAL),
            sum(1 for d in outcomes if d.kind is DecisionKind.MAP_READ),
        )

    def get_clone_plan(self, request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(request.describe()))
        if not request.application_id:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "application_id: must be non-empty")
        with self.am.lock:
            known = request.application_id in self.am.apps
        if not known:
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                detail(f"application_id: no job profile for {shown(request.application_id)}"),
            )
        return self.planner.plan(request.application_id)

    # ---- the budgets (service/rmproxy/amgate.py) -------------------------------------------------

    def gated(self, kind: str, fn: Callable[[Any, grpc.ServicerContext], Any]) -> Callable[[Any, Any], Any]:
        """`fn` (a call of `kind`: profile, attempts or plan) under the gate's budgets."""

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            gate = self.gate
            app_id = "" if isinstance(request, Malformed) else request.application_id
            if gate is None or not app_id:
                return fn(request, context)
            checkpoint()  # RM rounds first (service/roundsfirst.py)
            t0 = call_cpu_s()
            queue, why, wait = gate.admit(app_id)
            if why is not None:
                try:
                    return self._deferred(gate, kind, request, why, context)
                finally:  # the deferred call's own cost (keeping its report) is the application's too
                    gate.charge(app_id, queue, call_cpu_s() - t0)
                    gate.pace(app_id, wait)
            try:
                self._apply_kept(gate, app_id)
                return fn(request, context)
            finally:
                gate.charge(app_id, queue, call_cpu_s() - t0)

        return call

    def _deferred(
        self, gate: AmGate, kind: str, request: Any, why: str, context: grpc.ServicerContext
    ) -> Any:
        app_id = request.application_id
        if kind == "profile":
            gate.keep(app_id, profile=request)
        elif kind == "attempts" and not gate.keep(
            app_id, attempts=request.attempts, limit=self.limits.attempts_per_app
        ):
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                detail(
                    f"attempts: the deferred reports of {shown(app_id)} would keep more than "
                    f"{self.limits.attempts_per_app} attempts (limits.attempts_per_app); {why}"
                ),
            )
        st = self.am.apps.get(app_id)  # one dict lookup, atomic under the GIL: no wait for the lock
        plan = pb.ClonePlan(application_id=app_id)
        if st is not None and st.plan is not None:
            plan.CopyFrom(st.plan)
        plan.detail = why
        return plan

    def _apply_kept(self, gate: AmGate, app_id: str) -> None:
        """What deferred calls of `app_id` left, applied before its call in budget (module amgate)."""
        kept = gate.take(app_id)
        if kept is None:
            return
        quiet = _Quiet()
        work: list[tuple[str, Any, Callable[[Any, Any], Any]]] = []
        if kept.profile is not None:
            work.append(("job profile", kept.profile, self._put_profile))
        if kept.attempts:
            reports = pb.AttemptReports(application_id=app_id, attempts=list(kept.attempts.values()))
            work.append(("attempt reports", reports, self._record))
        for what, request, apply in work:
            try:
                apply(request, quiet)
            except _Dropped as exc:
                gate.dropped += 1
                log.warning("deferred %s of %s dropped: %s", what, shown(app_id), exc)

    # ---- the calls' work ---------------------------------------------------------------------

    def _rm_key(self, app_id: str) -> JobKey | None:
        """The RM's (queue, user, name) of `app_id`, read outside the registry's lock."""
        return None if self.rm_job is None else self.rm_job(app_id)

    @staticmethod
    def _check(request: Any, check: Callable[[Any], None], context: grpc.ServicerContext) -> None:
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(request.describe()))
        try:
            check(request)
        except validate.InvalidMessage as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(str(exc)))


class _Dropped(Exception):
    """A kept (deferred) report that its later application refused."""


class _Quiet:
    """The context of a kept report applied later: its call was answered already, so a refusal drops it."""

    def abort(self, code: Any, details: str) -> None:
        raise _Dropped(f"{code.name}: {details}")


def generic_handler(servicer: AppMasterServicer) -> grpc.GenericRpcHandler[Any, Any]:
    def unary(kind: str, fn: Callable[[Any, grpc.ServicerContext], Any], req: Any, resp: Any) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            servicer.gated(kind, fn),
            request_deserializer=lenient(req),
            response_serializer=resp.SerializeToString,
        )

    return grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            "ReportJobProfile": unary("profile", servicer.report_job_profile, pb.JobProfile, pb.ClonePlan),
            "ReportAttempts": unary("attempts", servicer.report_attempts, pb.AttemptReports, pb.ClonePlan),
            "GetClonePlan": unary("plan", servicer.get_clone_plan, pb.ClonePlanRequest, pb.ClonePlan),
        },
    )


__all__: Sequence[str] = ("SERVICE_NAME", "AppMasterServicer", "generic_handler")
