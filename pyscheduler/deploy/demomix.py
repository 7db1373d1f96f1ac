"""The demo's job mix, what one scheduler's run of it produced, and the summary printed after the runs
(pyscheduler/deploy/demo.py runs them)."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.deploy import amrecords, jobs

SCHEDULER_NAMES = {"capacity": "CapacityScheduler", "dollymp": "DollyMP"}


@dataclass(frozen=True)
class MixJob:
    name: str
    kind: str  # "wordcount" or "straggler" (io.dollymp.yarn.workload.StragglerJob)
    maps: int
    reduces: int
    delay_s: float = 0.0  # arrival after the first job


# A short mix, arriving 3 s apart: Hadoop's wordcount, and two jobs whose tasks sleep for heavy-tailed
# times (the papers' straggler model; SleepJob cannot clone: it turns speculation off, and the AM
# helper launches clones through the speculator).
MIX = (
    MixJob("wordcount", "wordcount", maps=3, reduces=1),
    MixJob("straggler-large", "straggler", maps=6, reduces=1, delay_s=3.0),
    MixJob("straggler-small", "straggler", maps=2, reduces=1, delay_s=6.0),
)
# The straggler jobs' task base times (maps; reduces half), the Pareto shape and cap of their factor.
STRAGGLER_BASE_MS = 4000
STRAGGLER_SHAPE, STRAGGLER_CAP = 1.5, 20.0


@dataclass
class Run:
    scheduler: str
    results: dict[str, jobs.JobResult] = field(default_factory=dict)
    placements: dict[str, int] = field(default_factory=dict)  # job -> placements logged by the service
    containers: dict[str, int] = field(default_factory=dict)  # job -> containers that ran (NM log dirs)
    missions: dict[str, amrecords.Mission] = field(default_factory=dict)  # job -> what the AM helper did
    records: Path | None = None  # the AM helper's record directory
    api: str | None = None  # the decision service's HTTP API (its operator page is at <api>/ui/)
    wall_s: float = 0.0
    load_avg: float | None = None  # the machine's 1-minute load average as the mix ended


def contended(runs: Sequence[Run], cores: int | None = None) -> float | None:
    """The highest load average of `runs` when it passed the machine's cores (None: not contended):
    then CPU, not the scheduler, decided the real jobs' times (a task JVM's start-up alone is ~1.5
    CPU-seconds), and the summary prints no ratio."""
    n = cores if cores is not None else (os.cpu_count() or 1)
    loads = [r.load_avg for r in runs if r.load_avg is not None]
    return max(loads) if loads and max(loads) > n else None


def page_url(api: str, application_id: str | None = None) -> str:
    """The service's operator page (pyscheduler.api.ui), or one application's timeline on it."""
    return f"{api}/ui/" + (f"#app={application_id}" if application_id else "")


def page_lines(run: Run) -> list[str]:
    """The operator page's address and, per job whose AM launched clones, its timeline there (clones,
    winners, losers killed, the reduce copies' map reads): up while the cluster runs (`--hold`)."""
    if run.api is None:
        return []
    lines = [f"Operator page: {page_url(run.api)}   (up while the cluster runs; --hold keeps it up)"]
    for j in MIX:
        r, m = run.results.get(j.name), run.missions.get(j.name)
        if r is not None and r.app_id and m is not None and m.clones > 0:
            lines.append(f"  {j.name:<16} timeline  {page_url(run.api, r.app_id)}")
    return lines


def fmt_s(seconds: float | None) -> str:
    return f"{seconds:6.1f} s" if seconds is not None else "     n/a"


def summary(runs: Sequence[Run], cores: int | None = None) -> str:
    """Side-by-side flowtime table (the RM's elapsed time per application) with medians and ratios."""
    head = f"{'job':<16}" + "".join(f"{SCHEDULER_NAMES[r.scheduler]:>20}" for r in runs)
    busy = contended(runs, cores)
    ratios = len(runs) == 2 and busy is None
    if ratios:
        head += f"{'ratio':>9}"
    lines = [head, "-" * len(head)]
    for j in MIX:
        row = f"{j.name:<16}"
        vals = [r.results.get(j.name) for r in runs]
        for v in vals:
            row += f"{(fmt_s(v.rm_elapsed_s) + ('' if v.ok else ' FAILED')) if v else 'n/a':>20}"
        if ratios and all(v and v.rm_elapsed_s for v in vals):
            a, b = (v.rm_elapsed_s for v in vals if v)
            row += f"{(b or 0) / (a or 1):9.2f}"
        lines.append(row)
    for label, fn in (("mean", statistics.fmean), ("median", statistics.median)):
        row = f"{label + ' flowtime':<16}"
        agg = []
        for r in runs:
            xs = [x.rm_elapsed_s for x in r.results.values() if x.rm_elapsed_s is not None]
            agg.append(fn(xs) if xs else None)
            row += f"{fmt_s(agg[-1]):>20}"
        if ratios and all(agg):
            row += f"{(agg[1] or 0) / (agg[0] or 1):9.2f}"
        lines.append(row)
    for r in runs:
        ran = sum(r.containers.values())
        if r.scheduler == "dollymp":
            placed = sum(r.placements.values())
            lines.append(
                f"DollyMP: {ran} containers ran; {placed} placements decided by the decision service"
            )
            lines.extend(mission_lines(r))
            lines.extend(page_lines(r))
    if busy is not None:
        lines.append(
            f"No ratio: this machine's CPU decided these times (load average {busy:.1f} on "
            f"{cores or os.cpu_count() or 1} cores as a mix ended; each task JVM's start-up alone costs "
            "about 1.5 CPU-seconds), not the scheduler. The times show the mechanics; the Scheduler Load "
            "Simulator part measures the scheduling."
        )
    lines.append(
        "One run per scheduler, same jobs and cluster shape, one after the other on this machine: "
        "background load differs between the runs, so treat small differences as noise."
    )
    return "\n".join(lines)


def _mission_row(name: str, m: amrecords.Mission) -> str:
    cells = (m.clones, m.clones_won, m.losers_killed, m.reduce_clone_reads, m.own_copy_reads, m.omega_elapsed)
    return f"{name:<16}" + "".join(f"{c:>{w}}" for c, w in zip(cells, _MISSION_WIDTHS, strict=True))


_MISSION_HEAD = ("clones", "won", "killed", "reduce-clone reads", "own copy", "ω elapsed")
_MISSION_WIDTHS = (8, 6, 8, 20, 10, 11)


def mission_lines(run: Run) -> list[str]:
    """Per job: clones launched, clones that won, losers killed, and the map outputs reduce clones read
    (from their own map copy within ω, or from the first copy after ω), from the AM helper's records."""
    if not run.missions:
        return []
    head = f"{'job':<16}" + "".join(f"{h:>{w}}" for h, w in zip(_MISSION_HEAD, _MISSION_WIDTHS, strict=True))
    lines = [f"DollyMP's clones (AM helper records in {run.records}):", head]
    total = amrecords.Mission()
    for j in MIX:
        m = run.missions.get(j.name)
        if m is not None:
            total.add(m)
            lines.append(_mission_row(j.name, m))
    lines.append(_mission_row("all", total))
    if total.attempt_s > 0:
        lines.append(
            f"clones took {total.clone_s:.0f} of {total.attempt_s:.0f} container-seconds "
            f"({total.clone_s / total.attempt_s:.0%}); the decision log's `clone_grant` and `kill` records "
            "say why each was granted or killed"
        )
    return lines
