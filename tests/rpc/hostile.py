"""The hostile-tenant suite's tools: a well-behaved tenant to watch, and the table of what each attack did.

Every attack goes through real sockets to a real service. `Tally.attempt` runs one hostile input and
classifies the answer: a clear error (the expected status, its text naming the field or limit), a crash
(INTERNAL/UNKNOWN, or the process gone), a hang (deadline exceeded where an answer was due) or an
acceptance. `GoodTenant` is a shim session on its own connection whose rounds must keep getting
placements, at a bounded latency, while the attacks run; a failure there is a cross-tenant effect.
The table is printed at the end of the run (tests/rpc/conftest.py) and written as JSON lines to
$DOLLYMP_HOSTILE_TABLE when set; `failures` is what its totals must not show (issue 28: 0 crashes, 0
hangs, 0 cross-tenant effects, 0 records lost, every input a clear error or bounded), and the run fails
when it shows any of it, for the attacks that ran.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import grpc
from rpc_harness import Stream, app, ask, full_batch, node, register
from rpc_harness import attempt as attempt_id

from pyscheduler.wire import pb

_CRASH = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


@dataclass
class Row:
    attack: str
    inputs: int = 0
    clear_errors: int = 0
    bounded: int = 0  # accepted but bounded (e.g. an ask's count clamped to the cluster)
    crashes: int = 0
    hangs: int = 0
    cross_tenant: int = 0
    records_lost: int = 0


TABLE: dict[str, Row] = {}


def row(attack: str) -> Row:
    return TABLE.setdefault(attack, Row(attack))


def attempt(
    attack: str,
    call: Callable[[], Any],
    codes: Iterable[grpc.StatusCode],
    names: str,
    accepted_ok: bool = False,
) -> grpc.RpcError | None:
    """Run one hostile input; returns its error (None when it was accepted). A clear error has one of
    `codes` and names `names` in its text."""
    r = row(attack)
    r.inputs += 1
    try:
        call()
    except grpc.RpcError as exc:
        code, text = exc.code(), exc.details() or ""
        if code in _CRASH:
            r.crashes += 1
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED and grpc.StatusCode.DEADLINE_EXCEEDED not in codes:
            r.hangs += 1
        elif code in codes and names in text:
            r.clear_errors += 1
        return exc
    if accepted_ok:
        r.bounded += 1
    return None


GATED = ("crashes", "hangs", "cross_tenant", "records_lost")  # must total 0


def rows() -> list[dict[str, Any]]:
    return [asdict(r) for r in TABLE.values()]


def failures(table: list[dict[str, Any]]) -> list[str]:
    """What the table shows that the suite must not: a nonzero total of a GATED column, or an attack
    with inputs that got neither a clear error nor a bound. One line each, naming the attacks."""
    out = []
    for col in GATED:
        hit = [(r["attack"], r[col]) for r in table if r[col]]
        if hit:
            where = "; ".join(f"{a}: {n}" for a, n in hit)
            out.append(f"{col} total {sum(n for _, n in hit)}, must be 0 ({where})")
    unclear = [(r["attack"], r["inputs"] - r["clear_errors"] - r["bounded"]) for r in table]
    unclear = [(a, n) for a, n in unclear if n > 0]
    if unclear:
        where = "; ".join(f"{a}: {n}" for a, n in unclear)
        out.append(f"inputs with neither a clear error nor a bound: {sum(n for _, n in unclear)} ({where})")
    return out


def dump() -> list[dict[str, Any]]:
    table = rows()
    path = os.environ.get("DOLLYMP_HOSTILE_TABLE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            for r in table:
                f.write(json.dumps(r) + "\n")
    return table


def render(rows: list[dict[str, Any]]) -> str:
    cols = ["attack", "inputs", "clear_errors", "bounded", "crashes", "hangs", "cross_tenant", "records_lost"]
    lines = [" | ".join(cols)]
    total = {c: 0 for c in cols[1:]}
    for r in rows:
        lines.append(" | ".join(str(r[c]) for c in cols))
        for c in cols[1:]:
            total[c] += r[c]
    lines.append(" | ".join(["total", *(str(total[c]) for c in cols[1:])]))
    return "\n".join(lines)


def connection(port: int) -> grpc.Channel:
    """A channel with its own TCP connection (gRPC shares one between a process's channels to the
    same address unless told not to): a tenant of its own, as another process would be."""
    return grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])


class GoodTenant:
    """A well-behaved shim session (its own rm_id and connection): every `round()` completes the
    containers of the last one, asks for two more of a new application, and times the plan."""

    def __init__(self, port: int, rm_id: str = "rm-good", nodes: int = 4) -> None:
        self.channel = connection(port)
        self.reg = register(self.channel, rm_id)
        self.stream = Stream(self.channel)
        self.stream.send(
            full_batch(
                self.reg.session_id, nodes_upserted=[node(f"{rm_id}-h{i}:1", 8192, 8) for i in range(nodes)]
            )
        )
        self.seq = 1
        self.n = 5000
        self.running: list[str] = []  # container ids allocated a batch ago (completed in the next)
        self.committing: list[Any] = []  # the last plan's placements, as allocated containers
        self.why = ""  # what `unaffected` saw

    def send(self, **fields: Any) -> Any:
        """One batch: the last plan's placements allocated (as a shim commits them), the containers
        allocated a batch earlier completed, and `fields`."""
        self.seq += 1
        done = [
            pb.ContainerCompletion(container_id=c, exit_kind=pb.CONTAINER_EXIT_SUCCESS) for c in self.running
        ]
        given = {(a.attempt_id, a.priority, a.allocation_request_id) for a in fields.get("asks", [])}
        served = {(c.attempt_id, c.priority, c.allocation_request_id) for c in self.committing} - given
        withdrawn = [  # as YARN's ask table after the allocation: nothing left to place (a test's ask: one)
            pb.Ask(attempt_id=a, priority=p, allocation_request_id=r, num_containers=0)
            for a, p, r in sorted(served)
        ]
        plan = self.stream.send(
            pb.StateBatch(
                session_id=self.reg.session_id,
                seq=self.seq,
                containers_allocated=self.committing,
                containers_completed=done,
                **{**fields, "asks": [*fields.get("asks", []), *withdrawn]},
            )
        )
        self.running = [c.container_id for c in self.committing]
        self.committing = [
            pb.ContainerInfo(
                container_id=f"c{p.placement_id}-{k}",
                attempt_id=p.attempt_id,
                node_id=p.node_id,
                priority=p.priority,
                allocation_request_id=p.allocation_request_id,
                resource=p.capability,
                placement_id=p.placement_id,
                start_time_ms=1,
            )
            for p in plan.placements
            for k in range(p.count)
        ]
        return plan

    def round(self) -> tuple[int, float]:
        self.n += 1
        t0 = time.perf_counter()
        plan = self.send(apps_upserted=[app(self.n, submit_ms=self.n)], asks=[ask(self.n, 1, 2)])
        ms = (time.perf_counter() - t0) * 1000.0
        assert plan.status == pb.BATCH_ACCEPTED, plan.detail
        return sum(p.count for p in plan.placements if p.attempt_id == attempt_id(self.n)), ms

    def median_ms(self, rounds: int = 7) -> float:
        out = []
        for _ in range(rounds):
            placed, ms = self.round()
            assert placed > 0, f"round {self.seq}: no placement for the new application"
            out.append(ms)
        return statistics.median(out)

    def unaffected(self, attack: str, baseline_ms: float, rounds: int = 7) -> bool:
        """Whether the tenant still gets placements at a bounded latency (5x its baseline + 50 ms);
        counts a cross-tenant effect otherwise."""
        try:
            ms = self.median_ms(rounds)
            ok = ms <= 5 * baseline_ms + 50.0
            self.why = f"median round {ms:.1f} ms, baseline {baseline_ms:.1f} ms"
        except (AssertionError, grpc.RpcError) as exc:
            ok, self.why = False, f"{type(exc).__name__}: {exc}"
        if not ok:
            row(attack).cross_tenant += 1
        return ok

    def close(self) -> None:
        self.stream.close()
        self.channel.close()
