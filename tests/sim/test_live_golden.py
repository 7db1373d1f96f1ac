"""Behaviour kept (issue 54's first done-when): the plans the decision service returns over a real gRPC
socket - placements, clones, kills with their reasons, deferrals with theirs, the service's preemptions
and the AM helpers' ClonePlans - on three seeded live-mechanism workloads (small-mapreduce, mixed-sizes,
swim-fb2010; sim/live/planlog.py's GOLDEN), recorded at the start commit in tests/golden/, reproduced
exactly. On a mismatch the first differing round is printed (recorded against run).

Re-record only when a decision change is intended and measured (say which in the commit):

    PYTHONPATH=. python -m pyscheduler.sim.live.planlog tests/golden
    PYTHONPATH=. python -m pyscheduler.sim.live.planlog tests/golden --check   # compare, write nothing

The runs are deterministic (simulated clock, seeded draws, lockstep RM and AMs): recorded twice, in two
processes, the files are byte-identical. About 30 s for the three."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyscheduler.sim.live import planlog

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"


@pytest.mark.parametrize("name", list(planlog.GOLDEN))
def test_the_service_decides_as_recorded(name: str) -> None:
    expected = planlog.path_of(GOLDEN_DIR, name).read_text().splitlines()
    told = planlog.mismatch(expected, planlog.record(name))
    assert told is None, f"{name}: the plans differ from tests/golden's\n{told}"


def test_one_policy_option_changed_is_caught() -> None:
    """The test can fail: one of the benchmark policy's options changed (small_job_clones 7 -> 1), the
    plans of small-mapreduce differ and the first differing round is told."""
    expected = planlog.path_of(GOLDEN_DIR, "small-mapreduce").read_text().splitlines()
    options = {**planlog.GOLDEN_SERVICE["policy.options"], "small_job_clones": 1}
    rec = planlog.record("small-mapreduce", {"policy.options": options})
    assert planlog.mismatch(expected, rec) is not None  # the settings differ
    told = planlog.mismatch(expected, rec, runs_alike=False)  # and so do the plans
    assert told is not None and told.startswith("round "), told


def _rec(rounds: list[dict[str, object]]) -> planlog.Recording:
    return planlog.Recording({"workload": "w", "seed": 1, "rounds": len(rounds)}, rounds, {"flowtimes": []})


def test_digests_past_the_size_bound_still_catch_a_change() -> None:
    rounds: list[dict[str, object]] = [
        {"call": "sync", "t": float(i), "placements": [["a", i]]} for i in range(50)
    ]
    lines = planlog.lines(_rec(rounds), max_bytes=4350)
    full = [x for x in lines[1:-1] if '"digest"' not in x]
    assert 0 < len(full) < 50 and len(lines) == 52
    assert planlog.mismatch(lines, _rec(rounds)) is None
    changed = [dict(r) for r in rounds]
    changed[40]["placements"] = [["a", 41]]
    told = planlog.mismatch(lines, _rec(changed))
    assert told is not None and told.startswith("round 40 ") and "digest" in told
    changed[1]["placements"] = []
    told = planlog.mismatch(lines, _rec(changed))
    assert told is not None and told.startswith("round 1 ") and "placements" in told
    assert planlog.mismatch(lines, _rec(rounds[:49])) is not None
