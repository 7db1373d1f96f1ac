"""`dollymp bench sls`: one workload through Hadoop's Scheduler Load Simulator three times, side by side.

The same SLS input (`sls_trace.convert`: a slice of the FB-2010 day or the Alibaba sample, a native workload)
runs under CapacityScheduler, FairScheduler (stock, one queue) and the DollyMP shim with a real `dollymp
serve`, each in its own JVM (yarn-plugin's `io.dollymp.yarn.bench.SlsBench`: the real ResourceManager,
simulated NodeManagers heartbeating every `--nm-heartbeat-ms`, every job's AM simulated by
`DollyMPAMSimulator`: the simulator's straggler draws, Hadoop's stock speculator under the two stock
schedulers, the AM helper's protocol under DollyMP). `dollymp simulate` runs the same workload, seed and
cluster (policy-only engine: `capacity` is CapacityScheduler with LATE, `drf` stands for FairScheduler) and
gives the predicted ratios.

The last line printed is one JSON object; with several seeds each figure is the median over seeds and
`spread` holds each figure's [min, max].
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscheduler.bench.sls_trace import SlsCluster, convert

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "yarn-plugin"
DEFAULT_TRACE = ROOT.parent / "shared/traces/swim_facebook/FB-2010_samples_24_times_1hr_0.tsv"
SCHEDULERS = ("capacity", "fair", "dollymp")
SIM_POLICY = {"capacity": "capacity", "fair": "drf", "dollymp": "default"}
JDK17_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in (
        "java.lang",
        "java.util",
        "java.util.concurrent",
        "java.io",
        "java.net",
        "java.nio",
        "sun.nio.ch",
        "java.lang.reflect",
    )
] + ["--add-exports=java.base/sun.net.dns=ALL-UNNAMED", "--add-exports=java.base/sun.net.util=ALL-UNNAMED"]


@dataclass(frozen=True, slots=True)
class SlsSettings:
    trace: str
    fmt: str
    jobs: int = 500
    start: int = 0
    cluster: SlsCluster = field(default_factory=SlsCluster)
    straggler: str = "pareto:alpha=1.5,cap=20"
    target_load: float = 0.8
    time_scale: float = 0.1
    max_tasks_per_phase: int = 200
    nm_heartbeat_ms: int = 1000
    am_heartbeat_ms: int = 1000
    timeout_s: int = 1800
    java_heap: str = "6g"
    python: str = sys.executable
    # `dollymp simulate`'s mechanism for the prediction: the policy-only engine by default, since the
    # service's round (`service`) takes hours on a 1,000-node slice here (sim/live/fromtrace.py)
    predict_mechanism: str = "core"
    # the shim's yarn-site keys for the DollyMP run, without their yarn.scheduler.dollymp. prefix
    shim_conf: tuple[tuple[str, str], ...] = ()


def classpath(work: Path, build: bool = True) -> str:
    """yarn-plugin's classes, test classes (copied into `work`, so a build meanwhile does not change the runs)
    and test classpath; built with Maven when missing."""
    cp_file = PLUGIN / "target" / "test-classpath.txt"
    built = PLUGIN / "target/test-classes/io/dollymp/yarn/bench/SlsBench.class"
    if build and not (cp_file.exists() and built.exists()):
        goals = ["-DskipTests", "test-compile", "dependency:build-classpath", "-Dmdep.includeScope=test"]
        subprocess.run(
            ["mvn", "-B", "-ntp", "-q", *goals, f"-Dmdep.outputFile={cp_file}"], cwd=PLUGIN, check=True
        )
    own = []
    for name in ("classes", "test-classes"):
        shutil.rmtree(work / name, ignore_errors=True)
        shutil.copytree(PLUGIN / "target" / name, work / name)
        own.append(str(work / name))
    return ":".join([*own, cp_file.read_text().strip()])


class Service:
    """A `dollymp serve` process for the DollyMP run (its own decision log in the run's directory)."""

    def __init__(self, work: Path, python: str) -> None:
        work.mkdir(parents=True, exist_ok=True)
        self.ports = work / "ports"
        self.log = work / "service.log"
        self.ports.unlink(missing_ok=True)
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
        cmd = [python, "-m", "pyscheduler", "serve", "--grpc-host", "127.0.0.1", "--grpc-port", "0"]
        cmd += ["--port-file", str(self.ports), "--db", str(work / "decisions.db"), "--policy", "default"]
        cmd += ["--http-port", "0"]
        with open(self.log, "w") as out:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def port(self, timeout_s: float = 90.0) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"dollymp serve exited {self.proc.returncode}: {self.log.read_text()[-2000:]}"
                )
            if self.ports.exists() and self.ports.read_text().strip():
                return int(self.ports.read_text().strip())
            time.sleep(0.2)
        raise RuntimeError("dollymp serve wrote no port file in time")

    def peak_rss_mb(self) -> float:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return 0.0

    def stop(self) -> dict[str, Any]:
        """SIGTERM; the service prints its round statistics (SYNC_STATS=...) as it stops."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for line in self.log.read_text().splitlines():
            if line.startswith("SYNC_STATS="):
                stats: dict[str, Any] = json.loads(line.split("=", 1)[1])
                return stats
        return {}


def run_one(s: SlsSettings, inp: Path, out: Path, scheduler: str, seed: int, cp: str) -> dict[str, Any]:
    """One SLS run; its result file's contents plus the service's figures under DollyMP."""
    out.mkdir(parents=True, exist_ok=True)
    service = Service(out / "service", s.python) if scheduler == "dollymp" else None
    try:
        options = {
            "scheduler": scheduler,
            "trace": inp / "trace.json",
            "nodes": inp / "nodes.json",
            "out": out,
            "jobs": s.jobs,
            "seed": seed,
            "straggler": s.straggler,
            "nm-heartbeat-ms": s.nm_heartbeat_ms,
            "am-heartbeat-ms": s.am_heartbeat_ms,
            "nm-vcores": s.cluster.nm_vcores,
            "nm-memory-mb": s.cluster.nm_mem_mb,
            "container-vcores": s.cluster.container_vcores,
            "container-memory-mb": s.cluster.container_mem_mb,
            "timeout-s": s.timeout_s,
        }
        args = [x for k, v in options.items() for x in (f"--{k}", str(v))]
        if service is not None:
            args += ["--service", f"127.0.0.1:{service.port()}"]
            if s.shim_conf:
                args += ["--shim-conf", ";".join(f"{k}={v}" for k, v in s.shim_conf)]
        cmd = ["java", *JDK17_OPENS, f"-Xmx{s.java_heap}", "-cp", cp, "io.dollymp.yarn.bench.SlsBench", *args]
        with open(out / "sls.log", "w") as log:
            rc = subprocess.run(cmd, cwd=PLUGIN, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
        result_file = out / f"result-{scheduler}.json"
        if not result_file.exists():
            raise RuntimeError(f"SLS under {scheduler} wrote no result (exit {rc}); see {out / 'sls.log'}")
        result: dict[str, Any] = json.loads(result_file.read_text())
        result["exit"] = rc
    finally:
        if service is not None:
            rss = service.peak_rss_mb()
            stats = service.stop()
    if service is not None:
        result["service"] = stats
        result["service_peak_rss_mb"] = round(rss, 1)
    return result


def predict(s: SlsSettings, inp: Path, seed: int) -> dict[str, float]:
    """`dollymp simulate` on the same workload, cluster, straggler model and seed: avg flowtime per policy."""
    out = inp / f"simulate-seed{seed}.json"
    cmd = [s.python, "-m", "pyscheduler", "simulate", "--workload", str(inp / "workload.jsonl")]
    cmd += ["--cluster", str(inp / "cluster.json"), "--policies", ",".join(SIM_POLICY.values())]
    cmd += ["--straggler", s.straggler, "--seed", str(seed), "--json", str(out), "--quiet"]
    cmd += ["--mechanism", s.predict_mechanism]
    subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True, capture_output=True)
    pol = json.loads(out.read_text())["policies"]
    return {name: float(pol[p]["avg_flowtime"]) for name, p in SIM_POLICY.items()}


def _avg(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def summarise(
    runs: dict[str, dict[str, Any]], predicted: dict[str, float], nodes: int, jobs: int
) -> dict[str, Any]:
    """One seed's figures, under the issue's key names."""
    avg = {k: _avg([r["flowtime_s"] for r in v["records"]]) for k, v in runs.items()}
    small = {k: _avg([r["flowtime_s"] for r in v["records"] if r["tasks"] <= 10]) for k, v in runs.items()}
    d = runs["dollymp"]
    svc = d.get("service", {})
    out: dict[str, Any] = {"nodes": nodes, "jobs": jobs}
    out["jobs_finished"] = {k: v["jobs_finished"] for k, v in runs.items()}
    out["utilisation"] = {k: v["utilisation"] for k, v in runs.items()}
    for k in SCHEDULERS:
        out[f"{k}_avg_s"] = round(avg[k], 3)
    out["ratio_capacity"] = round(avg["dollymp"] / avg["capacity"], 4)
    out["ratio_fair"] = round(avg["dollymp"] / avg["fair"], 4)
    out["predicted_ratio_capacity"] = round(predicted["dollymp"] / predicted["capacity"], 4)
    out["predicted_ratio_fair"] = round(predicted["dollymp"] / predicted["fair"], 4)
    out["predicted_avg_s"] = {k: round(v, 3) for k, v in predicted.items()}
    out["small_jobs_avg_s"] = {k: round(v, 3) for k, v in small.items()}
    out["round_p50_ms"] = svc.get("round_p50_ms", 0)
    out["round_p99_ms"] = svc.get("round_p99_ms", 0)
    out["stale_frac"] = round(d["shim_stale"] / d["shim_proposals"], 5) if d["shim_proposals"] else 0.0
    out["heartbeat_p99_ms"] = {k: round(v["node_update_p99_ms"], 4) for k, v in runs.items()}
    out["heartbeat_p99_added_ms"] = round(d["node_update_p99_ms"] - runs["capacity"]["node_update_p99_ms"], 4)
    out["service_peak_rss_mb"] = d.get("service_peak_rss_mb", 0)
    out["extra_copies"] = {
        k: {
            "launched": sum(r["clones"] for r in v["records"]),
            "won": sum(r["clones_won"] for r in v["records"]),
            "killed": sum(r["killed"] for r in v["records"]),
        }
        for k, v in runs.items()
    }
    out["wall_s"] = {k: v["wall_s"] for k, v in runs.items()}
    return out


def combine(per_seed: list[dict[str, Any]], seeds: list[int]) -> dict[str, Any]:
    """Medians over seeds of every number (nested one level too), and each one's [min, max] in `spread`."""
    if len(per_seed) == 1:
        return {**per_seed[0], "seeds": seeds}
    out: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for key, first in per_seed[0].items():
        values = [r[key] for r in per_seed]
        if isinstance(first, int | float) and not isinstance(first, bool):
            out[key] = round(statistics.median(values), 4)
            spread[key] = [min(values), max(values)]
        elif isinstance(first, dict) and all(isinstance(v, int | float) for v in first.values()):
            out[key] = {k: round(statistics.median([v[k] for v in values]), 4) for k in first}
            spread[key] = {k: [min(v[k] for v in values), max(v[k] for v in values)] for k in first}
        else:
            out[key] = values
    out["seeds"] = seeds
    out["spread"] = spread
    return out


def run_bench(s: SlsSettings, work: Path, seeds: list[int], log: Any = sys.stderr) -> dict[str, Any]:
    inp = convert(
        s.trace,
        s.fmt,
        work / "input",
        cluster=s.cluster,
        jobs=s.jobs,
        start=s.start,
        target_load=s.target_load,
        time_scale=s.time_scale,
        max_tasks_per_job=s.max_tasks_per_phase,
    )
    meta = json.loads((inp / "meta.json").read_text())
    print(
        f"bench sls: {meta['jobs']} jobs, {meta['tasks']} tasks, offered load {meta['offered_load']} "
        f"on {s.cluster.nodes} NMs; arrivals over {meta['span_s']} s",
        file=log,
        flush=True,
    )
    cp = classpath(work)
    per_seed = []
    for seed in seeds:
        predicted = predict(s, inp, seed)
        runs = {}
        for scheduler in SCHEDULERS:
            t0 = time.monotonic()
            runs[scheduler] = run_one(s, inp, work / f"seed{seed}" / scheduler, scheduler, seed, cp)
            r = runs[scheduler]
            avg = _avg([x["flowtime_s"] for x in r["records"]])
            wall = time.monotonic() - t0
            print(
                f"bench sls: seed {seed} {scheduler}: {r['jobs_finished']}/{s.jobs} jobs, "
                f"avg flowtime {avg:.2f} s, {wall:.0f} s wall",
                file=log,
                flush=True,
            )
        summary = summarise(runs, predicted, s.cluster.nodes, s.jobs)
        summary["predict_mechanism"] = s.predict_mechanism
        (work / f"seed{seed}" / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        per_seed.append(summary)
    return combine(per_seed, seeds)


def add_args(p: Any) -> None:
    p.add_argument(
        "--trace", default=str(ROOT.parent / "shared/traces/swim_facebook/FB-2010_samples_24_times_1hr_0.tsv")
    )
    p.add_argument(
        "--format",
        dest="fmt",
        default="swim",
        help="the trace's format: swim, alibaba, native or yarn-history (bench record-history)",
    )
    p.add_argument("--jobs", type=int, default=500, help="jobs in the slice")
    p.add_argument("--start", type=int, default=0, help="the slice starts at this job (by arrival)")
    p.add_argument("--nodes", type=int, default=1000, help="simulated NodeManagers")
    p.add_argument(
        "--predict-mechanism",
        choices=("core", "service"),
        default="core",
        help="dollymp simulate's mechanism for the predicted ratios (default core: the service's round "
        "takes hours on a 1,000-node slice)",
    )
    p.add_argument("--nm-vcores", type=int, default=8)
    p.add_argument("--nm-memory-mb", type=int, default=16384)
    p.add_argument("--load", type=float, default=0.8, help="offered load the arrivals are compressed to")
    p.add_argument(
        "--time-scale", type=float, default=0.1, help="task base times x this (SLS runs in real time)"
    )
    p.add_argument("--max-tasks", type=int, default=200, help="at most this many tasks a phase (work kept)")
    p.add_argument("--straggler", default="pareto:alpha=1.5,cap=20")
    p.add_argument("--seeds", type=int, default=1, help="runs with N seeds: medians and spread")
    p.add_argument("--first-seed", type=int, default=1, help="the seeds are first-seed .. first-seed + N - 1")
    p.add_argument(
        "--combine",
        nargs="*",
        default=None,
        help="instead of running: medians and spread of earlier runs' seed*/summary.json files",
    )
    p.add_argument(
        "--shim-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a shim key for the DollyMP run without its yarn.scheduler.dollymp. prefix (commit=heartbeat)",
    )
    p.add_argument("--nm-heartbeat-ms", type=int, default=1000)
    p.add_argument("--am-heartbeat-ms", type=int, default=1000)
    p.add_argument("--timeout-s", type=int, default=1800, help="per scheduler run")
    p.add_argument(
        "--work", default=str(PLUGIN / "target" / "bench-sls"), help="directory for inputs and logs"
    )


SHIM_KEY = re.compile(r"[a-z][a-z0-9.-]{0,63}")


def parse_shim_conf(items: list[str]) -> tuple[tuple[str, str], ...]:
    """`--shim-conf KEY=VALUE` items, checked: a key of the shim's form, a value of at most 256 characters
    without ';' or control characters (the Java side splits on ';')."""
    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not SHIM_KEY.fullmatch(key):
            raise SystemExit(
                f"--shim-conf {item!r}: expected KEY=VALUE, KEY of [a-z0-9.-], at most 64 characters"
            )
        if len(value) > 256 or ";" in value or any(ord(c) < 0x20 for c in value):
            raise SystemExit(f"--shim-conf {key}: the value must be at most 256 characters without ';'")
        out.append((key, value))
    return tuple(out)


def run(args: Any) -> int:
    s = SlsSettings(
        trace=args.trace,
        fmt=args.fmt,
        jobs=args.jobs,
        start=args.start,
        cluster=SlsCluster(nodes=args.nodes, nm_vcores=args.nm_vcores, nm_mem_mb=args.nm_memory_mb),
        straggler=args.straggler,
        target_load=args.load,
        time_scale=args.time_scale,
        max_tasks_per_phase=args.max_tasks,
        nm_heartbeat_ms=args.nm_heartbeat_ms,
        am_heartbeat_ms=args.am_heartbeat_ms,
        timeout_s=args.timeout_s,
        predict_mechanism=args.predict_mechanism,
        shim_conf=parse_shim_conf(args.shim_conf),
    )
    if args.combine is not None:
        summaries = [json.loads(Path(f).read_text()) for f in args.combine]
        seeds = [int(Path(f).parent.name.removeprefix("seed")) for f in args.combine]
        print(json.dumps(combine(summaries, seeds)))
        return 0
    result = run_bench(s, Path(args.work), list(range(args.first_seed, args.first_seed + args.seeds)))
    print(json.dumps(result))
    finished = result["jobs_finished"]  # a dict per scheduler, or one per seed
    counts = [n for d in (finished if isinstance(finished, list) else [finished]) for n in d.values()]
    return 0 if all(n == s.jobs for n in counts) else 1
