"""Dolly as its paper builds it (paper 001): p measured from observed run times over the last hour (Sec. 3.2),
beta = epsilon = 5% and tau = 80% (Sec. 3.2, 5.2), the utilisation ceiling of Pseudocode 1; and its
Capacity+LATE baseline's speculative lag as an option."""

from __future__ import annotations

import numpy as np
import pytest

from pyscheduler.core import ManualClock
from pyscheduler.estimate import StragglerRate, TaskStatistics
from pyscheduler.estimate.stragglers import straggler_fraction
from pyscheduler.policies import Snapshot, get_policy
from pyscheduler.policies.dolly import DollyBudget
from pyscheduler.sim.engine import SimAttempt

from .helpers import cluster, job


def test_measured_p_is_the_fraction_slower_than_twice_their_phase_median() -> None:
    rate = StragglerRate(min_samples=1, refresh=0.0)
    a = [10.0, 11.0, 12.0, 30.0, 9.0]  # median 11: 30 > 22 straggles
    b = [4.0, 5.0, 6.0, 13.0]  # median (5 + 6) / 2 = 5.5: 13 > 11 straggles, 6 does not
    lone = [100.0]  # a phase with one finished task is not judged
    for key, ds in ((("j1", "map"), a), (("j2", "map"), b), (("j3", "map"), lone)):
        for d in ds:
            rate.record(key, d, 50.0)
    # judged: the 9 tasks of the two phases with more than one sample; stragglers: 30 and 13
    assert rate.rate(60.0) == pytest.approx(2 / 9)
    ph = np.repeat([0, 1, 2], [len(a), len(b), len(lone)])
    assert straggler_fraction(ph, np.array(a + b + lone), 2.0, 9) == pytest.approx(2 / 9)
    assert straggler_fraction(ph, np.array(a + b + lone), 2.0, 10) is None  # fewer than min_samples judged


def test_the_hour_window_drops_old_samples_and_needs_enough_samples() -> None:
    rate = StragglerRate(window=3600.0, min_samples=4, refresh=0.0)
    for d in (10.0, 10.0, 10.0, 50.0):  # one straggler of four, finished at t = 0
        rate.record(("old", "map"), d, 0.0)
    assert rate.rate(100.0) == pytest.approx(0.25)
    for d in (10.0, 10.0, 10.0, 10.0):  # none, finished at t = 3000
        rate.record(("new", "map"), d, 3000.0)
    assert rate.rate(3500.0) == pytest.approx(1 / 8)
    assert rate.rate(3700.0) == 0.0  # the t = 0 samples are more than an hour old
    assert len(rate) == 4
    assert rate.rate(7000.0) is None  # nothing left in the window: Dolly's prior applies


def test_the_rate_is_recomputed_at_most_every_refresh_seconds() -> None:
    rate = StragglerRate(min_samples=2, refresh=60.0)
    for d in (10.0, 10.0):
        rate.record(("j", "m"), d, 0.0)
    assert rate.rate(10.0) == 0.0
    rate.record(("j", "m"), 100.0, 20.0)
    assert rate.rate(30.0) == 0.0  # within the refresh period: the answer of t = 10
    assert rate.rate(70.0) == pytest.approx(1 / 3)


def test_task_statistics_feed_the_rate_when_given_the_end_time() -> None:
    stats = TaskStatistics()
    stats.stragglers = StragglerRate(min_samples=1, refresh=0.0)
    j = job("j", 0.0, ("map", 3, (1, 1), 10.0, 1.0, ()))
    stats.record_task(j, "map", 10.0)  # no end time: not a straggler-rate sample
    assert len(stats.stragglers) == 0
    for d in (10.0, 10.0, 40.0):
        stats.record_task(j, "map", d, end=5.0)
    assert stats.stragglers.rate(5.0) == pytest.approx(1 / 3)


def test_dolly_defaults_are_the_papers() -> None:
    assert get_policy("dolly").dolly == (0.05, 0.8, 0.05, None)
    assert DollyBudget().tau == 0.8 and DollyBudget().beta == 0.05 and DollyBudget().epsilon == 0.05


@pytest.mark.parametrize(
    ("free", "tau", "reason"),
    [
        (1.5, 0.8, "dolly_utilization_ceiling"),  # U = 0.85 (+ the original's 0.025) > 0.8
        (5.0, 0.8, "dolly_admitted"),  # U = 0.5
        (1.5, 0.95, "dolly_admitted"),  # the old default ceiling would have cloned at 0.85
    ],
)
def test_dolly_refuses_clones_above_tau_utilisation(free: float, tau: float, reason: str) -> None:
    # two nodes of 10 x 10; p = 0.3, n = 1, eps = 0.05: c = ceil(log 0.05 / log 0.3) = 3 copies, 2 clones,
    # cost 2 x 0.5 / 20 = 0.05 <= beta
    c = cluster((10, 10), (10, 10), free=[(free, free), (free, free)])
    j = job("small", 0.0, ("m", 1, (0.5, 0.5), 10.0, 1.0, ()))
    d = get_policy("dolly", straggler_p=0.3, tau=tau).decide(Snapshot(0.0, c, [j]))
    assert [(g.job_id, g.reason) for g in d.clone_grants] == [("small", reason)]
    assert sum(p.is_clone for p in d.placements) == (2 if reason == "dolly_admitted" else 0)


def test_dolly_reads_the_measured_p_through_the_snapshot_estimator() -> None:
    c = cluster((10, 10), (10, 10))
    stats = TaskStatistics()
    j = job("small", 0.0, ("m", 1, (0.5, 0.5), 10.0, 1.0, ()))  # CV 0.1: the prior's p is ~2e-7
    prior = get_policy("dolly").decide(Snapshot(100.0, c, [j], estimator=stats))
    assert [g.reason for g in prior.clone_grants] == ["dolly_no_straggler_risk"]
    other = job("other", 0.0, ("m", 100, (1, 1), 10.0, 1.0, ()))
    for i in range(100):  # 30 of 100 tasks of a phase slower than twice its median
        stats.record_task(other, "m", 50.0 if i < 30 else 10.0, end=190.0)
    # (read at t = 200: the tracker recomputes at most once a minute, and it answered None at t = 100)
    assert DollyBudget.observed_p(Snapshot(200.0, c, [j], estimator=stats)) == pytest.approx(0.3)
    measured = get_policy("dolly").decide(Snapshot(200.0, c, [j], estimator=stats))
    assert [(g.reason, g.clones) for g in measured.clone_grants] == [("dolly_admitted", 2)]


@pytest.mark.parametrize(("min_runtime", "copies"), [(10.0, 1), (60.0, 0)])
def test_capacity_late_takes_its_speculative_lag_as_an_option(min_runtime: float, copies: int) -> None:
    # Dolly's baseline (Sec. 5.1): LATE judges a copy once it has run min_runtime seconds, from the same
    # progress DollyMP's late copies read (the copy's fraction of work done). At t = 20 task 3 has done 1/15.
    clock = ManualClock()
    j = job("j", 0.0, ("m", 4, (1, 1), 30.0, 5.0, ()))
    for t in range(4):
        j.phases[0].start_copy(t)
    atts = [
        SimAttempt(f"a{t}", "j", "m", t, "n0", False, 0.0, expected_end=end, clock=clock)
        for t, end in enumerate([30.0, 30.0, 30.0, 300.0])
    ]
    clock.set(20.0)
    c = cluster((64, 64), free=[(60, 60)])
    pol = get_policy("capacity", min_runtime=min_runtime, speculative_cap=0.5)
    d = pol.decide(Snapshot(20.0, c, [j], atts))
    assert [(p.task_index, p.is_clone) for p in d.placements] == [(3, True)] * copies
