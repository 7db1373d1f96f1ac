"""One job's decisions (`Decisions.iter_placements` / `to_records` with a job id, and clones only): the
same records, in the same order, as the whole round's that name the job (an AM plan reads its own job's
clones of a round over the whole cluster, service/round/amplan.py)."""

from __future__ import annotations

import pytest

from pyscheduler.bench.engine_data import random_snapshot
from pyscheduler.objects import DecisionKind
from pyscheduler.policies import get_policy


@pytest.mark.parametrize("seed", range(3))
def test_a_jobs_decisions_are_the_whole_rounds_that_name_it(seed: int) -> None:
    snap = random_snapshot(30, 200, seed)
    d = get_policy("default").decide(snap)
    every, placements = d.to_records(), d.placements
    assert any(p.is_clone for p in placements) and any(not p.is_clone for p in placements)
    for job in snap.jobs[:: max(1, len(snap.jobs) // 6)]:
        mine = [r for r in every if r.job_id == job.job_id]
        assert d.to_records(job.job_id) == mine
        originals = [r for r in mine if r.kind is DecisionKind.PLACEMENT and not r.inputs["is_clone"]]
        assert d.to_records(job.job_id, clones_only=True) == [r for r in mine if r not in originals]
        assert list(d.iter_placements(job.job_id)) == [p for p in placements if p.job_id == job.job_id]
        clones = [p for p in placements if p.job_id == job.job_id and p.is_clone]
        assert list(d.iter_placements(job.job_id, clones_only=True)) == clones
    assert list(d.iter_placements("no such job")) == [] and d.to_records("no such job") == []
