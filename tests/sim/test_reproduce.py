"""The reproduction report writer on a tiny synthetic scenario (the real scenarios are benchmark runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pyscheduler.sim import reproduce
from pyscheduler.sim.reproduce import SCENARIOS, Check, Run, Scenario, run_scenario, write_report


def test_report_from_a_synthetic_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reproduce, "SYNTHETIC_OUT", tmp_path / "mw.jsonl")
    run = Run(
        "load=0.5",
        reproduce.SYNTHETIC,
        "native",
        "mw20.json",
        ["fifo", "redundant-small"],
        load=0.5,
        straggler="pareto:alpha=3",
        tick=1.0,
    )

    def summarize(res: dict[str, reproduce.Comparison]) -> list[Check]:
        c = res["load=0.5"]
        r = c.results["redundant-small"].avg_flowtime / c.results["fifo"].avg_flowtime
        return [Check(f"ratio {r:.2f}", r, r < 1)]

    sc = Scenario("tiny", "Tiny", "a claim", [run], summarize)
    run_scenario(sc, tmp_path, quick=True, log=lambda _m: None)
    c = sc.results["load=0.5"]
    assert c.settings["jobs"] == 600 and abs(c.load - 0.5) < 0.05
    assert (tmp_path / "mw.jsonl").read_text().count("\n") == 600
    out = tmp_path / "repro.md"
    write_report([sc], out, tmp_path / "fig", True, "dollymp report --quick --only tiny", 1.0)
    text = out.read_text()
    assert (
        "| tiny | ratio" in text
        and "dollymp simulate --mechanism core --workload var/reproduction/master_worker.jsonl" in text
    )
    assert "| redundant-small |" in text and (tmp_path / "fig" / "tiny_load_0_5_cdf.png").exists()


def test_scenario_keys_unique_and_commands_name_every_setting() -> None:
    keys = [s.key for s in SCENARIOS]
    assert len(keys) == len(set(keys)) >= 6
    for s in SCENARIOS:
        for r in s.runs:
            cmd = r.command(quick=False)
            assert "--policies" in cmd and "--seed" in cmd and "--straggler" in cmd


def test_a_kept_run_is_read_back_and_a_changed_command_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reproduce, "SYNTHETIC_OUT", tmp_path / "mw.jsonl")

    def tiny(load: float) -> Scenario:
        run = Run("r", reproduce.SYNTHETIC, "native", "mw20.json", ["fifo"], load=load, tick=1.0)
        return Scenario("tiny", "Tiny", "a claim", [run], lambda _res: [])

    cache = tmp_path / "cache"
    first = tiny(0.5)
    run_scenario(first, tmp_path, quick=True, log=lambda _m: None, cache=cache)
    assert len(list(cache.glob("tiny-*.pickle"))) == 1

    def no_runs(*_a: object, **_k: object) -> None:
        raise AssertionError("a kept run was run again")

    monkeypatch.setattr(reproduce, "compare", no_runs)
    again = tiny(0.5)
    said: list[str] = []
    run_scenario(again, tmp_path, quick=True, log=said.append, cache=cache, reuse=True)
    assert "reused" in said[0]
    assert again.results["r"].results["fifo"].avg_flowtime == first.results["r"].results["fifo"].avg_flowtime
    with pytest.raises(AssertionError, match="run again"):  # another load is another command
        run_scenario(tiny(0.6), tmp_path, quick=True, log=lambda _m: None, cache=cache, reuse=True)


def test_a_run_kept_with_fewer_policies_runs_only_the_added_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reproduce, "SYNTHETIC_OUT", tmp_path / "mw.jsonl")

    def tiny(policies: list[str]) -> Scenario:
        run = Run("r", reproduce.SYNTHETIC, "native", "mw20.json", policies, load=0.5, tick=1.0)
        return Scenario("tiny", "Tiny", "a claim", [run], lambda _res: [])

    cache = tmp_path / "cache"
    first = tiny(["fifo"])
    run_scenario(first, tmp_path, quick=True, log=lambda _m: None, cache=cache)
    ran: list[list[str]] = []
    real = reproduce.compare

    def counting(
        jobs: object, cluster: object, policies: list[str], config: object, mechanism: str
    ) -> object:
        assert mechanism == "core"  # the report's runs are the engine's (reproduce_runs.Run.mechanism)
        ran.append(list(policies))
        return real(jobs, cluster, policies, config, mechanism=mechanism)  # type: ignore[arg-type]

    monkeypatch.setattr(reproduce, "compare", counting)
    for side in cache.glob("tiny-*.json"):  # a run kept before sidecars existed: found by its results
        side.unlink()
    said: list[str] = []
    shown = tiny(["redundant-small", "fifo"])  # --kept-only runs nothing, not even the added policies
    run_scenario(shown, tmp_path, quick=True, log=said.append, cache=cache, reuse=True, kept_only=True)
    assert ran == [] and not shown.results and "left out" in said.pop()
    both = tiny(["redundant-small", "fifo"])
    run_scenario(both, tmp_path, quick=True, log=said.append, cache=cache, reuse=True)
    assert ran == [["redundant-small"]] and "1 policies reused" in said[0]
    got = both.results["r"]
    assert list(got.results) == ["redundant-small", "fifo"]
    assert got.results["fifo"].flowtimes.tolist() == first.results["r"].results["fifo"].flowtimes.tolist()
    alone = tiny(["redundant-small"])  # the merged run is kept under its own command: read back whole
    run_scenario(alone, tmp_path, quick=True, log=lambda _m: None, cache=cache, reuse=False)
    assert alone.results["r"].results["redundant-small"].flowtimes.tolist() == (
        got.results["redundant-small"].flowtimes.tolist()
    )
    run_scenario(
        tiny(["redundant-small", "fifo"]), tmp_path, quick=True, log=said.append, cache=cache, reuse=True
    )
    assert "reused" in said[-1] and ran == [["redundant-small"], ["redundant-small"]]
    other = Run(
        "r", reproduce.SYNTHETIC, "native", "mw20.json", ["redundant-small", "fifo"], load=0.6, tick=1.0
    )
    run_scenario(
        Scenario("tiny", "T", "c", [other], lambda _r: []),
        tmp_path,
        True,
        said.append,
        cache=cache,
        reuse=True,
    )
    assert ran[-1] == ["redundant-small", "fifo"]  # another load: nothing kept matches, all run


def test_a_quick_report_never_overwrites_the_committed_full_one() -> None:
    from pyscheduler.cli import report as cli

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    full = cli.outputs(parser.parse_args(["report"]))
    quick = cli.outputs(parser.parse_args(["report", "--quick"]))
    assert full == (str(cli.REPO / "docs/reproduction.md"), str(cli.REPO / "docs/reproduction"))
    assert all("/var/reproduction/quick/" in p for p in quick)
    given = cli.outputs(parser.parse_args(["report", "--quick", "--out", "/x/r.md", "--figures", "/x/f"]))
    assert given == ("/x/r.md", "/x/f")
