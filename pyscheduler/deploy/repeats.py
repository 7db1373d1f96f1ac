"""Median and spread of a benchmark's figures over repeats: one run proves nothing on a shared machine
(the cluster benchmark's ratio moved by 0.1-0.15 between runs of the same code), so `bench-cluster
--repeats N` runs the side-by-side pair N times and prints each figure's median with its min-max."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

FIGURES = (
    "ratio",
    "capacity_avg_flowtime_s",
    "dollymp_avg_flowtime_s",
    "capacity_vcore_s",
    "dollymp_vcore_s",
    "vcore_s_ratio",
    "clone_s_while_originals_waited_frac",
    "clone_extra_container_s_frac",
    "lost_container_s_frac",
    "clones",
    "clones_yielded",
    "clones_beaten",
    "capacity_load_avg",
    "dollymp_load_avg",
)


def summarise(outs: Sequence[Mapping[str, object]], figures: Sequence[str] = FIGURES) -> dict[str, object]:
    """Per figure present as a number in the runs: `<figure>_median`, `<figure>_min`, `<figure>_max`
    and `<figure>_spread` (max - min); plus `repeats`, the runs summarised."""
    out: dict[str, object] = {"repeats": len(outs)}
    for name in figures:
        xs = [float(v) for o in outs if isinstance(v := o.get(name), int | float) and not isinstance(v, bool)]
        if not xs:
            continue
        out[f"{name}_median"] = round(statistics.median(xs), 3)
        out[f"{name}_min"] = round(min(xs), 3)
        out[f"{name}_max"] = round(max(xs), 3)
        out[f"{name}_spread"] = round(max(xs) - min(xs), 3)
    return out


def table(summary: Mapping[str, object], figures: Sequence[str] = FIGURES) -> str:
    lines = [
        f"{'figure':<32}{'median':>10}{'min':>10}{'max':>10}"
        f"   over {summary['repeats']} runs (seeds x repeats)"
    ]
    for name in figures:
        if f"{name}_median" in summary:
            lines.append(
                f"{name:<32}{summary[f'{name}_median']!s:>10}{summary[f'{name}_min']!s:>10}"
                f"{summary[f'{name}_max']!s:>10}"
            )
    return "\n".join(lines)
