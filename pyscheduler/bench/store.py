"""Decision-log benchmark: size per million decisions and append throughput.

    python -m pyscheduler.bench.store --decisions 1000000 [--url sqlite:////tmp/x.db] [--batch 1000] [--json]

Writes synthetic but YARN-shaped decisions (application, attempt and node ids as YARN prints them; a
mix of kinds like a busy cluster's log: mostly placements and deferrals; inputs of a few numbers) in
batches of `--batch` per transaction, then prints the bytes the log takes on disk per million
decisions (SQLite: pages in use after a checkpoint, indexes included; PostgreSQL: table, indexes and
TOAST), the logical bytes that size retention counts, and decisions appended per second.
Without --url it uses a temporary SQLite file that is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store.log import open_store

# Share of each kind in the synthetic log (placements and deferrals dominate a busy cluster's rounds).
MIX: tuple[tuple[DecisionKind, float, str], ...] = (
    (DecisionKind.PLACEMENT, 0.50, "best_fit"),
    (DecisionKind.DEFERRAL, 0.18, "waiting_for_resources"),
    (DecisionKind.PRIORITY, 0.10, "priority_order"),
    (DecisionKind.CLONE_GRANT, 0.10, "clone_idle_capacity"),
    (DecisionKind.KILL, 0.08, "lost_race"),
    (DecisionKind.OMEGA, 0.01, "delay_assignment"),
    (DecisionKind.FALLBACK, 0.01, "service_unreachable"),
    (DecisionKind.ATTEMPT, 0.01, "won"),
    (DecisionKind.MAP_READ, 0.01, "own_copy"),
)
CLUSTER_TS = 1763700000000


def synthetic(n: int, seed: int = 1, nodes: int = 1000, apps: int = 5000) -> Iterator[Decision]:
    rng = random.Random(seed)
    kinds = [k for k, _, _ in MIX]
    weights = [w for _, w, _ in MIX]
    reasons = {k: r for k, _, r in MIX}
    for i in range(n):
        kind = rng.choices(kinds, weights)[0]
        app = rng.randrange(apps)
        task = rng.randrange(2000)
        node = f"worker-{rng.randrange(nodes):04d}.cluster.local:8041"
        inputs: dict[str, object] = {}
        if kind in (DecisionKind.PLACEMENT, DecisionKind.DEFERRAL):
            inputs = {
                "ask_mb": 2048,
                "ask_vcores": 1,
                "free_mb": rng.randrange(0, 65536, 512),
                "rank": app % 97,
            }
        elif kind is DecisionKind.PRIORITY:
            inputs = {"remaining_volume": round(rng.uniform(1, 5000), 2), "size_class": rng.randrange(8)}
        elif kind is DecisionKind.CLONE_GRANT:
            inputs = {"clones": rng.choice((1, 2)), "idle_share": round(rng.random(), 3)}
        elif kind is DecisionKind.OMEGA:
            inputs = {"omega_s": round(rng.uniform(0, 10), 2)}
        elif kind is DecisionKind.ATTEMPT:
            inputs = {
                "attempt_id": f"attempt_{CLUSTER_TS}_{app:04d}_m_{task:06d}_{rng.randrange(3)}",
                "is_clone": rng.random() < 0.3,
                "duration_s": round(rng.uniform(5, 120), 1),
                "progress": 1.0,
            }
        elif kind is DecisionKind.MAP_READ:
            inputs = {
                "attempt_id": f"attempt_{CLUSTER_TS}_{app:04d}_r_{task % 50:06d}_1",
                "map_task_id": f"task_{CLUSTER_TS}_{app:04d}_m_{task:06d}",
                "map_attempt_id": f"attempt_{CLUSTER_TS}_{app:04d}_m_{task:06d}_1",
                "kind": "MAP_READ_OWN_COPY",
                "waited_s": round(rng.uniform(0, 10), 3),
            }
        yield Decision(
            time=1.0e9 + i * 0.001,
            kind=kind,
            reason=reasons[kind],
            application_id=f"application_{CLUSTER_TS}_{app:04d}",
            job_id=f"job_{CLUSTER_TS}_{app:04d}",
            task_id=f"attempt_{CLUSTER_TS}_{app:04d}_m_{task:06d}_0"
            if kind is not DecisionKind.PRIORITY
            else "",
            node_id=node
            if kind in (DecisionKind.PLACEMENT, DecisionKind.KILL, DecisionKind.CLONE_GRANT)
            else "",
            inputs=inputs,
        )


def run(url: str, decisions: int, batch: int, seed: int) -> dict[str, float]:
    store = open_store(url)
    try:
        gen = synthetic(decisions, seed)
        appended = 0
        spent = 0.0
        while appended < decisions:
            chunk = [d for _, d in zip(range(batch), gen, strict=False)]
            started = time.perf_counter()
            store.append(chunk)
            spent += time.perf_counter() - started
            appended += len(chunk)
        if store.db.dialect == "sqlite":
            store.db.sqlite_script("PRAGMA wal_checkpoint(TRUNCATE);")
        else:
            with store.db.read() as cur:
                cur.execute("ANALYZE decisions")
        disk = store.disk_bytes()
        logical = store.logical_bytes()
        scale = 1_000_000 / decisions
        return {
            "decisions": float(decisions),
            "batch": float(batch),
            "disk_mb_per_million": disk * scale / 1e6,
            "logical_mb_per_million": logical * scale / 1e6,
            "disk_bytes_per_decision": disk / decisions,
            "appends_per_s": decisions / spent if spent > 0 else float("inf"),
        }
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyscheduler.bench.store", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--decisions", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000, help="decisions per transaction")
    parser.add_argument("--url", default="", help="store URL (default: a temporary SQLite file)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.batch < 1:
        parser.error("--decisions and --batch must be >= 1")
    with tempfile.TemporaryDirectory(prefix="dollymp-bench-") as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'decisions.db'}"
        result = run(url, args.decisions, args.batch, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"decisions             {int(result['decisions'])} in batches of {int(result['batch'])}")
        print(f"disk per million      {result['disk_mb_per_million']:.1f} MB")
        print(f"logical per million   {result['logical_mb_per_million']:.1f} MB (what size retention counts)")
        print(f"bytes per decision    {result['disk_bytes_per_decision']:.0f}")
        print(f"appends per second    {result['appends_per_s']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
