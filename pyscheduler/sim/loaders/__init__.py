"""Trace loaders into the native workload format; `load_workload` picks one by format name."""

from __future__ import annotations

from pathlib import Path

from pyscheduler.sim.loaders.alibaba import iter_alibaba
from pyscheduler.sim.loaders.google import iter_google
from pyscheduler.sim.loaders.swim import SwimDerivation, iter_swim
from pyscheduler.sim.workload import JobSpec, LoadReport, iter_native

FORMATS = ("native", "swim", "alibaba", "google")


def load_workload(
    path: str | Path, fmt: str, *, swim: SwimDerivation | None = None, limit: int | None = None
) -> tuple[list[JobSpec], LoadReport]:
    """Load a whole workload sorted by arrival; `limit` keeps the first N jobs by arrival."""
    report = LoadReport(source=str(path))
    if fmt == "native":
        it = iter_native(path, report)
    elif fmt == "swim":
        it = iter_swim(path, report, swim or SwimDerivation())
    elif fmt == "alibaba":
        it = iter_alibaba(path, report)
    elif fmt == "google":
        it = iter_google(path, report)
    else:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    jobs = sorted(it, key=lambda j: j.arrival)
    if limit is not None and len(jobs) > limit:
        report.skip("beyond --limit", None)
        report.skipped["beyond --limit"] += len(jobs) - limit - 1
        report.kept -= len(jobs) - limit
        jobs = jobs[:limit]
    return jobs, report


__all__ = ["FORMATS", "SwimDerivation", "load_workload"]
