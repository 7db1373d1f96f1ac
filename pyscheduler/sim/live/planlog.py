"""The plans the decision service returns over gRPC, recorded canonically: every answer of a live-mechanism
run (sim/live/run.py over the `grpc` transport) as one JSON line - the RM's plans (placements: attempt,
priority, allocation, node, resources, count, clone or not, reason; deferrals with their reasons; the
containers and applications to kill, each kill with the service's reason) and the AM helpers' ClonePlans
(clones per phase, per task with their reasons, the delay-assignment wait).

Canonical: nothing the service draws from the wall clock or chance, only what it decided. Left out are the
session id, the placement ids (the session id's head, the epoch, a counter: the plan's order of placements
is kept) and the human-readable `detail` texts; an epoch is counted from the session's first (the
RegisterResponse's), times are the simulated clock's seconds.

Golden files (tests/golden/, one per workload): a header line (the run: workload, seed, service
configuration, rounds), then one line per answer; a file that would pass MAX_BYTES keeps its first rounds in
full and from there on only each round's digest (`digest`, of its canonical JSON), and a trailer line (the
jobs' flowtimes). tests/sim/test_live_golden.py replays them; re-record with

    PYTHONPATH=. python -m pyscheduler.sim.live.planlog tests/golden
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscheduler.sim.live.records import EPOCH_S
from pyscheduler.sim.live.run import LiveOptions, run
from pyscheduler.sim.live.workload import TRACES, Workload, mixed_sizes, small_mapreduce, swim_fb2010
from pyscheduler.wire import pb

MAX_BYTES = 1_000_000  # a golden file larger than this keeps only digests past its first rounds


_HERE = Path(__file__).resolve()


def find_traces(start: Path = _HERE) -> Path:
    """The shared traces: `workload.TRACES` (beside the repository), else the first `shared/traces` above
    `start` (a git worktree's checkout lies deeper than the main one)."""
    if TRACES.exists():
        return TRACES
    for up in start.parents:
        if (up / "shared" / "traces").exists():
            return up / "shared" / "traces"
    raise FileNotFoundError(f"shared traces not found at {TRACES} nor above {start}")


def _swim(seed: int) -> Workload:
    return swim_fb2010(seed, traces=find_traces())


# The golden runs: workload name -> (its builder, the seed). small-mapreduce's seed is the equivalence
# test's (tests/sim/test_live_equivalence.py): clones, AM kills and both kinds of service preemption.
GOLDEN: dict[str, tuple[Callable[[int], Workload], int]] = {
    "small-mapreduce": (small_mapreduce, 4),
    "mixed-sizes": (mixed_sizes, 1),
    "swim-fb2010": (_swim, 1),
}


def _reason(r: int) -> str:
    return str(pb.DecisionReason.Name(r))


def _resource(r: Any) -> list[Any]:
    return [r.memory_mb, r.vcores, sorted(r.others.items())]


@dataclass
class PlanLog:
    """A Tap (transport.py) keeping every answer's canonical form, in call order."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    first_epoch: int = 0
    t: float = 0.0  # the simulated time of the last StateBatch

    def __call__(self, call: str, request: Any, response: Any, kill_why: Mapping[str, str]) -> None:
        if call == "register":
            self.first_epoch = response.epoch
            self.rounds.append({"call": call, "policy": response.policy})
            return
        if call == "sync":
            self.t = round(request.rm_time_ms / 1000.0 - EPOCH_S, 3)
            self.rounds.append(self._plan(request, response, kill_why))
            return
        self.rounds.append(self._clone_plan(call, response))

    def _plan(self, batch: Any, plan: Any, kill_why: Mapping[str, str]) -> dict[str, Any]:
        return {
            "call": "sync",
            "t": self.t,
            "seq": batch.seq,
            "status": str(pb.BatchStatus.Name(plan.status)),
            "epoch": plan.epoch - self.first_epoch,
            "in_reply_to_seq": plan.in_reply_to_seq,
            "placements": [
                [
                    p.attempt_id,
                    p.priority,
                    p.allocation_request_id,
                    p.node_id,
                    _resource(p.capability),
                    p.count,
                    p.is_clone,
                    _reason(p.reason),
                ]
                for p in plan.placements
            ],
            "deferrals": [
                [d.attempt_id, d.priority, d.allocation_request_id, _reason(d.reason)] for d in plan.deferrals
            ],
            "kills": [[c, kill_why.get(c)] for c in plan.kill_container_ids],
            "kill_apps": list(plan.kill_application_ids),
        }

    def _clone_plan(self, call: str, plan: Any) -> dict[str, Any]:
        return {
            "call": call,
            "t": self.t,
            "app": plan.application_id,
            "clones_per_phase": sorted(plan.clones_per_phase.items()),
            "task_clones": [[tc.task_id, tc.clones, _reason(tc.reason)] for tc in plan.task_clones],
            "delay_wait_s": plan.delay_assignment_wait_s,
        }


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def digest(round_: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(round_).encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Recording:
    header: dict[str, Any]
    rounds: list[dict[str, Any]]  # every answer in full
    trailer: dict[str, Any]


# The service configuration the golden plans were recorded with (the cluster benchmark's when they were
# first recorded, before the framework prior): a fixed record of behaviour, whatever the production
# configuration is now.
GOLDEN_SERVICE: dict[str, Any] = {
    "policy.name": "dollymp-ext",
    "policy.options": {"clone_rule": "none", "sigma_factor": 1, "small_job_clones": 7, "tail_tasks": 1},
    "appmaster.framework_prior": False,
}


def record(name: str, service_changes: Mapping[str, Any] | None = None) -> Recording:
    """Golden workload `name` at its seed through the service over gRPC (GOLDEN_SERVICE, `service_changes`
    laid over it: how a test shows a changed decision is seen)."""
    build, seed = GOLDEN[name]
    service = {**GOLDEN_SERVICE, **(service_changes or {})}
    log = PlanLog()
    opts = LiveOptions(transport="grpc", service=dict(service))
    rec = run(build(seed), opts, tap=log)
    header = {
        "workload": name,
        "seed": seed,
        "transport": "grpc",
        "service": service,
        "rounds": len(log.rounds),
    }
    trailer = {"end_s": rec.end_s, "flowtimes": sorted(rec.flowtimes.items())}
    return Recording(header, log.rounds, trailer)


def lines(rec: Recording, max_bytes: int = MAX_BYTES) -> list[str]:
    """The golden file's lines: every round in full while the file stays under `max_bytes` (less a
    digest line per round left), the rest as digests."""
    full = [canonical(r) for r in rec.rounds]
    digests = [canonical({"i": i, "digest": digest(r)}) for i, r in enumerate(rec.rounds)]
    budget = max_bytes - 2048
    keep, size = 0, sum(len(d) + 1 for d in digests)
    while keep < len(full) and size - len(digests[keep]) + len(full[keep]) < budget:
        size += len(full[keep]) - len(digests[keep])
        keep += 1
    header = {**rec.header, "full_rounds": keep}
    body = [canonical({"i": i, **json.loads(full[i])}) for i in range(keep)] + digests[keep:]
    return [canonical(header), *body, canonical({"trailer": rec.trailer})]


def path_of(out_dir: Path, name: str) -> Path:
    return out_dir / f"live-plans-{name}.jsonl"


def write(rec: Recording, out_dir: Path) -> Path:
    path = path_of(out_dir, rec.header["workload"])
    path.write_text("\n".join(lines(rec)) + "\n")
    return path


def mismatch(expected_lines: Sequence[str], rec: Recording, runs_alike: bool = True) -> str | None:
    """None when `rec` reproduces the golden file's lines exactly; else the first difference, told. With
    `runs_alike` false the run's own settings (the header) are not compared, only what was decided."""
    expected = [json.loads(x) for x in expected_lines]
    head, body, tail = expected[0], expected[1:-1], expected[-1]
    got = rec.header
    for k in ("workload", "seed", "transport", "service"):
        if runs_alike and head.get(k) != got.get(k):
            return f"the run differs from the recorded one: {k} {got.get(k)!r}, recorded {head.get(k)!r}"
    for i, want in enumerate(body):
        if i >= len(rec.rounds):
            return f"round {i} (of {len(body)} recorded): the run ended after {len(rec.rounds)} rounds"
        have = rec.rounds[i]
        if "digest" in want and set(want) == {"i", "digest"}:
            if digest(have) != want["digest"]:
                return (
                    f"round {i} (first differing; recorded only as its digest {want['digest']}): the run's "
                    f"round is\n  {canonical(have)}\n  (the previous round, equal: "
                    f"{canonical(rec.rounds[i - 1]) if i else '-'})"
                )
            continue
        want = {k: v for k, v in want.items() if k != "i"}
        if canonical(want) != canonical(have):
            keys = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
            told = "\n".join(
                f"  {k}: recorded {canonical(want.get(k))}\n  {' ' * len(k)}  run      "
                f"{canonical(have.get(k))}"
                for k in keys
            )
            return f"round {i} (first differing; t = {have.get('t')} s, call {have.get('call')}):\n{told}"
    if len(rec.rounds) != len(body):
        return f"the run has {len(rec.rounds)} rounds, {len(body)} recorded (the first {len(body)} equal)"
    if tail.get("trailer") != json.loads(canonical(rec.trailer)):
        return f"the jobs' flowtimes differ: recorded {tail.get('trailer')}, run {rec.trailer}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m pyscheduler.sim.live.planlog",
        description="Record (or check) the golden plans of the live mechanism's workloads over gRPC.",
    )
    ap.add_argument("out_dir", type=Path, help="where the golden files go (tests/golden)")
    ap.add_argument("--workload", default=",".join(GOLDEN), help="comma-separated (default: all)")
    ap.add_argument("--check", action="store_true", help="compare with the files there, write nothing")
    args = ap.parse_args(argv)
    failed = 0
    for name in [w for w in args.workload.split(",") if w]:
        if name not in GOLDEN:
            ap.error(f"unknown workload {name!r}: one of {', '.join(GOLDEN)}")
        rec = record(name)
        if args.check:
            told = mismatch(path_of(args.out_dir, name).read_text().splitlines(), rec)
            failed += told is not None
            print(f"{name}: {'reproduced' if told is None else told}")
        else:
            path = write(rec, args.out_dir)
            print(f"{name}: {len(rec.rounds)} rounds -> {path} ({path.stat().st_size} bytes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
