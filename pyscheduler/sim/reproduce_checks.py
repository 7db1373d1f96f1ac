"""The checks of the reproduction report: each scenario's claim, tested on that run's figures."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.runner import Comparison


@dataclass(slots=True)
class Check:
    text: str
    value: float
    holds: bool


def _avg(c: Comparison, name: str) -> float:
    return c.results[name].avg_flowtime


def _ratio_check(c: Comparison, a: str, b: str, limit: float, text: str) -> Check:
    r = _avg(c, a) / _avg(c, b)
    return Check(f"{text}: {a} / {b} avg flowtime = {r:.2f} (claim <= {limit:g})", r, r <= limit)


def _frac_with_reduction(new: RunMetrics, ref: RunMetrics, at_least: float) -> float:
    if new.flowtimes.size != ref.flowtimes.size or not new.flowtimes.size:
        return math.nan
    red = 1 - new.flowtimes / np.maximum(ref.flowtimes, 1e-9)
    return float((red >= at_least).mean())


HEADLINE = [
    "capacity",
    "drf",
    "tetris",
    "dollymp0",
    "dollymp2",
    "dollymp(residual_factor=1)",
    "dollymp(clone_rule=paper)",
]
SEED_POLICIES = ["capacity", "tetris", "dollymp0", "dollymp2"]


def _extra(c: Comparison, name: str) -> float:
    """The paper's extra resources: resource-seconds vs the same run without clones (DollyMP0)."""
    ref = c.no_clone_reference()
    return c.results[name].extra_vs(ref) if ref is not None else math.nan


def _headline(res: dict[str, Comparison]) -> list[Check]:
    out: list[Check] = []
    for label, c in res.items():
        out.append(_ratio_check(c, "dollymp2", "tetris", 0.7, f"{label}: DollyMP2 vs Tetris"))
        out.append(_ratio_check(c, "dollymp2", "capacity", 0.5, f"{label}: DollyMP2 vs Capacity+LATE"))
        out.append(_ratio_check(c, "dollymp2", "drf", 0.6, f"{label}: DollyMP2 vs DRF (paper: ~40% lower)"))
        f = _extra(c, "dollymp2")
        lost = c.results["dollymp2"].clone_extra_resource_frac
        out.append(
            Check(
                f"{label}: DollyMP2 extra resources vs DollyMP0 = {100 * f:.1f}% (claim <= 5%; losing "
                f"copies' share {100 * lost:.1f}%)",
                f,
                f <= 0.05,
            )
        )
    return out


def _seeds(res: dict[str, Comparison]) -> list[Check]:
    """The headline's direction over seeds 1-5: medians and the worst seed."""
    out: list[Check] = []
    for trace in sorted({label.rsplit(" seed", 1)[0] for label in res}):
        runs = [c for label, c in res.items() if label.rsplit(" seed", 1)[0] == trace]
        tet = [_avg(c, "dollymp2") / _avg(c, "tetris") for c in runs]
        cap = [_avg(c, "dollymp2") / _avg(c, "capacity") for c in runs]
        ext = [_extra(c, "dollymp2") for c in runs]
        n = len(runs)
        out.append(
            Check(
                f"{trace}, {n} seeds: DollyMP2 / Tetris median {np.median(tet):.2f}, worst {max(tet):.2f} "
                "(claim <= 0.7)",
                max(tet),
                max(tet) <= 0.7,
            )
        )
        out.append(
            Check(
                f"{trace}, {n} seeds: DollyMP2 / Capacity+LATE median {np.median(cap):.2f}, worst "
                f"{max(cap):.2f} (claim <= 0.5)",
                max(cap),
                max(cap) <= 0.5,
            )
        )
        out.append(
            Check(
                f"{trace}, {n} seeds: DollyMP2 extra resources vs DollyMP0 median "
                f"{100 * np.median(ext):.1f}%, worst {100 * max(ext):.1f}% (claim <= 5%)",
                max(ext),
                max(ext) <= 0.05,
            )
        )
    return out


def _clones(res: dict[str, Comparison]) -> list[Check]:
    c = next(iter(res.values()))
    m1, m2, m3 = (c.results[f"dollymp{i}"] for i in (1, 2, 3))
    f21 = _frac_with_reduction(m2, m1, 0.2)
    f31 = _frac_with_reduction(m3, m1, 0.2)
    use = (m3.useful_resource_s + m3.wasted_resource_s) / max(
        m2.useful_resource_s + m2.wasted_resource_s, 1e-12
    )
    return [
        Check(
            f"jobs with >= 20% lower flowtime, DollyMP2 vs DollyMP1: {100 * f21:.0f}% (paper: > 30%)",
            f21,
            f21 > 0.3,
        ),
        Check(
            f"... DollyMP3 vs DollyMP1: {100 * f31:.0f}% (paper: only ~5 points more than DollyMP2)",
            f31,
            f31 - f21 <= 0.1,
        ),
        Check(f"total resource use DollyMP3 / DollyMP2 = {use:.2f} (paper: 1.15)", use, 1.0 < use <= 1.3),
    ]


def _load(res: dict[str, Comparison]) -> list[Check]:
    out: list[Check] = []
    for label, c in res.items():
        r = 1 - _avg(c, "dollymp2") / _avg(c, "dollymp0")
        f = _extra(c, "dollymp2")
        out.append(
            Check(
                f"{label}: DollyMP2 vs DollyMP0 avg flowtime reduction {100 * r:.0f}%, extra resources "
                f"{100 * f:.1f}% (paper at high load: ~10% for ~2%)",
                r,
                r > 0 and (f <= 0.05 or "0.08" in label),
            )
        )
    return out


def _small(c: Comparison, name: str) -> float:
    return c.results[name].by_bin().get("1-10", {}).get("avg_flowtime", math.nan)


def _dolly(res: dict[str, Comparison]) -> list[Check]:
    out: list[Check] = []
    base = res["delay"]
    g = 1 - _small(base, "dolly") / _small(base, "capacity")
    out.append(
        Check(
            f"small jobs (1-10 tasks): Dolly vs Capacity+LATE {100 * g:.0f}% faster (paper: 34-46%)",
            g,
            g >= 0.34,
        )
    )
    f = base.results["dolly"].clone_extra_resource_frac
    out.append(Check(f"Dolly clone extra resources {100 * f:.1f}% (paper: < 5%)", f, f <= 0.05))
    gains = {m: 1 - _small(res[m], "dolly") / _small(res[m], "capacity") for m in ("delay", "cac", "cc")}
    ratio = gains["delay"] / max(gains["cac"], gains["cc"], 1e-9)
    out.append(
        Check(
            "small-job gain by shuffle: delay assignment "
            + ", ".join(f"{m} {100 * v:.0f}%" for m, v in gains.items())
            + f"; delay / best of CAC, CC = {ratio:.2f} (paper: 1.7-2.1x)",
            ratio,
            ratio >= 1.7,
        )
    )
    return out


def _srewc(res: dict[str, Comparison]) -> list[Check]:
    c = next(iter(res.values()))
    out = []
    for other, claim in (("dolly", 0.10), ("mantri", 0.14)):
        r = 1 - _avg(c, "srewc") / _avg(c, other)
        out.append(
            Check(
                f"SREW+C vs {other}: {100 * r:.0f}% lower avg flowtime (paper: {100 * claim:.0f}%)", r, r > 0
            )
        )
    return out


def _redundancy(res: dict[str, Comparison]) -> list[Check]:
    out = []
    for label, c in res.items():
        r = 1 - _avg(c, "redundant-small") / _avg(c, "straggler-relaunch(alpha=3)")
        rho = float(label.split("=")[1])
        expect = r > 0 if rho < 0.85 else r < 0.1
        out.append(
            Check(
                f"{label}: Redundant-small {100 * r:+.0f}% vs Straggler-relaunch "
                f"(paper: clearly better at low/moderate load, slightly worse at >= 0.85)",
                r,
                expect,
            )
        )
    return out


def _ablation(res: dict[str, Comparison]) -> list[Check]:
    """One check per extension: does it beat the paper's DollyMP2 on the median over seeds everywhere."""
    from pyscheduler.sim import ablation

    wins = ablation.earned(res)
    r = ablation.ratios(res)
    out = []
    for label, pol in ablation.EXTENSIONS:
        meds = ", ".join(f"{g} {ablation.stats(r[g][pol])[0]:.2f}" for g in sorted(r))
        text = f"{label} / paper DollyMP2, median: {meds} (earns the default: < 1 everywhere)"
        out.append(Check(text, 0.0, wins[pol]))
    return out
