"""Authenticated callers (pyscheduler.service.rmproxy.auth) through real sockets: the shim's secret, TLS and
mutual TLS, a Sync stream bound to its connection, AMs bound to their AMRMToken, readiness, the loopback
rule."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from certs import make_certs
from rpc_harness import REPO, Stream, app, full_batch, in_process_service, node, res

from pyscheduler.service.rmproxy.auth import AM_TOKEN_HEADER, SECRET_HEADER
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.store.history import JobKey
from pyscheduler.wire import pb, pb_grpc

SECRET = "s3cret-for-the-shim-0123456789"
TOKEN1 = hashlib.sha256(b"password of app 1's AMRMToken").digest()
TOKEN2 = hashlib.sha256(b"password of app 2's AMRMToken").digest()
APP1, APP2 = "application_1700000000000_0001", "application_1700000000000_0002"
VICTIM = "container_1700000000000_0002_01_000002"  # app 2's running task container


def _secret_file(tmp: Path) -> Path:
    p = tmp / "shim.secret"
    p.write_text(SECRET + "\n")
    return p


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[DecisionService]:
    svc = in_process_service(
        tmp_path,
        **{"grpc.auth_secret_file": str(_secret_file(tmp_path)), "http.port": 0, "policy.name": "fcfs"},
    )
    try:
        yield svc
    finally:
        svc.stop()


def _channel(port: int) -> grpc.Channel:
    # a connection of its own (no subchannel shared with another channel of this process)
    return grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])


SHIM = ((SECRET_HEADER, SECRET),)


def _register(ch: grpc.Channel, md: Any = SHIM, rm_id: str = "rm-1") -> Any:
    return pb_grpc.SchedulerServiceStub(ch).Register(
        pb.RegisterRequest(rm_id=rm_id, tick_ms=100), timeout=10, metadata=md
    )


class _ShimStream(Stream):
    def __init__(self, ch: grpc.Channel, md: Any = SHIM) -> None:
        import queue

        self._q: queue.Queue[Any] = queue.Queue()
        self._done = object()

        def requests() -> Any:
            while (item := self._q.get()) is not self._done:
                yield item

        self.call = pb_grpc.SchedulerServiceStub(ch).Sync(requests(), timeout=60, metadata=md)


def _app(n: int, token: bytes, name: str = "") -> Any:
    a = app(n)
    a.amrm_token_sha256 = token
    a.name = name or a.name
    return a


def _cluster(sid: str) -> Any:
    return full_batch(
        sid,
        nodes_upserted=[node("h1:1", 8192, 8)],
        apps_upserted=[_app(1, TOKEN1, "wordcount"), _app(2, TOKEN2)],
        containers_allocated=[
            pb.ContainerInfo(
                container_id=VICTIM,
                attempt_id="appattempt_1700000000000_0002_000001",
                node_id="h1:1",
                priority=20,
                allocation_request_id=-1,
                resource=res(1024, 1),
                start_time_ms=1,
            )
        ],
    )


def _profile(app_id: str = APP1) -> Any:
    return pb.JobProfile(
        application_id=app_id,
        job_name="wordcount",
        submit_time_ms=1,
        phases=[pb.PhaseProfile(phase_id="map", tasks=2, demand=res(1024, 1), yarn_priority=20)],
    )


def _am(token: bytes) -> Any:
    return ((AM_TOKEN_HEADER, token.hex()),)


def _code(fn: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        fn()
    return err.value.code(), err.value.details()


def _ready(svc: DecisionService) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{svc.http.port}/readyz", timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_shim_needs_the_secret_and_a_stranger_cannot_supersede_it(secured: DecisionService) -> None:
    with _channel(secured.port) as shim, _channel(secured.port) as stranger:
        assert _ready(secured) == 503
        reg = _register(shim)
        stream = _ShimStream(shim)
        assert stream.send(_cluster(reg.session_id)).status == pb.BATCH_ACCEPTED
        assert _ready(secured) == 200  # a registered, authenticated, resynced session
        for md in ((), ((SECRET_HEADER, "not-the-secret-at-all"),)):
            code, why = _code(lambda md=md: _register(stranger, md))
            assert code is grpc.StatusCode.UNAUTHENTICATED and SECRET_HEADER in why
            code, why = _code(lambda md=md: next(_ShimStream(stranger, md).call))
            assert code is grpc.StatusCode.UNAUTHENTICATED
        # The real session goes on: the stranger's Register did not supersede it.
        plan = stream.send(pb.StateBatch(session_id=reg.session_id, seq=2, rm_time_ms=2))
        assert plan.status == pb.BATCH_ACCEPTED
        # An authenticated second connection that names the first one's session is refused before
        # the batch is applied; the first stream keeps its seq.
        forged = _ShimStream(stranger)
        code, why = _code(lambda: forged.send(pb.StateBatch(session_id=reg.session_id, seq=3, rm_time_ms=3)))
        assert code is grpc.StatusCode.PERMISSION_DENIED and "bound to the connection" in why
        assert stream.send(pb.StateBatch(session_id=reg.session_id, seq=3, rm_time_ms=3)).status == (
            pb.BATCH_ACCEPTED
        )
        stream.close()


def test_ams_are_bound_to_their_amrm_token_and_their_own_containers(secured: DecisionService) -> None:
    with _channel(secured.port) as shim, _channel(secured.port) as tenant:
        reg = _register(shim)
        stream = _ShimStream(shim)
        stream.send(_cluster(reg.session_id))
        am = pb_grpc.AppMasterServiceStub(tenant)
        # The legitimate AM of app 1.
        assert am.ReportJobProfile(_profile(), timeout=10, metadata=_am(TOKEN1)).application_id == APP1
        # No token, app 2's token, an unknown application: refused.
        for md, app_id in (((), APP1), (_am(TOKEN2), APP1), (_am(TOKEN1), "application_1700000000000_0009")):
            code, why = _code(
                lambda md=md, a=app_id: am.ReportJobProfile(_profile(a), timeout=10, metadata=md)
            )
            assert code is grpc.StatusCode.UNAUTHENTICATED and app_id in why
        # App 1's AM naming app 2's running container: refused, and nothing is killed for it.
        forged = pb.AttemptReports(
            application_id=APP1,
            attempts=[
                pb.AttemptReport(
                    task_id="task_1700000000000_0001_m_000000",
                    attempt_id="attempt_1700000000000_0001_m_000000_1",
                    phase_id="map",
                    container_id=VICTIM,
                    state=pb.ATTEMPT_RUNNING,
                    progress=0.01,
                    time_ms=5,
                )
            ],
        )
        code, why = _code(lambda: am.ReportAttempts(forged, timeout=10, metadata=_am(TOKEN1)))
        assert code is grpc.StatusCode.PERMISSION_DENIED and VICTIM in why and APP2 in why
        assert not [c for c in secured.appmaster.running_copies() if c.container_id == VICTIM]
        plan = stream.send(pb.StateBatch(session_id=reg.session_id, seq=2, rm_time_ms=2))
        assert list(plan.kill_container_ids) == []
        # Its own attempts are accepted; a success is recorded under the name the RM knows.
        own = pb.AttemptReports(application_id=APP1, attempts=[forged.attempts[0]])
        own.attempts[0].container_id = "container_1700000000000_0001_01_000002"
        own.attempts[0].state = pb.ATTEMPT_SUCCEEDED
        own.attempts[0].duration_s = 7.0
        assert am.ReportAttempts(own, timeout=10, metadata=_am(TOKEN1)).application_id == APP1
        moments = secured.history.moments(JobKey("default", "u", "wordcount"), "map")
        assert moments is not None and moments.count == 1
        # The token rolls over: the AM may present the old one until it sees the new one.
        rolled = hashlib.sha256(b"app 1's next AMRMToken").digest()
        stream.send(
            pb.StateBatch(session_id=reg.session_id, seq=3, rm_time_ms=3, apps_upserted=[_app(1, rolled)])
        )
        for t in (rolled, TOKEN1):
            assert am.GetClonePlan(pb.ClonePlanRequest(application_id=APP1), timeout=10, metadata=_am(t))
        again = hashlib.sha256(b"app 1's third AMRMToken").digest()
        stream.send(
            pb.StateBatch(session_id=reg.session_id, seq=4, rm_time_ms=4, apps_upserted=[_app(1, again)])
        )
        request = pb.ClonePlanRequest(application_id=APP1)
        assert am.GetClonePlan(request, timeout=10, metadata=_am(again))
        code, _ = _code(
            lambda: am.GetClonePlan(request, timeout=10, metadata=_am(TOKEN1))
        )  # two roll-overs ago
        assert code is grpc.StatusCode.UNAUTHENTICATED
        stream.close()


def test_history_only_for_applications_the_rm_knows_under_its_name(tmp_path: Path) -> None:
    svc = in_process_service(tmp_path, **{"policy.name": "fcfs"})  # no auth: loopback, unknown apps answered
    try:
        with _channel(svc.port) as ch:
            am = pb_grpc.AppMasterServiceStub(ch)
            stranger = _profile("application_1700000000000_0042")
            am.ReportJobProfile(stranger, timeout=10)
            done = pb.AttemptReport(
                task_id="task_1700000000000_0042_m_000000",
                attempt_id="attempt_1700000000000_0042_m_000000_0",
                phase_id="map",
                state=pb.ATTEMPT_SUCCEEDED,
                duration_s=1e6,
                time_ms=1,
            )
            am.ReportAttempts(
                pb.AttemptReports(application_id=stranger.application_id, attempts=[done]), timeout=10
            )
            assert svc.history.all_moments() == {}
    finally:
        svc.stop()


def test_tls_and_mutual_tls(tmp_path: Path) -> None:
    c = make_certs(tmp_path / "pki")
    roots = c.ca.read_bytes()
    svc = in_process_service(
        tmp_path,
        **{
            "grpc.tls_cert": str(c.server_cert),
            "grpc.tls_key": str(c.server_key),
            "grpc.tls_client_ca": str(c.ca),
        },
    )
    try:
        target = f"127.0.0.1:{svc.port}"
        with_cert = grpc.ssl_channel_credentials(roots, c.client_key.read_bytes(), c.client_cert.read_bytes())
        with grpc.secure_channel(target, with_cert) as ch:
            assert _register(ch, md=()).session_id  # the client certificate authenticates the shim
        for creds in (grpc.ssl_channel_credentials(roots), None):  # no client certificate; plaintext
            with grpc.secure_channel(target, creds) if creds else grpc.insecure_channel(target) as ch:
                code, _ = _code(lambda ch=ch: _register(ch, md=()))
                assert code is grpc.StatusCode.UNAVAILABLE  # the handshake fails
    finally:
        svc.stop()
    secret = _secret_file(tmp_path)
    svc = in_process_service(
        tmp_path,
        **{
            "grpc.tls_cert": str(c.server_cert),
            "grpc.tls_key": str(c.server_key),
            "grpc.auth_secret_file": str(secret),
        },
    )
    try:
        with grpc.secure_channel(f"127.0.0.1:{svc.port}", grpc.ssl_channel_credentials(roots)) as ch:
            assert _register(ch).session_id
            assert _code(lambda: _register(ch, md=()))[0] is grpc.StatusCode.UNAUTHENTICATED
    finally:
        svc.stop()


def _serve(*flags: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "pyscheduler",
        "serve",
        "--check-config",
        "--grpc-port",
        "0",
        "--http-port",
        "-1",
    ]
    return subprocess.run([*cmd, *flags], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_no_unauthenticated_service_off_loopback(tmp_path: Path) -> None:
    db = ("--db", str(tmp_path / "d.db"))
    out = _serve("--grpc-host", "0.0.0.0", *db)
    assert out.returncode == 2 and "grpc.auth_secret_file" in out.stderr and "not loopback" in out.stderr
    assert _serve("--grpc-host", "0.0.0.0", "--insecure", *db).returncode == 0
    assert (
        _serve("--grpc-host", "0.0.0.0", "--auth-secret-file", str(_secret_file(tmp_path)), *db).returncode
        == 0
    )
    short = tmp_path / "short"
    short.write_text("abc")
    out = _serve("--auth-secret-file", str(short), *db)
    assert out.returncode == 2 and "grpc.auth_secret_file" in out.stderr and "16" in out.stderr
