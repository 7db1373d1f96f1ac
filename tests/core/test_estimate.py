"""Task statistics (DollyMP Section 5.2): live samples, recurring-job history, declared stats, priors."""

from __future__ import annotations

import math
import statistics

import pytest

from pyscheduler.estimate import RunningStats, TaskStatistics
from pyscheduler.estimate.transfer import TransferStats
from pyscheduler.policies import Snapshot, get_policy

from .helpers import cluster, job


def test_running_stats_match_statistics_module_and_merge() -> None:
    xs = [3.0, 9.5, 1.25, 7.0, 7.0, 12.0]
    a, b, whole = RunningStats(), RunningStats(), RunningStats()
    for i, x in enumerate(xs):
        (a if i < 2 else b).add(x)
        whole.add(x)
    a.merge(b)
    for s in (a, whole):
        assert s.count == 6
        assert s.mean == pytest.approx(statistics.mean(xs))
        assert s.sd == pytest.approx(statistics.stdev(xs))


def test_sources_in_order() -> None:
    stats = TaskStatistics(min_live=3, default_mean=30.0, default_sd=15.0)
    declared = job("j1", 0.0, ("map", 10, (1, 1), 20.0, 4.0, ()), name="wordcount")
    unknown = job("j0", 0.0, ("map", 10, (1, 1), 0.0, 0.0, ()), name="other")
    assert stats.estimate(unknown, unknown.phases[0]) == (30.0, 15.0)  # nothing known: defaults
    assert stats.estimate(declared, declared.phases[0]) == (20.0, 4.0)  # declared by the AM / trace
    for d in (10.0, 14.0):
        stats.record_task(declared, "map", d)
    assert stats.estimate(declared, declared.phases[0]) == (20.0, 4.0)  # 2 < min_live
    stats.record_task(declared, "map", 18.0)
    assert stats.estimate(declared, declared.phases[0]) == pytest.approx((14.0, 4.0))  # first finished tasks
    stats.record_task(declared, "map", 30.0)  # updated as more finish
    assert stats.estimate(declared, declared.phases[0])[0] == pytest.approx(18.0)
    assert stats.estimate(unknown, unknown.phases[0]) == pytest.approx(  # framework prior
        (statistics.mean([10, 14, 18, 30]), statistics.stdev([10, 14, 18, 30]))
    )
    stats.job_finished(declared)
    again = job("j2", 100.0, ("map", 10, (1, 1), 99.0, 1.0, ()), name="wordcount")
    assert stats.estimate(again, again.phases[0])[0] == pytest.approx(18.0)  # recurring-job history wins
    assert stats.samples(again, again.phases[0]) == []


def test_bad_durations_are_named() -> None:
    stats = TaskStatistics()
    j = job("j", 0.0, ("map", 1, (1, 1), 1.0, 0.0, ()))
    with pytest.raises(ValueError, match=r"Job\['j'\].phases\['map'\]"):
        stats.record_task(j, "map", math.nan)
    with pytest.raises(ValueError, match="min_live"):
        TaskStatistics(min_live=0)


def test_statistics_feed_theta_and_sigma_into_the_policy() -> None:
    # two jobs of equal declared size; observed durations make j1 much longer -> it loses priority
    c = cluster((64, 64))
    j1 = job("j1", 0.0, ("map", 4, (1, 1), 10.0, 1.0, ()))
    j2 = job("j2", 1.0, ("map", 4, (1, 1), 10.0, 1.0, ()))
    stats = TaskStatistics(min_live=2)
    for d in (500.0, 700.0):
        stats.record_task(j1, "map", d)
    dec = get_policy("dollymp").decide(Snapshot(0.0, c, [j1, j2], estimator=stats))
    order = [p.job_id for p in sorted(dec.priorities, key=lambda p: p.rank)]
    assert order == ["j2", "j1"]
    d0 = get_policy("dollymp").decide(Snapshot(0.0, c, [j1, j2]))
    assert [p.job_id for p in sorted(d0.priorities, key=lambda p: p.rank)] == ["j1", "j2"]


def test_transfer_stats() -> None:
    t = TransferStats()
    assert (t.bandwidth(), t.alpha()) == (100e6, 0.5)
    for _ in range(3):
        t.record_read(200e6, 2.0, contended=False)
        t.record_read(60e6, 2.0, contended=True)
    assert t.bandwidth() == pytest.approx(100e6)
    assert t.alpha() == pytest.approx(0.3)
    with pytest.raises(ValueError, match="seconds"):
        t.record_read(1.0, 0.0, contended=False)
