"""SWIM Facebook traces (FB-2009, FB-2010) into native jobs.

The trace gives per job only submit time and three byte counts (map input, shuffle, reduce output);
see ../shared/traces/README.md section 1. Tasks and run times are derived from the bytes as Hadoop would split
them, with these documented constants (all overridable through `SwimDerivation`):

* maps = ceil(map_input_bytes / split_bytes), at least 1. Split = 512 MiB (Hive's CombineHiveInputFormat
  packs several HDFS blocks per map). With it 84.7% of FB-2010 jobs have <= 10 tasks, closest to the 82% Dolly
  reports for the Facebook trace (Dolly Sec. 2.2); 128 MiB gives 74%, 1 GiB 88%;
* reduces = ceil(shuffle_bytes / bytes_per_reduce) (1 GiB per reducer, the usual Hive/Pig rule); a job with
  zero shuffle bytes is map-only (one phase);
* a phase never has more than `max_tasks` tasks: above that the bytes are spread over `max_tasks` larger
  tasks (run time grows with bytes per task, so the phase's work is preserved). This keeps a day of FB-2010
  simulable in Python within the performance target and still leaves jobs in Dolly's ">500 tasks" bin;
* map run time = task_overhead_s + bytes_per_map / map_rate, reduce run time = task_overhead_s +
  output_bytes_per_reduce / reduce_rate (the shuffle read itself is simulated separately through `read_mb`
  with bandwidth and contention), sd = cv * mean;
* containers: map 1 vcore / 1536 MB, reduce 1 vcore / 3072 MB (Hadoop MR defaults plus JVM headroom).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pyscheduler.sim.textio import open_text
from pyscheduler.sim.workload import JobSpec, LoadReport, PhaseSpec

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SwimDerivation:
    split_bytes: float = 512 * MIB
    bytes_per_reduce: float = 1024 * MIB
    max_tasks: int = 1000
    map_rate: float = 8 * MIB  # bytes/s a map task processes
    reduce_rate: float = 8 * MIB  # bytes/s a reduce task writes
    task_overhead_s: float = 4.0  # JVM start, task set-up and commit
    cv: float = 0.3
    map_cpu: float = 1.0
    map_mem_mb: float = 1536.0
    reduce_cpu: float = 1.0
    reduce_mem_mb: float = 3072.0


def derive_job(
    job_id: str, submit: float, map_in: int, shuffle: int, out: int, d: SwimDerivation = SwimDerivation()
) -> JobSpec:
    maps = min(d.max_tasks, max(1, math.ceil(map_in / d.split_bytes)))
    map_mean = d.task_overhead_s + (map_in / maps) / d.map_rate
    phases = [
        PhaseSpec(id="map", tasks=maps, cpu=d.map_cpu, mem_mb=d.map_mem_mb, mean=map_mean, sd=d.cv * map_mean)
    ]
    if shuffle > 0:
        reduces = min(d.max_tasks, max(1, math.ceil(shuffle / d.bytes_per_reduce)))
        red_mean = d.task_overhead_s + (out / reduces) / d.reduce_rate
        phases.append(
            PhaseSpec(
                id="reduce",
                tasks=reduces,
                cpu=d.reduce_cpu,
                mem_mb=d.reduce_mem_mb,
                mean=red_mean,
                sd=d.cv * red_mean,
                parents=("map",),
                read_mb=shuffle / reduces / MIB,
            )
        )
    return JobSpec(
        id=job_id, arrival=submit, phases=tuple(phases), name=""
    )  # no recurring-job identity in the trace (see loaders/__init__.py)


def iter_swim(
    path: str | Path, report: LoadReport, d: SwimDerivation = SwimDerivation()
) -> Iterator[JobSpec]:
    seen: set[str] = set()
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            report.read += 1
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 6:
                report.skip(
                    "too few fields",
                    f"{path}:{lineno}: expected >= 6 tab-separated fields, got {len(fields)}",
                )
                continue
            jid = fields[0]
            names = (
                "submit_time_seconds",
                "inter_job_submit_gap_seconds",
                "map_input_bytes",
                "shuffle_bytes",
                "reduce_output_bytes",
            )
            try:
                values = [float(fields[i + 1]) for i in range(5)]
            except ValueError:
                bad = next(n for i, n in enumerate(names) if not _is_float(fields[i + 1]))
                report.skip("non-numeric field", f"{path}:{lineno}: field '{bad}' is not a number")
                continue
            if any(not math.isfinite(v) or v < 0 for v in values):
                bad = next(n for n, v in zip(names, values, strict=True) if not math.isfinite(v) or v < 0)
                report.skip("negative or non-finite field", f"{path}:{lineno}: field '{bad}' must be >= 0")
                continue
            if not jid or jid in seen:
                report.skip(
                    "missing or duplicate job id", f"{path}:{lineno}: job id '{jid}' missing or repeated"
                )
                continue
            seen.add(jid)
            report.kept += 1
            yield derive_job(jid, values[0], int(values[2]), int(values[3]), int(values[4]), d)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
