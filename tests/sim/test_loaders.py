"""Loaders: native JSONL and cluster validation, SWIM derivation, Alibaba DAGs, Google task events."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.loaders.alibaba import parse_task_name
from pyscheduler.sim.loaders.swim import MIB, SwimDerivation, derive_job
from pyscheduler.sim.workload import TraceError, load_cluster, parse_cluster


def test_native_reports_malformed_lines_with_file_and_line(tmp_path: Path) -> None:
    good = {
        "id": "j1",
        "arrival": 1.0,
        "phases": [
            {"id": "map", "tasks": 2, "cpu": 1, "mem_mb": 1024, "mean": 5.0, "sd": 1.0, "parents": []},
            {
                "id": "red",
                "tasks": 1,
                "cpu": 1,
                "mem_mb": 1024,
                "mean": 3.0,
                "sd": 0.0,
                "parents": ["map"],
                "durations": [2.5],
            },
        ],
    }
    bad_parent = dict(good, id="j2", phases=[dict(good["phases"][1], parents=["nope"])])
    negative = dict(good, id="j3", arrival=-1)
    lines = [json.dumps(good), "{not json", json.dumps(bad_parent), json.dumps(negative), json.dumps(good)]
    f = tmp_path / "w.jsonl"
    f.write_text("\n".join(lines) + "\n")
    jobs, rep = load_workload(f, "native")
    assert [j.id for j in jobs] == ["j1"]
    assert rep.read == 5 and rep.kept == 1
    assert rep.skipped == {"invalid JSON": 1, "invalid job": 2, "duplicate job id": 1}
    assert any(f"{f}:2" in e for e in rep.errors)
    assert any(f"{f}:3" in e and "'parents'" in e for e in rep.errors)
    assert any(f"{f}:4" in e and "'arrival'" in e for e in rep.errors)
    assert jobs[0].phases[1].durations == (2.5,)


def test_native_rejects_cycles_and_wrong_durations(tmp_path: Path) -> None:
    cyc = {
        "id": "c",
        "arrival": 0,
        "phases": [
            {"id": "a", "tasks": 1, "cpu": 1, "mem_mb": 1, "mean": 1, "parents": ["b"]},
            {"id": "b", "tasks": 1, "cpu": 1, "mem_mb": 1, "mean": 1, "parents": ["a"]},
        ],
    }
    dur = {
        "id": "d",
        "arrival": 0,
        "phases": [{"id": "a", "tasks": 2, "cpu": 1, "mem_mb": 1, "mean": 1, "durations": [1.0]}],
    }
    f = tmp_path / "w.jsonl"
    f.write_text(json.dumps(cyc) + "\n" + json.dumps(dur) + "\n")
    jobs, rep = load_workload(f, "native")
    assert jobs == []
    assert "cycle" in rep.errors[0] and "'durations'" in rep.errors[1]


def test_cluster_file_errors_name_the_key(tmp_path: Path) -> None:
    c = parse_cluster(
        {"nodes": [{"count": 2, "cpu": 4, "mem_mb": 8192}, {"cpu": 8, "mem_mb": 1, "speed": 2}]}
    )
    assert len(c.nodes) == 3 and c.total_cpu == 16 and c.nodes[2].speed == 2
    with pytest.raises(ValueError, match="'speed'"):
        parse_cluster({"nodes": [{"cpu": 4, "mem_mb": 1, "speed": 0}]})
    with pytest.raises(ValueError, match="'count'"):
        parse_cluster({"nodes": [{"count": 0, "cpu": 4, "mem_mb": 1}]})
    f = tmp_path / "c.json"
    f.write_text('{"nodes": [\n  {"cpu": 4,,}]}')
    with pytest.raises(TraceError, match=r"c\.json:2"):
        load_cluster(f)


def test_swim_derivation_from_bytes() -> None:
    d = SwimDerivation()
    job = derive_job("j", 5.0, int(1200 * MIB), int(2.5 * 1024 * MIB), int(80 * MIB), d)
    m, r = job.phases
    assert m.tasks == 3 and r.tasks == 3 and r.parents == ("map",)
    assert m.mean == pytest.approx(d.task_overhead_s + 400 * MIB / d.map_rate)
    assert r.read_mb == pytest.approx(2.5 * 1024 / 3)
    only_map = derive_job("k", 0.0, 10, 0, 0, d)
    assert len(only_map.phases) == 1 and only_map.phases[0].tasks == 1
    capped = derive_job("big", 0.0, int(1e15), int(1e14), 0, SwimDerivation(max_tasks=50))
    assert capped.phases[0].tasks == 50 and capped.phases[1].tasks == 50


def test_swim_file_malformed_lines(tmp_path: Path) -> None:
    f = tmp_path / "s.tsv"
    f.write_text("job0\t1\t1\t100\t0\t5\njob1\t2\tx\t1\t1\t1\njob2\t3\t1\t-5\t0\t0\njob3\t4\n")
    jobs, rep = load_workload(f, "swim")
    assert [j.id for j in jobs] == ["job0"]
    assert rep.read == 4 and sum(rep.skipped.values()) == 3
    assert any(":2:" in e and "inter_job_submit_gap_seconds" in e for e in rep.errors)
    assert any(":3:" in e and "map_input_bytes" in e for e in rep.errors)


def test_real_fb2009_counts_every_job(traces: Path) -> None:
    jobs, rep = load_workload(traces / "swim_facebook" / "FB-2009_samples_24_times_1hr_0.tsv", "swim")
    assert rep.read == 5894 == rep.kept == len(jobs)
    assert sum(1 for j in jobs if j.task_count <= 10) / len(jobs) > 0.5  # Dolly: most jobs are small


def test_alibaba_task_names() -> None:
    assert parse_task_name("R2_1") == ("2", ("1",))
    assert parse_task_name("J5_3_4") == ("5", ("3", "4"))
    assert parse_task_name("M1") == ("1", ())
    assert parse_task_name("task_LTYx==") == (None, ())
    assert parse_task_name("MergeTask") == (None, ())


def test_alibaba_raw_dags(traces: Path) -> None:
    jobs, rep = load_workload(traces / "alibaba_v2018" / "selected_DAGs.csv.gz", "alibaba")
    assert rep.read == 2120 and rep.kept == len(jobs)
    assert rep.skipped["task not Terminated"] == 42
    assert rep.kept + sum(rep.skipped.values()) == rep.read
    multi = [j for j in jobs if any(p.parents for p in j.phases)]
    assert len(multi) > 1000


def test_alibaba_spar_instances_replay_durations(tmp_path: Path) -> None:
    tasks = "0,j_1,M1,30,100.0,0.5,2\n0,j_1,R2_1,12,50.0,0.2,1\n"
    inst = (
        "0,j_1,M1,ins_1,20,90.0,0.4\n0,j_1,M1,ins_2,30,80.0,0.4\n0,j_1,R2_1,ins_3,0,40.0,0.1\n"
        "1,j_2,M1,ins_4,x,1,1\n"
    )
    with gzip.open(tmp_path / "spar_sample_tasks.csv.gz", "wt") as fh:
        fh.write(tasks)
    with gzip.open(tmp_path / "inst.csv.gz", "wt") as fh:
        fh.write(inst)
    jobs, rep = load_workload(tmp_path / "inst.csv.gz", "alibaba")
    assert [j.id for j in jobs] == ["j_1"] and rep.skipped == {"malformed line": 1}
    assert any("inst.csv.gz:4" in e and "'duration'" in e for e in rep.errors)
    m, r = jobs[0].phases
    assert m.durations == (20.0, 30.0) and m.cpu == 1.0
    assert r.parents == ("M1",) and r.durations == (0.5,) and r.cpu == 0.5


def test_google_task_events(tmp_path: Path) -> None:
    rows = [
        "0,,1,0,,0,u,0,0,0.1,0.1,0,0",  # job 1 existed before the window
        "700000000,,2,0,,0,u,0,0,0.25,0.125,0,0",
        "701000000,,2,0,m1,1,u,0,0,0.25,0.125,0,0",
        "731000000,,2,0,m1,4,u,0,0,,,,",
        "800000000,,3,0,,0,u,0,0,0.1,0.1,0,0",
        "801000000,,3,0,m2,1,u,0,0,0.1,0.1,0,0",
        "810000000,,3,0,m2,5,u,0,0,0.1,0.1,0,0",  # killed: not finished
        "bad,,4,0,,0,u,0,0,0.1,0.1,0,0",
    ]
    f = tmp_path / "part-00000.csv"
    f.write_text("\n".join(rows) + "\n")
    jobs, rep = load_workload(tmp_path, "google")
    assert [j.id for j in jobs] == ["2"]
    assert jobs[0].phases[0].durations == (30.0,) and jobs[0].phases[0].cpu == 8.0
    assert rep.skipped == {
        "existed before trace window": 1,
        "task not finished in window": 1,
        "malformed line": 1,
    }
    assert any("part-00000.csv:8" in e for e in rep.errors)
