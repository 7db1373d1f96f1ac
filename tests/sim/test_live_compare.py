"""The live mechanism measured over seeds (pyscheduler/sim/live/compare.py and its CLI)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from pyscheduler.sim.live import LiveOptions, run, small_mapreduce
from pyscheduler.sim.live.__main__ import main
from pyscheduler.sim.live.compare import WARM_SEED_OFFSET, Spread, bench_service, over_seeds, run_warm
from pyscheduler.sim.live.workload import loaded


def test_over_seeds_summarises_the_runs() -> None:
    seen: list[tuple[int, float]] = []
    r = over_seeds(
        small_mapreduce, [1, 2], {"policy.name": "dollymp"}, lambda s, r: seen.append((s, r.mean_flowtime))
    )
    assert [s for s, _ in seen] == [1, 2]
    means = sorted(f for _, f in seen)
    assert (r.flowtime.low, r.flowtime.high) == (means[0], means[1])
    assert r.flowtime.median == pytest.approx(sum(means) / 2)
    assert r.workload == "small-mapreduce" and r.seeds == (1, 2)
    assert r.flowtimes == tuple(f for _, f in seen)


def test_spread() -> None:
    s = Spread.of([3.0, 1.0, 2.0])
    assert (s.median, s.low, s.high) == (2.0, 1.0, 3.0)
    assert s.text(".1f") == "2.0 [1.0, 3.0]"


def test_cli_prints_a_line_per_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seeds", "1", "--workload", "small-mapreduce", "--policy", "dollymp"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("small-mapreduce (")
    assert re.search(r"^  mean flowtime \d+\.\d \[\d+\.\d, \d+\.\d\] s   clone share ", out[2])
    assert len(out) == 3


def test_cli_refuses_an_unknown_workload() -> None:
    with pytest.raises(SystemExit):
        main(["--workload", "nonesuch"])


def test_cli_lays_policy_options_over_the_benchmarks(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--seeds", "1", "--workload", "small-mapreduce"]
    assert main([*args, "--policy-options", '{"max_clones": 1}']) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "'policy.name': 'default'" in first and "'max_clones': 1" in first, first
    with pytest.raises(SystemExit):
        main([*args, "--policy-options", "[1]"])
    assert "must be a JSON object" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--policy-options", "{max_clones"])
    assert "not JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a bad option is named under the flag that gave it
        main([*args, "--policy-options", '{"max_clones": 9}'])
    err = capsys.readouterr().err
    assert "error: --policy/--policy-options: dollymp option max_clones" in err
    with pytest.raises(SystemExit):
        main([*args, "--host-cores", "-2"])
    assert "--host-cores: -2" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--startup-fixed-s", "4000"])
    assert "--startup-fixed-s: 4000.0 outside [0, 3600]" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--clone-after-start-s", "-1"])
    assert "--clone-after-start-s: -1.0 outside [0, 3600]" in capsys.readouterr().err


def test_cli_passes_service_keys_and_splits_container_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--seeds", "1", "--workload", "small-mapreduce", "-v"]
    assert main([*args, "--service", '{"appmaster.beaten_margin_s": 2}']) == 0
    out = capsys.readouterr().out
    assert "'appmaster.beaten_margin_s': 2" in out.splitlines()[0]
    assert re.search(r"lost share \d\.\d{3} \[", out) and "container-s: clone killed" in out
    with pytest.raises(SystemExit):
        main([*args, "--service", "[]"])
    assert "--service: must be a JSON object" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # refused by the service's own check, the key named
        main([*args, "--service", '{"appmaster.beaten_margin_s": -1}'])
    err = capsys.readouterr().err
    assert "--service:" in err and "appmaster.beaten_margin_s" in err
    with pytest.raises(SystemExit):
        main([*args, "--service", '{"appmaster.nonesuch": 1}'])
    assert "appmaster.nonesuch" in capsys.readouterr().err


def test_container_seconds_split_by_copy_and_end() -> None:
    rec = run(small_mapreduce(1), LiveOptions(service=bench_service()))
    total = rec.container_s[False] + rec.container_s[True]
    assert sum(rec.held_s.values()) == pytest.approx(total)
    clones = sum(s for k, s in rec.held_s.items() if k.startswith("clone "))
    assert clones == pytest.approx(rec.container_s[True])
    assert {"original won", "clone killed"} <= set(rec.held_s)
    lost = sum(s for k, s in rec.held_s.items() if not k.endswith(" won"))
    assert rec.lost_share == pytest.approx(lost / total) and 0.0 < rec.lost_share < 1.0
    assert sum(rec.held_share().values()) == pytest.approx(1.0)


def _cold_placements(store: Path) -> int:
    """Task placements the decision log in `store` made on the prior θ (nothing measured: θ 1 s, σ 0 s)."""
    with sqlite3.connect(store / "decisions.db") as db:
        (n,) = db.execute(
            "SELECT count(*) FROM decisions WHERE kind = 'placement' AND reason != 'am_container'"
            " AND detail LIKE '%θ 1 s, σ 0 s%'"
        ).fetchone()
    return int(n)


def test_every_phase_of_a_finished_run_reaches_the_recurring_job_history(tmp_path: Path) -> None:
    """A job's last phase too: its AM reports its last attempts as it stops (the helper's last tick)."""
    wl = small_mapreduce(1)
    run(wl, LiveOptions(service=bench_service()), tmp_path)
    with sqlite3.connect(tmp_path / "decisions.db") as db:
        held = {(j, p): n for j, p, n in db.execute("SELECT job_name, phase_id, count FROM phase_moments")}
    assert held == {(j.name, ph.phase_id): ph.tasks for j in wl.jobs for ph in j.phases}


def test_a_warm_run_places_on_the_recurring_job_history_not_the_cold_prior(tmp_path: Path) -> None:
    opts = LiveOptions(service=bench_service())
    cold, warm_up, warm = (tmp_path / n for n in ("cold", "warm-up", "warm"))
    for d in (cold, warm_up, warm):
        d.mkdir()
    run(small_mapreduce(1), opts, cold)
    run(small_mapreduce(1 + WARM_SEED_OFFSET), opts, warm_up)
    rec = run_warm(small_mapreduce, 1, opts, warm)
    assert _cold_placements(cold) > 0  # a cold service places the first tasks on the prior
    # after the warm-up (the same jobs, other draws) the measured run adds none: the history gives θ
    assert _cold_placements(warm) == _cold_placements(warm_up)
    assert len(rec.flowtimes) == len(small_mapreduce(1).jobs)


def test_the_cli_runs_warm_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--seeds", "1", "--workload", "small-mapreduce", "--warm-history"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "after a warm-up run of the same jobs (recurring-job history)" in out
    assert re.search(r"small-mapreduce .*\n  mean flowtime \d", out)


def test_late_first_reaches_the_services_rounds() -> None:
    """appmaster.late_first (service/round/clones.py) on the loaded mix, where a small job's late copy can
    wait behind the large job's originals: the same draws decide differently, and every job still finishes."""
    wl = loaded(1)
    base = run(wl, LiveOptions(service=bench_service()))
    ahead = run(wl, LiveOptions(service={**bench_service(), "appmaster.late_first": True}))
    assert base.key() != ahead.key()
    assert len(ahead.flowtimes) == len(base.flowtimes) == len(wl.jobs)
