"""Tetris (Grandl et al., SIGCOMM'14, Sec. 3): per task-machine pair, alignment + epsilon x (-remaining work),
epsilon = a_bar / W_bar; the fairness knob f keeps the (1 - f) fraction of jobs furthest from fair share."""

from __future__ import annotations

import pytest

from pyscheduler.policies import Snapshot, get_policy

from .helpers import cluster, job


def _placed(snapshot: Snapshot, **options: float) -> list[tuple[str, str]]:
    d = get_policy("tetris", **options).decide(snapshot)
    return [(p.job_id, p.node_id) for p in d.placements]


def test_tetris_takes_the_best_alignment_plus_epsilon_remaining_work_pair() -> None:
    # n0: capacity 8 x 8, free 4 x 4; n1: free 1 x 1 (only S fits there). Cluster total 16 x 16.
    c = cluster((8, 8), (8, 8), free=[(4, 4), (1, 1)])
    small = job("S", 0.0, ("m", 1, (1, 1), 10.0, 1.0, ()))  # W = 1 x 10 x 1/16 = 0.625
    big = job("B", 1.0, ("m", 1, (4, 4), 5.0, 1.0, ()))  # W = 1 x 5 x 4/16 = 1.25 (more work left)
    # alignment (demand / C) . (free / C): B on n0 = 2 x (4/8)(4/8) = 0.5; S on n0 = 2 x (1/8)(4/8) = 0.125;
    # S on n1 = 2 x (1/8)(1/8) = 0.03125. a_bar = (0.5 + 0.125 + 0.03125) / 3 = 0.21875, W_bar = 0.9375.
    # n0: B 0.5 - 0.21875 x 1.25 / 0.9375 = 0.208 beats S 0.125 - 0.21875 x 0.625 / 0.9375 = -0.021.
    # (Ordering jobs by remaining work first, as the class-based version did, put S on n0 and left B waiting.)
    snap = Snapshot(0.0, c, [small, big])
    assert _placed(snap) == [("B", "n0"), ("S", "n1")]


def test_tetris_remaining_work_term_outweighs_a_small_alignment_edge() -> None:
    c = cluster((8, 8), (8, 8), free=[(4, 4), (0, 0)])
    # two jobs of one shape: equal alignment on n0, so the one with less work left goes first
    short = job("short", 5.0, ("m", 1, (2, 2), 10.0, 1.0, ()))
    long_ = job("long", 0.0, ("m", 1, (2, 2), 100.0, 1.0, ()))
    wide = job("wide", 9.0, ("m", 1, (2.5, 2.5), 500.0, 1.0, ()))  # better aligned, far more work
    # alignment on n0: (2, 2) 2 x (2/8)(4/8) = 0.25, wide 0.3125; W = 1.25, 12.5, 78.1 (mean 30.6)
    # scores: short 0.25 - 0.271 x 1.25 / 30.6 = 0.239, long 0.139, wide 0.3125 - 0.691 = -0.379
    snap = Snapshot(0.0, c, [long_, short, wide])
    assert _placed(snap, fairness=0.0) == [("short", "n0"), ("long", "n0")]
    assert _placed(snap, fairness=0.0, m=0.0)[0] == ("wide", "n0")  # packing alone: the best aligned


@pytest.mark.parametrize(("fairness", "expected"), [(0.0, [("A", "n0")]), (0.5, [("B", "n0")])])
def test_the_fairness_knob_restricts_the_candidate_jobs(
    fairness: float, expected: list[tuple[str, str]]
) -> None:
    c = cluster((8, 8), (8, 8), free=[(4, 4), (0, 0)])
    a = job("A", 0.0, ("m", 2, (4, 4), 1.0, 0.1, ()))  # one task runs: A holds 4/16 of the cluster
    a.phases[0].start_copy(0)
    b = job("B", 1.0, ("m", 1, (1, 1), 10.0, 1.0, ()))  # holds nothing
    # scores on n0: A 0.5 - 0.3125 x 0.5 / 0.5625 = 0.22, B 0.125 - 0.3125 x 0.625 / 0.5625 = -0.22:
    # with f = 0 A's task is placed (and B's no longer fits); with f = 0.5 only ceil(0.5 x 2) = 1 job, the
    # one furthest from its fair share (B, holding nothing), is considered: B goes first and A's task then
    # no longer fits on n0.
    assert _placed(Snapshot(0.0, c, [a, b]), fairness=fairness) == expected


def test_tetris_options_are_checked() -> None:
    with pytest.raises(ValueError, match="fairness"):
        get_policy("tetris", fairness=1.5)
    with pytest.raises(ValueError, match="m must be"):
        get_policy("tetris", m=-1.0)
    assert get_policy("tetris").fairness == 0.25
