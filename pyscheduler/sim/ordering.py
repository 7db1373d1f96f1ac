"""Why DollyMP trails Tetris at high load: a test of the report's explanation, job order (issue 25).

The explanation: Algorithm 1 (DollyMP Sec. 4.2) admits a job to size class l only once its effective time
e_j = theta + r sigma along its critical path fits 2^l, and packs each class by volume. A job of few but
long (or uncertain) tasks therefore sits in a high class behind large jobs of short tasks, where an order by
remaining volume (SVF, SREW+C Eq. 10; Tetris's remaining-work term) runs it early. If that is the cause:
* ordering by remaining volume alone (`svf`) is about as fast as Tetris, and so is DollyMP2 with only its
  order changed to remaining volume (the extension `dollymp(order=volume)`);
* ordering by remaining time alone (`srpt`, the critical path of mean task times) is slower than DollyMP0 on
  jobs of 1-10 tasks (time order is what DollyMP's classes add to volume order);
* most of the flowtime DollyMP2 loses to Tetris is lost on jobs of 1-10 tasks;
* the loss grows with the load, as more originals wait and the order decides more.
Each is a check that can fail; the runs are the FB-2010 day at three offered loads, several seeds.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

from pyscheduler.sim.ablation import cell, group_of, stats
from pyscheduler.sim.reproduce_checks import Check
from pyscheduler.sim.runner import Comparison

VOLUME = "dollymp(order=volume)"
POLICIES = ["tetris", "svf", "srpt", "dollymp0", "dollymp2", VOLUME]
LOADS = (0.9, 1.0, 1.2)
SMALL = "1-10"
SVF_NEAR = 1.10  # "about as fast": SVF's average flowtime at most 10% above Tetris's (median over seeds)
GAP_SHARE = 0.5  # "most of the loss": at least half of DollyMP2's total excess flowtime over Tetris's


def _small(c: Comparison, pol: str) -> float:
    return c.results[pol].by_bin().get(SMALL, {}).get("avg_flowtime", math.nan)


def small_gap_share(c: Comparison, pol: str = "dollymp2", ref: str = "tetris") -> float:
    """Share of pol's total flowtime in excess of ref's that jobs of 1-10 tasks account for (both runs
    have the same jobs: sum over a size bin = jobs x average)."""
    a, b = c.results[pol], c.results[ref]
    total = float(a.flowtimes.sum() - b.flowtimes.sum())
    bins_a, bins_b = a.by_bin(), b.by_bin()
    if total <= 0 or SMALL not in bins_a or SMALL not in bins_b:
        return math.nan
    small = bins_a[SMALL]["jobs"] * (bins_a[SMALL]["avg_flowtime"] - bins_b[SMALL]["avg_flowtime"])
    return float(small / total)


def _groups(res: dict[str, Comparison]) -> dict[str, list[Comparison]]:
    out: dict[str, list[Comparison]] = defaultdict(list)
    for label, c in res.items():
        out[group_of(label)].append(c)
    return dict(sorted(out.items(), key=lambda kv: kv[1][0].load))


def _median(values: list[float]) -> float:
    return stats(values)[0]


def checks(res: dict[str, Comparison]) -> list[Check]:
    out: list[Check] = []
    trend: list[tuple[str, float]] = []
    for g, runs in _groups(res).items():
        svf = _median([c.results["svf"].avg_flowtime / c.results["tetris"].avg_flowtime for c in runs])
        out.append(
            Check(
                f"{g}, {len(runs)} seeds: volume order alone (SVF) / Tetris, median {svf:.2f} (explanation: "
                f"about as fast, at most {SVF_NEAR:.2f})",
                svf,
                svf <= SVF_NEAR,
            )
        )
        vol = _median([c.results[VOLUME].avg_flowtime / c.results["tetris"].avg_flowtime for c in runs])
        out.append(
            Check(
                f"{g}: DollyMP2 with volume order (`{VOLUME}`) / Tetris, median {vol:.2f} (explanation: "
                f"about as fast, at most {SVF_NEAR:.2f})",
                vol,
                vol <= SVF_NEAR,
            )
        )
        srpt = _median([_small(c, "srpt") / _small(c, "dollymp0") for c in runs])
        out.append(
            Check(
                f"{g}: jobs of 1-10 tasks, time order alone (SRPT) / DollyMP0, median {srpt:.2f} "
                "(explanation: above 1)",
                srpt,
                srpt > 1,
            )
        )
        share = _median([small_gap_share(c) for c in runs])
        out.append(
            Check(
                f"{g}: share of DollyMP2's excess flowtime over Tetris's in jobs of 1-10 tasks, median "
                f"{100 * share:.0f}% (explanation: at least {100 * GAP_SHARE:.0f}%)",
                share,
                math.isfinite(share) and share >= GAP_SHARE,
            )
        )
        ratio = _median([c.results["dollymp2"].avg_flowtime / c.results["tetris"].avg_flowtime for c in runs])
        trend.append((f"{runs[0].load:.2f}", ratio))
    if len(trend) > 1:
        rising = all(b[1] > a[1] for a, b in itertools.pairwise(trend))
        text = ", ".join(f"offered {load} {r:.2f}" for load, r in trend)
        out.append(
            Check(f"DollyMP2 / Tetris by load, median: {text} (explanation: rises with load)", 0, rising)
        )
    return out


def table(res: dict[str, Comparison]) -> list[str]:
    """Per offered load: each policy's median (min-max over seeds) average flowtime, its ratio to Tetris,
    the 1-10-task jobs' average and ratio, and the load each run measured."""
    lines: list[str] = []
    for g, runs in _groups(res).items():
        c0 = runs[0]
        lines += [
            f"#### {g}: {len(runs)} seeds, {c0.settings['jobs']} jobs, {c0.settings['nodes']} nodes, "
            f"offered load {c0.load:.2f}, straggler {c0.settings['straggler']}",
            "",
            "| policy | avg flowtime (s) | / Tetris | 1-10 tasks avg (s) | 1-10 tasks / Tetris "
            "| utilisation | rounds with an original waiting |",
            "|---|---|---|---|---|---|---|",
        ]
        for pol in POLICIES:
            ms = [c.results[pol] for c in runs]
            cells = [
                stats([m.avg_flowtime for m in ms]),
                stats([c.results[pol].avg_flowtime / c.results["tetris"].avg_flowtime for c in runs]),
                stats([_small(c, pol) for c in runs]),
                stats([_small(c, pol) / _small(c, "tetris") for c in runs]),
                stats([m.utilisation for m in ms]),
                stats([m.wait_rounds for m in ms]),
            ]
            fmts = [".1f", ".2f", ".1f", ".2f", ".2f", ".0%"]
            lines.append(
                f"| `{pol}` | " + " | ".join(cell(s, f) for s, f in zip(cells, fmts, strict=True)) + " |"
            )
        lines.append("")
    lines.append(
        "Cells: median over seeds (min-max). `svf`: smallest remaining volume first (SREW+C Eq. 10); `srpt`: "
        "shortest remaining critical path first; both place by best fit with no clones, as DollyMP0 does. "
        f"`{VOLUME}`: the paper's DollyMP2 serving jobs smallest remaining volume first (one class each)."
    )
    return lines
