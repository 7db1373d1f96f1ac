"""Trace loaders into the native workload format; `load_workload` picks one by format name.

Job names: a job's `name` is its recurring-job identity (DollyMP Sec. 5.2: "jobs submitted from the same
[user] usually repeat the same computation", so the estimator reuses a name's prior task statistics). None
of the SWIM, Alibaba 2018 or Google 2011 traces identifies recurring jobs, so their jobs get no name. (An
earlier version named every job of a trace alike; the estimator then took every new job for a rerun of
one job, gave small jobs the mean task time of the whole trace, and so flattened DollyMP's and the other
size-based policies' priorities.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pyscheduler.sim.loaders.alibaba import iter_alibaba
from pyscheduler.sim.loaders.google import iter_google
from pyscheduler.sim.loaders.swim import SwimDerivation, iter_swim
from pyscheduler.sim.loaders.yarnhistory import iter_yarn_history
from pyscheduler.sim.synthetic import synthetic_workload
from pyscheduler.sim.workload import JobSpec, LoadReport, iter_native

FORMATS = ("native", "swim", "alibaba", "google", "yarn-history", "synthetic")


def load_workload(
    path: str | Path,
    fmt: str,
    *,
    swim: SwimDerivation | None = None,
    limit: int | None = None,
    seed: int = 1,
    every: int = 1,
) -> tuple[list[JobSpec], LoadReport]:
    """Load a whole workload sorted by arrival; `every` keeps every N-th job by arrival (the first, the
    N+1-th, ...), then `limit` keeps the first N jobs left. Thinning keeps the trace's arrival times and
    so the window it spans: with a cluster cut by the same factor (--cluster-scale) it replays a share of
    a big cluster's jobs on the same share of its machines. Format `synthetic` generates a workload
    instead: `path` is the generator spec (`synthetic_workload`), `seed` its default seed."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"--every must be an integer >= 1, got {every!r}")
    report = LoadReport(source=str(path))
    if fmt == "synthetic":
        generated, line = synthetic_workload(str(path), seed)
        report.source = line
        report.read = report.kept = len(generated)
        it: Iterator[JobSpec] = iter(generated)
    elif fmt == "native":
        it = iter_native(path, report)
    elif fmt == "swim":
        it = iter_swim(path, report, swim or SwimDerivation())
    elif fmt == "alibaba":
        it = iter_alibaba(path, report)
    elif fmt == "google":
        it = iter_google(path, report)
    elif fmt == "yarn-history":
        it = iter_yarn_history(path, report)
    else:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    jobs = sorted(it, key=lambda j: j.arrival)
    if every > 1 and jobs:
        thinned = len(jobs) - len(jobs[::every])
        jobs = jobs[::every]
        if thinned:
            report.skipped[f"thinned (--every {every})"] += thinned
            report.kept -= thinned
    if limit is not None and len(jobs) > limit:
        report.skip("beyond --limit", None)
        report.skipped["beyond --limit"] += len(jobs) - limit - 1
        report.kept -= len(jobs) - limit
        jobs = jobs[:limit]
    return jobs, report


__all__ = ["FORMATS", "SwimDerivation", "load_workload"]
