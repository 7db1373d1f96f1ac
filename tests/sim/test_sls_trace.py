"""The SLS trace converter (pyscheduler/bench/sls_trace.py): what it writes, and the input it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyscheduler.bench import sls_trace
from pyscheduler.bench.sls_trace import SlsCluster, SlsInputError, convert
from pyscheduler.sim.workload import LoadReport, iter_native

SMALL = SlsCluster(nodes=50, nm_vcores=4, nm_mem_mb=8192)


def _swim(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def _good_swim(tmp_path: Path, n: int = 6) -> Path:
    rows = [f"job{i}\t{10 * i}\t10\t{(i + 1) * 600_000_000}\t{i * 300_000_000}\t1000" for i in range(n)]
    return _swim(tmp_path / "fb.tsv", rows)


def _native(path: Path, jobs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(j) + "\n" for j in jobs), encoding="utf-8")
    return path


def _job(jid: str, arrival: float, durations: list[float]) -> dict[str, object]:
    phase = {"id": "map", "tasks": len(durations), "cpu": 1, "mem_mb": 1024, "durations": durations}
    return {"id": jid, "arrival": arrival, "phases": [phase]}


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_a_slice_becomes_rumen_nodes_and_the_same_native_workload(tmp_path: Path) -> None:
    out = convert(_good_swim(tmp_path), "swim", tmp_path / "sls", cluster=SMALL, jobs=5, time_scale=0.5)
    assert sorted(p.name for p in out.iterdir()) == [
        "cluster.json",
        "meta.json",
        "nodes.json",
        "trace.json",
        "workload.jsonl",
    ]
    rumen = [json.loads(line) for line in (out / "trace.json").read_text().splitlines()]
    native = list(iter_native(out / "workload.jsonl", LoadReport(source="w")))
    assert len(rumen) == len(native) == 5
    for i, (r, job) in enumerate(zip(rumen, native, strict=True)):
        # the job id carries the arrival (ms) and the job's position, which SLS's Rumen reader would lose
        assert r["jobID"] == f"job_{round(job.arrival * 1000)}_{i:04d}"
        maps = [a["finishTime"] - a["startTime"] for t in r["mapTasks"] for a in t["attempts"]]
        assert maps == [round(d * 1000) for d in job.phases[0].durations or ()]
        assert all(p.cpu == SMALL.container_vcores and p.mem_mb == SMALL.container_mem_mb for p in job.phases)
        assert len(r["reduceTasks"]) == (job.phases[1].tasks if len(job.phases) > 1 else 0)
    nodes = [json.loads(line) for line in (out / "nodes.json").read_text().splitlines()]
    assert sum(len(r["nodes"]) for r in nodes) == SMALL.nodes
    meta = json.loads((out / "meta.json").read_text())
    assert meta["jobs"] == 5 and meta["offered_load"] == pytest.approx(0.8, abs=1e-3)
    assert _leftovers(tmp_path) == []


def test_an_empty_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(SlsInputError) as err:
        convert(empty, "swim", tmp_path / "sls", cluster=SMALL, jobs=1)
    assert str(err.value).startswith(f"{empty}:0: field 'jobs': empty file")
    assert not (tmp_path / "sls").exists() and _leftovers(tmp_path) == []


def test_a_malformed_line_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    rows = [f"job{i}\t{i}\t1\t600000000\t0\t10" for i in range(4)]
    rows[2] = "job2\t2\t1\tlots\t0\t10"
    path = _swim(tmp_path / "bad.tsv", rows)
    with pytest.raises(SlsInputError) as err:
        convert(path, "swim", tmp_path / "sls", cluster=SMALL, jobs=3)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 3, "map_input_bytes")
    assert f"{path}:3: field 'map_input_bytes'" in str(err.value)
    assert not (tmp_path / "sls").exists()


def test_a_negative_field_is_refused(tmp_path: Path) -> None:
    rows = [f"job{i}\t{i}\t1\t600000000\t0\t10" for i in range(3)]
    rows[1] = "job1\t1\t1\t600000000\t-5\t10"
    path = _swim(tmp_path / "neg.tsv", rows)
    with pytest.raises(SlsInputError) as err:
        convert(path, "swim", tmp_path / "sls", cluster=SMALL, jobs=2)
    assert (err.value.line, err.value.field) == (2, "shuffle_bytes")


def test_negative_task_durations_are_refused(tmp_path: Path) -> None:
    path = _native(tmp_path / "w.jsonl", [_job("a", 0, [5.0]), _job("b", 1, [3.0, -2.0])])
    with pytest.raises(SlsInputError) as err:
        convert(path, "native", tmp_path / "sls", cluster=SMALL, jobs=2)
    assert err.value.line == 2 and "durations" in str(err.value)


def test_absurd_task_durations_are_refused(tmp_path: Path) -> None:
    path = _native(tmp_path / "w.jsonl", [_job("a", 0, [5.0]), _job("b", 1, [4.0]), _job("c", 2, [1e9])])
    with pytest.raises(SlsInputError) as err:
        convert(path, "native", tmp_path / "sls", cluster=SMALL, jobs=3, max_task_s=86400)
    assert (err.value.line, err.value.field) == (3, "durations")
    assert "absurd" in str(err.value)


def test_too_few_jobs_for_the_slice_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SlsInputError) as err:
        convert(_good_swim(tmp_path, 3), "swim", tmp_path / "sls", cluster=SMALL, jobs=10)
    assert err.value.field == "jobs" and "fewer than the 10" in str(err.value)


def test_a_refusal_leaves_an_earlier_output_as_it_was(tmp_path: Path) -> None:
    out = convert(_good_swim(tmp_path), "swim", tmp_path / "sls", cluster=SMALL, jobs=4)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = _native(tmp_path / "w.jsonl", [_job("a", 0, [-1.0])])
    with pytest.raises(SlsInputError):
        convert(bad, "native", out, cluster=SMALL, jobs=1)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert _leftovers(tmp_path) == []


def test_a_failure_while_writing_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(nodes: int) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setattr(sls_trace, "node_file_lines", boom)
    with pytest.raises(OSError, match="disk full"):
        convert(_good_swim(tmp_path), "swim", tmp_path / "sls", cluster=SMALL, jobs=4)
    assert not (tmp_path / "sls").exists() and _leftovers(tmp_path) == []
