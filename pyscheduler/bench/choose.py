"""`dollymp bench choose`: the declared procedure that picks the production configuration (the `default`
policy, pyscheduler/policies/production.py) from measured runs of the decision service's own round.

The procedure, in full:
1. Candidates: the paper's DollyMP (`dollymp`) and the extended configurations of CANDIDATES, each a policy
   as `dollymp simulate --policies` takes it; references: Tetris (flowtime), DollyMP0 (resources: the same
   round without clones) and Capacity+LATE.
2. Scenarios: the tuning traces (the FB-2010 day's first `--jobs` jobs on fb3000.json's node types, the
   Alibaba sample's every 60th job, `--jobs` of them, on alibaba200.json's) and a held-out workload
   (synthetic DAG jobs on clusters/hetero.json, never used to choose), each under both straggler models (the
   empirical one and the Pareto sensitivity model of DollyMP Sec. 6.3), at each utilisation of `--loads`:
   the cluster's node counts are scaled (DollyMP Sec. 6.3.1: the workload fixed, the cores varied) until
   Tetris's measured time-weighted utilisation of the bottleneck resource over the arrivals, stragglers
   included, is within UTIL_TOLERANCE of it (`at_utilisation`, on the policy-only engine, which measures it
   alike and fast; every table prints the utilisation the service's round then measured), seeds
   1..`--seeds`. Every run goes through the service's round (`dollymp simulate --mechanism service`,
   sim/live/fromtrace.py): what `dollymp serve` decides.
3. Per candidate and scenario: the median over seeds of its average flowtime over Tetris's (same seed,
   same draws) and of its resource-seconds over DollyMP0's; also its jobs of 1-10 tasks over Tetris's.
4. The front: candidates no other candidate beats on both the worst (over tuning scenarios) flowtime
   ratio and the worst resource ratio. The choice is the front's point with the best worst-case flowtime
   ratio to Tetris (ties: fewer resources) - `choose`, a pure function of the table.
5. The held-out scenarios are printed beside it, as the check nobody tuned on; the choice is not changed
   by them.
Prints one row per candidate and scenario (median [min, max] over seeds) with the measured utilisation
per resource, the front, the choice, whether it is the configuration `default` runs now, and one JSON
line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pyscheduler.policies.production import PRODUCTION
from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.live.compare import Spread
from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.runner import apply_load, compare, scale_cluster, scale_to_load
from pyscheduler.sim.straggler import parse_straggler
from pyscheduler.sim.workload import ClusterSpec, JobSpec, load_cluster

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT.parent / "shared" / "traces"
CLUSTERS = ROOT / "pyscheduler" / "sim" / "clusters"

FLOW_REFERENCE = "tetris"
RESOURCE_REFERENCE = "dollymp0"
CAPACITY = "capacity"
PAPER = "dollymp"
# The candidates besides the paper's DollyMP: the extended configurations the ablation
# (pyscheduler/sim/ablation.py) measures, and the one the live mechanism was tuned with.
CANDIDATES: tuple[str, ...] = (
    PAPER,
    "dollymp-ext",
    "dollymp-ext(order=volume)",
    "dollymp-ext(order=volume;late_first_worth=0.1)",
    "dollymp-ext(clone_rule=none;sigma_factor=1;small_job_clones=7;tail_tasks=1)",
)
MODELS: tuple[str, ...] = ("empirical", "pareto:alpha=1.5,cap=20")
UTIL_TOLERANCE = 0.03
CALIBRATION_STEPS = 8


@dataclass(frozen=True)
class Workload:
    name: str
    path: str  # a trace file or folder under ../shared/traces, or a synthetic generator
    fmt: str
    cluster: str  # under pyscheduler/sim/clusters; its node counts are rescaled to the offered load
    heldout: bool
    every: int = 1  # every N-th job by arrival: the Alibaba sample's ~4 jobs/s spread over minutes


WORKLOADS: tuple[Workload, ...] = (
    Workload("fb2010", "swim_facebook/FB-2010_samples_24_times_1hr_0.tsv", "swim", "fb3000.json", False),
    Workload(
        "alibaba",
        "alibaba_v2018/spar_sample_instances_arrival_lt_1200s.csv.gz",
        "alibaba",
        "alibaba200.json",
        False,
        60,
    ),
    Workload("dag", "dag:jobs={jobs}", "synthetic", "hetero.json", True),
)


@dataclass(frozen=True)
class Cell:
    """One run: a workload, a straggler model, an offered load and a seed, every policy side by side."""

    workload: Workload
    model: str
    load: float
    seed: int
    jobs: int
    policies: tuple[str, ...]

    @property
    def scenario(self) -> str:
        return f"{self.workload.name} {self.model} load {self.load:g}"


def run_cell(cell: Cell) -> dict[str, Any]:
    """The cell's runs through the service's round: per policy its average flowtime, that of its jobs of
    1-10 tasks, resource-seconds, clones and measured utilisation per resource."""
    wl = cell.workload
    if wl.fmt == "synthetic":
        jobs, _ = load_workload(wl.path.format(jobs=cell.jobs), wl.fmt, seed=cell.seed)
    else:
        jobs, _ = load_workload(TRACES / wl.path, wl.fmt, limit=cell.jobs, every=wl.every)
    straggler = parse_straggler(cell.model)
    config = SimConfig(straggler=straggler, seed=cell.seed, tick=1.0)
    jobs, cluster = at_utilisation(jobs, load_cluster(CLUSTERS / wl.cluster), cell.load, config)
    t0 = time.perf_counter()
    cmp = compare(jobs, cluster, list(cell.policies), config, mechanism="service")
    out: dict[str, Any] = {"wall_s": time.perf_counter() - t0, "nodes": len(cluster.nodes), "policies": {}}
    for p in cell.policies:
        m = cmp.results[p]
        small = m.by_bin().get("1-10", {}).get("avg_flowtime", float("nan"))
        out["policies"][p] = {
            "avg": m.avg_flowtime,
            "small": small,
            "resource_s": m.resource_s,
            "clones": m.clones_launched,
            "unfinished": m.jobs_unfinished,
            "utilisation": m.extra.get("utilisation_by_resource", {"dominant": m.utilisation}),
        }
    return out


def code_version() -> str | None:
    """The git tree of pyscheduler/ when the checkout has no uncommitted change under it, else None."""
    try:
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "pyscheduler"], cwd=ROOT, capture_output=True, text=True
        )
        tree = subprocess.run(
            ["git", "rev-parse", "HEAD:pyscheduler"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return None
    if dirty.returncode or tree.returncode or dirty.stdout.strip():
        return None
    return tree.stdout.strip() or None


def cell_key(cell: Cell, version: str) -> str:
    """The cache file name of `cell`'s result on the code at `version`."""
    text = json.dumps([asdict(cell), version], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def run_cells(cells: Sequence[Cell], workers: int, cache: Path | None) -> list[dict[str, Any]]:
    """Every cell's result in order: from `cache` where the same cell ran on the same code, the others run
    (`workers` at once) and, with a cache, each kept there as it finishes."""
    version = code_version() if cache is not None else None
    if cache is not None and version is None:
        print("--cache: pyscheduler/ has uncommitted changes (or no git): nothing cached")
    results: dict[int, dict[str, Any]] = {}
    todo: list[int] = []
    for i, cell in enumerate(cells):
        hit = cache / f"{cell_key(cell, version)}.json" if cache is not None and version else None
        if hit is not None and hit.is_file():
            results[i] = json.loads(hit.read_text())
        else:
            todo.append(i)
    if len(todo) < len(cells):
        print(f"{len(cells) - len(todo)} cells from the cache, {len(todo)} to run")
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_cell, cells[i]): i for i in todo}
        for fut in as_completed(futures):
            i = futures[fut]
            results[i] = fut.result()
            c = cells[i]
            print(f"  ran {c.scenario} seed {c.seed} in {results[i]['wall_s']:.0f} s", flush=True)
            if cache is not None and version:
                cache.mkdir(parents=True, exist_ok=True)
                (cache / f"{cell_key(c, version)}.json").write_text(json.dumps(results[i]))
    return [results[i] for i in range(len(cells))]


def at_utilisation(
    jobs: Sequence[JobSpec], cluster: ClusterSpec, target: float, config: SimConfig
) -> tuple[list[JobSpec], ClusterSpec]:
    """`jobs` and `cluster` scaled so that Tetris's measured bottleneck utilisation is within
    UTIL_TOLERANCE of `target` (on the policy-only engine; at most CALIBRATION_STEPS tries, the nearest
    kept). The node counts are scaled, starting from the offered load's estimate (sim/runner.py
    apply_load); once every node type is down to one node, the arrivals are compressed instead."""
    _, first, _ = apply_load(jobs, cluster, target, config.straggler.mean_slowdown, "cluster")
    factor, squeeze = len(first.nodes) / len(cluster.nodes), 1.0
    floor = len(set(cluster.nodes))  # one node per type
    best: tuple[float, list[JobSpec], ClusterSpec] | None = None
    for _ in range(CALIBRATION_STEPS):
        trial, arrivals = scale_cluster(cluster, factor), scale_to_load(jobs, squeeze)
        run = compare(arrivals, trial, [FLOW_REFERENCE], config, mechanism="core")
        util = run.results[FLOW_REFERENCE].utilisation
        if best is None or abs(util - target) < best[0]:
            best = (abs(util - target), arrivals, trial)
        if abs(util - target) <= UTIL_TOLERANCE or not util > 0:
            break
        # the same work on fewer nodes or in less time: utilisation rises about inversely
        if len(trial.nodes) <= floor and util < target:
            squeeze *= util / target
        else:
            factor *= util / target
    assert best is not None
    return best[1], best[2]


@dataclass(frozen=True)
class Ratios:
    """One candidate in one scenario, over seeds."""

    flow: Spread  # average flowtime / Tetris's
    small: Spread  # jobs of 1-10 tasks: average flowtime / Tetris's
    capacity: Spread  # average flowtime / Capacity+LATE's
    resources: Spread  # resource-seconds / DollyMP0's


def ratios(runs: Iterable[dict[str, Any]], candidate: str) -> Ratios:
    """`candidate`'s ratios over the seeds of one scenario (each run has every reference)."""
    flow, small, cap, res = [], [], [], []
    for run in runs:
        c, p = run["policies"][candidate], run["policies"]
        flow.append(c["avg"] / p[FLOW_REFERENCE]["avg"])
        if c["small"] == c["small"] and p[FLOW_REFERENCE]["small"] == p[FLOW_REFERENCE]["small"]:
            small.append(c["small"] / p[FLOW_REFERENCE]["small"])
        cap.append(c["avg"] / p[CAPACITY]["avg"])
        res.append(c["resource_s"] / p[RESOURCE_REFERENCE]["resource_s"])
    return Ratios(Spread.of(flow), Spread.of(small or [float("nan")]), Spread.of(cap), Spread.of(res))


@dataclass(frozen=True)
class Choice:
    chosen: str
    front: tuple[str, ...]
    worst_flow: dict[str, float]  # candidate -> worst median flowtime ratio to Tetris over tuning scenarios
    worst_resources: dict[str, float]  # candidate -> worst median resource ratio to DollyMP0


def choose(table: dict[str, dict[str, Ratios]], tuning: Iterable[str]) -> Choice:
    """Step 4 of the module docstring: `table` is candidate -> scenario -> ratios; `tuning` the scenarios
    the choice is made on (the held-out ones are not among them)."""
    scenarios = list(tuning)
    if not scenarios or not table:
        raise ValueError("choose needs at least one candidate and one tuning scenario")
    flow = {c: max(table[c][s].flow.median for s in scenarios) for c in table}
    res = {c: max(table[c][s].resources.median for s in scenarios) for c in table}

    def beaten(c: str) -> bool:
        return any(
            flow[o] <= flow[c] and res[o] <= res[c] and (flow[o] < flow[c] or res[o] < res[c]) for o in table
        )

    front = tuple(sorted((c for c in table if not beaten(c)), key=lambda c: (flow[c], res[c])))
    return Choice(front[0], front, flow, res)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=20, help="jobs per workload (the first N by arrival)")
    p.add_argument("--seeds", type=int, default=3, help="seeds 1..N")
    p.add_argument("--loads", default="0.8", help="offered loads, comma-separated (default 0.8)")
    p.add_argument("--workers", type=int, default=1, help="cells run at once, each in its own process")
    p.add_argument("--candidates", default=",".join(CANDIDATES), help="policies to choose among")
    p.add_argument("--json", dest="json_out", default=None, help="also write the JSON here")
    p.add_argument("--plot", default=None, help="draw the front (PNG) here")
    p.add_argument(
        "--cache",
        default=None,
        help="a folder: each finished cell's result is kept there, keyed by the cell and the code "
        "(pyscheduler/'s git tree, or no caching outside a checkout without changes), and read back by a "
        "later run of the same cell on the same code",
    )
    p.add_argument(
        "--from-json", default=None, help="run nothing: draw --plot from this earlier run's JSON line"
    )


def _policies(candidates: Sequence[str]) -> tuple[str, ...]:
    refs = (FLOW_REFERENCE, RESOURCE_REFERENCE, CAPACITY)
    return tuple(dict.fromkeys([*candidates, *refs]))


def front_plot(out: dict[str, Any], path: Path) -> None:
    """Each candidate's worst-case flowtime ratio to Tetris against its worst-case resources over
    DollyMP0's (the tuning scenarios), the front joined, the choice marked; each tuning scenario's own
    point small beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    tuning = {s: v for s, v in out["scenarios"].items() if not v["heldout"]}
    for k, c in enumerate(out["worst_flow"]):
        colour = f"C{k % 10}"
        xs = [v["rows"][c]["resources"]["median"] for v in tuning.values()]
        ys = [v["rows"][c]["flow"]["median"] for v in tuning.values()]
        ax.scatter(xs, ys, s=12, color=colour, alpha=0.45)
        mark = "*" if c == out["chosen"] else "o"
        ax.scatter(
            [out["worst_resources"][c]], [out["worst_flow"][c]], s=90, marker=mark, color=colour, label=c
        )
    front = sorted(out["front"], key=lambda c: out["worst_resources"][c])
    ax.plot([out["worst_resources"][c] for c in front], [out["worst_flow"][c] for c in front], "k--", lw=0.8)
    ax.axhline(1.0, color="grey", lw=0.6)
    ax.set_xlabel("resource-seconds / DollyMP0's (worst tuning scenario; small: each scenario)")
    ax.set_ylabel("average flowtime / Tetris's")
    ax.set_title(f"candidates through the service's round, median over {out['seeds']} seeds")
    ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    if args.from_json is not None:
        if args.plot is None:
            raise SystemExit("--from-json draws a plot: give --plot too")
        front_plot(json.loads(Path(args.from_json).read_text()), Path(args.plot))
        print(f"wrote {args.plot}")
        return 0
    candidates = [c.strip() for c in args.candidates.split(",") if c.strip()]
    loads = [float(x) for x in args.loads.split(",") if x.strip()]
    if args.seeds < 1 or args.jobs < 1 or args.workers < 1 or not candidates or not loads:
        raise SystemExit("--seeds, --jobs and --workers must be >= 1, --candidates and --loads non-empty")
    cells = [
        Cell(wl, model, load, seed, args.jobs, _policies(candidates))
        for wl in WORKLOADS
        for model in MODELS
        for load in loads
        for seed in range(1, args.seeds + 1)
    ]
    print(
        f"{len(cells)} cells ({len(WORKLOADS)} workloads x {len(MODELS)} models x {len(loads)} loads x "
        f"{args.seeds} seeds), {len(cells[0].policies)} policies each, through the service's round"
    )
    t0 = time.perf_counter()
    results = run_cells(cells, args.workers, Path(args.cache) if args.cache else None)
    by_scenario: dict[str, list[dict[str, Any]]] = {}
    heldout: set[str] = set()
    for cell, res in zip(cells, results, strict=True):
        for p, r in res["policies"].items():
            if r["unfinished"]:
                raise SystemExit(f"{cell.scenario} seed {cell.seed} {p}: {r['unfinished']} jobs unfinished")
        by_scenario.setdefault(cell.scenario, []).append(res)
        if cell.workload.heldout:
            heldout.add(cell.scenario)
    table = {c: {s: ratios(runs, c) for s, runs in by_scenario.items()} for c in candidates}
    tuning = [s for s in by_scenario if s not in heldout]
    choice = choose(table, tuning)
    out: dict[str, Any] = {"wall_s": time.perf_counter() - t0, "seeds": args.seeds, "jobs": args.jobs}
    out["scenarios"] = {}
    for s, runs in by_scenario.items():
        util = {
            p: Spread.of([r["policies"][p]["utilisation"].get("dominant", float("nan")) for r in runs])
            for p in runs[0]["policies"]
        }
        per_res = {
            k: Spread.of([r["policies"][FLOW_REFERENCE]["utilisation"].get(k, float("nan")) for r in runs])
            for k in runs[0]["policies"][FLOW_REFERENCE]["utilisation"]
        }
        print(
            f"\n{s}{' (held out)' if s in heldout else ''}: {runs[0]['nodes']} nodes; Tetris's measured "
            "utilisation " + ", ".join(f"{k} {v.text('.2f')}" for k, v in per_res.items())
        )
        print(
            f"  {'policy':<72}{'/ tetris':>22}{'1-10 tasks':>22}{'/ capacity':>22}{'res / dollymp0':>22}"
            f"{'util':>20}"
        )
        rows: dict[str, Any] = {}
        for c in candidates:
            r = table[c][s]
            print(
                f"  {c:<72}{r.flow.text('.3f'):>22}{r.small.text('.3f'):>22}{r.capacity.text('.3f'):>22}"
                f"{r.resources.text('.3f'):>22}{util[c].text('.2f'):>20}"
            )
            rows[c] = {k: asdict(getattr(r, k)) for k in ("flow", "small", "capacity", "resources")}
            rows[c]["utilisation"] = asdict(util[c])
        out["scenarios"][s] = {
            "heldout": s in heldout,
            "rows": rows,
            "tetris_utilisation": {k: asdict(v) for k, v in per_res.items()},
        }
    print("\nworst over the tuning scenarios (median over seeds): flowtime / tetris, resources / dollymp0")
    for c in candidates:
        mark = "front" if c in choice.front else ""
        print(f"  {c:<72}{choice.worst_flow[c]:>10.3f}{choice.worst_resources[c]:>10.3f}  {mark}")
    now = PRODUCTION.spec
    print(
        f"chosen: {choice.chosen}; `default` runs {now}"
        + (" (the same)" if now == choice.chosen else " (differs: update policies/production.py)")
    )
    out.update(
        chosen=choice.chosen,
        front=list(choice.front),
        default=now,
        worst_flow=choice.worst_flow,
        worst_resources=choice.worst_resources,
    )
    line = json.dumps(out, sort_keys=True)
    if args.json_out:
        Path(args.json_out).write_text(line + "\n")
    if args.plot:
        front_plot(out, Path(args.plot))
    print(line)
    return 0
