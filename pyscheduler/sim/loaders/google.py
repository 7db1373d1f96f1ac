"""Google clusterdata-2011-2 task events into native jobs (../shared/traces/README.md section 4).

Input: one `task_events` shard or a folder of them (all `*.csv[.gz]` files, in name order). A job becomes one
single-phase native job: it arrives at its first task SUBMIT, and each task's base duration is its last
SCHEDULE to its FINISH. Skipped with reason: jobs with events at time 0 (they existed before the window),
jobs with a task that never FINISHed inside the window (failed, killed, lost, evicted without a later finish,
or still running), jobs without a resource request. Times are microseconds, shifted so the first kept
arrival is 0. Requests are normalised to the largest machine; we take 1.0 = 32 cores and 64 GiB (the trace
does not publish absolute sizes).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.sim.textio import open_text
from pyscheduler.sim.workload import JobSpec, LoadReport, PhaseSpec

CPU_SCALE = 32.0
MEM_SCALE_MB = 64 * 1024.0
SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST = 0, 1, 2, 3, 4, 5, 6
MIN_DURATION = 0.5


@dataclass(slots=True)
class _Task:
    submit: float = math.inf
    schedule: float | None = None
    finish: float | None = None
    last: int = -1
    cpu: float = 0.0
    mem: float = 0.0


@dataclass(slots=True)
class _Job:
    tasks: dict[int, _Task] = field(default_factory=dict)
    bad: str | None = None
    first_line: str = ""


def shard_files(path: str | Path) -> list[Path]:
    p = Path(path)
    if p.is_dir():
        files = sorted(x for x in p.iterdir() if x.name.endswith((".csv", ".csv.gz")))
        if not files:
            raise FileNotFoundError(f"{p}: no *.csv or *.csv.gz task_events shards")
        return files
    return [p]


def iter_google(path: str | Path, report: LoadReport) -> Iterator[JobSpec]:
    jobs: dict[str, _Job] = {}
    for f in shard_files(path):
        with open_text(f) as fh:
            for lineno, row in enumerate(csv.reader(fh), 1):
                where = f"{f}:{lineno}"
                if len(row) < 13:
                    report.errors.append(f"{where}: expected 13 fields, got {len(row)}")
                    if len(row) > 2 and row[2]:
                        jobs.setdefault(row[2], _Job(first_line=where)).bad = "malformed line"
                    continue
                jid = row[2]
                job = jobs.get(jid)
                if job is None:
                    job = jobs[jid] = _Job(first_line=where)
                try:
                    t_us = int(row[0])
                    idx = int(row[3])
                    ev = int(row[5])
                except ValueError:
                    bad = (
                        "time"
                        if not row[0].lstrip("-").isdigit()
                        else ("task index" if not row[3].isdigit() else "event type")
                    )
                    if len(report.errors) < report.max_errors_kept:
                        report.errors.append(f"{where}: field '{bad}' is not an integer")
                    job.bad = "malformed line"
                    continue
                if t_us == 0:
                    job.bad = job.bad or "existed before trace window"
                    continue
                task = job.tasks.get(idx)
                if task is None:
                    task = job.tasks[idx] = _Task()
                t = t_us / 1e6
                if row[9] and row[10]:
                    try:
                        task.cpu, task.mem = float(row[9]), float(row[10])
                    except ValueError:
                        job.bad = "malformed line"
                if ev == SUBMIT:
                    task.submit = min(task.submit, t)
                elif ev == SCHEDULE:
                    task.schedule = t
                elif ev == FINISH and task.schedule is not None:
                    task.finish = t
                task.last = ev
    kept: list[tuple[float, str, list[_Task]]] = []
    for jid, job in jobs.items():
        report.read += 1
        if job.bad is not None:
            report.skip(job.bad)
            continue
        tasks = list(job.tasks.values())
        if any(t.finish is None or t.last != FINISH or not math.isfinite(t.submit) for t in tasks):
            report.skip("task not finished in window")
            continue
        if any(t.cpu <= 0 or t.mem <= 0 for t in tasks):
            report.skip("no resource request")
            continue
        kept.append((min(t.submit for t in tasks), jid, tasks))
    if not kept:
        return
    origin = min(k[0] for k in kept)
    for arrival, jid, tasks in sorted(kept, key=lambda k: (k[0], k[1])):
        durs = tuple(max(MIN_DURATION, (t.finish or 0.0) - (t.schedule or 0.0)) for t in tasks)
        n = len(durs)
        mean = sum(durs) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in durs) / n)
        cpu = max(t.cpu for t in tasks) * CPU_SCALE
        mem = max(t.mem for t in tasks) * MEM_SCALE_MB
        report.kept += 1
        yield JobSpec(
            id=jid,
            arrival=arrival - origin,
            name="",  # no recurring-job identity in the trace (see loaders/__init__.py)
            phases=(PhaseSpec(id="tasks", tasks=n, cpu=cpu, mem_mb=mem, mean=mean, sd=sd, durations=durs),),
        )
