"""Alibaba cluster-trace-v2018 batch DAGs into native jobs (../shared/traces/README.md section 2).

Three inputs are recognised from their first line:

* the raw `batch_task` table (header `task_name,instance_num,job_name,...`, e.g. `selected_DAGs.csv.gz`):
  a task's duration is end_time - start_time, a job arrives at its earliest start_time (shifted so the
  trace starts at 0); jobs with a task that is not `Terminated` are skipped with that reason;
* the Spår task sample (7 fields, 4th numeric): the task's duration is used as the mean run time of each of
  its instances (an upper estimate: the task's span includes its slowest instance);
* the Spår instance sample (7 fields, 4th `ins_...`): per-instance durations become the phase's `durations`
  (trace replay); CPU/memory requests come from the task sample next to it (`spar_sample_tasks.csv[.gz]`
  in the same folder) if present, else from the instances' average usage.

DAG encoding (trace_2018.md section 2.3): in `R2_1` the first number is the task's own id and the rest are
the ids it depends on; names like `task_...` or `MergeTask` are independent tasks. Dependencies on ids missing
from the job (names cut to 50 characters in the raw trace) are dropped and counted in the report's notes.
Units: CPU 100 = 1 core; memory is normalised to the largest machine (100) which we take as 512 GiB.
Durations of 0 s (the trace rounds to whole seconds) become 0.5 s.
"""

from __future__ import annotations

import csv
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.sim.textio import open_text
from pyscheduler.sim.workload import JobSpec, LoadReport, PhaseSpec, validate_dag

MEM_SCALE_MB = 512 * 1024 / 100.0  # normalised memory 100 = 512 GiB
MIN_DURATION = 0.5
TRUNCATED_NAME_LEN = 50
_NAME = re.compile(r"^[A-Za-z]+(\d+)((?:_\d*)*)$")


@dataclass(slots=True)
class _Task:
    name: str
    instances: int
    cpu: float
    mem: float
    durations: list[float] = field(default_factory=list)
    duration: float = 0.0


@dataclass(slots=True)
class _Job:
    name: str
    arrival: float
    tasks: dict[str, _Task] = field(default_factory=dict)
    bad: str | None = None
    first_line: int = 0


def parse_task_name(name: str) -> tuple[str | None, tuple[str, ...]]:
    """`R2_1` -> ("2", ("1",)); independent names -> (None, ())."""
    m = _NAME.match(name)
    if not m:
        return None, ()
    deps = [x for x in m.group(2).split("_") if x]
    if len(name) >= TRUNCATED_NAME_LEN and deps:
        deps.pop()  # the raw trace cuts names at 50 characters: the last id may be a cut-off prefix
    return m.group(1), tuple(deps)


def _build(job: _Job, report: LoadReport, replay: bool) -> JobSpec | None:
    ids: dict[str, str] = {}
    for t in job.tasks.values():
        own, _ = parse_task_name(t.name)
        if own is not None:
            ids.setdefault(own, t.name)
    phases: list[PhaseSpec] = []
    dropped = 0
    for t in job.tasks.values():
        _, deps = parse_task_name(t.name)
        parents = []
        for d in deps:
            if d in ids and ids[d] != t.name:
                parents.append(ids[d])
            else:
                dropped += 1
        if replay:
            durs = tuple(max(MIN_DURATION, x) for x in t.durations)
            n = len(durs)
            mean = sum(durs) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in durs) / n)
            phases.append(
                PhaseSpec(
                    id=t.name,
                    tasks=n,
                    cpu=t.cpu,
                    mem_mb=t.mem,
                    mean=mean,
                    sd=sd,
                    parents=tuple(dict.fromkeys(parents)),
                    durations=durs,
                )
            )
        else:
            mean = max(MIN_DURATION, t.duration)
            phases.append(
                PhaseSpec(
                    id=t.name,
                    tasks=t.instances,
                    cpu=t.cpu,
                    mem_mb=t.mem,
                    mean=mean,
                    sd=0.0,
                    parents=tuple(dict.fromkeys(parents)),
                )
            )
    if dropped:
        report.notes.append(f"job {job.name}: dropped {dropped} dependencies on tasks not in the job")
    try:
        validate_dag(job.name, phases)
    except ValueError as exc:
        report.skip("invalid DAG", f"line {job.first_line}: {exc}")
        return None
    return JobSpec(
        id=job.name, arrival=job.arrival, phases=tuple(phases), name=""
    )  # no recurring-job identity in the trace (see loaders/__init__.py)


def _float(text: str, field_name: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{where}: field '{field_name}' is not a number: {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{where}: field '{field_name}' must be finite and >= 0, got {text!r}")
    return v


def _sibling_tasks(path: Path) -> Path | None:
    for name in ("spar_sample_tasks.csv.gz", "spar_sample_tasks.csv"):
        cand = path.parent / name
        if cand.exists() and cand != path:
            return cand
    return None


def iter_alibaba(path: str | Path, report: LoadReport) -> Iterator[JobSpec]:
    p = Path(path)
    with open_text(p) as fh:
        first = fh.readline()
    if first.startswith("task_name"):
        jobs = _read_raw(p, report)
        replay = False
    else:
        cols = first.rstrip("\r\n").split(",")
        replay = len(cols) >= 4 and cols[3].startswith("ins_")
        jobs = _read_spar_instances(p, report) if replay else _read_spar_tasks(p, report, {})[0]
    for job in jobs:
        report.read += 1
        if job.bad is not None:
            report.skip(job.bad)
            continue
        spec = _build(job, report, replay)
        if spec is not None:
            report.kept += 1
            yield spec


def _read_raw(path: Path, report: LoadReport) -> list[_Job]:
    jobs: dict[str, _Job] = {}
    with open_text(path) as fh:
        reader = csv.reader(fh)
        next(reader)
        for lineno, row in enumerate(reader, 2):
            where = f"{path}:{lineno}"
            if len(row) < 9:
                report.errors.append(f"{where}: expected 9 fields, got {len(row)}")
                jname = row[2] if len(row) > 2 else f"?line{lineno}"
                jobs.setdefault(jname, _Job(jname, 0.0, first_line=lineno)).bad = "malformed line"
                continue
            tname, inst, jname, _type, status, start, end, cpu, mem = row[:9]
            job = jobs.setdefault(jname, _Job(jname, math.inf, first_line=lineno))
            if status != "Terminated":
                job.bad = job.bad or "task not Terminated"
                continue
            try:
                st, en = _float(start, "start_time", where), _float(end, "end_time", where)
                t = _Task(
                    tname,
                    int(_float(inst, "instance_num", where)),
                    _float(cpu, "plan_cpu", where) / 100,
                    _float(mem, "plan_mem", where) * MEM_SCALE_MB,
                    duration=en - st,
                )
            except ValueError as exc:
                if len(report.errors) < report.max_errors_kept:
                    report.errors.append(str(exc))
                job.bad = job.bad or "malformed line"
                continue
            if t.instances < 1 or t.cpu <= 0 or t.mem <= 0 or en < st or st == 0:
                job.bad = job.bad or "zero instances, request or time"
                continue
            job.tasks[tname] = t
            job.arrival = min(job.arrival, st)
    valid = [j.arrival for j in jobs.values() if j.bad is None and math.isfinite(j.arrival)]
    origin = min(valid) if valid else 0.0
    for j in jobs.values():
        j.arrival = j.arrival - origin if math.isfinite(j.arrival) else 0.0
    return sorted(jobs.values(), key=lambda j: (j.arrival, j.name))


def _read_spar_tasks(
    path: Path, report: LoadReport, only: dict[str, _Job]
) -> tuple[list[_Job], dict[tuple[str, str], _Task]]:
    jobs: dict[str, _Job] = {}
    tasks: dict[tuple[str, str], _Task] = {}
    with open_text(path) as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            where = f"{path}:{lineno}"
            if len(row) < 7:
                report.errors.append(f"{where}: expected 7 fields, got {len(row)}")
                continue
            arrival, jname, tname, dur, cpu, mem, inst = row[:7]
            if only and jname not in only:
                continue
            job = jobs.setdefault(jname, _Job(jname, 0.0, first_line=lineno))
            try:
                job.arrival = _float(arrival, "arrival", where)
                t = _Task(
                    tname,
                    int(_float(inst, "instances", where)),
                    _float(cpu, "cpu", where) / 100,
                    _float(mem, "mem", where) * MEM_SCALE_MB,
                    duration=_float(dur, "duration", where),
                )
            except ValueError as exc:
                if len(report.errors) < report.max_errors_kept:
                    report.errors.append(str(exc))
                job.bad = "malformed line"
                continue
            if t.instances < 1 or t.cpu <= 0 or t.mem <= 0:
                job.bad = job.bad or "zero instances or request"
                continue
            job.tasks[tname] = t
            tasks[(jname, tname)] = t
    return list(jobs.values()), tasks


def _read_spar_instances(path: Path, report: LoadReport) -> list[_Job]:
    jobs: dict[str, _Job] = {}
    usage: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    with open_text(path) as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            where = f"{path}:{lineno}"
            if len(row) < 7:
                report.errors.append(f"{where}: expected 7 fields, got {len(row)}")
                if len(row) > 1:
                    jobs.setdefault(row[1], _Job(row[1], 0.0, first_line=lineno)).bad = "malformed line"
                continue
            arrival, jname, tname, _ins, dur, cpu, mem = row[:7]
            job = jobs.setdefault(jname, _Job(jname, 0.0, first_line=lineno))
            try:
                job.arrival = _float(arrival, "arrival", where)
                d = _float(dur, "duration", where)
                u = usage[(jname, tname)]
                u[0] += _float(cpu, "cpu_avg", where)
                u[1] += _float(mem, "mem_avg", where)
                u[2] += 1
            except ValueError as exc:
                if len(report.errors) < report.max_errors_kept:
                    report.errors.append(str(exc))
                job.bad = "malformed line"
                continue
            task = job.tasks.get(tname)
            if task is None:
                task = job.tasks[tname] = _Task(tname, 0, 0.0, 0.0)
            task.durations.append(d)
            task.instances += 1
    sib = _sibling_tasks(path)
    requests: dict[tuple[str, str], _Task] = {}
    if sib is not None:
        _, requests = _read_spar_tasks(sib, LoadReport(str(sib)), jobs)
        report.notes.append(f"CPU/memory requests taken from {sib}")
    else:
        report.notes.append("no spar_sample_tasks file beside the instances: requests = average usage")
    for (jname, tname), (csum, msum, n) in usage.items():
        t = jobs[jname].tasks.get(tname)
        if t is None:
            continue
        req = requests.get((jname, tname))
        if req is not None:
            t.cpu, t.mem = req.cpu, req.mem
        else:
            t.cpu = max(csum / n / 100, 0.01)
            t.mem = max(msum / n * MEM_SCALE_MB, 1.0)
    return sorted(jobs.values(), key=lambda j: (j.arrival, j.name))
