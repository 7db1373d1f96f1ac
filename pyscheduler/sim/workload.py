"""The native workload and cluster formats (../shared/notes/design.md, "Formats the project owns").

A workload is a list of `JobSpec`; each job is a DAG of `PhaseSpec`. Every loader (native, SWIM, Alibaba,
Google) produces these and a `LoadReport` that counts jobs read, skipped (with the reason) and kept, so a run
never drops a job silently. Malformed input raises or records a `TraceError` naming file, line and field.

Additive field beyond design.md: a phase may carry `read_mb`, the intermediate data (MB) each of its tasks
reads from its parent phases; the simulator turns it into a shuffle read with bandwidth and contention.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscheduler.sim.textio import open_text


class TraceError(ValueError):
    """A malformed trace or workload line, with its location."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    id: str
    tasks: int
    cpu: float
    mem_mb: float
    mean: float
    sd: float
    parents: tuple[str, ...] = ()
    durations: tuple[float, ...] | None = None
    read_mb: float = 0.0


@dataclass(frozen=True, slots=True)
class JobSpec:
    id: str
    arrival: float
    phases: tuple[PhaseSpec, ...]
    name: str = ""

    @property
    def task_count(self) -> int:
        return sum(p.tasks for p in self.phases)


@dataclass(frozen=True, slots=True)
class NodeSpec:
    cpu: float
    mem_mb: float
    speed: float = 1.0


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    nodes: tuple[NodeSpec, ...]

    @property
    def total_cpu(self) -> float:
        return sum(n.cpu for n in self.nodes)

    @property
    def total_mem_mb(self) -> float:
        return sum(n.mem_mb for n in self.nodes)


@dataclass(slots=True)
class LoadReport:
    """What a loader did: jobs read, skipped by reason, kept; the first few errors verbatim."""

    source: str
    read: int = 0
    kept: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    max_errors_kept: int = 20

    def skip(self, reason: str, error: str | None = None) -> None:
        self.skipped[reason] += 1
        if error is not None and len(self.errors) < self.max_errors_kept:
            self.errors.append(error)

    def summary(self) -> str:
        skipped = sum(self.skipped.values())
        text = f"{self.source}: read {self.read} jobs, kept {self.kept}, skipped {skipped}"
        if self.skipped:
            text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items())) + ")"
        return text


def _num(obj: dict[str, Any], key: str, where: str, *, minimum: float = 0.0, strict: bool = False) -> float:
    if key not in obj:
        raise ValueError(f"{where}: missing field '{key}'")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: field '{key}' must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < minimum or (strict and v <= minimum):
        op = ">" if strict else ">="
        raise ValueError(f"{where}: field '{key}' must be finite and {op} {minimum}, got {value!r}")
    return v


def validate_dag(job_id: str, phases: Iterable[PhaseSpec]) -> None:
    """Parents must name phases of the same job and the phase graph must be acyclic."""
    by_id: dict[str, PhaseSpec] = {}
    for p in phases:
        if p.id in by_id:
            raise ValueError(f"job {job_id}: duplicate phase id '{p.id}'")
        by_id[p.id] = p
    for p in by_id.values():
        for parent in p.parents:
            if parent not in by_id:
                raise ValueError(
                    f"job {job_id}: phase '{p.id}' field 'parents' names unknown phase '{parent}'"
                )
    state: dict[str, int] = {}

    def visit(pid: str) -> None:
        stack = [(pid, iter(by_id[pid].parents))]
        state[pid] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                raise ValueError(f"job {job_id}: phase graph has a cycle through '{nxt}'")
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(by_id[nxt].parents)))

    for pid in by_id:
        if pid not in state:
            visit(pid)


def parse_phase(obj: Any, where: str) -> PhaseSpec:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a phase must be a JSON object")
    pid = obj.get("id")
    if not isinstance(pid, str) or not pid:
        raise ValueError(f"{where}: field 'id' must be a non-empty string")
    where = f"{where} phase '{pid}'"
    tasks = obj.get("tasks")
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
        raise ValueError(f"{where}: field 'tasks' must be an integer >= 1, got {tasks!r}")
    parents = obj.get("parents", [])
    if not isinstance(parents, list) or not all(isinstance(x, str) for x in parents):
        raise ValueError(f"{where}: field 'parents' must be a list of phase ids")
    durations: tuple[float, ...] | None = None
    if obj.get("durations") is not None:
        raw = obj["durations"]
        if not isinstance(raw, list) or len(raw) != tasks:
            raise ValueError(f"{where}: field 'durations' must be a list of {tasks} numbers")
        durations = tuple(_num({"d": d}, "d", f"{where} field 'durations'", minimum=0.0) for d in raw)
    mean = _num(obj, "mean", where, strict=True) if durations is None or "mean" in obj else 0.0
    if durations is not None and "mean" not in obj:
        mean = max(sum(durations) / len(durations), 1e-9)
    sd = _num(obj, "sd", where) if "sd" in obj else 0.0
    return PhaseSpec(
        id=pid,
        tasks=tasks,
        cpu=_num(obj, "cpu", where, strict=True),
        mem_mb=_num(obj, "mem_mb", where, strict=True),
        mean=mean,
        sd=sd,
        parents=tuple(parents),
        durations=durations,
        read_mb=_num(obj, "read_mb", where) if "read_mb" in obj else 0.0,
    )


def parse_job(obj: Any, where: str) -> JobSpec:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a job must be a JSON object")
    jid = obj.get("id")
    if not isinstance(jid, str | int) or isinstance(jid, bool) or str(jid) == "":
        raise ValueError(f"{where}: field 'id' must be a non-empty string")
    jid = str(jid)
    phases_raw = obj.get("phases")
    if not isinstance(phases_raw, list) or not phases_raw:
        raise ValueError(f"{where} job '{jid}': field 'phases' must be a non-empty list")
    phases = tuple(parse_phase(p, f"{where} job '{jid}'") for p in phases_raw)
    try:
        validate_dag(jid, phases)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    name = obj.get("name", "")
    return JobSpec(
        id=jid, arrival=_num(obj, "arrival", f"{where} job '{jid}'"), phases=phases, name=str(name)
    )


def iter_native(path: str | Path, report: LoadReport) -> Iterator[JobSpec]:
    """Native JSON Lines: one job per line; blank lines and lines starting with '#' are ignored."""
    seen: set[str] = set()
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            report.read += 1
            try:
                job = parse_job(json.loads(text), f"{path}:{lineno}")
            except json.JSONDecodeError as exc:
                report.skip("invalid JSON", f"{path}:{lineno}: invalid JSON ({exc.msg})")
                continue
            except ValueError as exc:
                report.skip("invalid job", str(exc))
                continue
            if job.id in seen:
                report.skip("duplicate job id", f"{path}:{lineno}: duplicate job id '{job.id}'")
                continue
            seen.add(job.id)
            report.kept += 1
            yield job


def job_to_json(job: JobSpec) -> dict[str, Any]:
    phases: list[dict[str, Any]] = []
    for p in job.phases:
        d: dict[str, Any] = {
            "id": p.id,
            "tasks": p.tasks,
            "cpu": p.cpu,
            "mem_mb": p.mem_mb,
            "mean": round(p.mean, 6),
            "sd": round(p.sd, 6),
            "parents": list(p.parents),
        }
        if p.durations is not None:
            d["durations"] = [round(x, 6) for x in p.durations]
        if p.read_mb:
            d["read_mb"] = round(p.read_mb, 6)
        phases.append(d)
    out: dict[str, Any] = {"id": job.id, "arrival": job.arrival}
    if job.name:
        out["name"] = job.name
    out["phases"] = phases
    return out


def load_cluster(path: str | Path) -> ClusterSpec:
    """Cluster JSON: {"nodes": [{"count": 2, "cpu": 24, "mem_mb": 49152, "speed": 1.0}, ...]}."""
    try:
        with open_text(path) as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise TraceError(path, exc.lineno, f"invalid JSON ({exc.msg})") from exc
    return parse_cluster(data, str(path))


def parse_cluster(data: Any, where: str = "cluster") -> ClusterSpec:
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not data["nodes"]:
        raise ValueError(f"{where}: field 'nodes' must be a non-empty list")
    nodes: list[NodeSpec] = []
    for i, entry in enumerate(data["nodes"]):
        w = f"{where} nodes[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{w}: must be an object")
        count = entry.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{w}: field 'count' must be an integer >= 1, got {count!r}")
        spec = NodeSpec(
            cpu=_num(entry, "cpu", w, strict=True),
            mem_mb=_num(entry, "mem_mb", w, strict=True),
            speed=_num(entry, "speed", w, strict=True) if "speed" in entry else 1.0,
        )
        nodes.extend([spec] * count)
    return ClusterSpec(nodes=tuple(nodes))
