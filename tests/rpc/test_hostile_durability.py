"""Durability and shutdown under a hostile log: placements are committed before their plan is sent
(kill -9 right after a plan loses none of them), SIGTERM returns in time while the log is blocked, and
/readyz says not ready while decisions cannot be written."""

from __future__ import annotations

import signal
import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path

import hostile
from rpc_harness import Service, Stream, app, ask, full_batch, in_process_service, node, register

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import open_store
from pyscheduler.wire import pb


def _rounds(port: int, rounds: int, first: int, rm_id: str = "rm-d") -> list[str]:
    """A shim session placing a new application's containers every round; the placement ids it got."""
    got: list[str] = []
    with hostile.connection(port) as ch:
        reg = register(ch, rm_id)
        s = Stream(ch)
        s.send(full_batch(reg.session_id, nodes_upserted=[node(f"h{i}:1", 1 << 20, 1024) for i in range(2)]))
        for seq in range(2, rounds + 2):
            n = first + seq
            plan = s.send(
                pb.StateBatch(session_id=reg.session_id, seq=seq, apps_upserted=[app(n)], asks=[ask(n, 1, 3)])
            )
            assert plan.placements, plan
            got += [p.placement_id for p in plan.placements]
        s.close()
    return got


def _logged_placements(db: Path) -> set[str]:
    log = open_store(db)
    try:
        items = log.query(kinds=[DecisionKind.PLACEMENT], limit=10_000).items
        return {str(d.decision.inputs.get("placement_id")) for d in items}
    finally:
        log.close()


def test_kill9_right_after_a_plan_keeps_its_placements(tmp_path: Path) -> None:
    attack = "kill -9 after a plan (placements logged first)"
    db = tmp_path / "log.db"
    for k in range(3):
        svc = Service(tmp_path, db=db)
        try:
            sent = _rounds(svc.port, 20, 100 * k)
        finally:
            assert svc.stop(signal.SIGKILL) == -signal.SIGKILL  # at once: no graceful anything
        missing = set(sent) - _logged_placements(db)
        r = hostile.row(attack)
        r.inputs += 1
        r.records_lost += len(missing)
        if not missing:  # the kill's damage is bounded: nothing the shim received is lost
            r.bounded += 1
        assert not missing, f"{len(missing)} placements the shim received are not in the log"


def _ready(port: int) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_readyz_turns_false_while_the_log_is_blocked(tmp_path: Path) -> None:
    attack = "blocked decision log (readiness)"
    svc = in_process_service(tmp_path, **{"http.port": 0, "limits.log_wait_s": 0.5})
    try:
        _rounds(svc.port, 1, 0, "rm-ready")
        assert _ready(svc.http.port)[0] == 200
        blocker = sqlite3.connect(tmp_path / "d.db", isolation_level=None, timeout=1)
        blocker.execute("BEGIN EXCLUSIVE")  # another process holds the database: commits wait
        try:
            t0 = time.monotonic()
            _rounds(svc.port, 3, 10, "rm-ready")  # plans still come, each waits 0.5 s at most
            assert time.monotonic() - t0 < 5
            code, body = _ready(svc.http.port)
            hostile.row(attack).inputs += 1
            assert code == 503 and "decision log" in body, body
            hostile.row(attack).clear_errors += 1
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        deadline = time.monotonic() + 40  # the writer's commit gets through once the lock is gone
        while svc.writer.depth and time.monotonic() < deadline:
            time.sleep(0.1)
        _rounds(svc.port, 1, 20, "rm-ready")
        # ready again once a commit went through after the lock was gone (on a loaded machine the first
        # flush after it may still be the one that timed out)
        deadline = time.monotonic() + 20
        while _ready(svc.http.port)[0] != 200 and time.monotonic() < deadline:
            _rounds(svc.port, 1, 20, "rm-ready")
            time.sleep(0.2)
        assert _ready(svc.http.port)[0] == 200
    finally:
        svc.stop()


def test_sigterm_returns_within_the_grace_period_with_a_blocked_log(tmp_path: Path) -> None:
    attack = "SIGTERM with a blocked decision log"
    db = tmp_path / "log.db"
    svc = Service(tmp_path, db=db)
    try:
        _rounds(svc.port, 1, 0)
        blocker = sqlite3.connect(db, isolation_level=None, timeout=1)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            _rounds(svc.port, 3, 10, "rm-d2")  # decisions queue behind the lock
            t0 = time.monotonic()
            svc.proc.send_signal(signal.SIGTERM)
            r = hostile.row(attack)
            r.inputs += 1
            try:
                code = svc.proc.wait(5.0 + 1.0 + 3.0)  # grpc.grace_s, the writer's second, slack
            except Exception:
                r.hangs += 1
                svc.proc.kill()
                raise
            assert time.monotonic() - t0 < 9.0 and code == 0, (code, svc.stderr.read_text()[-2000:])
            assert "not committed at shutdown" in svc.stderr.read_text()
            r.clear_errors += 1
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
    finally:
        if svc.proc.poll() is None:
            svc.proc.kill()
            svc.proc.wait()
