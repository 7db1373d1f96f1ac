"""`dollymp bench service`: a shim-like load generator against a real `dollymp serve` process.

The generator registers, sends a full resync of N nodes and A applications, then one StateBatch per
tick (100 ms): node heartbeats (round robin, `rate` node upserts per second; default two per node per
second, twice YARN's default one-second heartbeat), the containers it committed from the plans it
received (with their placement ids, asks reduced), completions of containers whose run time is over,
and finished applications replaced by new ones so that A stay active. It commits a placement only if
it still fits the node and the ask is still pending (as the shim does), else reports it dropped.

By default the resync hands over a busy cluster (`--start warm`, see pyscheduler.bench.shim_model); `--start
cold` starts from an empty one, whose first generation of applications ends all at once about 30 s in:
a commit wave of ~10^4 containers per tick inside the measuring window, whose few batches then set p99.

`--find-max` finds the service's ceiling instead of measuring one rate: it offers --rate (default two
updates per node per second), then 1.5x that, and so on, each step against a fresh service with its own
warm-up, until a step's round p99 passes `--p99-ms` (100) or its rounds fall behind (under 95% of the
offered node updates answered), and reports the last rate held (`held_rate`) with every step's figures.

Figures (measured over the run after the initial resync):
  node_updates_per_s  node upserts answered by a plan, per second
  round_p50_ms/p99_ms time from handing an encoded batch to gRPC to receiving the plan that covers it
                      (client side: includes the service's deserialization and validation, queueing
                      behind earlier batches, coalescing, the round, the plan's encoding and both
                      sockets; not the generator's own Python encoding of the batch, which a Java
                      shim does in about a millisecond)
  placements_per_s    containers placed by the plans received, per second
  peak_rss_mb         the service process's peak resident memory (VmHWM); rss_start_mb/rss_end_mb are
                      its resident memory after the resync and at the end (memory flat: end ~ start);
                      rss_every_5s_mb samples it every 5 s of the window, to tell growth from swings
  containers_start/_end  containers running in the pretend cluster (hence mirrored by the service) at
                      the start and the end of the window: the state the service must hold. Memory
                      that grows with it is state, not a leak (the warm start hands over ~48k
                      containers at 10,000 nodes; the cluster fills to its steady 60-68k in about
                      25 s and swings in that range with a period of about 30 s, and the service's
                      memory rises to the first peak's level and then stays there: measured over
                      120 s, 233 MB at 30 s, 241-248 MB from 55 s to 150 s. Hence the default
                      `--warmup 60`: the window measures the steady state, where memory must stay
                      flat; see rss_every_5s_mb with containers_every_5s)
  service_cpu_wait_per_s  seconds per second the service's threads were runnable but waited for a CPU
                      (/proc schedstat): when high, the machine, not the service, set the latencies
  load_avg            the machine's 1-minute load average at the start and the end of the window
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc

from pyscheduler.bench.shim_model import ShimModel
from pyscheduler.service.rmproxy.stats import percentile
from pyscheduler.sim.live.cluster import COMMITS, SHIM_COMMIT
from pyscheduler.wire import pb, pb_grpc


def _rss_mb(pid: int, field_name: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def _wait_s(pid: int) -> float:
    """Seconds the threads of a process spent runnable but waiting for a CPU (schedstat field 2)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that ended, or no schedstat
            continue
    return total / 1e9


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drive(
    address: str,
    model: ShimModel,
    seconds: float,
    rate: float,
    tick_s: float,
    pid: int,
    warmup_s: float = 0.0,
    on_resync: Callable[[], None] | None = None,
    on_measure: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Run the shim loop against a service at `address`; returns the figures measured after `warmup_s`
    (the first plan places a whole empty cluster at once; its commit burst is not the steady state).
    `on_resync` is called once the full resync's plan came (the service mirrors the cluster), `on_measure`
    when the measured window starts (another load beside this one, `dollymp bench am`'s AM, keeps to them)."""
    channel = grpc.insecure_channel(
        address,
        options=[("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20)],
    )
    stub = pb_grpc.SchedulerServiceStub(channel)
    reg = stub.Register(pb.RegisterRequest(rm_id="bench", shim_version="loadgen", tick_ms=int(tick_s * 1000)))
    sync = channel.stream_stream(  # batches go as the bytes ShimModel.tick_wire encoded
        "/dollymp.v1.SchedulerService/Sync",
        request_serializer=bytes,
        response_deserializer=pb.Plan.FromString,
    )
    outbox: queue.Queue[Any] = queue.Queue(maxsize=4)
    sent: dict[int, tuple[float, int]] = {}  # seq -> (send time, node upserts)
    lat: list[float] = []
    counts = {"nodes": 0, "placements": 0}
    measuring = threading.Event()
    stop = object()

    def requests() -> Iterator[Any]:
        while (item := outbox.get()) is not stop:
            yield item

    failed: list[str] = []

    def receive(plans: Any) -> None:
        try:
            _receive(plans)
        except grpc.RpcError as exc:  # the service went away: the run fails, it does not hang
            failed.append(f"{exc.code()}: {exc.details()}")

    def _receive(plans: Any) -> None:
        acked = 0
        for plan in plans:
            now = time.monotonic()
            model.on_plan(plan, now)
            if measuring.is_set():
                counts["placements"] += sum(p.count for p in plan.placements)
            for seq in range(acked + 1, plan.in_reply_to_seq + 1):
                t, nodes = sent.pop(seq, (now, 0))
                if seq > 1 and measuring.is_set():
                    lat.append((now - t) * 1000.0)
                    counts["nodes"] += nodes
            acked = max(acked, plan.in_reply_to_seq)

    calls = sync(requests())
    receiver = threading.Thread(target=receive, args=(calls,), daemon=True)
    receiver.start()
    first = model.full_resync(reg.session_id)
    sent[1] = (time.monotonic(), len(first.nodes_upserted))
    outbox.put(first.SerializeToString())
    deadline = time.monotonic() + 300
    while 1 in sent:  # wait for the resync's plan
        if failed or time.monotonic() > deadline:
            raise RuntimeError(f"no plan for the full resync: {failed or 'timeout'}")
        time.sleep(0.01)
    if on_resync is not None:
        on_resync()
    seq, carry = 1, 0.0
    next_tick = time.monotonic()
    start = next_tick + warmup_s
    rss_start, cpu_service, cpu_self, wait_service, load_start = 0.0, 0.0, 0.0, 0.0, 0.0
    containers_start = 0
    rss_samples: list[float] = []
    containers: list[int] = []  # running containers at each RSS sample
    while (now := time.monotonic()) - start < seconds:
        if failed:
            raise RuntimeError(f"the Sync stream failed: {failed[0]}")
        if not measuring.is_set() and now >= start:
            rss_start, containers_start = _rss_mb(pid, "VmRSS"), len(model.containers)
            cpu_service, cpu_self, wait_service = _cpu_s(pid), time.process_time(), _wait_s(pid)
            load_start = os.getloadavg()[0]
            start = now
            measuring.set()
            os.kill(pid, signal.SIGUSR1)  # the service's own statistics window starts now too
            if on_measure is not None:
                on_measure()
        carry += rate * tick_s
        beats = int(carry)
        carry -= beats
        seq += 1
        batch, upserts = model.tick_wire(reg.session_id, seq, now, min(beats, model.nodes))
        sent[seq] = (time.monotonic(), upserts)
        while True:  # blocks while the service pushes back
            try:
                outbox.put(batch, timeout=1.0)
                break
            except queue.Full:
                if failed:
                    raise RuntimeError(f"the Sync stream failed: {failed[0]}") from None
        next_tick += tick_s
        if measuring.is_set() and now - start >= 5.0 * len(rss_samples):
            rss_samples.append(round(_rss_mb(pid, "VmRSS"), 1))
            containers.append(len(model.containers))
        if seq % 20 == 0:
            gc.freeze()  # the generator's own collector pauses would count as service latency
        time.sleep(max(0.0, next_tick - time.monotonic()))
    elapsed = time.monotonic() - start
    cpu_service, cpu_self = _cpu_s(pid) - cpu_service, time.process_time() - cpu_self
    wait_service = _wait_s(pid) - wait_service
    load_end = os.getloadavg()[0]
    deadline = time.monotonic() + 10
    while sent and time.monotonic() < deadline:
        time.sleep(0.01)
    outbox.put(stop)
    receiver.join(5)
    channel.close()
    return {
        "node_updates_per_s": round(counts["nodes"] / elapsed, 1),
        "round_p50_ms": round(percentile(lat, 50), 2) if lat else None,
        "round_p99_ms": round(percentile(lat, 99), 2) if lat else None,
        "placements_per_s": round(counts["placements"] / elapsed, 1),
        "peak_rss_mb": round(_rss_mb(pid, "VmHWM"), 1),
        "rss_start_mb": round(rss_start, 1),
        "rss_end_mb": round(_rss_mb(pid, "VmRSS"), 1),
        "rss_every_5s_mb": rss_samples,
        "containers_start": containers_start,
        "containers_end": len(model.containers),
        "containers_every_5s": containers,
        "service_cpu_per_s": round(cpu_service / elapsed, 2),
        "loadgen_cpu_per_s": round(cpu_self / elapsed, 2),
        "service_cpu_wait_per_s": round(wait_service / elapsed, 2),
        "load_avg": [round(load_start, 2), round(load_end, 2)],
        "batches": len(lat),
        "seconds": round(elapsed, 1),
    }


def start_serve(tmp: Path, name: str, *flags: str) -> tuple[subprocess.Popen[str], Path]:
    """A benchmark's `dollymp serve` (gRPC on a free loopback port, no HTTP API, its own log in `tmp`,
    `flags` added) and the file it writes its port to."""
    port_file = tmp / f"{name}.port"
    cmd = [
        *(sys.executable, "-m", "pyscheduler", "serve", "--grpc-port", "0", "--port-file", str(port_file)),
        *("--db", str(tmp / f"{name}.db"), "--http-port", "-1", "--log-level", "WARNING", *flags),
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True), port_file


def paired_phases(
    tool: str, repeats: int, names: tuple[str, str], phase: Callable[[str, Path, int], dict[str, Any]]
) -> dict[str, list[dict[str, Any]]] | None:
    """`repeats` runs of two phases of `dollymp bench <tool>`, each `phase(name, a temporary folder, its
    index)` against a fresh service, in alternating order (so that the machine's drift falls on both
    alike): each name's figures in run order, each phase's also printed to stderr as it ends. None, said
    on stderr, when a phase failed (RuntimeError, OSError)."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix=f"dollymp-bench-{tool}-") as tmp:
        for r in range(repeats):
            for k, name in enumerate(names if r % 2 == 0 else names[::-1]):
                try:
                    fig = phase(name, Path(tmp), 2 * r + k)
                except (RuntimeError, OSError) as exc:
                    print(f"dollymp bench {tool}: {exc}", file=sys.stderr)
                    return None
                runs[name].append(fig)
                print(f"repeat {r + 1} {name}: {json.dumps(fig)}", file=sys.stderr, flush=True)
    return runs


def stop_serve(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """Stop a `start_serve` process (SIGTERM): the round statistics it prints as it stops (SYNC_STATS, its
    window from the last SIGUSR1), {} when it printed none."""
    proc.terminate()
    out, _ = proc.communicate(timeout=60)
    line = next((x for x in out.splitlines() if x.startswith("SYNC_STATS=")), None)
    return {} if line is None else dict(json.loads(line[len("SYNC_STATS=") :]))


def wait_address(proc: subprocess.Popen[str], port_file: Path, timeout_s: float = 60.0) -> str | None:
    """host:port of a `start_serve` process once it listens; None if it exited or took too long."""
    deadline = time.monotonic() + timeout_s
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            return None
        time.sleep(0.05)
    return f"127.0.0.1:{int(port_file.read_text())}"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--apps", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=30.0, help="measured seconds (after the warm-up)")
    p.add_argument(
        "--warmup",
        type=float,
        default=60.0,
        help="seconds driven before measuring (default 60: the warm start's cluster reaches its steady "
        "occupancy in about 25 s, and its first peak about 50 s in)",
    )
    p.add_argument("--rate", type=float, default=None, help="node updates per second (default 2 x nodes)")
    p.add_argument("--tick-ms", type=int, default=100)
    p.add_argument(
        "--policy",
        default="default",
        help="the service's policy.name (default %(default)s: the production configuration)",
    )
    p.add_argument(
        "--task-seconds",
        type=float,
        nargs=2,
        default=(5.0, 30.0),
        metavar=("MIN", "MAX"),
        help="container run time, uniform (default 5 30)",
    )
    p.add_argument(
        "--tasks",
        type=int,
        nargs=2,
        default=(20, 200),
        metavar=("MIN", "MAX"),
        help="containers per application, uniform (default 20 200)",
    )
    p.add_argument(
        "--commit",
        choices=COMMITS,
        default=SHIM_COMMIT,
        help="when the pretend shim commits a placement, as yarn.scheduler.dollymp.commit: the whole plan at "
        "once when it arrives, or on its node's next heartbeat (default %(default)s, the shim's)",
    )
    p.add_argument(
        "--start",
        choices=("warm", "cold"),
        default="warm",
        help="the cluster the full resync hands over: busy, applications at random progress (default), "
        "or empty, every application just submitted (its first generation ends in one wave ~30 s in)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--find-max",
        action="store_true",
        help=f"raise the offered rate ({FIND_MAX_FACTOR:g}x a step, from --rate, each step a fresh service) "
        "until round p99 passes --p99-ms or rounds fall behind; report the last rate held",
    )
    p.add_argument("--p99-ms", type=float, default=100.0, help="--find-max's bar on round p99 (default 100)")
    p.add_argument("--max-steps", type=int, default=8, help="--find-max's most steps (default 8)")


FIND_MAX_FACTOR = 1.5  # --find-max: each step offers this many times the last step's rate
HELD_SHARE = 0.95  # a rate is held when at least this share of the offered node updates is answered


def held(result: dict[str, Any], rate: float, p99_ms: float) -> str | None:
    """Why a step did not hold its offered rate (None: it held): its round p99 passed `p99_ms`, or the
    rounds fell behind (fewer than HELD_SHARE of the offered node updates answered)."""
    p99 = result.get("round_p99_ms")
    if p99 is None:
        return "no plan answered"
    if p99 > p99_ms:
        return f"round p99 {p99} ms > {p99_ms:g} ms"
    answered = result["node_updates_per_s"]
    if answered < HELD_SHARE * rate:
        return f"fell behind: {answered:.0f} of {rate:.0f} node updates/s answered"
    return None


def find_max(args: argparse.Namespace, rate: float) -> int:
    """--find-max: steps of FIND_MAX_FACTOR x the last rate, each against a fresh service, until one does
    not hold (`held`) or --max-steps ran; reports the last rate held."""
    steps: list[dict[str, Any]] = []
    last_held: dict[str, Any] | None = None
    failure: str | None = None
    for k in range(args.max_steps):
        offered = rate * FIND_MAX_FACTOR**k
        code, result = measure(args, offered)
        if code:
            return code
        why = held(result, offered, args.p99_ms)
        steps.append({**result, "held": why is None, "why": why})
        print(
            f"find-max step {k + 1}: offered {offered:.0f} node updates/s: answered "
            f"{result['node_updates_per_s']}, round p99 {result['round_p99_ms']} ms (server "
            f"{result.get('service_round_p99_ms')} ms), load average {result['load_avg'][1]}: "
            + ("held" if why is None else f"not held ({why})"),
            flush=True,
        )
        if why is not None:
            failure = why
            break
        last_held = result
    out = {
        "nodes": args.nodes,
        "apps": args.apps,
        "policy": args.policy,
        "p99_bar_ms": args.p99_ms,
        "held_rate": last_held["target_rate"] if last_held else None,
        "held_round_p99_ms": last_held["round_p99_ms"] if last_held else None,
        "first_failure": failure,
        "steps": steps,
    }
    if last_held is None:
        print(f"find-max: not even {rate:.0f} node updates/s held ({failure})")
    elif failure is None:
        print(
            f"find-max: held every step up to {out['held_rate']:.0f} node updates/s "
            f"(round p99 {out['held_round_p99_ms']} ms); raise --max-steps to go on"
        )
    else:
        print(
            f"find-max: held {out['held_rate']:.0f} node updates/s (round p99 {out['held_round_p99_ms']} ms "
            f"at {args.nodes} nodes, {args.apps} applications); the next step, "
            f"{out['held_rate'] * FIND_MAX_FACTOR:.0f}, did not: {failure}"
        )
    print(json.dumps({"find_max": out}))
    return 0


def run(args: argparse.Namespace) -> int:
    for name in ("nodes", "apps", "seconds", "tick_ms", "max_steps", "p99_ms"):
        if getattr(args, name) <= 0:
            print(f"dollymp bench service: --{name.replace('_', '-')} must be > 0", file=sys.stderr)
            return 2
    rate = args.rate if args.rate is not None else 2.0 * args.nodes
    if args.find_max:
        return find_max(args, rate)
    code, result = measure(args, rate)
    if code:
        return code
    if args.json:
        print(json.dumps(result))
    else:
        print(f"service: {args.nodes} nodes, {args.apps} apps, policy {args.policy}, {result['seconds']} s")
        print(
            f"node updates/s {result['node_updates_per_s']} (offered {rate:.0f}); round p50 "
            f"{result['round_p50_ms']} ms, p99 {result['round_p99_ms']} ms; placements/s "
            f"{result['placements_per_s']}; service peak RSS {result['peak_rss_mb']} MB "
            f"(RSS {result['rss_start_mb']} -> {result['rss_end_mb']} MB while the cluster ran "
            f"{result['containers_start']} -> {result['containers_end']} containers)"
        )
        print(
            f"service side: {result.get('service_rounds')} rounds, round p50/p99 "
            f"{result.get('service_round_p50_ms')}/{result.get('service_round_p99_ms')} ms wall, "
            f"{result.get('service_round_cpu_p50_ms')}/{result.get('service_round_cpu_p99_ms')} ms CPU; "
            f"service {result['service_cpu_per_s']} CPU-s/s (waited {result['service_cpu_wait_per_s']} s/s "
            f"for a CPU), load generator {result['loadgen_cpu_per_s']} CPU-s/s; collector "
            f"{result.get('service_gc_collections')} runs between rounds, pause p50/max "
            f"{result.get('service_gc_pause_p50_ms')}/{result.get('service_gc_pause_max_ms')} ms; "
            f"load average {result['load_avg'][0]} -> {result['load_avg'][1]}"
        )
    return 0


def measure(args: argparse.Namespace, rate: float) -> tuple[int, dict[str, Any]]:
    """One run at `rate` node updates per second against a fresh `dollymp serve`: (exit code, figures)."""
    gc.set_threshold(20_000, 50, 50)
    with tempfile.TemporaryDirectory(prefix="dollymp-bench-") as tmp:
        proc, port_file = start_serve(Path(tmp), "bench", "--policy", args.policy)
        try:
            address = wait_address(proc, port_file)
            if address is None:
                print("dollymp bench service: the service did not start", file=sys.stderr)
                return 1, {}
            model = ShimModel(
                args.nodes,
                args.apps,
                args.seed,
                tuple(args.task_seconds),
                tuple(args.tasks),
                args.commit,
                start=args.start,
            )
            try:
                result = drive(
                    address, model, args.seconds, rate, args.tick_ms / 1000.0, proc.pid, args.warmup
                )
            except (RuntimeError, grpc.RpcError) as exc:
                print(f"dollymp bench service: {exc}", file=sys.stderr)
                return 1, {}
        finally:
            stats = stop_serve(proc)
    result = {
        "nodes": args.nodes,
        "apps": args.apps,
        "policy": args.policy,
        "commit": args.commit,
        "start": args.start,
        "target_rate": rate,
        **result,
    }
    # Server side, same window: round wall time, and its CPU time (apply + decide without waiting for a core).
    for key in (
        "round_p50_ms",
        "round_p99_ms",
        "round_cpu_p50_ms",
        "round_cpu_p99_ms",
        "rounds",
        "max_coalesced",
        "validate_cpu_s",
        "apply_cpu_s",
        "decide_cpu_s",
        "gc_collections",
        "gc_pause_p50_ms",
        "gc_pause_max_ms",
        "gc_pause_cpu_max_ms",
        "malloc_trims",
    ):
        if key in stats:
            result[f"service_{key}"] = stats[key]
    return 0, result
