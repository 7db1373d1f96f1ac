"""The size benchmark command runs and reports consistent figures (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyscheduler.bench.store import synthetic
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import open_store


def test_bench_prints_sizes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/bench.db"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyscheduler.bench.store",
            "--decisions",
            "3000",
            "--batch",
            "500",
            "--url",
            url,
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out)
    assert result["decisions"] == 3000
    assert 0 < result["logical_mb_per_million"] < result["disk_mb_per_million"]
    # 1e6 bytes per MB, per million decisions: the two figures are the same number
    assert result["disk_bytes_per_decision"] == pytest.approx(result["disk_mb_per_million"])
    with open_store(url) as s:
        assert s.count() == 3000
        assert s.disk_bytes() / 3000 == pytest.approx(result["disk_bytes_per_decision"])


def test_synthetic_mix_is_deterministic_and_covers_every_kind() -> None:
    a = list(synthetic(2000, seed=3))
    assert a == list(synthetic(2000, seed=3))
    assert {d.kind for d in a} == set(DecisionKind)
    placements = sum(d.kind is DecisionKind.PLACEMENT for d in a)
    assert 900 < placements < 1100
