"""What cloning fewer tasks could buy on the cluster bench: flowtime against clone share, from the bench's
own draws (deploy/draws.py), for rules that see more than any scheduler can.

The bench's light mix gives every task's attempts their run times in advance (StragglerJob's seeded
draws). Here each job runs alone on an idle cluster (no contention, no waiting for containers), every
container starts in `startup_s`, and a task's clones are its attempts 1..c (drawn as the cluster draws
them). Three rules decide which tasks get clones, and when:

- `launch`: every task gets c clones with its original (what the bench's DollyMP does to a small job);
- `oracle`: only the tasks whose original draws more than t x base get c clones, at once (a rule that
  knows the original's run time when it starts, which none does);
- `first-step`: a task gets c clones when its original has not reported its first progress step by the
  time a copy at t x base would have (StragglerJob reads 20 records, so at t x base / 20 of its work,
  plus `report_lag_s` for the progress report to reach the AM) - the earliest signal the cluster gives.

A copy that loses is killed when its task's winner finishes, so its container-seconds run from its
launch to then; the clone share is the clones' container-seconds over all copies' (the bench's
`clone_extra_container_s_frac`). A job's flowtime is the AM's start-up, its slowest map and its reduce.

`python -m pyscheduler.deploy.clonebound --seeds 10` prints, per rule, the median over seeds of the mean
flowtime, of its ratio to `launch` with two clones (min-max), and of the clone share; then, per seed, the
fastest rule of each kind (1-3 clones, t in steps of 0.1) whose clone share is at most `--share-limit`.
`--startup-s` matches the bench's straggler-free run (`--floor`): a job's floor is its 60 s of work plus
three start-ups (AM, map, reduce).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pyscheduler.deploy import benchmix
from pyscheduler.deploy.draws import attempt_ms

RULES = ("launch", "oracle", "first-step")
STEPS = 20  # StragglerJob's records per task: its progress moves in steps of 1/20


@dataclass(frozen=True)
class Rule:
    kind: str  # one of RULES
    clones: int  # clones per cloned task (0..3)
    threshold: float = 1.0  # t: a task is cloned when its original's factor exceeds t (oracle, first-step)

    def __post_init__(self) -> None:
        if self.kind not in RULES:
            raise ValueError(f"rule kind must be one of {', '.join(RULES)}, got {self.kind!r}")
        if not 0 <= self.clones <= 3:
            raise ValueError(f"rule clones must be 0..3, got {self.clones}")
        if self.threshold < 1.0:
            raise ValueError(f"rule threshold must be at least 1 (the least factor), got {self.threshold}")

    def label(self) -> str:
        return f"{self.kind} c={self.clones}" + ("" if self.kind == "launch" else f" t={self.threshold:g}")


@dataclass(frozen=True)
class Setting:
    startup_s: float = 5.0  # every container's start-up (tasks and the AM)
    report_lag_s: float = 1.5  # first-step: a progress report's mean delay (half of Hadoop's 3 s interval)
    map_base_ms: int = benchmix.BASE_MS["light"]
    shape: float = benchmix.STRAGGLER_SHAPE
    cap: float = benchmix.STRAGGLER_CAP


@dataclass(frozen=True)
class TaskRun:
    end_s: float  # from the original's launch to its task's first finish
    container_s: float  # every copy's container-seconds
    clone_s: float  # the clones' part of it


def task_run(draws_s: Sequence[float], base_s: float, rule: Rule, setting: Setting) -> TaskRun:
    """One task under `rule`: `draws_s[0]` is its original's run time, `draws_s[1:]` its clones'."""
    s = setting.startup_s
    original = draws_s[0]
    if rule.kind == "launch":
        launch_at: float | None = 0.0
    elif original <= rule.threshold * base_s:
        launch_at = None  # never cloned: the original is no straggler by the rule's test
    elif rule.kind == "oracle":
        launch_at = 0.0
    else:  # first-step: the original's first step is late by the time a copy at t x base would have made it
        launch_at = s + rule.threshold * base_s / STEPS + setting.report_lag_s
    if launch_at is None or rule.clones == 0:
        return TaskRun(s + original, s + original, 0.0)
    clones = draws_s[1 : 1 + rule.clones]
    end = min(s + original, *(launch_at + s + d for d in clones))
    clone_s = rule.clones * max(end - launch_at, 0.0)
    return TaskRun(end, end + clone_s, clone_s)


@cache
def _draw_s(job: str, key: str, base_ms: int, shape: float, cap: float, seed: int) -> float:
    return attempt_ms(job, key, base_ms, shape, cap, seed) / 1000


@dataclass(frozen=True)
class MixRun:
    mean_flowtime_s: float
    clone_share: float


def mix_run(seed: int, rule: Rule, setting: Setting) -> MixRun:
    """The light mix at `seed` under `rule`, each job alone: mean job flowtime and clone share."""
    flows: list[float] = []
    total = clones = 0.0
    for job in benchmix.mix("light"):
        phases = (("m", job.maps, setting.map_base_ms), ("r", job.reduces, setting.map_base_ms // 2))
        flow = setting.startup_s
        for kind, n, base_ms in phases:
            slowest = 0.0
            for i in range(n):
                draws = [
                    _draw_s(job.name, f"{kind}{i}.{a}", base_ms, setting.shape, setting.cap, seed)
                    for a in range(1 + rule.clones)
                ]
                run = task_run(draws, base_ms / 1000, rule, setting)
                slowest = max(slowest, run.end_s)
                total += run.container_s
                clones += run.clone_s
            flow += slowest
        flows.append(flow)
    return MixRun(sum(flows) / len(flows), clones / total if total else 0.0)


def default_rules() -> list[Rule]:
    rules = [Rule("launch", 0), Rule("launch", 1), Rule("launch", 2)]
    for kind in ("oracle", "first-step"):
        rules += [Rule(kind, c, t) for c in (1, 2) for t in (1.5, 2.0, 3.0, 4.0)]
    return rules


def fastest_within(seed: int, kind: str, share_limit: float, setting: Setting) -> tuple[Rule, MixRun] | None:
    """The fastest rule of `kind` (1-3 clones, threshold 1.1-8.0 in steps of 0.1) at `seed` whose clone
    share is at most `share_limit`; None when none is."""
    best: tuple[Rule, MixRun] | None = None
    for clones in (1, 2, 3):
        for tenths in range(11, 81):
            rule = Rule(kind, clones, tenths / 10)
            run = mix_run(seed, rule, setting)
            if run.clone_share <= share_limit and (
                best is None or run.mean_flowtime_s < best[1].mean_flowtime_s
            ):
                best = (rule, run)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="clonebound", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    p.add_argument("--startup-s", type=float, default=Setting.startup_s, help="container start-up, s")
    p.add_argument("--report-lag-s", type=float, default=Setting.report_lag_s, help="first-step's lag, s")
    p.add_argument("--share-limit", type=float, default=0.3, help="clone share for the per-seed bests")
    args = p.parse_args(argv)
    if not 1 <= args.seeds <= 1000:
        p.error(f"--seeds must be 1..1000, got {args.seeds}")
    if args.startup_s < 0 or args.report_lag_s < 0:
        p.error("--startup-s and --report-lag-s must be at least 0")
    if not 0 <= args.share_limit <= 1:
        p.error(f"--share-limit must be 0..1, got {args.share_limit}")
    setting = Setting(startup_s=args.startup_s, report_lag_s=args.report_lag_s)
    seeds = range(1, args.seeds + 1)
    reference = {s: mix_run(s, Rule("launch", 2), setting).mean_flowtime_s for s in seeds}
    print(f"light mix, seeds 1..{args.seeds}, start-up {setting.startup_s:g} s; median over seeds [min, max]")
    print(f"{'rule':<24}{'flowtime s':>11}{'ratio to launch c=2':>26}{'clone share':>13}")
    for rule in default_rules():
        runs = {s: mix_run(s, rule, setting) for s in seeds}
        ratios = [runs[s].mean_flowtime_s / reference[s] for s in seeds]
        flow = statistics.median(r.mean_flowtime_s for r in runs.values())
        share = statistics.median(r.clone_share for r in runs.values())
        band = f"{statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
        print(f"{rule.label():<24}{flow:>11.1f}{band:>26}{share:>13.3f}")
    print(f"fastest at clone share <= {args.share_limit:g}, per seed (flowtime s, share; launch c=2 s):")
    for s in seeds:
        parts = []
        for kind in ("oracle", "first-step"):
            best = fastest_within(s, kind, args.share_limit, setting)
            parts.append(
                f"{best[0].label()} {best[1].mean_flowtime_s:.1f} s, {best[1].clone_share:.3f}"
                if best
                else "none"
            )
        print(f"  seed {s}: {'; '.join(parts)}; launch c=2 {reference[s]:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
