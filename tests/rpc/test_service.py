"""The assembled DecisionService on a real loopback socket: health, TLS, AppMasterService, resync."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rpc_harness import Service, Stream, app, ask, attempt, full_batch, in_process_service, node, register

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.store.history import JobKey
from pyscheduler.wire import pb, pb_grpc


def _health(ch: grpc.Channel, name: str) -> int:
    stub = health_pb2_grpc.HealthStub(ch)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5).status)


def test_health_service(inproc: DecisionService) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{inproc.port}") as ch:
        for name in ("", "dollymp.v1.SchedulerService", "dollymp.v1.AppMasterService"):
            assert _health(ch, name) == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as err:
            _health(ch, "no.such.Service")
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
    inproc.grpc.health.enter_graceful_shutdown()
    with grpc.insecure_channel(f"127.0.0.1:{inproc.port}") as ch:
        assert _health(ch, "") == health_pb2.HealthCheckResponse.NOT_SERVING


def _named(a: Any, name: str) -> Any:
    a.name = name
    return a


def _profile(app_id: str = "application_1700000000000_0001") -> Any:
    phases = [
        pb.PhaseProfile(
            phase_id="map", tasks=4, demand=pb.Resource(memory_mb=1024, vcores=1), yarn_priority=20
        ),
        pb.PhaseProfile(
            phase_id="reduce",
            tasks=1,
            demand=pb.Resource(memory_mb=2048, vcores=1),
            parents=["map"],
            yarn_priority=10,
        ),
    ]
    return pb.JobProfile(application_id=app_id, job_name="wordcount", phases=phases, submit_time_ms=1)


@pytest.fixture
def idle_cloning(tmp_path: Path) -> Iterator[DecisionService]:
    """DollyMP with the clone rule that fills idle capacity: this test is about the AM helper's
    plumbing (the core's clone counts reach the AM), not about when the default rule clones."""
    svc = in_process_service(tmp_path, **{"policy.name": "dollymp", "policy.options": {"clone_rule": "idle"}})
    try:
        yield svc
    finally:
        svc.stop()


def test_appmaster_clone_plan_and_validation(idle_cloning: DecisionService) -> None:
    inproc = idle_cloning
    with grpc.insecure_channel(f"127.0.0.1:{inproc.port}") as ch:
        reg = register(ch)
        s = Stream(ch)
        s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node(f"h{i}:1", 8192, 8) for i in range(4)],
                # the RM knows the job by the profile's name: its durations go into that name's history
                apps_upserted=[_named(app(1), "wordcount")],
            )
        )
        am = pb_grpc.AppMasterServiceStub(ch)
        plan = am.ReportJobProfile(_profile(), timeout=10)
        assert set(plan.clones_per_phase) == {"map", "reduce"}
        assert all(0 <= c <= 2 for c in plan.clones_per_phase.values())
        # 4 idle nodes of 8 cores and a 4-task map phase: DollyMP clones the maps in idle capacity.
        assert plan.clones_per_phase["map"] >= 1
        assert plan.delay_assignment_wait_s >= 0 and plan.detail.startswith("policy dollymp")
        reports = pb.AttemptReports(
            application_id=plan.application_id,
            attempts=[
                pb.AttemptReport(
                    task_id=f"task_m_{i}",
                    attempt_id=f"attempt_m_{i}_0",
                    phase_id="map",
                    state=pb.ATTEMPT_SUCCEEDED,
                    duration_s=10.0 + i,
                    time_ms=5,
                )
                for i in range(3)
            ],
        )
        plan2 = am.ReportAttempts(reports, timeout=10)
        assert set(plan2.clones_per_phase) == {"map", "reduce"}
        assert am.GetClonePlan(
            pb.ClonePlanRequest(application_id=plan.application_id), timeout=10
        ).application_id
        # The durations reached the recurring-job history, under the RM's queue, user and name.
        moments = inproc.history.moments(JobKey("default", "u", "wordcount"), "map")
        assert moments is not None and moments.count == 3 and abs(moments.mean - 11.0) < 1e-9
        # ... and θ for the YARN priority of "map" in the translation to the core.
        assert inproc.appmaster.hints(plan.application_id)[20].mean == pytest.approx(11.0)
        # A later run of the same recurring job: θ and σ come from the history first (DollyMP Sec. 5.2),
        # 10, 11 and 12 s, not from its own first task's 40 s; the RM knows it in the same queue, by the
        # same user and name (an application the RM does not know neither reads nor writes the history).
        known = [_named(app(2), "wordcount")]
        assert s.send(pb.StateBatch(session_id=reg.session_id, seq=2, apps_upserted=known)).status == (
            pb.BATCH_ACCEPTED
        )
        again = _profile("application_1700000000000_0002")
        am.ReportJobProfile(again, timeout=10)
        assert inproc.appmaster.hints(again.application_id)[20].mean == pytest.approx(11.0)
        first = pb.AttemptReport()
        first.CopyFrom(reports.attempts[0])
        first.duration_s = 40.0
        am.ReportAttempts(
            pb.AttemptReports(application_id=again.application_id, attempts=[first]), timeout=10
        )
        hint = inproc.appmaster.hints(again.application_id)[20]  # the history, its own 40 s folded in
        assert hint.mean == pytest.approx((10 + 11 + 12 + 40) / 4) and hint.sd > 0

        bad = [
            (_profile(""), "application_id: must be non-empty"),
            (pb.JobProfile(application_id="a"), "phases: must list at least one phase"),
        ]
        cyclic = _profile()
        cyclic.phases[0].parents.append("reduce")
        bad.append((cyclic, "phases: "))
        dup = _profile()
        dup.phases[1].phase_id = "map"
        bad.append((dup, "phases[1].phase_id: duplicate phase"))
        neg = _profile()
        neg.phases[0].demand.memory_mb = -1
        bad.append((neg, "phases[0].demand.memory_mb: must be >= 0"))
        for msg, text in bad:
            with pytest.raises(grpc.RpcError) as err:
                am.ReportJobProfile(msg, timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and err.value.details().startswith(
                text
            )
        nan = pb.AttemptReports(
            application_id=plan.application_id,
            attempts=[
                pb.AttemptReport(
                    task_id="t",
                    attempt_id="a",
                    phase_id="map",
                    state=pb.ATTEMPT_SUCCEEDED,
                    duration_s=float("nan"),
                )
            ],
        )
        with pytest.raises(grpc.RpcError) as err:
            am.ReportAttempts(nan, timeout=10)
        assert err.value.details().startswith("attempts[0].duration_s: must be a finite number")
        with pytest.raises(grpc.RpcError) as err:
            am.GetClonePlan(pb.ClonePlanRequest(application_id="application_9_9"), timeout=10)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as err:
            ch.unary_unary("/dollymp.v1.AppMasterService/ReportJobProfile")(b"\xff\xff", timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        s.close()


def test_shim_resync_rebuilds_identical_state(inproc: DecisionService) -> None:
    """A shim's incremental stream, then (as after a service restart) Register + one full resync built
    from the shim's own model: the service's mirror must be identical."""
    with grpc.insecure_channel(f"127.0.0.1:{inproc.port}") as ch:
        reg = register(ch, "rm-x")
        s = Stream(ch)
        sid = reg.session_id
        nodes = {f"h{i}:1": node(f"h{i}:1", 4096, 4, rack=f"/r{i % 2}") for i in range(3)}
        apps = {1: app(1), 2: app(2, submit_ms=2000)}
        asks = {(1, 20): ask(1, 20, 3), (2, 5): ask(2, 5, 1, am=True)}
        s.send(
            full_batch(
                sid,
                nodes_upserted=list(nodes.values()),
                apps_upserted=list(apps.values()),
                asks=list(asks.values()),
            )
        )
        containers = {
            f"c{i}": pb.ContainerInfo(
                container_id=f"c{i}",
                attempt_id=attempt(1),
                node_id="h0:1",
                priority=20,
                allocation_request_id=-1,
                resource=pb.Resource(memory_mb=1024, vcores=1),
                start_time_ms=7,
            )
            for i in range(2)
        }
        nodes["h0:1"] = node("h0:1", 4096, 4, alloc=(2048, 2), rack="/r0")
        nodes["h3:1"] = node("h3:1", 8192, 8, rack="/r1")
        asks[(1, 20)] = ask(1, 20, 1)
        s.send(
            pb.StateBatch(
                session_id=sid,
                seq=2,
                nodes_upserted=[nodes["h0:1"], nodes["h3:1"]],
                asks=[asks[(1, 20)]],
                containers_allocated=list(containers.values()),
            )
        )
        del nodes["h2:1"]
        apps[3] = app(3, submit_ms=3000)
        asks[(3, 1)] = ask(3, 1, 2, locations=["/r1"], relax=False)
        del containers["c1"]
        nodes["h0:1"] = node("h0:1", 4096, 4, alloc=(1024, 1), rack="/r0")
        s.send(
            pb.StateBatch(
                session_id=sid,
                seq=3,
                nodes_removed=["h2:1"],
                nodes_upserted=[nodes["h0:1"]],
                apps_upserted=[apps[3]],
                asks=[asks[(3, 1)]],
                containers_completed=[
                    pb.ContainerCompletion(container_id="c1", exit_kind=pb.CONTAINER_EXIT_SUCCESS)
                ],
            )
        )
        del apps[2], asks[(2, 5)]
        s.send(pb.StateBatch(session_id=sid, seq=4, apps_removed=["application_1700000000000_0002"]))
        before = inproc.state_dump()["rm-x"]["mirror"]
        assert sorted(before["nodes"]) == ["h0:1", "h1:1", "h3:1"] and sorted(before["containers"]) == ["c0"]

        reg2 = register(ch, "rm-x")
        s2 = Stream(ch)
        p = s2.send(
            full_batch(
                reg2.session_id,
                nodes_upserted=list(nodes.values()),
                apps_upserted=list(apps.values()),
                asks=list(asks.values()),
                containers_allocated=list(containers.values()),
            )
        )
        assert p.status == pb.BATCH_ACCEPTED
        after = inproc.state_dump()["rm-x"]
        assert after["session_id"] == reg2.session_id and after["mirror"] == before
        s.close()
        s2.close()


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _pki(d: Path) -> None:
    """A throw-away CA, a server certificate for 127.0.0.1 and a client certificate."""
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        cwd=d,
    )
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for who in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN={who}",
            "-keyout",
            f"{who}.key",
            "-out",
            f"{who}.csr",
            cwd=d,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{who}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            f"{who}.pem",
            cwd=d,
        )


def test_tls_with_client_certificates(tmp_path: Path) -> None:
    _pki(tmp_path)
    env = {
        "DOLLYMP_GRPC_TLS_CERT": str(tmp_path / "server.pem"),
        "DOLLYMP_GRPC_TLS_KEY": str(tmp_path / "server.key"),
        "DOLLYMP_GRPC_TLS_CLIENT_CA": str(tmp_path / "ca.pem"),
    }
    svc = Service(tmp_path, env=env)
    try:
        ca = (tmp_path / "ca.pem").read_bytes()
        good = grpc.ssl_channel_credentials(
            ca, (tmp_path / "client.key").read_bytes(), (tmp_path / "client.pem").read_bytes()
        )
        with grpc.secure_channel(svc.address, good) as ch:
            assert register(ch).session_id
        no_cert = grpc.ssl_channel_credentials(ca)
        with grpc.secure_channel(svc.address, no_cert) as ch, pytest.raises(grpc.RpcError) as err:
            register(ch)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        with svc.channel() as ch, pytest.raises(grpc.RpcError):  # plaintext is refused
            register(ch)
    finally:
        assert svc.stop() == 0
