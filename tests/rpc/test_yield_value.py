"""Clones yield to waiting originals by value (service/round/yield_value.py, `appmaster.yield_model =
"value"`), on a real Mirror: the clone worth least goes, never a lead, never for a wait worth less than the
victims, and a task gives up one copy a round."""

from __future__ import annotations

from pathlib import Path

import pytest
from rpc_harness import app, ask, attempt, full_batch, in_process_service, node, res
from yield_rig import APP1, NOW_MS, two_nodes

from pyscheduler import config
from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.session import Session
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.waiting import Waiting
from pyscheduler.service.round.yield_value import choose_by_value, chooser_by_value
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.resources import Res
from pyscheduler.value import ValueOptions
from pyscheduler.wire import pb


def _copy(cid: str, task: str, clone: bool, *, finish_s: float | None = None, launch_s: float = 90.0) -> Copy:
    """A copy of a phase of mean 30 s, SD 30 s; `finish_s`: timed at its rate to finish then."""
    est = None if finish_s is None else finish_s * 1000.0
    return Copy(
        APP1, task, f"attempt_{cid}", cid, clone, 0.5 if est else 0.0, int(launch_s * 1000),
        finish_est_ms=est, mean_s=30.0, sd_s=30.0, startup_s=2.0,
    )  # fmt: skip


def _waiting(mem: int = 1024, cores: int = 1) -> Waiting:
    return Waiting(Res(mem, cores), (attempt(2), 20, 0), original=True)


def test_the_clone_beside_a_copy_about_to_finish_goes_not_the_one_beside_a_straggler() -> None:
    m = two_nodes(apps=2)
    copies = [
        _copy("o1", "t1", False, finish_s=103.0),  # 3 s left: its clone c1 is worth about nothing
        _copy("c1", "t1", True),
        _copy("o2", "t2", False, finish_s=400.0),  # a straggler: its young clone c2 is worth much
        _copy("c2", "t2", True),
    ]
    kills = choose_by_value(m, [_waiting()], copies, NOW_MS, opts=ValueOptions(margin_s=0.5))
    assert [k.container_id for k in kills] == ["c1"], kills
    assert "yields to a waiting original" in kills[0].detail


def test_no_clone_yields_when_the_wait_is_worth_less_than_the_victims_and_the_margin() -> None:
    m = two_nodes(apps=2)
    copies = [
        _copy("o1", "t1", False, finish_s=400.0),
        _copy("c1", "t1", True),
        _copy("o2", "t2", False, finish_s=500.0),
        _copy("c2", "t2", True),
    ]
    # the first container frees in about a clone's run (both clones are fresh draws): that wait is worth
    # less than either clone, which each save most of a straggler's run
    assert choose_by_value(m, [_waiting()], copies, NOW_MS, opts=ValueOptions(margin_s=0.0)) == []


def test_never_a_lead_or_a_tasks_only_copy_and_one_copy_per_task_a_round() -> None:
    m = two_nodes((("o1", "h1:1"), ("c1", "h1:1"), ("c1b", "h2:1"), ("x", "h2:1")), apps=2)
    copies = [
        _copy("o1", "t1", False, finish_s=102.0),
        _copy("c1", "t1", True),
        _copy("c1b", "t1", True),
        _copy("x", "t9", True, finish_s=101.0),  # a clone alone in its task (its original ended)
    ]
    kills = choose_by_value(m, [_waiting(), _waiting()], copies, NOW_MS, opts=ValueOptions(margin_s=0.0))
    assert len(kills) == 1 and kills[0].container_id in {"c1", "c1b"}, kills  # t1 gives up one copy
    assert "o1" not in {k.container_id for k in kills}


def test_clones_do_not_yield_to_waiting_clones() -> None:
    m = two_nodes(apps=2)
    copies = [_copy("o1", "t1", False, finish_s=103.0), _copy("c1", "t1", True)]
    waiting_clone = Waiting(Res(1024, 1), (attempt(2), 20, 0), original=False)
    assert choose_by_value(m, [waiting_clone], copies, NOW_MS, opts=ValueOptions(margin_s=0.0)) == []


def test_a_round_under_the_value_model_preempts_and_the_plan_logs_why() -> None:
    """core_round with `yield_by` (appmaster.yield_model = "value"): app 2's map waits on a full node whose
    clones are app 1's; the one beside a copy about to finish yields, in the plan and the decision log."""
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1", mem=4096, cores=4, alloc=(4096, 4))],
            apps_upserted=[app(1, submit_ms=1000), app(2, submit_ms=2000)],
            asks=[ask(2, 20, 1)],
            containers_allocated=[
                pb.ContainerInfo(
                    container_id=cid, attempt_id=attempt(1), node_id="h1:1", priority=20,
                    resource=res(1024, 1), start_time_ms=1,
                )
                for cid in ("o1", "c1", "o2", "c2")
            ],
        )
    )  # fmt: skip
    copies = [
        _copy("o1", "t1", False, finish_s=103.0),
        _copy("c1", "t1", True),
        _copy("o2", "t2", False, finish_s=400.0),
        _copy("c2", "t2", True),
    ]
    round_fn = core_round(
        get_policy("dollymp"),
        clock=lambda: NOW_MS / 1000.0,
        copies=lambda *_: copies,
        release_beaten=False,
        yield_by=chooser_by_value(ValueOptions(margin_s=0.5)),
    )
    session = Session("sid", "rm-test", 1, 1000, (), mirror=m)
    # app 2's phase has no container yet, so its waiting map counts at once (service/round/waiting.py)
    plan, records = session.decide(round_fn, NOW_MS / 1000.0, 30.0)
    assert list(plan.kill_container_ids) == ["c1"]
    kills = [d for d in records.build() if d.kind.value == "kill"]
    assert [(d.reason, d.inputs["container_id"]) for d in kills] == [("clone_yields", "c1")]


def test_the_service_takes_the_value_model_by_config_and_refuses_a_bad_margin(tmp_path: Path) -> None:
    svc = in_process_service(tmp_path, **{"appmaster.yield_model": "value", "yield.margin_s": 2.0})
    svc.stop()
    with pytest.raises(config.ConfigError, match=r"yield\.margin_s"):
        config.load(None, env={}, overrides={"yield.margin_s": -1.0})
    with pytest.raises(config.ConfigError, match=r"appmaster\.yield_model"):
        config.load(None, env={}, overrides={"appmaster.yield_model": "maybe"})
    with pytest.raises(config.ConfigError, match=r"yield\.margin_s"):
        in_process_service(tmp_path / "b", **{"appmaster.yield_model": "value", "yield.margin_s": 1e9})
