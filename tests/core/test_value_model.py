"""The value model (pyscheduler/value): expectations under the fitted Pareto against DollyMP Eq. 1-3 and
closed forms, and the preemption predicate and victim selection."""

from __future__ import annotations

import math

import pytest

from pyscheduler.estimate.pareto import fit_pareto, speedup
from pyscheduler.value import (
    Candidate,
    ValueOptions,
    eligible,
    expected_min,
    remaining,
    select_victims,
    value_of_copy,
    value_of_start,
)


@pytest.mark.parametrize(("mean", "sd"), [(30.0, 30.0), (30.0, 10.0), (10.0, 20.0)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_fastest_of_k_fresh_copies_takes_theta_over_h_k(mean: float, sd: float, k: int) -> None:
    """DollyMP Eq. (1), (3): E[min of k copies] = θ / h(k) for Pareto run times."""
    _, alpha = fit_pareto(mean, sd)
    got = expected_min([remaining(mean, sd) for _ in range(k)], horizon=200.0)
    assert got == pytest.approx(mean / speedup(alpha, k), rel=0.01)


def test_a_copy_that_survived_long_expects_a_longer_rest() -> None:
    """A Pareto's tail: having worked past x_m, the expected rest grows with the time survived:
    worked / (α - 1)."""
    x_m, alpha = fit_pareto(30.0, 30.0)
    young = expected_min([remaining(30.0, 30.0, worked_s=x_m)], horizon=200.0)
    old = expected_min([remaining(30.0, 30.0, worked_s=4 * x_m)], horizon=200.0)
    assert young == pytest.approx(x_m / (alpha - 1.0), rel=0.02)
    assert old == pytest.approx(4 * x_m / (alpha - 1.0), rel=0.02)


def test_a_clone_beside_a_copy_about_to_finish_is_worth_nothing_and_beside_a_straggler_much() -> None:
    fresh = remaining(30.0, 30.0, startup_s=5.0)
    assert value_of_copy(fresh, [remaining(30.0, 30.0, left_s=3.0)]) == 0.0
    straggler = remaining(30.0, 30.0, left_s=200.0)
    assert value_of_copy(fresh, [straggler]) > 150.0  # it saves most of the straggler's 200 s
    assert value_of_copy(fresh, []) == math.inf  # a task's only copy


def test_a_second_copy_is_worth_more_than_a_third() -> None:
    """h is concave (DollyMP Sec. 3): each further copy saves less."""
    c = remaining(30.0, 30.0)
    second = value_of_copy(c, [remaining(30.0, 30.0)])
    third = value_of_copy(c, [remaining(30.0, 30.0), remaining(30.0, 30.0)])
    assert second > third > 0.0


def test_starting_now_is_worth_the_wait_for_an_original_and_less_for_a_clone() -> None:
    c = remaining(30.0, 30.0)
    assert value_of_start(12.0, c, []) == 12.0
    assert 0.0 < value_of_start(12.0, c, [remaining(30.0, 30.0)]) < 12.0


def _cand(cid: str, node: str, value: float, *, clone: bool = True, lead: bool = False) -> Candidate:
    return Candidate(cid, node, (1024.0, 1.0), value, clone, lead, ask=("app1", 20))


def test_the_predicate_never_takes_a_lead_an_original_its_own_ask_or_a_young_wait() -> None:
    c = _cand("c1", "n1", 3.0)
    assert eligible(c, ("app2", 20), waited_s=5.0, min_wait_s=3.0)
    assert not eligible(c, ("app2", 20), waited_s=1.0, min_wait_s=3.0)
    assert not eligible(c, ("app1", 20), waited_s=5.0, min_wait_s=3.0)  # its own ask
    assert not eligible(_cand("c2", "n1", 3.0, lead=True), ("app2", 20), 5.0, 3.0)
    assert not eligible(_cand("c3", "n1", 3.0, clone=False), ("app2", 20), 5.0, 3.0)
    assert not eligible(_cand("c4", "n1", math.inf), ("app2", 20), 5.0, 3.0)


def test_victims_are_the_cheapest_node_in_ascending_value_and_only_below_the_waiting_value() -> None:
    cands = [_cand("a1", "n1", 4.0), _cand("a2", "n1", 1.0), _cand("b1", "n2", 3.0), _cand("b2", "n2", 3.5)]
    need = (2048.0, 2.0)
    room = {"n1": (0.0, 0.0), "n2": (0.0, 0.0)}
    got = select_victims(need, 30.0, room, cands, margin_s=5.0)
    assert got is not None and (got.node_id, got.container_ids, got.value_s) == ("n1", ("a2", "a1"), 5.0)
    # with room for one already on n2, one victim there (3.0) is cheapest
    got = select_victims(need, 30.0, {"n1": (0.0, 0.0), "n2": (1024.0, 1.0)}, cands, margin_s=5.0)
    assert got is not None and got.container_ids == ("b1",)
    assert select_victims(need, 9.9, room, cands, margin_s=5.0) is None  # 5.0 + 5.0 is not below 9.9
    assert select_victims((8192.0, 8.0), 1e9, room, cands, margin_s=0.0) is None  # no node frees enough


def test_options_are_validated_naming_the_key() -> None:
    with pytest.raises(ValueError, match=r"yield\.margin_s"):
        ValueOptions(margin_s=-1.0)
    with pytest.raises(ValueError, match=r"yield\.horizon"):
        ValueOptions(horizon=math.nan)
