"""An operator's own YARN history into native jobs: the MapReduce JobHistory server's and the RM's REST
answers, saved as JSON Lines (format `yarn-history`; `dollymp bench record-history` writes one from a
running cluster, pyscheduler/deploy/yarnhistory.py).

The file: a first line `{"format": "dollymp-yarn-history", "version": 1, ...}`, then one line per
MapReduce job holding the JobHistory server's answers for it as Hadoop gives them, and the RM's
application record of the same id:

    {"job":   <GET /ws/v1/history/mapreduce/jobs/{id}: its "job" object>,
     "conf":  {"mapreduce.map.memory.mb": "1024", ...}   (from .../jobs/{id}/conf; the four sizes below),
     "tasks": [<.../jobs/{id}/tasks: each "task" object, with "attempts": its .../attempts list>],
     "app":   <GET /ws/v1/cluster/apps: the "app" object whose id is the job's, or null>}

An operator without the recorder can write the same lines with curl and jq.

Each job becomes a map phase and, when it has reduces, a reduce phase after it (the two stages of a
MapReduce job). A task's time is the elapsed time of its successful attempt (what the trace replays,
stragglers included; the simulator's straggler model then draws clones from the phase's times as for the
other traces, DollyMP Sec. 6.3); its container is the job's configured size (`mapreduce.{map,reduce}.
{memory.mb,cpu.vcores}`, Hadoop's defaults 1024 MB and 1 vcore when not recorded). A job arrives at its
submit time, shifted so the history starts at 0. Its name is its recurring-job identity (DollyMP Sec.
5.2), qualified by its queue and user (`queue/user/name`): a history's job names are the operator's own,
and the same name in two queues is two tenants' jobs.

Jobs that did not succeed, and tasks without a successful attempt, are left out with that reason (a
failed job's times say nothing of its run). A line that is not a JSON object, or a field that is missing,
of the wrong type, negative or not finite, is malformed: it is counted under the loaders' malformed
reasons with the line and field, which `bench sls` refuses (bench/sls_trace.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyscheduler.sim.textio import open_text
from pyscheduler.sim.workload import JobSpec, LoadReport, PhaseSpec

FORMAT = "dollymp-yarn-history"
VERSION = 1
MIN_DURATION = 0.5  # seconds: a task's time below this (a recorded 0 ms) is taken as this
SIZES = (
    "mapreduce.map.memory.mb",
    "mapreduce.map.cpu.vcores",
    "mapreduce.reduce.memory.mb",
    "mapreduce.reduce.cpu.vcores",
)
DEFAULT_MEMORY_MB = 1024.0  # Hadoop's mapreduce.{map,reduce}.memory.mb default
DEFAULT_VCORES = 1.0


class _Malformed(ValueError):
    def __init__(self, reason: str, field: str, what: str) -> None:
        super().__init__(what)
        self.reason = reason
        self.field = field


def _number(obj: dict[str, Any], key: str, where: str) -> float:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Malformed("non-numeric field", key, f"{where}: {key} is {v!r}, not a number")
    if not math.isfinite(v) or v < 0:
        raise _Malformed("negative or non-finite field", key, f"{where}: {key} {v!r} must be finite and >= 0")
    return float(v)


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v:
        raise _Malformed("malformed line", key, f"{where}: {key} is {v!r}, not a non-empty string")
    return v


def _size(conf: dict[str, Any], key: str, default: float) -> float:
    v = conf.get(key)
    if v is None:
        return default
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise _Malformed("non-numeric field", key, f"conf: {key} is {v!r}, not a number") from None
    if not math.isfinite(x) or x <= 0:
        raise _Malformed("negative or non-finite field", key, f"conf: {key} {v!r} must be finite and > 0")
    return x


def _task_time(task: dict[str, Any], where: str) -> float | None:
    """Seconds of the task's successful attempt (None: it has none)."""
    attempts = task.get("attempts")
    if not isinstance(attempts, list):
        raise _Malformed("malformed line", "attempts", f"{where}: attempts is not a list")
    for a in attempts:
        if not isinstance(a, dict):
            raise _Malformed("malformed line", "attempts", f"{where}: an attempt is not an object")
        if a.get("state") == "SUCCEEDED":
            return max(MIN_DURATION, _number(a, "elapsedTime", f"{where} attempt {a.get('id')!r}") / 1000.0)
    return None


def _job(record: dict[str, Any], report: LoadReport, lineno: int) -> tuple[float, JobSpec] | None:
    """(submit time in seconds, the job with arrival 0) of one line, None when left out."""
    job = record.get("job")
    if not isinstance(job, dict):
        raise _Malformed("invalid job", "job", "no job object")
    job_id = _text(job, "id", "job")
    where = f"job {job_id}"
    submit = _number(job, "submitTime", where) / 1000.0
    if job.get("state") != "SUCCEEDED":
        report.skip("job did not succeed", None)
        return None
    conf = record.get("conf") or {}
    tasks = record.get("tasks")
    if not isinstance(conf, dict):
        raise _Malformed("malformed line", "conf", f"{where}: conf is not an object")
    if not isinstance(tasks, list) or not tasks:
        raise _Malformed("malformed line", "tasks", f"{where}: tasks is not a non-empty list")
    times: dict[str, list[float]] = {"MAP": [], "REDUCE": []}
    lost = 0
    for t in tasks:
        if not isinstance(t, dict):
            raise _Malformed("malformed line", "tasks", f"{where}: a task is not an object")
        kind = t.get("type")
        if kind not in times:
            raise _Malformed("malformed line", "type", f"{where} task {t.get('id')!r}: type {kind!r}")
        seconds = _task_time(t, f"{where} task {t.get('id')!r}")
        if seconds is None:
            lost += 1
        else:
            times[kind].append(seconds)
    if lost:
        report.notes.append(f"line {lineno}: {where}: {lost} task(s) without a successful attempt left out")
    if not times["MAP"]:
        report.skip("job without a successful map", None)
        return None
    phases = []
    for kind, pid, parents in (("MAP", "map", ()), ("REDUCE", "reduce", ("map",))):
        durs = tuple(times[kind])
        if not durs:
            continue
        mean = sum(durs) / len(durs)
        phases.append(
            PhaseSpec(
                id=pid,
                tasks=len(durs),
                cpu=_size(conf, f"mapreduce.{pid}.cpu.vcores", DEFAULT_VCORES),
                mem_mb=_size(conf, f"mapreduce.{pid}.memory.mb", DEFAULT_MEMORY_MB),
                mean=mean,
                sd=math.sqrt(sum((x - mean) ** 2 for x in durs) / len(durs)),
                parents=parents,
                durations=durs,
            )
        )
    name = str(job.get("name") or "")
    queue, user = str(job.get("queue") or ""), str(job.get("user") or "")
    app = record.get("app")
    if isinstance(app, dict):  # the RM's record names the queue the application ran in
        queue = str(app.get("queue") or queue)
        user = str(app.get("user") or user)
    qualified = f"{queue}/{user}/{name}" if name else ""
    return submit, JobSpec(id=job_id, arrival=0.0, phases=tuple(phases), name=qualified)


def iter_yarn_history(path: str | Path, report: LoadReport) -> Iterator[JobSpec]:
    p = Path(path)
    kept: list[tuple[float, JobSpec]] = []
    with open_text(p) as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.strip()
            if not text:
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                report.read += 1
                report.skip("invalid JSON", f"{p}:{lineno}: field 'json' invalid JSON ({exc.msg})")
                continue
            if lineno == 1 or (isinstance(record, dict) and "format" in record):
                if not isinstance(record, dict) or record.get("format") != FORMAT:
                    report.skip("malformed line", f"{p}:{lineno}: field 'format' is not {FORMAT!r}")
                    return
                if record.get("version") != VERSION:
                    report.skip(
                        "malformed line",
                        f"{p}:{lineno}: field 'version' {record.get('version')!r} not {VERSION}",
                    )
                    return
                continue
            report.read += 1
            if not isinstance(record, dict):
                report.skip("malformed line", f"{p}:{lineno}: field 'job' the line is not a JSON object")
                continue
            try:
                got = _job(record, report, lineno)
            except _Malformed as exc:
                report.skip(exc.reason, f"{p}:{lineno}: field '{exc.field}' {exc}")
                continue
            if got is not None:
                kept.append(got)
    if not kept:
        return
    t0 = min(s for s, _ in kept)
    for submit, job in kept:
        report.kept += 1
        yield JobSpec(id=job.id, arrival=submit - t0, phases=job.phases, name=job.name)
