"""A trace slice as Hadoop SLS input: the Rumen trace, the node file, the workload for `dollymp simulate`.

`convert` takes a trace the simulator's loaders read (FB-2010 via `swim`, the Alibaba sample via `alibaba`,
a native JSONL workload), keeps `jobs` consecutive jobs from `start`, and writes into one directory:

* `trace.json`: SLS's Rumen input, one job object per line. SLS 3.4.3 rebases every Rumen job on its own
  start, so the job id carries the arrival: `job_<arrival ms>_<index>`; the project's SLS AM simulator
  (yarn-plugin `DollyMPAMSimulator`) schedules itself at that arrival and takes `<index>` as the job's
  position for the straggler draws (the simulator's common random numbers, pyscheduler/sim/straggler.py).
  Each task's attempt duration is its base time; the straggler slowdown is drawn in SLS, not written here;
* `nodes.json`: the SLS node file (`nodes` NodeManagers, racks of 40);
* `workload.jsonl` and `cluster.json`: exactly what SLS runs, for `dollymp simulate`: two phases per job
  (a DAG's root stages become the map phase, every later stage one reduce phase, as SLS's MapReduce AM has
  two), every task one SLS container (`container_vcores`, `container_mem_mb`), explicit per-task base
  times (drawn once here, seeded, where the trace gives a phase's mean and sd only);
* `meta.json`: what was kept and how times were scaled.

Times: arrivals are compressed to reach `target_load` (offered load with E[slowdown], DollyMP Eq. 15, on
the SLS cluster), and base times multiplied by `time_scale`, so a run fits the time SLS has (it runs in
real time).

Bad input is refused, not skipped: an empty file, a line the loader could not read, a task with a
negative, non-finite or absurd (> `max_task_s`) duration raises `SlsInputError` naming the file, the line
and the field. Nothing is half-written: the files go to a temporary directory beside the output, renamed
into place once all are written.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.runner import offered_load, scale_to_load
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.textio import open_text
from pyscheduler.sim.workload import ClusterSpec, JobSpec, LoadReport, NodeSpec, PhaseSpec, job_to_json

# Loader skip reasons that mean the input is malformed (refused); others (an Alibaba task that did not
# terminate, a job with no instances) are the trace's own and are left out with a note.
MALFORMED = frozenset(
    {
        "too few fields",
        "non-numeric field",
        "negative or non-finite field",
        "missing or duplicate job id",
        "invalid JSON",
        "invalid job",
        "duplicate job id",
        "malformed line",
        "invalid DAG",
    }
)
RACK_SIZE = 40
DEFAULT_STRAGGLER = StragglerSpec(cap=20.0)  # the simulator's default, pareto:alpha=1.5,cap=20


class SlsInputError(ValueError):
    """Input the converter refuses, with where: file, line (0 when the file as a whole), field."""

    def __init__(self, path: str | Path, line: int, field: str, message: str) -> None:
        super().__init__(f"{path}:{line}: field '{field}': {message}")
        self.path, self.line, self.field = str(path), line, field


@dataclass(frozen=True, slots=True)
class SlsCluster:
    nodes: int = 1000
    nm_vcores: int = 8
    nm_mem_mb: int = 16384
    container_vcores: int = 1
    container_mem_mb: int = 1024

    def spec(self) -> ClusterSpec:
        return ClusterSpec(nodes=(NodeSpec(cpu=self.nm_vcores, mem_mb=self.nm_mem_mb),) * self.nodes)


@dataclass(frozen=True, slots=True)
class Slice:
    jobs: list[JobSpec]
    report: LoadReport
    offered_load: float
    arrival_factor: float


def _line_of(path: Path, token: str) -> int:
    """The first line of `path` holding `token` (a job id) as a whole word, 0 if none."""
    word = re.compile(rf"(?<![\w.-]){re.escape(token)}(?![\w.-])")
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if word.search(line):
                return lineno
    return 0


def _check_native_lines(path: Path, max_task_s: float) -> None:
    """A native workload's task times, line by line (the loader's own messages do not all name the line)."""
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise SlsInputError(path, lineno, "json", f"invalid JSON ({exc.msg})") from None
            phases = obj.get("phases") if isinstance(obj, dict) else None
            for ph in phases if isinstance(phases, list) else ():
                if not isinstance(ph, dict):
                    continue
                for key in ("durations", "mean"):
                    raw = ph.get(key)
                    values = raw if isinstance(raw, list) else [] if raw is None else [raw]
                    for v in values:
                        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                        if not ok or v < 0 or v > max_task_s:
                            why = (
                                "negative"
                                if ok and v < 0
                                else f"> {max_task_s:g} s (absurd)"
                                if ok
                                else "not a number"
                            )
                            raise SlsInputError(
                                path, lineno, key, f"phase {ph.get('id')!r}: task time {v!r} {why}"
                            )


def _refuse_malformed(path: Path, report: LoadReport) -> None:
    bad = {k: v for k, v in report.skipped.items() if k in MALFORMED}
    if not bad:
        return
    text = next((e for e in report.errors if e), "")
    # The loaders' errors read "<path>:<line>: field '<name>' ..." or "<path>:<line>: <what>".
    head, _, rest = text.partition(": ")
    line = int(head.rsplit(":", 1)[1]) if ":" in head and head.rsplit(":", 1)[1].isdigit() else 0
    field = rest.split("'")[1] if "field '" in rest else next(iter(bad))
    raise SlsInputError(
        path, line, field, f"{rest or next(iter(bad))} ({sum(bad.values())} bad line(s) in all)"
    )


def _check_task_times(path: Path, job: JobSpec, max_task_s: float) -> None:
    for p in job.phases:
        values = p.durations if p.durations is not None else (p.mean,)
        field = "durations" if p.durations is not None else "mean"
        for v in values:
            if not math.isfinite(v) or v <= 0 or v > max_task_s:
                why = (
                    "not finite"
                    if not math.isfinite(v)
                    else "<= 0"
                    if v <= 0
                    else f"> {max_task_s:g} s (absurd)"
                )
                raise SlsInputError(
                    path,
                    _line_of(path, job.id),
                    field,
                    f"job '{job.id}' phase '{p.id}': task time {v!r} {why}",
                )
        if not math.isfinite(job.arrival) or job.arrival < 0:
            raise SlsInputError(path, _line_of(path, job.id), "arrival", f"job '{job.id}': {job.arrival!r}")


def _two_phases(job: JobSpec, cluster: SlsCluster, rng: np.random.Generator, time_scale: float) -> JobSpec:
    """The job as SLS's MapReduce AM runs it: roots -> map, later stages -> one reduce; a container a task."""
    roots = [p for p in job.phases if not p.parents]
    rest = [p for p in job.phases if p.parents]

    def bases(p: PhaseSpec) -> list[float]:
        if p.durations is not None:
            return list(p.durations)
        if p.sd <= 0:
            return [p.mean] * p.tasks
        sigma2 = math.log1p((p.sd / p.mean) ** 2)
        out: list[float] = rng.lognormal(math.log(p.mean) - sigma2 / 2, math.sqrt(sigma2), p.tasks).tolist()
        return out

    def merged(pid: str, group: Sequence[PhaseSpec], parents: tuple[str, ...]) -> PhaseSpec:
        durs = [max(0.001, round(d * time_scale, 3)) for p in group for d in bases(p)]
        return PhaseSpec(
            id=pid,
            tasks=len(durs),
            cpu=float(cluster.container_vcores),
            mem_mb=float(cluster.container_mem_mb),
            mean=sum(durs) / len(durs),
            sd=0.0,
            parents=parents,
            durations=tuple(durs),
        )

    phases = [merged("map", roots, ())]
    if rest:
        phases.append(merged("reduce", rest, ("map",)))
    return replace(job, phases=tuple(phases), name="")


def take_slice(
    path: str | Path,
    fmt: str,
    *,
    jobs: int,
    start: int = 0,
    cluster: SlsCluster = SlsCluster(),
    straggler: StragglerSpec = DEFAULT_STRAGGLER,
    target_load: float | None = 0.8,
    time_scale: float = 1.0,
    max_task_s: float = 86400.0,
    max_tasks_per_job: int | None = None,
    seed: int = 1,
) -> Slice:
    """`jobs` consecutive jobs by arrival from the `start`-th, validated and put in SLS's shape."""
    p = Path(path)
    if not p.exists():
        raise SlsInputError(p, 0, "path", "no such file")
    if p.is_file() and p.stat().st_size == 0:
        raise SlsInputError(p, 0, "jobs", "empty file")
    if fmt == "native":
        _check_native_lines(p, max_task_s)
    loaded, report = load_workload(p, fmt, seed=seed)
    _refuse_malformed(p, report)
    if not loaded:
        raise SlsInputError(p, 0, "jobs", "no jobs in the file")
    window = loaded[start : start + jobs]
    if len(window) < jobs:
        raise SlsInputError(
            p, 0, "jobs", f"{len(loaded)} jobs from #{start}: fewer than the {jobs} asked for"
        )
    for job in window:
        _check_task_times(p, job, max_task_s)
    rng = np.random.default_rng(seed)
    shaped = [_two_phases(j, cluster, rng, time_scale) for j in window]
    if max_tasks_per_job is not None:
        shaped = [_cap_tasks(j, max_tasks_per_job) for j in shaped]
    t0 = shaped[0].arrival
    shaped = [replace(j, arrival=(j.arrival - t0) * time_scale) for j in shaped]
    load = offered_load(shaped, cluster.spec(), straggler.mean_slowdown)
    factor = 1.0
    if target_load is not None and load > 0:
        factor = load / target_load
        shaped = scale_to_load(shaped, factor)
    return Slice(jobs=shaped, report=report, offered_load=load / factor, arrival_factor=factor)


def _cap_tasks(job: JobSpec, cap: int) -> JobSpec:
    """At most `cap` tasks a phase, the phase's work kept (the longest base times kept, scaled up)."""
    phases = []
    for p in job.phases:
        if p.tasks <= cap or p.durations is None:
            phases.append(p)
            continue
        keep = sorted(p.durations, reverse=True)[:cap]
        k = sum(p.durations) / sum(keep)
        durs = tuple(round(d * k, 3) for d in keep)
        phases.append(replace(p, tasks=cap, durations=durs, mean=sum(durs) / cap))
    return replace(job, phases=tuple(phases))


def _rumen(index: int, job: JobSpec) -> dict[str, Any]:
    arrival_ms = round(job.arrival * 1000)
    jid = f"job_{arrival_ms}_{index:04d}"

    def tasks(p: PhaseSpec, kind: str) -> list[dict[str, Any]]:
        letter = "m" if kind == "MAP" else "r"
        out = []
        for t, d in enumerate(p.durations or ()):
            end = arrival_ms + max(1, round(d * 1000))
            tid = f"task_{arrival_ms}_{index:04d}_{letter}_{t:06d}"
            out.append(
                {
                    "taskID": tid,
                    "taskType": kind,
                    "startTime": arrival_ms,
                    "finishTime": end,
                    "attempts": [
                        {
                            "attemptID": "attempt" + tid[4:] + "_0",
                            "startTime": arrival_ms,
                            "finishTime": end,
                            "hostName": "/rack0/nm0",
                            "result": "SUCCESS",
                        }
                    ],
                }
            )
        return out

    by_id = {p.id: p for p in job.phases}
    return {
        "jobID": jid,
        "user": "default",
        "queue": "default",
        "submitTime": arrival_ms,
        "launchTime": arrival_ms,
        "finishTime": arrival_ms + 1,
        "mapTasks": tasks(by_id["map"], "MAP"),
        "reduceTasks": tasks(by_id["reduce"], "REDUCE") if "reduce" in by_id else [],
        "otherTasks": [],
    }


def node_file_lines(nodes: int) -> list[str]:
    racks = []
    for r in range(0, nodes, RACK_SIZE):
        racks.append(
            json.dumps(
                {
                    "rack": f"rack{r // RACK_SIZE}",
                    "nodes": [{"node": f"nm{i}"} for i in range(r, min(nodes, r + RACK_SIZE))],
                }
            )
        )
    return racks


def write_slice(out_dir: str | Path, sl: Slice, cluster: SlsCluster, meta: dict[str, Any]) -> Path:
    """Writes the slice's files into `out_dir` (replaced whole), through a temporary sibling directory."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        with open(tmp / "trace.json", "w", encoding="utf-8") as fh:
            for i, job in enumerate(sl.jobs):
                fh.write(json.dumps(_rumen(i, job)) + "\n")
        (tmp / "nodes.json").write_text("\n".join(node_file_lines(cluster.nodes)) + "\n", encoding="utf-8")
        with open(tmp / "workload.jsonl", "w", encoding="utf-8") as fh:
            for i, job in enumerate(sl.jobs):
                fh.write(json.dumps(job_to_json(replace(job, id=f"j{i:04d}"))) + "\n")
        cluster_json = {
            "nodes": [{"count": cluster.nodes, "cpu": cluster.nm_vcores, "mem_mb": cluster.nm_mem_mb}]
        }
        (tmp / "cluster.json").write_text(json.dumps(cluster_json) + "\n", encoding="utf-8")
        full = dict(meta)
        full.update(
            jobs=len(sl.jobs),
            tasks=sum(j.task_count for j in sl.jobs),
            offered_load=round(sl.offered_load, 4),
            arrival_factor=round(sl.arrival_factor, 6),
            span_s=round(sl.jobs[-1].arrival - sl.jobs[0].arrival, 3),
            loader=sl.report.summary(),
        )
        (tmp / "meta.json").write_text(json.dumps(full, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / "x")
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def convert(
    path: str | Path, fmt: str, out_dir: str | Path, *, cluster: SlsCluster = SlsCluster(), **options: Any
) -> Path:
    """take_slice + write_slice; refuses bad input before anything is written."""
    sl = take_slice(path, fmt, cluster=cluster, **options)
    meta = {
        "source": str(path),
        "format": fmt,
        "nodes": cluster.nodes,
        **{k: str(v) for k, v in options.items()},
    }
    return write_slice(out_dir, sl, cluster, meta)
