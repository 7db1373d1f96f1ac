"""bench-cluster --repeats: medians and spreads over the runs (pyscheduler/deploy/repeats.py)."""

from __future__ import annotations

from pyscheduler.deploy import bench_cluster, repeats


def test_each_figure_gets_its_median_and_min_max_over_the_repeats() -> None:
    outs = [
        {"ratio": 0.8, "clones": 10, "clone_extra_container_s_frac": 0.5, "mix": "light"},
        {"ratio": 0.7, "clones": 14, "clone_extra_container_s_frac": 0.4},
        {"ratio": 0.95, "clones": 12, "clone_extra_container_s_frac": None},
    ]
    s = repeats.summarise(outs)
    assert s["repeats"] == 3
    assert (s["ratio_median"], s["ratio_min"], s["ratio_max"], s["ratio_spread"]) == (0.8, 0.7, 0.95, 0.25)
    assert s["clones_median"] == 12.0
    assert s["clone_extra_container_s_frac_median"] == 0.45  # the runs that have it
    assert "dollymp_avg_flowtime_s_median" not in s  # no run has it
    assert "0.8" in repeats.table(s) and "over 3 runs" in repeats.table(s)


def test_the_cli_takes_repeats() -> None:
    import argparse

    p = argparse.ArgumentParser()
    bench_cluster.add_arguments(p)
    assert p.parse_args(["--repeats", "3"]).repeats == 3
    assert p.parse_args([]).repeats == 1
