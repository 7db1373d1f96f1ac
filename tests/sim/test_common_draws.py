"""Common random numbers: a copy's slowdown depends on (seed, job, phase, task, n-th copy), not on the order
in which a policy starts copies, so policies in one run see the same stragglers (sim/straggler.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pyscheduler.objects import Job
from pyscheduler.policies import get_policy
from pyscheduler.sim.copies import END, START
from pyscheduler.sim.engine import SimConfig, Simulation
from pyscheduler.sim.runner import draw_bases
from pyscheduler.sim.straggler import StragglerModel, StragglerSpec, copy_unit
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec


def test_copy_draws_are_keyed_not_sequential() -> None:
    spec = StragglerSpec("pareto", 1.5, cap=20.0)
    a, b = StragglerModel(spec, 7), StragglerModel(spec, 7)
    keys = [(j, k, t, n) for j in range(3) for k in range(2) for t in range(4) for n in range(3)]
    forward = [a.copy_time(10.0, [10.0], n > 0, key) for key in keys for n in [key[3]]]
    backward = [b.copy_time(10.0, [10.0], n > 0, key) for key in reversed(keys) for n in [key[3]]]
    assert forward == backward[::-1]
    assert len(set(forward)) == len(keys)  # every copy (and every clone) draws afresh
    assert StragglerModel(spec, 8).slowdown_of(0, 0, 0, 0) != a.slowdown_of(0, 0, 0, 0)
    u = np.array([copy_unit(3, i, 0, 0, 0) for i in range(20000)])
    assert u.min() >= 0 and u.max() < 1 and u.mean() == pytest.approx(0.5, abs=0.01)
    draws = np.array([a.slowdown_of(i, 1, 2, 0) for i in range(20000)])
    assert draws.min() >= 1 and draws.max() <= 20
    assert draws.mean() == pytest.approx(spec.mean_slowdown, rel=0.05)


class _Recording(Simulation):
    """Records the run time of every task's original copy (an observation hook, nothing replaced)."""

    originals: dict[tuple[int, int, int], float]

    def _start_all(
        self, starts: list[tuple[int, Job, int, int, int, float, float, int, bool]], runs: list[float]
    ) -> None:
        first = self.uid + 1  # the copies get the next uids, in order
        super()._start_all(starts, runs)
        for uid, (jidx, _, k, t, *_) in enumerate(starts, start=first):
            if (jidx, k, t) not in self.restarts:  # the task's first copy ever (restarts counts later ones)
                r = self.running[uid]
                self.originals[(jidx, k, t)] = r[END] - r[START]


def test_policies_that_start_tasks_in_another_order_see_the_same_stragglers() -> None:
    # one small node: FIFO and SRPT start the tasks in different orders; with one shared stream the same
    # task would draw another slowdown under each, with keyed draws its original runs equally long
    jobs = [
        JobSpec(f"j{i}", float(i), (PhaseSpec("map", 2 + 3 * (5 - i), 1.0, 1024.0, 10.0, 0.0),))
        for i in range(6)
    ]
    cluster = ClusterSpec((NodeSpec(4, 8192, 1.0),))
    config = SimConfig(straggler=StragglerSpec("pareto", 1.5, cap=20.0), seed=3, tick=1.0)
    runs = []
    for name in ("fifo", "srpt"):
        sim = _Recording(jobs, cluster, get_policy(name), config, draw_bases(jobs, config))
        sim.originals = {}
        m = sim.run()
        assert m.jobs_completed == len(jobs)
        runs.append(sim.originals)
    assert runs[0].keys() == runs[1].keys()
    assert [runs[1][k] for k in runs[0]] == pytest.approx(list(runs[0].values()), rel=1e-9)
    assert max(runs[0].values()) > 3 * min(runs[0].values())  # stragglers did happen
