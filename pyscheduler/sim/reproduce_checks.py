"""The checks of the reproduction report: each scenario's claim, tested on that run's figures."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pyscheduler.sim import ablation
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.runner import Comparison


@dataclass(slots=True)
class Check:
    """One claim against our figure. `verdict`: "holds" (within the stated band around the paper's
    figure), "exceeds" (a larger gain than the band: the report says where it comes from), "falls short",
    or for one-sided limits (costs) "within limit" / "over limit"."""

    text: str
    value: float
    holds: bool
    verdict: str = ""

    def __post_init__(self) -> None:
        if not self.verdict:
            self.verdict = "holds" if self.holds else "does not hold"


BAND = 0.5  # a gain holds within +-50% of the paper's (issue 25: "for example its relative gain +-50%")


def band(text: str, ours: float, lo: float, hi: float | None = None, *, pct: bool = True) -> Check:
    """Two-sided: `ours` (a gain, or a ratio with pct=False) against the paper's figure `lo` (or its range
    lo-hi), held within BAND of it. Above the band "exceeds", below it "falls short"."""
    hi = lo if hi is None else hi
    low, high = lo * (1 - BAND), hi * (1 + BAND)
    if not math.isfinite(ours):
        verdict = "falls short"
    else:
        verdict = "holds" if low <= ours <= high else "exceeds" if ours > high else "falls short"
    paper = f"{_fmt(lo, pct)}" if lo == hi else f"{_fmt(lo, pct)}-{_fmt(hi, pct)}"
    return Check(
        f"{text} {_fmt(ours, pct)} (paper {paper}; band {_fmt(low, pct)}-{_fmt(high, pct)})",
        ours,
        verdict == "holds",
        verdict,
    )


def limit(text: str, ours: float, most: float, *, pct: bool = True) -> Check:
    """One-sided, for a cost: `ours` at most `most`."""
    ok = math.isfinite(ours) and ours <= most
    return Check(
        f"{text} {_fmt(ours, pct)} (limit {_fmt(most, pct)})",
        ours,
        ok,
        "within limit" if ok else "over limit",
    )


def _fmt(x: float, pct: bool) -> str:
    return f"{100 * x:.0f}%" if pct else f"{x:.3f}"


def _avg(c: Comparison, name: str) -> float:
    return c.results[name].avg_flowtime


def _gain(c: Comparison, a: str, b: str) -> float:
    """1 - avg flowtime of a / that of b: a's relative reduction against b."""
    return 1 - _avg(c, a) / _avg(c, b)


def _frac_with_reduction(new: RunMetrics, ref: RunMetrics, at_least: float) -> float:
    if new.flowtimes.size != ref.flowtimes.size or not new.flowtimes.size:
        return math.nan
    red = 1 - new.flowtimes / np.maximum(ref.flowtimes, 1e-9)
    return float((red >= at_least).mean())


# The paper's gains of DollyMP2 (paper 000): vs Tetris 22% on average (Sec. 6.3.1, simulation), vs DRF 40%
# and Capacity 50% (Sec. 1 and 6.2, deployment); extra resources vs DollyMP0 ~2% (Sec. 6.3.1, Fig. 10),
# held here to the limit of 5%.
PAPER_GAINS = (("tetris", "Tetris", 0.22), ("drf", "DRF", 0.40), ("capacity", "Capacity+LATE", 0.50))
EXTRA_LIMIT = 0.05


def _extra(c: Comparison, name: str) -> float:
    """The paper's extra resources: resource-seconds vs the same run without clones (DollyMP0)."""
    ref = c.no_clone_reference()
    return c.results[name].extra_vs(ref) if ref is not None else math.nan


def _by_trace(res: dict[str, Comparison]) -> dict[str, list[Comparison]]:
    """'FB-2010 empirical seed3' and its seeds -> 'FB-2010 empirical': their runs, in sorted order."""
    out: dict[str, list[Comparison]] = {}
    for label in sorted(res):
        out.setdefault(ablation.group_of(label), []).append(res[label])
    return out


def _seeds(res: dict[str, Comparison]) -> list[Check]:
    """The headline over seeds: the median of the per-seed gains, with the range in the text."""
    out: list[Check] = []
    for trace, runs in _by_trace(res).items():
        n = len(runs)
        for pol, name in (("dollymp2", "DollyMP2 (paper)"), ("dollymp-ext", "DollyMP-ext")):
            for base, base_name, paper in PAPER_GAINS:
                g = [_gain(c, pol, base) for c in runs]
                text = f"{trace}, {n} seeds: {name} vs {base_name}, median reduction (range {_range(g)})"
                out.append(band(text, float(np.median(g)), paper))
            ext = [_extra(c, pol) for c in runs]
            text = f"{trace}, {n} seeds: {name} extra resources vs DollyMP0, median (range {_range(ext)})"
            out.append(limit(text, float(np.median(ext)), EXTRA_LIMIT))
    return out


def _range(values: list[float]) -> str:
    return f"{100 * min(values):.0f}% to {100 * max(values):.0f}%" if values else "-"


# Issue 25's bars for the best configuration, each against the same run: average flowtime at most 0.7x
# Tetris's and 0.5x Capacity+LATE's, jobs of 1-10 tasks no slower than under Tetris, and (EXTRA_LIMIT)
# extra resources vs DollyMP0 at most 5%; medians over seeds.
BARS = (("tetris", "Tetris", 0.7), ("capacity", "Capacity+LATE", 0.5))


def bars(res: dict[str, Comparison], pol: str, name: str) -> list[Check]:
    """The bars for policy `pol` (shown as `name`) in every trace and straggler model of `res`."""
    out: list[Check] = []
    for trace, runs in _by_trace(res).items():
        head = f"{trace}, {len(runs)} seeds: {name}"
        for base, base_name, most in BARS:
            v = [_avg(c, pol) / _avg(c, base) for c in runs]
            text = f"{head} / {base_name} average flowtime, median (range {_span(v)})"
            out.append(limit(text, float(np.median(v)), most, pct=False))
        v = [_small(c, pol) / _small(c, "tetris") for c in runs]
        out.append(
            limit(
                f"{head} / Tetris on jobs of 1-10 tasks, median (range {_span(v)})", _med(v), 1.0, pct=False
            )
        )
        v = [_extra(c, pol) for c in runs]
        out.append(
            limit(f"{head} extra resources vs DollyMP0, median (range {_range(v)})", _med(v), EXTRA_LIMIT)
        )
    return out


def _span(values: list[float]) -> str:
    return f"{min(values):.3f} to {max(values):.3f}" if values else "-"


def _med(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.median(finite)) if finite else math.nan


def _best(res: dict[str, Comparison]) -> list[Check]:
    """The bars for the best configuration the ablation of the same runs chose (ablation.best)."""
    pol = ablation.best(res)
    return bars(res, pol, f"best configuration `{pol}`")


def _clones(res: dict[str, Comparison]) -> list[Check]:
    """DollyMP Fig. 9 (Sec. 6.3.1): DollyMP2 gives > 30% of jobs a >= 20% lower flowtime than DollyMP1;
    DollyMP3 another ~5% of jobs; DollyMP3's total resources 15% above DollyMP2's."""
    out: list[Check] = []
    for label, c in res.items():
        m1, m2, m3 = (c.results[f"dollymp{i}"] for i in (1, 2, 3))
        f21 = _frac_with_reduction(m2, m1, 0.2)
        f31 = _frac_with_reduction(m3, m1, 0.2)
        use = m3.resource_s / max(m2.resource_s, 1e-12)
        out += [
            band(f"{label}: jobs with >= 20% lower flowtime, DollyMP2 vs DollyMP1:", f21, 0.30),
            band(f"{label}: ... and the further share from DollyMP3:", f31 - f21, 0.05),
            band(f"{label}: extra total resources of DollyMP3 over DollyMP2:", use - 1, 0.15),
        ]
    return out


def _load(res: dict[str, Comparison]) -> list[Check]:
    """DollyMP Fig. 10 (Sec. 6.3.1): at high load cloning cuts the average flowtime ~10% for ~2% extra
    resources (the paper gives the low-load figure only as a CDF)."""
    out: list[Check] = []
    for label, c in res.items():
        r = _gain(c, "dollymp2", "dollymp0")
        f = _extra(c, "dollymp2")
        if "high" in label:
            out.append(band(f"{label}: DollyMP2 vs DollyMP0 flowtime reduction", r, 0.10))
            out.append(band(f"{label}: DollyMP2 extra resources vs DollyMP0", f, 0.02))
        else:
            out.append(
                Check(
                    f"{label}: DollyMP2 vs DollyMP0 flowtime reduction {100 * r:.0f}%, extra resources "
                    f"{100 * f:.1f}% (paper: cloning helps most at low load)",
                    r,
                    r > 0,
                    "holds" if r > 0 else "falls short",
                )
            )
    return out


def _small(c: Comparison, name: str) -> float:
    return c.results[name].by_bin().get("1-10", {}).get("avg_flowtime", math.nan)


def _dolly(res: dict[str, Comparison]) -> list[Check]:
    """Dolly Sec. 5.2-5.3: small jobs 34-46% faster than LATE with < 5% extra resources; delay assignment's
    small-job gain 1.7-2.1x the best of CAC's and CC's (its excess over 1, 0.7-1.1, held to the band).
    One set of checks per straggler model (the label's suffix after the shuffle name)."""
    out: list[Check] = []
    for suffix in sorted({label.removeprefix("delay") for label in res if label.startswith("delay")}):
        base = res["delay" + suffix]
        g = 1 - _small(base, "dolly") / _small(base, "capacity")
        out.append(
            band(
                f"small jobs (1-10 tasks){suffix}: Dolly vs Capacity+LATE, flowtime reduction", g, 0.34, 0.46
            )
        )
        f = base.results["dolly"].clone_extra_resource_frac
        out.append(limit(f"Dolly's losing copies' share of resources{suffix}", f, 0.05))
        gains = {
            m: 1 - _small(res[m + suffix], "dolly") / _small(res[m + suffix], "capacity")
            for m in ("delay", "cac", "cc")
        }
        ratio = gains["delay"] / max(gains["cac"], gains["cc"], 1e-9)
        text = f"small-job gain by shuffle{suffix}: " + ", ".join(
            f"{m} {100 * v:.0f}%" for m, v in gains.items()
        )
        out.append(
            band(
                f"{text}; delay over the best of CAC, CC: ratio {ratio:.2f}, excess over 1",
                ratio - 1,
                0.7,
                1.1,
            )
        )
    return out


def _srewc(res: dict[str, Comparison]) -> list[Check]:
    """SREW+C Table 3: 10% lower total flowtime than Dolly, 14% lower than Mantri."""
    c = next(iter(res.values()))
    return [
        band(f"SREW+C vs {other}, flowtime reduction", _gain(c, "srewc", other), claim)
        for other, claim in (("dolly", 0.10), ("mantri", 0.14))
    ]


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
    wins = ablation.earned(res)
    r = ablation.ratios(res)
    out = []
    for label, pol in ablation.EXTENSIONS:
        meds = ", ".join(f"{g} {ablation.stats(r[g][pol])[0]:.2f}" for g in sorted(r))
        text = f"{label} / paper DollyMP2, median: {meds} (earns a place: faster by more than its spread)"
        out.append(Check(text, 0.0, wins[pol]))
    return out
