"""The clone-share bound of the cluster bench's light mix (pyscheduler/deploy/clonebound.py)."""

from __future__ import annotations

import pytest

from pyscheduler.deploy import clonebound as cb

S = cb.Setting(startup_s=5.0, report_lag_s=1.5)


def test_launch_clones_race_every_copy_and_bill_the_losers_until_the_winner_ends() -> None:
    run = cb.task_run([100.0, 60.0, 80.0], 40.0, cb.Rule("launch", 2), S)
    assert run.end_s == 65.0  # the first clone's start-up and draw
    assert run.clone_s == 2 * 65.0 and run.container_s == 3 * 65.0
    alone = cb.task_run([100.0, 60.0, 80.0], 40.0, cb.Rule("launch", 0), S)
    assert (alone.end_s, alone.clone_s) == (105.0, 0.0)


def test_oracle_and_first_step_clone_only_originals_slower_than_the_threshold() -> None:
    fast = [70.0, 40.0, 40.0]  # factor 1.75 at base 40 s: under t = 2
    for kind in ("oracle", "first-step"):
        assert cb.task_run(fast, 40.0, cb.Rule(kind, 2, 2.0), S).clone_s == 0.0
    slow = [200.0, 50.0, 60.0]
    oracle = cb.task_run(slow, 40.0, cb.Rule("oracle", 2, 2.0), S)
    assert oracle.end_s == 55.0
    first = cb.task_run(slow, 40.0, cb.Rule("first-step", 2, 2.0), S)
    at = 5.0 + 2.0 * 40.0 / cb.STEPS + 1.5  # the first step a factor-2 copy would have reported
    assert first.end_s == pytest.approx(at + 55.0)
    assert first.clone_s == pytest.approx(2 * 55.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_on_the_bench_draws_seeing_later_never_beats_the_oracle_and_cloning_never_loses(seed: int) -> None:
    none = cb.mix_run(seed, cb.Rule("launch", 0), S)
    assert none.clone_share == 0.0
    for c in (1, 2):
        for t in (1.5, 3.0):
            oracle = cb.mix_run(seed, cb.Rule("oracle", c, t), S)
            first = cb.mix_run(seed, cb.Rule("first-step", c, t), S)
            assert oracle.mean_flowtime_s <= first.mean_flowtime_s <= none.mean_flowtime_s
            assert 0.0 < oracle.clone_share < c / (c + 1)
    assert cb.mix_run(seed, cb.Rule("oracle", 2, 20.0), S) == none  # factors are capped at 20: no clones
    launch = cb.mix_run(seed, cb.Rule("launch", 2), S)
    assert launch.mean_flowtime_s <= cb.mix_run(seed, cb.Rule("oracle", 2, 1.5), S).mean_flowtime_s
    assert launch.clone_share == pytest.approx(2 / 3)  # every copy runs until its task's winner ends


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "sometimes", "clones": 1}, "kind"),
        ({"kind": "launch", "clones": 4}, "clones"),
        ({"kind": "oracle", "clones": 1, "threshold": 0.5}, "threshold"),
    ],
)
def test_a_bad_rule_is_refused_naming_its_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        cb.Rule(**kwargs)  # type: ignore[arg-type]


def test_the_command_prints_each_rule_with_its_ratio_and_share(capsys: pytest.CaptureFixture[str]) -> None:
    assert cb.main(["--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "launch c=2" in out and "first-step c=2 t=3" in out and "clone share" in out
    assert "  seed 2: oracle c=" in out and "fastest at clone share <= 0.3" in out
    with pytest.raises(SystemExit):
        cb.main(["--seeds", "0"])


def test_the_fastest_rule_within_a_share_limit_keeps_to_it_and_a_looser_limit_is_never_slower() -> None:
    tight = cb.fastest_within(1, "oracle", 0.2, S)
    loose = cb.fastest_within(1, "oracle", 0.4, S)
    assert tight is not None and loose is not None
    assert tight[1].clone_share <= 0.2 < loose[1].clone_share <= 0.4
    assert loose[1].mean_flowtime_s < tight[1].mean_flowtime_s
    assert cb.mix_run(1, tight[0], S) == tight[1]
