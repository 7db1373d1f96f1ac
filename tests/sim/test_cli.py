"""`dollymp simulate` end to end on a small native workload: table, JSON, report, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyscheduler.cli import main


def _write_workload(path: Path, n: int = 30) -> None:
    lines = []
    for i in range(n):
        job = {
            "id": f"j{i}",
            "arrival": i * 2.0,
            "phases": [
                {
                    "id": "map",
                    "tasks": 1 + i % 7,
                    "cpu": 1,
                    "mem_mb": 1024,
                    "mean": 8.0,
                    "sd": 2.0,
                    "parents": [],
                },
                {
                    "id": "reduce",
                    "tasks": 1,
                    "cpu": 1,
                    "mem_mb": 2048,
                    "mean": 5.0,
                    "sd": 1.0,
                    "parents": ["map"],
                    "read_mb": 10.0,
                },
            ],
        }
        lines.append(json.dumps(job))
    lines.append("{broken")
    path.write_text("\n".join(lines) + "\n")


def test_simulate_json_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wl, cl, out, rep = tmp_path / "w.jsonl", tmp_path / "c.json", tmp_path / "r.json", tmp_path / "rep"
    _write_workload(wl)
    cl.write_text('{"nodes": [{"count": 4, "cpu": 8, "mem_mb": 16384, "speed": 1.0}]}')
    rc = main(
        [
            "simulate",
            "--workload",
            str(wl),
            "--cluster",
            str(cl),
            "--policies",
            "fifo,tetris,srewc",
            "--seed",
            "3",
            "--load",
            "0.7",
            "--json",
            str(out),
            "--report",
            str(rep),
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "read 31 jobs, kept 30, skipped 1 (invalid JSON: 1)" in text
    assert f"{wl}:31" in text
    assert "offered load" in text and "fifo" in text and "srewc" in text
    data = json.loads(out.read_text())
    assert set(data["policies"]) == {"fifo", "tetris", "srewc"}
    for rec in data["policies"].values():
        assert rec["jobs_completed"] == 30
        assert rec["avg_flowtime"] >= data["lower_bound_avg_flowtime"] > 0
        assert rec["lower_bound_ratio"] == pytest.approx(
            rec["avg_flowtime"] / data["lower_bound_avg_flowtime"]
        )
        assert 0 <= rec["clone_extra_resource_frac"] < 1 and "p99_flowtime" in rec
    assert (rep / "flowtime_cdf.png").stat().st_size > 1000 and "fifo" in (rep / "summary.md").read_text()


def test_simulate_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wl, cl = tmp_path / "w.jsonl", tmp_path / "c.json"
    _write_workload(wl, 3)
    cl.write_text('{"nodes": [{"count": 1, "cpu": 8}]}')
    assert main(["simulate", "--workload", str(wl), "--cluster", str(cl), "--quiet"]) == 2
    assert "'mem_mb'" in capsys.readouterr().err
    cl.write_text('{"nodes": [{"count": 1, "cpu": 8, "mem_mb": 4096}]}')
    assert (
        main(["simulate", "--workload", str(wl), "--cluster", str(cl), "--policies", "nope", "--quiet"]) == 2
    )
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert (
        main(
            [
                "simulate",
                "--workload",
                str(wl),
                "--cluster",
                str(cl),
                "--straggler",
                "pareto:alpha=-1",
                "--quiet",
            ]
        )
        == 2
    )
    assert "'alpha'" in capsys.readouterr().err
