"""The ablation of DollyMP's extensions (issue 25): the paper's DollyMP2, each extension added alone, all
together, over seeds, traces and both straggler models. An extension earns a place in the default only
where it beats the paper's DollyMP2 on the median over seeds on every trace and model
(`earned`); the report prints the table and that verdict."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.runner import Comparison

PAPER = "dollymp2"
NO_CLONES = "dollymp0"
FORMER = "dollymp-ext(clone_rule=none;sigma_factor=1)"  # what `dollymp` was before it became the paper
# late copies ahead of originals only for phases whose copies are expected to bring the phase's end forward
# by at least w x the slot-seconds they hold (policies/late.py `phase_gain`)
WORTH_ALONE = "dollymp(late=true;late_first=true;late_first_worth=0.1)"
WORTH_EXT = "dollymp-ext(order=volume;late_first_worth=0.1)"
# (row label, policy as `dollymp simulate --policies` takes it); the first row is the paper's DollyMP2
ROWS: list[tuple[str, str]] = [
    ("paper DollyMP2", PAPER),
    ("+ late copies, lag 10 s", "dollymp(late=true)"),
    ("+ late copies, lag 60 s (Capacity+LATE's)", "dollymp(late=true;progress_after=60)"),
    ("+ late copies ahead of originals", "dollymp(late=true;late_first=true)"),
    ("+ late copies ahead of originals where worth it (w = 0.1)", WORTH_ALONE),
    ("+ late copies and kill-and-restart", "dollymp(late=true;replace=true)"),
    ("+ launch clones for small jobs", "dollymp(small_job_clones=10)"),
    ("+ phase-tail clones", "dollymp(phase_tail=true)"),
    ("+ smallest volume first within a class", "dollymp(order=size_class_volume)"),
    ("+ smallest volume first, one class (no admission by e)", "dollymp(order=volume)"),
    ("dollymp-ext (every extension but the orders)", "dollymp-ext"),
    ("dollymp-ext, smallest volume first within a class", "dollymp-ext(order=size_class_volume)"),
    ("dollymp-ext, smallest volume first, one class", "dollymp-ext(order=volume)"),
    ("dollymp-ext, smallest volume first, one class, late copies first where worth it", WORTH_EXT),
    ("all, no Corollary 4.1 clones, r = 1 (the former default)", FORMER),
    ("DollyMP0 (no clones)", NO_CLONES),
    ("Tetris", "tetris"),
    ("Capacity+LATE (lag 60 s)", "capacity"),
    ("Capacity+LATE, lag 10 s", "capacity(min_runtime=10)"),
]
BASELINES = ["drf", "carbyne"]  # in the runs and the headline tables, not ablation rows
POLICIES = [p for _, p in ROWS] + BASELINES
HEADLINE_ROWS = [
    "capacity",
    "capacity(min_runtime=10)",
    "drf",
    "tetris",
    "carbyne",
    NO_CLONES,
    PAPER,
    "dollymp(order=volume)",
    "dollymp-ext",
    "dollymp-ext(order=size_class_volume)",
    "dollymp-ext(order=volume)",
]
# the rows an extension could be made default from: every row after the paper's, the former default included
EXTENSIONS = ROWS[1 : [p for _, p in ROWS].index(FORMER) + 1]


def group_of(label: str) -> str:
    """'FB-2010 empirical seed3' -> 'FB-2010 empirical'."""
    return label.rsplit(" seed", 1)[0]


def stats(values: list[float]) -> tuple[float, float, float]:
    arr = np.array([v for v in values if math.isfinite(v)])
    if not arr.size:
        return math.nan, math.nan, math.nan
    return float(np.median(arr)), float(arr.min()), float(arr.max())


def ratios(res: dict[str, Comparison]) -> dict[str, dict[str, list[float]]]:
    """Per group, per policy: avg flowtime / the paper DollyMP2's, one value per seed."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for label, c in res.items():
        base = c.results[PAPER].avg_flowtime
        for name, m in c.results.items():
            out[group_of(label)][name].append(m.avg_flowtime / base)
    return out


def extra(res: dict[str, Comparison]) -> dict[str, dict[str, list[float]]]:
    """Per group, per policy: resources over DollyMP0's, minus 1, one value per seed."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for label, c in res.items():
        ref = c.results.get(NO_CLONES)
        for name, m in c.results.items():
            out[group_of(label)][name].append(m.extra_vs(ref) if ref is not None else math.nan)
    return out


def earned(res: dict[str, Comparison]) -> dict[str, bool]:
    """Per extension policy: in every group (trace and straggler model) it beats the paper's DollyMP2 on
    the median over seeds by more than the spread of its seeds (1 - median > max - min). Ratios are paired
    per seed (same draws), so their spread is the spread that counts."""
    return _earned(ratios(res))


def _earned(r: dict[str, dict[str, list[float]]]) -> dict[str, bool]:
    return {pol: all(_beats(stats(g[pol])) for g in r.values()) for _, pol in EXTENSIONS}


def best(res: dict[str, Comparison]) -> str:
    """The best configuration (issue 25: the paper plus the extensions that earned their place): of the rows
    that earned a place, each a whole configuration run beside the paper, the one whose slowest group
    (largest median ratio to the paper) is fastest; the paper's DollyMP2 when no row earned one."""
    r = ratios(res)
    wins = _earned(r)
    chosen = [pol for _, pol in EXTENSIONS if wins[pol]]
    return min(chosen, key=lambda pol: max(stats(g[pol])[0] for g in r.values())) if chosen else PAPER


def _beats(st: tuple[float, float, float]) -> bool:
    med, lo, hi = st
    return math.isfinite(med) and 1 - med > hi - lo


def table(res: dict[str, Comparison]) -> list[str]:
    """Markdown: one column per group, cells 'median (min-max)' of the ratio to paper DollyMP2, then the
    extra resources vs DollyMP0 (median), and whether the row earned a place in the default."""
    r, x = ratios(res), extra(res)
    groups = sorted(r)
    wins = earned(res)
    seeds = {g: len(next(iter(r[g].values()))) for g in groups}
    head = "| row | policy | " + " | ".join(f"{g} ({seeds[g]} seeds)" for g in groups)
    head += " | extra resources vs DollyMP0 (median per group) | beats paper on every group |"
    lines = [head, "|---|---|" + "---|" * (len(groups) + 2)]
    for label, pol in ROWS:
        cells = []
        for g in groups:
            med, lo, hi = stats(r[g].get(pol, []))
            cells.append(f"{med:.3f} ({lo:.3f}-{hi:.3f})")
        ext = ", ".join(f"{100 * stats(x[g].get(pol, []))[0]:+.1f}%" for g in groups)
        verdict = ("yes" if wins[pol] else "no") if pol in wins else "-"
        lines.append(f"| {label} | `{pol}` | " + " | ".join(cells) + f" | {ext} | {verdict} |")
    lines += [
        "",
        "Cells: average flowtime over the paper DollyMP2's in the same run (same workload, cluster, seed and "
        "straggler draws), median over seeds (min-max). Below 1 is faster than the paper.",
    ]
    return lines


def _small(m: RunMetrics) -> float:
    return m.by_bin().get("1-10", {}).get("avg_flowtime", math.nan)


def headline_tables(res: dict[str, Comparison]) -> list[str]:
    """Per group (trace and straggler model), per policy: medians over seeds (min-max) of the average
    flowtime, the 1-10-task jobs' average, the ratios to Tetris and to Capacity+LATE, extra resources vs
    DollyMP0, and the load each run measured."""
    groups: dict[str, list[Comparison]] = defaultdict(list)
    for label, c in res.items():
        groups[group_of(label)].append(c)
    lines: list[str] = []
    for g in sorted(groups):
        runs = groups[g]
        c0 = runs[0]
        lines += [
            f"#### {g}: {len(runs)} seeds, {c0.settings['jobs']} jobs, {c0.settings['nodes']} nodes, "
            f"offered load {c0.load:.2f}, straggler {c0.settings['straggler']}",
            "",
            "| policy | avg flowtime (s) | 1-10 tasks avg (s) | / Tetris | / Capacity+LATE "
            "| 1-10 tasks / Tetris | extra vs DollyMP0 | utilisation | rounds with an original waiting |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for pol in HEADLINE_ROWS:
            if pol not in c0.results:
                continue
            ms = [c.results[pol] for c in runs]
            avg = stats([m.avg_flowtime for m in ms])
            small = stats([_small(m) for m in ms])
            tet = stats([c.results[pol].avg_flowtime / c.results["tetris"].avg_flowtime for c in runs])
            cap = stats([c.results[pol].avg_flowtime / c.results["capacity"].avg_flowtime for c in runs])
            st = stats([_small(c.results[pol]) / _small(c.results["tetris"]) for c in runs])
            ref = [c.results.get(NO_CLONES) for c in runs]
            ext = stats([m.extra_vs(r) if r is not None else math.nan for m, r in zip(ms, ref, strict=True)])
            util = stats([m.utilisation for m in ms])
            wait = stats([m.wait_rounds for m in ms])
            lines.append(
                f"| `{pol}` | {cell(avg, '.1f')} | {cell(small, '.1f')} | {cell(tet, '.2f')} | "
                f"{cell(cap, '.2f')} | {cell(st, '.2f')} | {cell(ext, '+.1%')} | {cell(util, '.2f')} | "
                f"{cell(wait, '.0%')} |"
            )
        lines.append("")
    lines.append(
        "Cells: median over seeds (min-max). Utilisation: time-weighted share of the dominant resource in "
        "use over the arrival span; rounds with an original waiting: share of decision rounds that left a "
        "runnable original without room (both measured in each run)."
    )
    return lines


def cell(st: tuple[float, float, float], fmt: str) -> str:
    med, lo, hi = st
    if not math.isfinite(med):
        return "-"
    return f"{med:{fmt}} ({lo:{fmt}} to {hi:{fmt}})"
