"""The decision service assembled from a validated Config: store, policy, sessions, gRPC server.

`dollymp serve` runs one; the HTTP API reads `state_dump()`, `servicer.stats` and `store` from it;
tests and the bench run one in-process too.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyscheduler.config import Config, ConfigError
from pyscheduler.core.clock import Clock
from pyscheduler.objects.decision import Decision
from pyscheduler.policies.production import NAME, PRODUCTION
from pyscheduler.service.limits import Limits
from pyscheduler.service.rmproxy import auth
from pyscheduler.service.rmproxy.amgate import AmGate
from pyscheduler.service.rmproxy.amservice import AppMasterServicer
from pyscheduler.service.rmproxy.durable import LogFirst
from pyscheduler.service.rmproxy.gcpace import GcPacer
from pyscheduler.service.rmproxy.server import GrpcServer, ServerOptions, TlsFiles
from pyscheduler.service.rmproxy.servicer import SchedulerServicer, SyncOptions
from pyscheduler.service.rmproxy.session import SessionRegistry
from pyscheduler.service.round import policy as round_policy
from pyscheduler.service.round.amplan import PlanBudget
from pyscheduler.service.round.yielding import BeatenRule
from pyscheduler.service.state.runhistory import RecordFinished, RunHistories

SWITCH_INTERVAL_S = 0.0005  # sys.setswitchinterval of a service that owns its process

log = logging.getLogger("dollymp.service")


class _WriterRecorder:
    """Decisions go to the store's background writer (committed in batches, off the round's path).

    The writer's queue is bounded. When it stays full for `wait_s` (the database is stalled or gone),
    the round's decisions are dropped and counted instead of stopping the decisions themselves: the
    cluster keeps being scheduled, and the log says (by count, no job data) how many it lacks.
    """

    def __init__(self, writer: Any, wait_s: float = 2.0) -> None:
        self.writer = writer
        self.wait_s = wait_s
        self.dropped = 0

    def append(self, decisions: Sequence[Decision]) -> Any:
        from pyscheduler.store import QueueFull, StoreError

        try:
            self.writer.submit(decisions, timeout=self.wait_s)
        except (QueueFull, StoreError) as exc:
            self.dropped += len(decisions)
            log.error(
                "decision log: %d decisions not recorded (%d so far): %s",
                len(decisions),
                self.dropped,
                type(exc).__name__,
            )


def _read(path: str, key: str, source: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(key, source, f"cannot read {path!r}: {exc.strerror}") from None


def tls_of(cfg: Config) -> TlsFiles | None:
    if not cfg["grpc.tls_cert"]:
        return None
    src = cfg.sources
    return TlsFiles(
        cert_chain=_read(cfg["grpc.tls_cert"], "grpc.tls_cert", src["grpc.tls_cert"]),
        private_key=_read(cfg["grpc.tls_key"], "grpc.tls_key", src["grpc.tls_key"]),
        client_ca=_read(cfg["grpc.tls_client_ca"], "grpc.tls_client_ca", src["grpc.tls_client_ca"])
        if cfg["grpc.tls_client_ca"]
        else None,
    )


def auth_of(cfg: Config) -> auth.AuthSettings:
    secret = None
    if cfg["grpc.auth_secret_file"]:
        try:
            secret = auth.read_secret(cfg["grpc.auth_secret_file"])
        except auth.SecretError as exc:
            raise ConfigError(
                "grpc.auth_secret_file", cfg.sources["grpc.auth_secret_file"], str(exc)
            ) from None
    return auth.AuthSettings(secret=secret, client_certs=bool(cfg["grpc.tls_client_ca"]))


class DecisionService:
    """Everything `dollymp serve` runs. Construction validates what the Config alone could not
    (policy name and options, store URL, TLS files, the port) and raises ConfigError naming the key."""

    def __init__(self, cfg: Config, clock: Clock | None = None) -> None:
        """`clock`: the decisions' time (default: wall time, and monotonic time for rates and TTLs); a
        simulator passes one clock for all (pyscheduler/sim/live)."""
        from pyscheduler.store import (
            AppRunHistory,
            BackgroundWriter,
            Retention,
            StatisticsHistory,
            open_store,
        )
        from pyscheduler.store.runhistory import FRAMEWORKS, RunHistoryWriter

        self.cfg = cfg
        try:
            core_policy = round_policy.resolve(cfg["policy.name"], cfg["policy.options"])
        except ValueError as exc:
            key = "policy.options" if cfg["policy.options"] and "option" in str(exc) else "policy.name"
            raise ConfigError(key, cfg.sources[key], str(exc)) from None
        tls = tls_of(cfg)
        auth_settings = auth_of(cfg)
        try:
            self.store = open_store(cfg["store.url"])
        except Exception as exc:
            raise ConfigError(
                "store.url", cfg.sources["store.url"], f"cannot open the decision log: {exc}"
            ) from None
        age = cfg["store.retention_max_age_s"] or None
        size = cfg["store.retention_max_bytes"] or None
        retention = Retention(max_age_s=age, max_bytes=size) if (age or size) else None
        self.writer = BackgroundWriter(self.store, retention=retention, max_queue=20_000)
        # applications without an AM helper: run times by name (and by type: the framework-wide prior),
        # queue and YARN priority, in the same store; a round folds finished applications into memory and
        # their commit is this writer's (store/runhistory.py), so a round never waits for the store
        bounds = (cfg["store.run_history_max_keys"], cfg["store.run_history_max_samples"])
        self.run_writer = RunHistoryWriter()
        self.run_history = AppRunHistory(self.store.db, *bounds, writer=self.run_writer)
        self.framework_history = AppRunHistory(
            self.store.db, *bounds, table=FRAMEWORKS, writer=self.run_writer
        )
        histories = RunHistories(self.run_history, self.framework_history)
        # AM-helper jobs: task durations per phase by the RM's queue, user and job name (store/history.py)
        self.history = StatisticsHistory(
            self.store.db,
            max_rows_per_queue=cfg["store.history_max_rows_per_queue"],
            max_rows_per_user=cfg["store.history_max_rows_per_user"],
            share_across_queues=cfg["store.history_share_across_queues"],
            cache_reads=True,  # the service is its store's one writer of the history
        )
        recorder = _WriterRecorder(self.writer)
        self.limits = Limits.from_config(cfg)
        # without a secret or client certificates, an RM's rm_id is bound to the caller that holds it
        self.registry = SessionRegistry(self.limits, bind_callers=not auth_settings.required)
        self.appmaster = AppMasterServicer(
            self.registry,
            core_policy,
            recorder,
            history=self.history,
            budget=PlanBudget(
                cfg["appmaster.plans_per_s"], clock=time.monotonic if clock is None else clock.now
            ),
            limits=self.limits,
            clock=clock,
            reduce_phase=cfg["appmaster.reduce_phase_progress"],
            framework_prior=cfg["appmaster.framework_prior"],
        )
        self.guard = auth.Guard(auth_settings, self.registry)
        self.appmaster.rm_job = self.guard.history_key
        if clock is None:  # on a simulator's clock CPU is not what is simulated: no AM budgets
            self.appmaster.gate = AmGate(
                cfg["appmaster.app_cpu_ms_per_s"],
                cfg["appmaster.queue_cpu_ms_per_s"],
                self._queue_of,
                burst_s=cfg["appmaster.cpu_burst_s"],
            )
        self.servicer = SchedulerServicer(
            self.registry,
            round_policy.round_with(
                core_policy,
                am=functools.partial(self.appmaster.am.round_view, with_copies=cfg["appmaster.clone_yield"]),
                release_beaten=cfg["appmaster.release_beaten_clones"],
                beaten_rule=BeatenRule(
                    cfg["appmaster.beaten_margin_s"],
                    cfg["appmaster.beaten_margin_frac"],
                    cfg["appmaster.beaten_min_progress"],
                    cfg["appmaster.release_beaten_originals"],
                ),
                late_first=cfg["appmaster.late_first"],
                limits=self.limits,
                history=histories,
                clock=None if clock is None else clock.now,
            ),
            cfg["policy.name"],
            recorder,
            SyncOptions(
                cfg["sync.queue_size"],
                cfg["sync.max_coalesce"],
                cfg["sync.outstanding_ttl_s"],
                self.limits,
                cfg["grpc.max_workers"],
            ),
            clock,
        )
        self.servicer.on_finished = RecordFinished(histories, self.appmaster.am.described)
        self.log_first = LogFirst(self.writer, recorder, self.limits.log_wait_s)
        self.servicer.before_send = self.log_first
        options = ServerOptions(
            host=cfg["grpc.host"],
            port=cfg["grpc.port"],
            max_workers=cfg["grpc.max_workers"],
            max_message_mb=cfg["grpc.max_message_mb"],
            idle_timeout_s=cfg["grpc.idle_timeout_s"],
            tls=tls,
        )
        try:
            self.grpc = GrpcServer(self.servicer, options, self.appmaster, interceptors=[self.guard])
        except (OSError, RuntimeError) as exc:
            self.run_writer.close()
            self.writer.close()
            self.store.close()
            raise ConfigError("grpc.port", cfg.sources["grpc.port"], f"cannot bind: {exc}") from None

        self.http: Any = None
        self.pacer: GcPacer | None = None
        if cfg["http.port"] >= 0:
            from pyscheduler.api import ApiServer, ApiSettings, create_app
            from pyscheduler.service.rmproxy.provider import SessionStateProvider

            try:
                app = create_app(
                    self.store,
                    SessionStateProvider(self.registry, self.log_first.log_problem, self.guard.authenticated),
                    ApiSettings.from_config(cfg),
                )
            except ValueError as exc:
                self.stop()
                raise ConfigError("http.token", cfg.sources["http.token"], str(exc)) from None
            self.http = ApiServer(
                app,
                cfg["http.host"],
                cfg["http.port"],
                header_bytes=cfg["limits.http_header_bytes"],
                idle_s=cfg["http.idle_timeout_s"],
            )

    @property
    def port(self) -> int:
        return self.grpc.port

    def _queue_of(self, app_id: str) -> str:
        """The queue the RM that owns `app_id` knows it in; "" for an application no RM knows."""
        key = self.guard.history_key(app_id)
        return key.queue if key is not None else ""

    def start(self, manage_gc: bool = False) -> None:
        """Start serving. `manage_gc`: pace the cycle collector between rounds
        (pyscheduler.service.rmproxy.gcpace); for a service that owns its process (`dollymp serve`), not for
        one embedded in tests."""
        if self.http is not None:
            try:
                self.http.start()
            except RuntimeError as exc:
                raise ConfigError("http.port", self.cfg.sources["http.port"], str(exc)) from None
        self.grpc.start()
        if manage_gc:
            # A waiting thread (an RM round behind an AM call's CPU) gets the interpreter within 0.5 ms,
            # not CPython's default 5 ms (service/rmproxy/amgate.py)
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        if manage_gc and self.pacer is None:
            self.pacer = GcPacer()
            self.pacer.start()
            self.servicer.pacer = self.pacer
            self.servicer.stats.gc = self.pacer
        log.info(
            "gRPC on %s:%d (tls %s, shim authentication %s), policy %s",
            self.cfg["grpc.host"],
            self.port,
            "on" if self.cfg["grpc.tls_cert"] else "off",
            "on" if self.guard.settings.required else "off (loopback: RMs told apart by local user)",
            self.cfg["policy.name"]
            + (
                f" (the production configuration: {PRODUCTION.candidate})"
                if self.cfg["policy.name"] == NAME
                else ""
            ),
        )

    def stop(self) -> None:
        """Finish the rounds in flight, close the streams, commit every queued decision; within
        `grpc.grace_s` (half a second more for the log at least) whatever the log's state: a log that
        cannot be written loses the decisions still queued, counted in the error log."""
        deadline = time.monotonic() + self.cfg["grpc.grace_s"]
        self.grpc.stop(self.cfg["grpc.grace_s"])
        if self.http is not None:
            self.http.stop()
        if not self.run_writer.close(timeout=max(0.5, deadline - time.monotonic())):
            log.error("run history: %d fold(s) not committed at shutdown", self.run_writer.depth)
        try:
            self.writer.close(timeout=max(0.5, deadline - time.monotonic()))
            self.store.close()
        except Exception as exc:  # the writer is stuck (full disk, blocked database): do not wait on it
            log.error("decision log: %d decisions not committed at shutdown: %s", self.writer.depth, exc)
        if self.pacer is not None:
            self.pacer.stop()

    def state_dump(self) -> dict[str, Any]:
        """Every session's mirrored RM state (canonical JSON), keyed by rm_id."""
        out: dict[str, Any] = {}
        for s in self.registry.sessions():
            with s.lock:
                out[s.rm_id] = {
                    "session_id": s.session_id,
                    "state": s.state.value,
                    "last_seq": s.last_seq,
                    "mirror": s.mirror.dump(),
                }
        return out
