"""How far below what the workload allows issue 25's bar for the best configuration lies.

The bar asks for an average flowtime of at most BAR x Tetris's. Per job, flowtime = own time + waiting -
saved (`owntime.py`), so a policy meets the bar only if its average waiting is at most the bar less the
jobs' own time plus what its clones save. Three floors, each from the run's own draws and the same for
every policy (`runner.compare` records them):
* own time: every job alone on the fastest nodes, every task's original its winner (no clone);
* two clones: every task also runs copies 1 and 2 from its start and ends with the first of the three, no
  copy restarted - the most DollyMP's cloning (at most two clones, DollyMP Sec. 5) buys a job alone;
* any copy: the lower bound's critical path, every task as short as any copy of it can be (restarts
  included; SREW+C Eq. 8's term, `lowerbound.py`).
`room` = the bar less the two-clone floor: the waiting per job the bar leaves to a policy that keeps to two
clones and restarts nothing, however well it clones. The check tests the explanation that the bar is out
of practical reach: the room is smaller than the least waiting any measured policy (Tetris, the no-clone
DollyMP0, the volume orders, the best configurations of the ablation) reached in the same run. It can fail:
where the room exceeds some policy's waiting, the bar is within that order's reach.
"""

from __future__ import annotations

import math
from collections import defaultdict

from pyscheduler.sim.ablation import WORTH_EXT, cell, group_of, stats
from pyscheduler.sim.reproduce_checks import Check
from pyscheduler.sim.runner import Comparison

BAR = 0.7  # issue 25: the best configuration at most 0.7x Tetris's average flowtime
TETRIS = "tetris"
POLICIES = [TETRIS, "dollymp0", "dollymp(order=volume)", "dollymp-ext(order=volume)", WORTH_EXT]


def floors(c: Comparison) -> dict[str, float]:
    """One run's floors and bar, seconds per job (module docstring)."""
    jobs = c.bound.jobs
    own = float(c.settings.get("own_time_avg", math.nan))
    two = float(c.settings.get("own_time_2_clones_avg", math.nan))
    bar = BAR * c.results[TETRIS].avg_flowtime
    return {
        "tetris": c.results[TETRIS].avg_flowtime,
        "bar": bar,
        "own": own,
        "two": two,
        "any": c.bound.critical_path_total / jobs if jobs else math.nan,
        "room": bar - two,
    }


def waiting(c: Comparison, pol: str) -> float:
    """A policy's average waiting per job in this run (nan where some job did not finish)."""
    split = c.results[pol].extra.get("flowtime_split")
    return float(split["waiting"]) if isinstance(split, dict) else math.nan


def least_waiting(c: Comparison) -> tuple[float, str]:
    """The least average waiting of the run's policies, and whose."""
    found = [(waiting(c, pol), pol) for pol in c.results]
    found = [(w, pol) for w, pol in found if math.isfinite(w)]
    return min(found) if found else (math.nan, "")


def _extra(c: Comparison, pol: str) -> float:
    """Resources over the no-clone reference's (DollyMP0 where it ran), minus 1 (DollyMP Sec. 6.3.1)."""
    ref = c.no_clone_reference()
    return c.results[pol].extra_vs(ref) if ref is not None else math.nan


def _groups(res: dict[str, Comparison]) -> dict[str, list[Comparison]]:
    out: dict[str, list[Comparison]] = defaultdict(list)
    for label, c in res.items():
        out[group_of(label)].append(c)
    return dict(out)


def checks(res: dict[str, Comparison]) -> list[Check]:
    out: list[Check] = []
    for group, runs in _groups(res).items():
        room = stats([floors(c)["room"] for c in runs])
        least = [least_waiting(c) for c in runs]
        excess = stats([w - floors(c)["room"] for c, (w, _) in zip(runs, least, strict=True)])
        who = sorted({pol for _, pol in least})
        out.append(
            Check(
                f"{group}, {len(runs)} seeds: the bar ({BAR:g}x Tetris) less the two-clone floor leaves "
                f"{cell(room, '.1f')} s of waiting per job; the least any measured policy waited was "
                f"{cell(stats([w for w, _ in least]), '.1f')} s ({', '.join(f'`{p}`' for p in who)}), "
                f"{cell(excess, '.1f')} s over the room (explanation: out of practical reach, the room "
                "below the least waiting, median)",
                excess[0],
                math.isfinite(excess[0]) and excess[0] > 0,
            )
        )
    return out


def table(res: dict[str, Comparison]) -> list[str]:
    rows = [
        "Seconds per job, median (min to max) over seeds. `room` = the bar less the two-clone floor; "
        "waiting and saved per policy as `dollymp simulate` splits them (flowtime = own + waiting - saved).",
        "",
        "| group | Tetris | bar (0.7x) | own time | two clones | any copy | room | policy | flowtime "
        "| waiting | saved | extra vs DollyMP0 (%) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for group, runs in _groups(res).items():
        fl = [floors(c) for c in runs]
        keys = ("tetris", "bar", "own", "two", "any", "room")
        head = [cell(stats([f[k] for f in fl]), ".1f") for k in keys]
        for i, pol in enumerate(runs[0].results):
            split = [c.results[pol].extra.get("flowtime_split") or {} for c in runs]
            part = [
                cell(stats([float(s.get(k, math.nan)) for s in split]), ".1f") for k in ("waiting", "saved")
            ]
            flow = cell(stats([c.results[pol].avg_flowtime for c in runs]), ".1f")
            extra = cell(stats([100 * _extra(c, pol) for c in runs]), ".1f")
            lead = [group, *head] if i == 0 else [""] * 7
            rows.append("| " + " | ".join([*lead, f"`{pol}`", flow, *part, extra]) + " |")
    return rows
