"""bench_cluster's pure parts: percentiles, clone overhead and preemptions read back, the JSON summary."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pyscheduler import config
from pyscheduler.deploy import bench_cluster as bc
from pyscheduler.deploy import benchmix, benchreads
from pyscheduler.deploy.jobs import JobResult
from pyscheduler.objects import Decision, DecisionKind
from pyscheduler.store.log import DecisionLog

HEADER = "task_id\tphase\tattempt_id\tis_clone\tcontainer_id\tnode_id\tstate\tlaunch_ms\tfinish_ms\twinner"


def test_p90_nearest_rank() -> None:
    assert bc.p90([float(x) for x in range(1, 11)]) == 9.0
    assert bc.p90([5.0]) == 5.0


def test_clone_overhead_counts_clone_and_lost_container_seconds(tmp_path: Path) -> None:
    rows = [
        "# job_state=SUCCEEDED",
        HEADER,
        "t0\tmap\ta0\tfalse\tc1\tn\tSUCCEEDED\t1000\t5000\ttrue",
        "t0\tmap\ta1\ttrue\tc2\tn\tKILLED\t2000\t5000\tfalse",
        "t1\tmap\tb0\tfalse\t\t\tKILLED\t0\t0\tfalse",  # never launched: no container time
        # t2's clone wins: its 2 s are a clone's, not lost; the original it beat (5 s) is lost
        "t2\tmap\td0\tfalse\tc3\tn\tKILLED\t1000\t6000\tfalse",
        "t2\tmap\td1\ttrue\tc4\tn\tSUCCEEDED\t4000\t6000\ttrue",
    ]
    (tmp_path / "application_1_0001.tsv").write_text("\n".join(rows) + "\n")
    assert benchreads.clone_overhead(tmp_path) == (5.0, 14.0, 8.0, 2)


def test_the_services_preemptions_are_counted_per_reason_from_its_decision_log(tmp_path: Path) -> None:
    db = tmp_path / "decisions.db"
    assert benchreads.kills_by_reason(db) == {}  # no service ran
    log = DecisionLog(db)
    kill = DecisionKind.KILL
    log.append(
        [
            Decision(time=1.0, kind=kill, reason="clone_yields", application_id="application_1_0001"),
            Decision(time=2.0, kind=kill, reason="clone_beaten", application_id="application_1_0001"),
            Decision(time=3.0, kind=kill, reason="clone_beaten", application_id="application_1_0002"),
            Decision(time=4.0, kind=DecisionKind.PLACEMENT, reason="best_fit"),
        ]
    )
    log.close()
    assert benchreads.kills_by_reason(db) == {"clone_yields": 1, "clone_beaten": 2}
    dmp = bc.Run("dollymp", kills=benchreads.kills_by_reason(db))
    cap = bc.Run("capacity")
    for j in bc.MIX:
        cap.results[j.name] = dmp.results[j.name] = _result(j.name, 100.0)
    table, out = bc.report({"capacity": cap, "dollymp": dmp})
    assert (out["clones_yielded"], out["clones_beaten"]) == (1, 2)
    assert "preempted by the service: 1 for waiting originals, 2 beaten" in table


def _result(name: str, s: float) -> JobResult:
    return JobResult(name, "application_1_1", 0, "SUCCEEDED", s, s, Path("log"))


def _mix_report(**dollymp: Any) -> tuple[str, dict[str, object]]:
    """The report of the mix with every Capacity job at 100 s and every DollyMP job at 50 s."""
    cap, dmp = bc.Run("capacity"), bc.Run("dollymp", **dollymp)
    for j in bc.MIX:
        cap.results[j.name] = _result(j.name, 100.0)
        dmp.results[j.name] = _result(j.name, 50.0)
    return bc.report({"capacity": cap, "dollymp": dmp})


def test_report_last_line_fields() -> None:
    _, out = _mix_report(clone_s=10.0, attempt_s=100.0, lost_s=25.0, clones=2)
    assert out["ratio"] == 0.5
    assert out["clone_extra_container_s_frac"] == 0.1
    assert out["lost_container_s_frac"] == 0.25
    assert out["capacity_avg_flowtime_s"] == 100.0 and out["dollymp_p90_flowtime_s"] == 50.0


def test_dollymp_jobs_opt_in_through_the_framework_name(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    bc.add_arguments(parser)
    args = parser.parse_args(["--base-ms", "2000", "--cap", "10", "--clone-after-start-ms", "7000"])
    d = bc.job_args(args, "dollymp", tmp_path, bc.MIX[0])
    c = bc.job_args(args, "capacity", tmp_path, bc.MIX[0])
    assert "-Dmapreduce.framework.name=dollymp" in d and not any("framework" in a for a in c)
    assert "-Ddollymp.am.clone.after-start-ms=7000" in d and not any("dollymp.am" in a for a in c)
    assert "-Ddollymp.straggler.map.base-ms=2000" in d and "-Ddollymp.straggler.map.base-ms=2000" in c
    assert d[-1] == c[-1] == bc.MIX[0].name


def test_both_schedulers_jobs_start_every_jvm_on_the_same_archive(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    bc.add_arguments(parser)
    args = parser.parse_args([])
    assert args.cds  # on unless --no-cds
    opts = "-cp /a.jar:/conf -XX:SharedArchiveFile=/j.jsa"
    for scheduler in ("capacity", "dollymp"):
        argv = bc.job_args(args, scheduler, tmp_path, bc.MIX[0], opts)
        props = dict(a[2:].split("=", 1) for a in argv[:-1])
        assert props["mapreduce.map.java.opts"] == f"{bc.TASK_JVM_OPTS} {opts}"
        assert props["mapreduce.reduce.java.opts"] == f"{bc.TASK_JVM_OPTS} {opts}"
        assert props["yarn.app.mapreduce.am.command-opts"] == f"{bc.AM_JVM_OPTS} {opts}"
    assert not parser.parse_args(["--no-cds"]).cds


def test_the_light_mix_gets_twice_the_containers_of_the_loaded_one() -> None:
    parser = argparse.ArgumentParser()
    bc.add_arguments(parser)
    light, loaded = parser.parse_args([]), parser.parse_args(["--mix", "loaded"])
    assert bc.nm_vcores(light) == 8 and bc.nm_vcores(loaded) == 4
    assert bc.nm_vcores(parser.parse_args(["--nm-vcores", "6"])) == 6


def test_the_loaded_mix_overfills_the_cluster_with_one_large_job_then_small_ones() -> None:
    jobs = bc.mix("loaded")
    big, small = jobs[0], jobs[1:]
    slots = 4 * bc.NM_VCORES["loaded"]  # the loaded mix's cluster: 4 NodeManagers, one container per vcore
    assert big.delay_s == 0.0 and big.maps > slots
    assert all(j.maps <= 4 and j.delay_s > 0 for j in small)
    assert [j.delay_s for j in jobs] == sorted(j.delay_s for j in jobs)
    assert len({j.name for j in jobs}) == len(jobs)


def test_the_light_mix_spaces_small_jobs_by_the_gap() -> None:
    jobs = bc.mix("light", gap_s=10.0)
    assert [j.delay_s for j in jobs] == [10.0 * i for i in range(len(jobs))]
    assert max(j.maps for j in jobs) <= 6


def test_an_unknown_mix_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="--mix: unknown mix 'heavy'"):
        bc.mix("heavy")


def test_the_report_covers_the_jobs_of_the_mix_that_ran() -> None:
    light = bc.mix("light")
    cap, dmp = bc.Run("capacity"), bc.Run("dollymp")
    for j in light:
        cap.results[j.name] = _result(j.name, 40.0)
        dmp.results[j.name] = _result(j.name, 30.0)
    table, out = bc.report({"capacity": cap, "dollymp": dmp}, light)
    assert out["jobs"] == len(light) and out["ratio"] == 0.75
    assert all(j.name in table for j in light)


def test_the_floor_run_has_no_stragglers_and_is_reported_against_capacity(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    bc.add_arguments(parser)
    args = parser.parse_args(["--floor", "--cap", "20"])
    floor = bc.floor_args(args)
    assert floor.cap == 1.0 and args.cap == 20.0  # the measured runs keep their stragglers
    assert "-Ddollymp.straggler.cap=1.0" in bc.job_args(floor, "capacity", tmp_path, bc.MIX[0])
    runs = {name: bc.Run(name) for name in ("capacity", "dollymp", "floor")}
    for j in bc.MIX:
        runs["capacity"].results[j.name] = _result(j.name, 40.0)
        runs["dollymp"].results[j.name] = _result(j.name, 36.0)
        runs["floor"].results[j.name] = _result(j.name, 30.0)
    table, out = bc.report(runs)
    assert out["floor_avg_flowtime_s"] == 30.0 and out["floor_ratio"] == 0.75
    assert "straggler-free floor" in table
    _, without = bc.report({k: runs[k] for k in ("capacity", "dollymp")})
    assert "floor_ratio" not in without


def test_service_keys_become_the_services_environment_checked_first() -> None:
    env = benchmix.service_env('{"appmaster.release_beaten_originals": true, "appmaster.beaten_margin_s": 2}')
    assert env == {
        "DOLLYMP_APPMASTER_RELEASE_BEATEN_ORIGINALS": "true",
        "DOLLYMP_APPMASTER_BEATEN_MARGIN_S": "2",
    }
    assert config.load(None, env=env)["appmaster.beaten_margin_s"] == 2.0
    assert benchmix.service_env(None) == {}
    for bad, named in (
        ('{"appmaster.beaten_margin_s": -1}', "appmaster.beaten_margin_s"),
        ('{"appmaster.nonesuch": 1}', "appmaster.nonesuch"),
        ("[1]", "must be a JSON object"),
        ("{", "not JSON"),
    ):
        with pytest.raises(ValueError, match=re.escape(named)):
            benchmix.service_env(bad)
    assert bc.main(["--service", '{"appmaster.beaten_margin_s": -1}']) == 2


def test_each_half_pays_the_vcore_seconds_the_rm_granted_its_jobs() -> None:
    """What users pay, beside flowtime: the RM's own vcoreSeconds of every application of each half (AMs,
    clones and killed copies included), and DollyMP's over Capacity's; unknown when a report lacks it."""
    cap, dmp = bc.Run("capacity"), bc.Run("dollymp")
    for j in bc.MIX:
        cap.results[j.name] = replace(_result(j.name, 100.0), vcore_s=200.0)
        dmp.results[j.name] = replace(_result(j.name, 50.0), vcore_s=260.0)
    table, out = bc.report({"capacity": cap, "dollymp": dmp})
    assert out["capacity_vcore_s"] == 200.0 * len(bc.MIX) and out["vcore_s_ratio"] == 1.3
    assert f"Capacity {200.0 * len(bc.MIX)}, DollyMP {260.0 * len(bc.MIX)} (1.3 x)" in table
    dmp.results[bc.MIX[0].name] = _result(bc.MIX[0].name, 50.0)  # no vcoreSeconds in its report
    _, out = bc.report({"capacity": cap, "dollymp": dmp})
    assert out["dollymp_vcore_s"] is None and out["vcore_s_ratio"] is None


def test_seeds_are_a_range_or_a_list_and_bounded() -> None:
    assert bc.parse_seeds("1..5") == [1, 2, 3, 4, 5]
    assert bc.parse_seeds("2,4") == [2, 4]
    for bad in ("0..3", "5..1", "x", f"1..{bc.MAX_SEEDS + 1}", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            bc.parse_seeds(bad)
    p = argparse.ArgumentParser()
    bc.add_arguments(p)
    assert p.parse_args(["--seeds", "1..3"]).seeds == [1, 2, 3] and p.parse_args([]).seeds is None


def test_clone_seconds_while_originals_waited_come_from_the_services_metrics() -> None:
    text = (
        "# HELP dollymp_clone_container_seconds_while_originals_wait_total ...\n"
        "dollymp_clone_container_seconds_while_originals_wait_total 42.5\n"
        "dollymp_clone_container_seconds_while_originals_wait_created 1.7e9\n"
    )
    assert benchreads.metric_value(text, benchreads.CLONE_WAIT_METRIC) == 42.5
    assert benchreads.metric_value("other 1\n", benchreads.CLONE_WAIT_METRIC) is None
    assert benchreads.clone_s_while_waiting(None) is None
    table, out = _mix_report(attempt_s=1000.0, clone_wait_s=42.5)
    assert out["clone_s_while_originals_waited"] == 42.5
    assert out["clone_s_while_originals_waited_frac"] == 0.0425
    assert "clones held 42.5 container-s while an original of some job waited" in table
