"""The table of a `dollymp simulate` run: the policies side by side (flowtimes by job size, clones'
share, makespan, utilisation) and each one's flowtime split (sim/owntime.py); printed by the CLI
(cli/simulate.py) and in the run's report (report.py)."""

from __future__ import annotations

import math

from pyscheduler.sim.metrics import DOLLY_BINS
from pyscheduler.sim.runner import Comparison


def format_table(cmp: Comparison) -> str:
    """The policies side by side, as `dollymp simulate` prints them (and sim/report.py's summary)."""
    s = cmp.settings
    lines = [
        f"{s['jobs']} jobs ({s['total_tasks']} tasks) on {s['nodes']} nodes, straggler {s['straggler']}, "
        f"seed {s['seed']}, shuffle {s['shuffle']}, offered load {cmp.load:.3f}, "
        f"mechanism {s.get('mechanism', 'core')}",
        f"lower bound avg flowtime {cmp.bound.avg:.2f} s",
    ]
    bins = [b[0] for b in DOLLY_BINS]
    head = (
        f"{'policy':<22}{'avg':>9}{'p50':>9}{'p90':>9}{'p99':>10}"
        + "".join(f"{b:>10}" for b in bins)
        + f"{'clone%':>8}{'extra%':>8}{'makespan':>11}{'LBx':>7}{'util':>7}{'cpu':>6}{'mem':>6}"
        + f"{'wait%':>7}{'done':>13}"
        + f"{'wall s':>8}"
    )
    ref = cmp.no_clone_reference()
    if ref is not None:
        lines.append(f"clone% = losing copies' share of resource-seconds; extra% = resources vs {ref.policy}")
    lines.append(
        "util = time-weighted utilisation over the arrival span of the dominant resource at each moment "
        "(cpu, mem: each resource's); "
        "wait% = share of its rounds leaving a task waiting for room"
    )
    lines.append(head)
    for name, m in cmp.results.items():
        byb = m.by_bin()
        cells = "".join(f"{byb[b]['avg_flowtime']:>10.1f}" if b in byb else f"{'-':>10}" for b in bins)
        ratio = m.avg_flowtime / cmp.bound.avg if cmp.bound.avg else math.nan
        extra = f"{100 * m.extra_vs(ref):.1f}%" if ref is not None else "-"
        per = m.extra.get("utilisation_by_resource", {})
        lines.append(
            f"{name:<22}{m.avg_flowtime:>9.1f}{m.pct(50):>9.1f}{m.pct(90):>9.1f}{m.pct(99):>10.1f}"
            f"{cells}{100 * m.clone_extra_resource_frac:>7.1f}%{extra:>8}{m.makespan:>11.0f}{ratio:>7.2f}"
            f"{m.utilisation:>7.3f}{per.get('cpu', math.nan):>6.2f}{per.get('mem', math.nan):>6.2f}"
            f"{100 * m.wait_rounds:>6.1f}%"
            f"{m.jobs_completed:>7}/{m.jobs_completed + m.jobs_unfinished:<5}{m.wall_seconds:>8.1f}"
        )
    lines.extend(_split_lines(cmp))
    return "\n".join(lines)


def _split_lines(cmp: Comparison) -> list[str]:
    """avg flowtime = own time + waiting - saved, per policy (sim/owntime.py)."""
    own = cmp.settings.get("own_time_avg")
    split = {n: m.extra["flowtime_split"] for n, m in cmp.results.items() if "flowtime_split" in m.extra}
    if own is None or not split:
        return []
    jobs = cmp.bound.jobs
    floor = cmp.bound.critical_path_total / jobs if jobs else 0.0
    two = float(cmp.settings.get("own_time_2_clones_avg", own))
    lines = [
        f"own time avg {own:.1f} s (each job alone on the fastest nodes, its originals winning); "
        "avg flowtime = own + waiting - saved by clones; top1% = share of all waiting in the 1% of jobs "
        "that wait longest",
        f"clones can save at most {max(own - floor, 0.0):.1f} s of it (own time less the lower bound's "
        f"critical path, {floor:.1f} s: every task as short as any copy of it can be); with two clones of "
        f"every task from its start and no restart, alone: {two:.1f} s",
        f"{'policy':<22}{'waiting':>9}{'saved':>9}{'top1%':>7}",
    ]
    for name, d in split.items():
        lines.append(f"{name:<22}{d['waiting']:>9.1f}{d['saved']:>9.1f}{100 * d['top_share']:>6.0f}%")
    return lines
