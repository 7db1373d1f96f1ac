"""An operator's YARN history as a trace (pyscheduler/sim/loaders/yarnhistory.py): the JobHistory
server's and the RM's answers, one job a line, read into two-phase jobs; bad lines refused by `bench sls`
naming the file, the line and the field. (The recorder runs against a real history server and RM in
tests/deploy/test_localcluster.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyscheduler.bench import sls_trace
from pyscheduler.bench.sls_trace import SlsInputError
from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.loaders.yarnhistory import FORMAT, VERSION

HEADER = {"format": FORMAT, "version": VERSION}


def _attempt(ms: float, state: str = "SUCCEEDED") -> dict[str, Any]:
    return {"id": "attempt_1", "state": state, "elapsedTime": ms}


def _line(
    job: str, submit_ms: int, maps: list[float], reduces: list[float], **job_fields: Any
) -> dict[str, Any]:
    tasks = [{"id": f"{job}_m_{i}", "type": "MAP", "attempts": [_attempt(ms)]} for i, ms in enumerate(maps)]
    tasks += [
        {"id": f"{job}_r_{i}", "type": "REDUCE", "attempts": [_attempt(ms)]} for i, ms in enumerate(reduces)
    ]
    fields = {
        "id": job,
        "name": "etl",
        "queue": "q",
        "user": "u",
        "submitTime": submit_ms,
        "state": "SUCCEEDED",
    }
    return {
        "job": {**fields, **job_fields},
        "conf": {"mapreduce.map.memory.mb": "2048", "mapreduce.reduce.cpu.vcores": "2"},
        "tasks": tasks,
        "app": {"id": "application_" + job.removeprefix("job_"), "queue": "prod", "user": "alice"},
    }


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in [HEADER, *lines]) + "\n")
    return path


def test_jobs_become_maps_then_a_reduce_with_their_successful_attempts_times(tmp_path: Path) -> None:
    first = _line("job_1_0001", 5_000, [2_000, 4_000], [3_000])
    second = _line("job_1_0002", 9_000, [1_000], [])
    second["tasks"][0]["attempts"] = [_attempt(60_000, "KILLED"), _attempt(0)]  # a killed copy; 0 ms
    failed = _line("job_1_0003", 1_000, [1_000], [], state="FAILED")
    jobs, report = load_workload(_write(tmp_path / "h.jsonl", [first, second, failed]), "yarn-history")
    assert [j.id for j in jobs] == ["job_1_0001", "job_1_0002"]
    assert [j.arrival for j in jobs] == [0.0, 4.0]  # from the earliest kept submit time
    a, b = jobs
    assert a.name == "prod/alice/etl"  # the RM's queue and user qualify the recurring name
    (m, r) = a.phases
    assert (m.id, m.tasks, m.durations, m.mem_mb, m.cpu) == ("map", 2, (2.0, 4.0), 2048.0, 1.0)
    assert (r.id, r.parents, r.durations, r.mem_mb, r.cpu) == ("reduce", ("map",), (3.0,), 1024.0, 2.0)
    assert [p.id for p in b.phases] == ["map"] and b.phases[0].durations == (0.5,)  # its successful one
    assert report.skipped["job did not succeed"] == 1 and report.kept == 2


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        (lambda x: x["tasks"][0]["attempts"][0].update(elapsedTime=-5), "elapsedTime"),
        (lambda x: x["job"].update(submitTime="soon"), "submitTime"),
        (lambda x: x["conf"].update({"mapreduce.map.memory.mb": "lots"}), "mapreduce.map.memory.mb"),
        (lambda x: x["tasks"][1].update(type="SHUFFLE"), "type"),
        (lambda x: x.update(tasks=[]), "tasks"),
    ],
)
def test_a_bad_line_is_refused_naming_the_file_line_and_field(
    tmp_path: Path, broken: Any, field: str
) -> None:
    good = _line("job_1_0001", 5_000, [2_000], [3_000])
    bad = _line("job_1_0002", 6_000, [2_000], [3_000])
    broken(bad)
    path = _write(tmp_path / "h.jsonl", [good, bad])
    with pytest.raises(SlsInputError) as err:
        sls_trace.convert(path, "yarn-history", tmp_path / "out", jobs=1)
    assert err.value.line == 3 and err.value.field == field, str(err.value)
    assert str(path) in str(err.value)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_file_without_the_header_or_of_another_version_is_refused(tmp_path: Path) -> None:
    line = _line("job_1_0001", 5_000, [2_000], [])
    (tmp_path / "a.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(SlsInputError, match="format"):
        sls_trace.take_slice(tmp_path / "a.jsonl", "yarn-history", jobs=1)
    (tmp_path / "b.jsonl").write_text(json.dumps({"format": FORMAT, "version": 99}) + "\n" + json.dumps(line))
    with pytest.raises(SlsInputError, match="version"):
        sls_trace.take_slice(tmp_path / "b.jsonl", "yarn-history", jobs=1)
