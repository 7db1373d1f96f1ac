"""Benchmarks as data (pyscheduler/bench/suite.py): the scenarios file is validated, figures are read
from the commands' JSON, `bench all` runs real commands and judges their bars, `bench compare` pairs two
trees run by run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyscheduler.bench import suite
from pyscheduler.cli import main

TINY = """
[[scenario]]
name = "engine, tiny"
args = ["bench", "engine", "--jobs", "5", "--nodes", "20", "--rounds", "3", "--json"]
figure = "median_ms"
max = {bar}
ci = true
"""


def test_the_shipped_scenarios_load_and_include_a_ci_subset() -> None:
    scenarios = suite.load()
    assert len(scenarios) >= 6 and any(s.ci for s in scenarios) and not all(s.ci for s in scenarios)
    assert all(s.args[0] in ("bench", "simulate") for s in scenarios)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "no [[scenario]]"),
        ('[[scenario]]\nname = "a"\nargs = ["x"]\nfigure = "f"\nmax = 1\nspeed = 3\n', "unknown keys"),
        ('[[scenario]]\nname = ""\nargs = ["x"]\nfigure = "f"\nmax = 1\n', "scenario[0].name"),
        ('[[scenario]]\nname = "a"\nargs = []\nfigure = "f"\nmax = 1\n', "scenario[0].args"),
        ('[[scenario]]\nname = "a"\nargs = ["x"]\nfigure = "f"\nmax = 0\n', "scenario[0].max"),
        ('[[scenario]]\nname = "a"\nargs = ["x"]\nfigure = "f"\nmax = 1\nci = "yes"\n', "scenario[0].ci"),
    ],
)
def test_a_malformed_scenarios_file_is_refused_naming_the_field(
    tmp_path: Path, text: str, named: str
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(text)
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        suite.load(f)


def test_a_figure_is_a_dotted_path_to_a_number() -> None:
    doc = {"policies": {"default": {"wall_seconds": 1.5, "name": "x"}}}
    assert suite.figure_of(doc, "policies.default.wall_seconds") == 1.5
    with pytest.raises(ValueError, match="no 'tetris'"):
        suite.figure_of(doc, "policies.tetris.wall_seconds")
    with pytest.raises(ValueError, match="not a number"):
        suite.figure_of(doc, "policies.default.name")


def test_compare_alternates_the_trees_and_pairs_run_by_run() -> None:
    calls: list[str] = []
    figures = {"base": iter([10.0, 20.0, 12.0]), "tree": iter([5.0, 30.0, 12.0])}

    def run(s: suite.Scenario, tree: Path) -> float:
        calls.append(tree.name)
        return next(figures[tree.name])

    (s,) = [suite.Scenario("x", ("bench",), "f", 1.0)]
    got = suite.pair([s], 3, run, Path("base"), Path("tree"))
    assert calls == ["base", "tree"] * 3
    base, tree, ratio = got["x"]
    assert (base.median, tree.median) == (12.0, 12.0)
    assert (ratio.median, ratio.low, ratio.high) == (1.0, 0.5, 1.5)


def test_bench_all_runs_the_commands_and_judges_their_bars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok, slow = tmp_path / "ok.toml", tmp_path / "slow.toml"
    ok.write_text(TINY.format(bar=10_000))
    slow.write_text(TINY.format(bar=1e-9))
    out = tmp_path / "out.json"
    assert main(["bench", "all", "--scenarios", str(ok), "--repeats", "1", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["scenarios"]["engine, tiny"]
    assert row["figure"] == "median_ms" and 0 < row["low"] <= row["median"] <= row["high"]
    assert "engine, tiny" in capsys.readouterr().out
    assert main(["bench", "all", "--scenarios", str(slow), "--repeats", "1"]) == 1  # over its bar
    with pytest.raises(SystemExit, match="no scenario chosen"):
        main(["bench", "all", "--scenarios", str(ok), "--only", "nothing like it"])


def test_bench_compare_runs_a_revision_beside_this_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(TINY.format(bar=10_000))
    assert main(["bench", "compare", "HEAD", "--scenarios", str(f), "--repeats", "1"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    ratio = line["scenarios"]["engine, tiny"]["ratio"]
    assert line["rev"] == "HEAD" and ratio["median"] > 0
    with pytest.raises(SystemExit, match="no-such-rev"):
        main(["bench", "compare", "no-such-rev", "--scenarios", str(f), "--repeats", "1"])
