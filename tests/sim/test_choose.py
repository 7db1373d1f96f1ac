"""The declared procedure that picks the production configuration (pyscheduler/bench/choose.py): its
choice rule on a given table, and the calibration to a measured utilisation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyscheduler.bench import choose
from pyscheduler.bench.choose import Ratios
from pyscheduler.cli import main
from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.live.compare import Spread
from pyscheduler.sim.loaders import load_workload
from pyscheduler.sim.runner import compare
from pyscheduler.sim.straggler import parse_straggler
from pyscheduler.sim.workload import load_cluster


def _r(flow: float, res: float) -> Ratios:
    one = Spread(1.0, 1.0, 1.0)
    return Ratios(Spread(flow, flow, flow), one, one, Spread(res, res, res))


def test_the_choice_is_the_fronts_best_worst_case_flowtime_ratio() -> None:
    table = {
        # worst flow 0.9 (fb), worst resources 1.05
        "a": {"fb": _r(0.9, 1.05), "ali": _r(0.7, 1.0), "held": _r(0.2, 1.0)},
        # worst flow 0.8, worst resources 1.30: on the front, and the best worst case
        "b": {"fb": _r(0.8, 1.3), "ali": _r(0.6, 1.1), "held": _r(2.0, 3.0)},
        # beaten by a on both
        "c": {"fb": _r(0.95, 1.2), "ali": _r(0.7, 1.0), "held": _r(0.1, 0.5)},
        # the best on one trace only: its worst case is what counts
        "d": {"fb": _r(0.5, 1.0), "ali": _r(1.2, 1.0), "held": _r(0.5, 1.0)},
    }
    got = choose.choose(table, ["fb", "ali"])
    assert got.chosen == "b"
    assert set(got.front) == {"a", "b", "d"}
    assert got.worst_flow == {"a": 0.9, "b": 0.8, "c": 0.95, "d": 1.2}
    assert got.worst_resources["b"] == 1.3
    # the held-out scenario never changes the choice, however it goes
    assert (
        choose.choose(table, ["fb", "ali"]).chosen
        == choose.choose({k: {**v, "held": _r(9.0, 9.0)} for k, v in table.items()}, ["fb", "ali"]).chosen
    )
    # ties on the worst flowtime ratio go to fewer resources
    tie = {"x": {"fb": _r(0.8, 1.2)}, "y": {"fb": _r(0.8, 1.1)}}
    assert choose.choose(tie, ["fb"]).chosen == "y"
    with pytest.raises(ValueError):
        choose.choose(table, [])


def test_ratios_divide_by_each_reference_of_the_same_seed() -> None:
    def run(avg: float, tetris: float, res: float, res0: float) -> dict[str, object]:
        pol = {"avg": avg, "small": avg / 2, "resource_s": res}
        return {
            "policies": {
                "cand": pol,
                "tetris": {"avg": tetris, "small": tetris / 2, "resource_s": 1.0},
                "dollymp0": {"avg": 1.0, "small": 1.0, "resource_s": res0},
                "capacity": {"avg": 2 * tetris, "small": 1.0, "resource_s": 1.0},
            }
        }

    r = choose.ratios([run(50, 100, 12, 10), run(90, 100, 11, 10), run(60, 50, 10, 10)], "cand")
    assert (r.flow.median, r.flow.low, r.flow.high) == (0.9, 0.5, 1.2)
    assert r.small.median == pytest.approx(0.9)
    assert r.capacity.median == pytest.approx(0.45)
    assert (r.resources.median, r.resources.high) == (pytest.approx(1.1), pytest.approx(1.2))


def test_the_fb_slice_is_scaled_to_the_measured_utilisation_asked_for() -> None:
    fb = choose.WORKLOADS[0]
    jobs, _ = load_workload(choose.TRACES / fb.path, fb.fmt, limit=15)
    config = SimConfig(straggler=parse_straggler("empirical"), seed=2, tick=1.0)
    cluster = load_cluster(choose.CLUSTERS / fb.cluster)
    for target in (0.5, 0.8):
        scaled_jobs, scaled = choose.at_utilisation(jobs, cluster, target, config)
        util = (
            compare(scaled_jobs, scaled, ["tetris"], config, mechanism="core").results["tetris"].utilisation
        )
        assert abs(util - target) <= choose.UTIL_TOLERANCE, (target, util, len(scaled.nodes))
        assert len(scaled.nodes) < len(cluster.nodes)


def test_the_front_is_drawn_from_a_runs_json(tmp_path: Path) -> None:
    rows = {
        c: {"flow": {"median": f}, "resources": {"median": r}}
        for c, f, r in (("a", 0.9, 1.0), ("b", 0.7, 1.2))
    }
    out = {
        "seeds": 3,
        "scenarios": {"fb": {"heldout": False, "rows": rows}, "dag": {"heldout": True, "rows": rows}},
        "worst_flow": {"a": 0.9, "b": 0.7},
        "worst_resources": {"a": 1.0, "b": 1.2},
        "front": ["a", "b"],
        "chosen": "b",
    }
    saved, png = tmp_path / "run.json", tmp_path / "front.png"
    saved.write_text(json.dumps(out))
    assert main(["bench", "choose", "--from-json", str(saved), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _fake_cell(cell: choose.Cell) -> dict[str, object]:
    return {"wall_s": 0.0, "seed": cell.seed, "jobs": cell.jobs}


def _no_cell(cell: choose.Cell) -> dict[str, object]:
    raise AssertionError(f"seed {cell.seed} ran again")


def test_a_cached_cell_is_read_back_on_the_same_code_and_run_again_on_other_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = [choose.Cell(choose.WORKLOADS[0], "empirical", 0.8, seed, 5, ("tetris",)) for seed in (1, 2)]
    monkeypatch.setattr(choose, "code_version", lambda: "tree-1")
    monkeypatch.setattr(choose, "run_cell", _fake_cell)
    first = choose.run_cells(cells, 1, tmp_path)
    assert [r["seed"] for r in first] == [1, 2] and len(list(tmp_path.iterdir())) == 2
    monkeypatch.setattr(choose, "run_cell", _no_cell)
    assert choose.run_cells(cells, 1, tmp_path) == first  # nothing ran
    monkeypatch.setattr(choose, "code_version", lambda: "tree-2")
    with pytest.raises(AssertionError, match="ran again"):
        choose.run_cells(cells, 1, tmp_path)
    monkeypatch.setattr(choose, "code_version", lambda: None)  # uncommitted changes: no cache
    with pytest.raises(AssertionError, match="ran again"):
        choose.run_cells(cells, 1, tmp_path)
