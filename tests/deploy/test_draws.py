"""The straggler workload's draws replicated in Python (pyscheduler/deploy/draws.py): the same values as
the Java test StragglerJobTest.pinnedDrawsMatchThePythonReplica, and the best-of-k sums."""

from __future__ import annotations

import pytest

from pyscheduler.deploy import draws


def test_java_string_hash_matches_javas() -> None:
    assert draws.java_string_hash("") == 0
    assert draws.java_string_hash("a") == 97
    assert draws.java_string_hash("hello") == 99162322
    assert draws.java_string_hash("straggler-3/m0.0") == 2002988581
    assert draws.java_string_hash("polygenelubricants") == -(2**31)  # wraps like a Java int


@pytest.mark.parametrize(
    ("job", "key", "base", "ms"),
    [
        ("straggler-3", "m0.0", 40000, 140089),
        ("straggler-3", "m0.1", 40000, 54253),
        ("straggler-4", "m0.0", 40000, 602912),
        ("straggler-1", "r0.2", 20000, 25467),
    ],
)
def test_draws_are_the_java_workloads(job: str, key: str, base: int, ms: int) -> None:
    assert draws.attempt_ms(job, key, base) == ms


def test_best_of_k_takes_each_tasks_least_draw_and_the_phases_slowest_task() -> None:
    j = draws.JobDraws("straggler-3", maps=6, reduces=1, map_base_ms=40000, reduce_base_ms=20000)
    assert j.task("m", 0, 1) == 140.089 and j.task("m", 0, 2) == 54.253
    slowest = max(j.task("m", i, 3) for i in range(6))
    assert j.best_of(3) == pytest.approx(slowest + j.task("r", 0, 3))
    assert j.originals() >= j.best_of(2) >= j.best_of(3)


def test_the_command_prints_every_job_of_the_mix_and_the_averages(capsys: pytest.CaptureFixture[str]) -> None:
    assert draws.main(["--mix", "light"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["job", "originals", "s", "best", "of", "2", "s", "best", "of", "3", "s"]
    assert [ln.split()[0] for ln in out[1:]] == [f"straggler-{i}" for i in range(8)] + ["avg"]
