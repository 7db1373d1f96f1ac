"""Hostile tenant posing as a ResourceManager (issue 57, item 3), over real sockets: a second RM session
that mirrors another RM's application with its own AMRMToken digest, before and after the real RM
registers again; another local user registering the RM's rm_id; one caller filling every session."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import hostile
import pytest
from rpc_harness import REPO, Stream, app, ask, full_batch, in_process_service, node, phase_profile, register

from pyscheduler.service.rmproxy.auth import AM_TOKEN_HEADER, SECRET_HEADER
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.wire import pb, pb_grpc

SECRET = "the-shims-secret-0123456789abcdef"
REAL = hashlib.sha256(b"password of application 7's AMRMToken").digest()
EVIL = hashlib.sha256(b"a password the impostor chose").digest()
APP = "application_1700000000000_0007"
NOBODY = 65534
OTHER_USER = Path(__file__).with_name("other_user.py")


def _app(token: bytes) -> Any:
    a = app(7)
    a.amrm_token_sha256 = token
    return a


def _am(token: bytes) -> Any:
    return ((AM_TOKEN_HEADER, token.hex()),)


class _Rm:
    """An RM session on its own connection: Register, then a full resync mirroring application 7 with
    `token` on one node (and its ask for two containers)."""

    def __init__(self, port: int, rm_id: str, token: bytes, shim: Any) -> None:
        self.channel = hostile.connection(port)
        self.rm_id, self.token, self.shim = rm_id, token, shim
        self.stream: Stream | None = None
        self.plan = self.register_and_resync()

    def register_only(self) -> Any:
        if self.stream is not None:
            self.stream.close()
        self.reg = register(self.channel, self.rm_id, self.shim)
        self.stream = Stream(self.channel, self.shim)
        self.seq = 0
        return self.reg

    def resync(self) -> Any:
        assert self.stream is not None
        self.seq = 1
        return self.stream.send(
            full_batch(
                self.reg.session_id,
                nodes_upserted=[node(f"{self.rm_id}-h1:1", 8192, 8)],
                apps_upserted=[_app(self.token)],
                asks=[ask(7, 1, 2)],
            )
        )

    def register_and_resync(self) -> Any:
        self.register_only()
        return self.resync()

    def upsert_again(self) -> Any:
        assert self.stream is not None
        self.seq += 1
        return self.stream.send(
            pb.StateBatch(session_id=self.reg.session_id, seq=self.seq, apps_upserted=[_app(self.token)])
        )

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        self.channel.close()


def _profile() -> Any:
    return pb.JobProfile(
        application_id=APP, job_name="job7", submit_time_ms=1, phases=[phase_profile("map", 2, 1)]
    )


@pytest.mark.parametrize("secured", [False, True], ids=["loopback-default", "shared-secret"])
def test_a_second_rm_session_cannot_take_over_an_applications_token(tmp_path: Path, secured: bool) -> None:
    """The real RM mirrors application 7 with its digest; a second session (another rm_id, holding the
    secret when there is one) mirrors it with its own, twice; the real RM registers again (as after any
    stream error) and resyncs. Before, between its Register and its resync, and after, the impostor's
    digest is refused for ReportJobProfile and GetClonePlan and the application's own AM is accepted."""
    attack = "second RM session claims an application's token" + (" (secret)" if secured else "")
    overrides: dict[str, Any] = {"policy.name": "fcfs"}
    shim: Any = None
    if secured:
        (tmp_path / "shim.secret").write_text(SECRET + "\n")
        overrides["grpc.auth_secret_file"] = str(tmp_path / "shim.secret")
        shim = ((SECRET_HEADER, SECRET),)
    svc: DecisionService = in_process_service(tmp_path, **overrides)
    real = _Rm(svc.port, "rm-real", REAL, shim)
    evil: _Rm | None = None
    am_channel = hostile.connection(svc.port)
    am = pb_grpc.AppMasterServiceStub(am_channel)
    r = hostile.row(attack)

    def own_am_accepted() -> None:
        try:
            assert am.ReportJobProfile(_profile(), timeout=10, metadata=_am(REAL)).application_id == APP
            am.GetClonePlan(pb.ClonePlanRequest(application_id=APP), timeout=10, metadata=_am(REAL))
        except grpc.RpcError as exc:
            r.cross_tenant += 1
            raise AssertionError(f"the application's own AM refused: {exc.code()} {exc.details()}") from exc

    def impostor_refused() -> None:
        for call in (
            lambda: am.ReportJobProfile(_profile(), timeout=10, metadata=_am(EVIL)),
            lambda: am.GetClonePlan(pb.ClonePlanRequest(application_id=APP), timeout=10, metadata=_am(EVIL)),
        ):
            err = hostile.attempt(
                attack, call, (grpc.StatusCode.UNAUTHENTICATED,), f"not the AMRMToken of '{APP}'"
            )
            if err is None:
                r.cross_tenant += 1
            assert err is not None and err.code() == grpc.StatusCode.UNAUTHENTICATED, err

    try:
        assert sum(p.count for p in real.plan.placements) == 2
        own_am_accepted()
        evil = _Rm(svc.port, "rm-evil", EVIL, shim)  # its own mirror: accepted, bounded to its session
        evil.upsert_again()
        r.inputs += 2
        r.bounded += 2
        assert svc.registry.claims_refused == 2
        impostor_refused()
        own_am_accepted()
        real.register_only()  # the real RM registers again; its resync comes a tick later
        impostor_refused()
        own_am_accepted()
        plan = real.resync()
        impostor_refused()
        own_am_accepted()
        # the real RM's session still schedules its application
        if sum(p.count for p in plan.placements) != 2:
            r.cross_tenant += 1
        assert plan.status == pb.BATCH_ACCEPTED and sum(p.count for p in plan.placements) == 2
    finally:
        am_channel.close()
        real.close()
        if evil is not None:
            evil.close()
        svc.stop()
    assert r.clear_errors == 6 and r.crashes == r.hangs == r.cross_tenant == 0


def _as_nobody(port: int, *rm_ids: str) -> list[list[str]]:
    """Register `rm_ids` from a process of the local user `nobody`."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(OTHER_USER), str(NOBODY), str(port), *rm_ids],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out: list[list[str]] = json.loads(done.stdout)
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another local user")
def test_another_local_user_cannot_take_the_rms_id_or_lock_it_out(tmp_path: Path) -> None:
    """Loopback, no secret. Another local user registers the RM's rm_id while its session is live:
    PERMISSION_DENIED. It registers 64 rm_ids: 8 are live (limits.sessions_per_caller), the others are
    refused naming the limit; the RM's user still registers a new rm_id and its own again, and the good
    session keeps scheduling."""
    svc = in_process_service(tmp_path)
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        attack = "another local user registers the RM's rm_id"
        r = hostile.row(attack)
        ((code, why),) = _as_nobody(svc.port, "rm-good")
        r.inputs += 1
        if code == "PERMISSION_DENIED" and "held by a live session of another caller" in why:
            r.clear_errors += 1
        assert code == "PERMISSION_DENIED", (code, why)
        assert good.unaffected(attack, base), good.why

        attack = "another local user fills the sessions"
        r = hostile.row(attack)
        answers = _as_nobody(svc.port, *(f"rm-flood-{i}" for i in range(64)))
        for code, why in answers:
            r.inputs += 1
            if code == "OK":
                r.bounded += 1
            elif code == "RESOURCE_EXHAUSTED" and "limit 8 (limits.sessions_per_caller)" in why:
                assert f"uid {NOBODY}" in why, why
                r.clear_errors += 1
        assert [c for c, _ in answers].count("OK") == 8
        with hostile.connection(svc.port) as ch:
            register(ch, "rm-second")  # the RM's user: a caller of its own
        assert good.unaffected(attack, base), good.why
        callers = sorted(s.caller for s in svc.registry.sessions())
        assert callers == ["uid 0", "uid 0"] + [f"uid {NOBODY}"] * 8, callers
    finally:
        good.close()
        svc.stop()
    for name in ("another local user registers the RM's rm_id", "another local user fills the sessions"):
        row = hostile.row(name)
        assert row.crashes == row.hangs == row.cross_tenant == 0


def test_the_rms_own_user_may_register_its_rm_id_again(tmp_path: Path) -> None:
    """The binding does not get in an RM restart's way: the same local user registers the same rm_id from
    a new connection (a new process) while the old session is live."""
    svc = in_process_service(tmp_path)
    try:
        with hostile.connection(svc.port) as first, hostile.connection(svc.port) as second:
            old = register(first, "rm-restarting")
            new = register(second, "rm-restarting")
            assert new.session_id != old.session_id
            assert [s.session_id for s in svc.registry.sessions()] == [new.session_id]
    finally:
        svc.stop()


def test_a_loopback_caller_is_its_sockets_user_and_a_remote_one_its_address() -> None:
    import socket

    from pyscheduler.service.rmproxy.callers import caller_of

    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname()) as client:
        host, port = client.getsockname()
        assert caller_of(f"ipv4:{host}:{port}") == f"uid {os.geteuid()}"
    assert caller_of("ipv4:10.0.0.7:40000") == "host 10.0.0.7"
    assert caller_of("ipv6:[2001:db8::1]:40000") == "host 2001:db8::1"
    assert caller_of("ipv4:127.0.0.1:1") == "host 127.0.0.1"  # no such socket: its address
    assert caller_of("unix:/run/x.sock") == "unix:/run/x.sock"
