"""A held-out synthetic workload: multi-phase DAG jobs with heavy-tailed sizes and straggling tasks.

Issue 25 asks for a comparison "on synthetic workloads you generate but did not tune on". `dag_jobs` draws
one in the native format (design.md, "Formats the project owns"), seeded, so every policy and every rerun sees
the same jobs. Each parameter of `DagParams` says where its value comes from:

* arrivals: a Poisson process of rate `rate` = 0.1 jobs/s (offered load about 0.8 on clusters/hetero.json
  under `--straggler empirical`, 1.9 under pareto:alpha=1.5,cap=20). `dollymp simulate --load X` rescales
  the arrival times to offered load X, so the rate only sets the default spacing;
* job size K (all tasks of the job) is a two-part mixture fitted to FB-2010 as the SWIM loader derives it
  (84.1% of jobs have <= 10 tasks, 26% one task, mean 51.5; of the jobs above 10 tasks 68% exceed 50, 44%
  exceed 150, 20% exceed 500, 10% exceed 1000; at most 2000). Dolly (Sec. 2.2, Table 3) reports 82% of
  Facebook jobs at <= 10 tasks. The Google 2011 shards in ../shared/traces have smaller jobs still (97.6%
  <= 10, at most 303 tasks) but span a short window, so the tail is fitted to FB-2010:
  - with probability `small_share` = 0.84, K ~ Zipf(`small_zipf` = 1) on 1..10 (P(K = 1) = 0.29 overall);
  - otherwise K ~ bounded Pareto(`large_alpha` = 0.1) on [11, `max_tasks` = 2000], floored. A tail index
    near 0 (almost log-uniform) gives 0.66, 0.43, 0.22, 0.10 for the four FB-2010 tail shares above;
    alpha 0.3 would give 0.54, 0.31, 0.14, 0.06. Mean K is about 55;
* job shape (`SHAPES`, weights `shape_weights`): a DAG of 1-5 phases -- map only, map->reduce, a 3-phase
  chain, and joins of two parallel input branches (map, map -> join; map, map -> join -> reduce; map ->
  filter, map -> join -> reduce). FB-2010 has only map and map->reduce jobs (34% / 66%); Alibaba 2018's
  batch DAGs run to 5+ phases with joins. The weights (25/30/10/10/15/10%) are chosen, not fitted. A job
  gets a shape of at most K phases, so 1- and 2-task jobs are chains and about 17% of all jobs (35% of
  those of >= 5 tasks) have a join;
* tasks per phase: one each, the other K - m split multinomially with weight 1 per input (root) phase and
  `downstream_weight` = 0.25 per downstream phase (reducers and joins read the maps' output and run fewer
  tasks, as FB-2010's reduces, derived from shuffle bytes, are fewer than its maps);
* demands per phase: cpu in {1, 2, 3, 4} vcores with probabilities `cpu_weights` (0.4, 0.3, 0.2, 0.1),
  memory uniform in 1..8 GB (`mem_gb`), drawn independently so that phases are CPU- or memory-dominant
  alike (the multi-resource mix that Tetris and DollyMP pack);
* task time of a phase: its typical (median) time is lognormal with median `phase_median_s` = 20 s and
  log-sd `phase_sigma` = 1.0 (5% of phases under 4 s, 5% above 100 s). Tasks that do not straggle take
  that time x lognormal(0, s_p) with the phase's own spread s_p ~ U(`body_sigma`) = U(0.05, 0.3);
* stragglers: each task straggles with the phase's probability q_p ~ U(`straggler_share`) = U(0.10, 0.35)
  and then runs x ~ bounded Pareto(`straggler_alpha` = 1) on `straggler_slow` = [2, 20] slower (median
  3.6x, mean 5.1x, 11% of stragglers above 10x). DollyMP Sec. 6.3 on the Google traces: "the stragglers
  could be 20x slow as the normal tasks" and "70% of job phases contain a fraction of more than 15% task
  stragglers"; Dolly Sec. 2.1: small jobs' stragglers run 8x slower than the median task on average.
  Counted as tasks above 2x their phase's median, about 20% of tasks straggle and 70% of the phases of
  >= 10 tasks have more than 15% stragglers. The recorded `durations` carry these, so `--straggler
  empirical` (a clone takes the time of a random task of its phase) has stragglers to draw; `mean` and
  `sd` are the durations' mean and population sd, as the Google and Alibaba loaders set them;
* no shuffle data (`read_mb` 0) and no recurring-job names: every job is new to the estimator.

`python -m pyscheduler.sim.synthetic_dag --out FILE --jobs N --seed S` writes the JSONL; `dollymp simulate
--format synthetic --workload dag:jobs=N` generates it in memory (pyscheduler/sim/synthetic.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from pyscheduler.sim.workload import JobSpec, PhaseSpec, job_to_json

MIN_DURATION_S = 0.5  # the Google loader's floor on a task's run time

# Phase graphs: (phase id, parent ids) in topological order.
SHAPES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "map": (("map", ()),),
    "map-reduce": (("map", ()), ("reduce", ("map",))),
    "chain3": (("map", ()), ("mid", ("map",)), ("reduce", ("mid",))),
    "join3": (("map_a", ()), ("map_b", ()), ("join", ("map_a", "map_b"))),
    "join4": (("map_a", ()), ("map_b", ()), ("join", ("map_a", "map_b")), ("reduce", ("join",))),
    "join5": (
        ("map_a", ()),
        ("filter_a", ("map_a",)),
        ("map_b", ()),
        ("join", ("filter_a", "map_b")),
        ("reduce", ("join",)),
    ),
}


@dataclass(frozen=True, slots=True)
class DagParams:
    """The generator's knobs (module docstring: value and source of each)."""

    jobs: int = 1000
    rate: float = 0.1
    small_share: float = 0.84
    small_zipf: float = 1.0
    large_alpha: float = 0.1
    max_tasks: int = 2000
    shape_weights: tuple[float, ...] = (0.25, 0.30, 0.10, 0.10, 0.15, 0.10)
    downstream_weight: float = 0.25
    cpu_weights: tuple[float, ...] = (0.4, 0.3, 0.2, 0.1)
    mem_gb: tuple[int, int] = (1, 8)
    phase_median_s: float = 20.0
    phase_sigma: float = 1.0
    body_sigma: tuple[float, float] = (0.05, 0.3)
    straggler_share: tuple[float, float] = (0.10, 0.35)
    straggler_slow: tuple[float, float] = (2.0, 20.0)
    straggler_alpha: float = 1.0

    def __post_init__(self) -> None:
        if self.jobs < 1 or self.rate <= 0 or self.max_tasks < 11:
            raise ValueError("synthetic dag: jobs >= 1, rate > 0 and max_tasks >= 11 required")
        if len(self.shape_weights) != len(SHAPES) or len(self.cpu_weights) < 1:
            raise ValueError(f"synthetic dag: shape_weights needs {len(SHAPES)} weights")
        if not 0.0 <= self.small_share <= 1.0:
            raise ValueError("synthetic dag: small_share must be in [0, 1]")


def _bounded_pareto(rng: np.random.Generator, alpha: float, lo: float, hi: float) -> float:
    """Inverse CDF of the Pareto(lo, alpha) truncated to [lo, hi]."""
    h = (lo / hi) ** alpha
    return float(lo * (1.0 - rng.random() * (1.0 - h)) ** (-1.0 / alpha))


def job_size(rng: np.random.Generator, p: DagParams) -> int:
    """K: Zipf on 1..10 with probability small_share, else bounded Pareto on [11, max_tasks]."""
    if rng.random() < p.small_share:
        ks = np.arange(1, 11)
        w = ks ** (-p.small_zipf)
        return int(rng.choice(ks, p=w / w.sum()))
    return min(p.max_tasks, int(_bounded_pareto(rng, p.large_alpha, 11.0, p.max_tasks + 1.0)))


def _split(
    rng: np.random.Generator, k: int, shape: Sequence[tuple[str, tuple[str, ...]]], dw: float
) -> list[int]:
    w = np.array([1.0 if not parents else dw for _, parents in shape])
    extra = rng.multinomial(k - len(shape), w / w.sum())
    return [1 + int(x) for x in extra]


def _durations(rng: np.random.Generator, n: int, p: DagParams) -> list[float]:
    typical = p.phase_median_s * float(np.exp(rng.normal(0.0, p.phase_sigma)))
    spread = float(rng.uniform(*p.body_sigma))
    share = float(rng.uniform(*p.straggler_share))
    out = typical * np.exp(rng.normal(0.0, spread, n))
    for i in np.flatnonzero(rng.random(n) < share):
        out[i] *= _bounded_pareto(rng, p.straggler_alpha, *p.straggler_slow)
    return [max(MIN_DURATION_S, round(float(x), 3)) for x in out]


def dag_jobs(params: DagParams | None = None, seed: int = 1) -> list[JobSpec]:
    """The workload of `params` (default `DagParams()`) for `seed`: the same jobs for the same seed."""
    p = params or DagParams()
    rng = np.random.default_rng(seed)
    names = list(SHAPES)
    sw = np.array(p.shape_weights, dtype=float)
    cw = np.array(p.cpu_weights, dtype=float)
    arrivals = np.cumsum(rng.exponential(1.0 / p.rate, p.jobs))
    arrivals -= arrivals[0]
    out: list[JobSpec] = []
    for i in range(p.jobs):
        k = job_size(rng, p)
        fit = np.array([len(SHAPES[n]) <= k for n in names]) * sw
        shape = SHAPES[names[int(rng.choice(len(names), p=fit / fit.sum()))]]
        phases: list[PhaseSpec] = []
        for (pid, parents), n in zip(shape, _split(rng, k, shape, p.downstream_weight), strict=True):
            cpu = 1 + int(rng.choice(len(cw), p=cw / cw.sum()))
            mem_gb = int(rng.integers(p.mem_gb[0], p.mem_gb[1] + 1))
            durs = _durations(rng, n, p)
            arr = np.array(durs)
            phases.append(
                PhaseSpec(
                    pid,
                    n,
                    float(cpu),
                    mem_gb * 1024.0,
                    round(float(arr.mean()), 6),  # as job_to_json writes them: file == memory
                    round(float(arr.std()), 6),
                    parents,
                    durations=tuple(durs),
                )
            )
        out.append(JobSpec(f"dag{i}", round(float(arrivals[i]), 3), tuple(phases)))
    return out


def parse_params(text: str) -> DagParams:
    """`jobs=2000,rate=0.2,large_alpha=0.2`: scalar fields of `DagParams` (pairs not settable here)."""
    scalars = {f.name: f.type for f in fields(DagParams) if f.type in ("int", "float")}
    values: dict[str, int | float] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or key not in scalars:
            raise ValueError(f"synthetic dag: unknown parameter {item!r} (one of {', '.join(scalars)})")
        try:
            values[key] = int(val) if scalars[key] == "int" else float(val)
        except ValueError:
            kind = "an integer" if scalars[key] == "int" else "a number"
            raise ValueError(f"synthetic dag: {key!r} must be {kind}, got {val!r}") from None
    return DagParams(**values)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m pyscheduler.sim.synthetic_dag", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--out", required=True, help="JSONL file to write (native format)")
    ap.add_argument("--jobs", type=int, default=DagParams().jobs)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--params", default="", help="more DagParams, e.g. rate=0.2,large_alpha=0.2")
    args = ap.parse_args(argv)
    params = parse_params(",".join(filter(None, (f"jobs={args.jobs}", args.params))))
    jobs = dag_jobs(params, args.seed)
    Path(args.out).write_text("".join(json.dumps(job_to_json(j)) + "\n" for j in jobs))
    tasks = sum(j.task_count for j in jobs)
    print(f"wrote {len(jobs)} jobs ({tasks} tasks) to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
