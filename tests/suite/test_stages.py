"""The stage runner of `make test` (tests/suite/stages.py): real make, real JUnit XML files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import stages

PYTEST_XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4" time="9.0">
<testcase classname="tests.rpc.test_a" name="test_one" time="2.5"/>
<testcase classname="tests.rpc.test_a.TestGroup" name="test_two" time="1.5"/>
<testcase classname="tests.core.test_b" name="test_three" time="4.0"><failure>boom</failure></testcase>
<testcase classname="tests.core.test_b" name="test_four" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>
"""

FAILSAFE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="io.dollymp.yarn.e2e.CloningIT" time="388.2" tests="2" errors="1" skipped="0" failures="0">
<testcase name="clonesWin" classname="io.dollymp.yarn.e2e.CloningIT" time="100.0"/>
<testcase name="losersKilled" classname="io.dollymp.yarn.e2e.CloningIT" time="50.0"><error/></testcase>
</testsuite>
"""


def test_reports_are_counted_per_outcome_and_grouped_by_file_and_class(tmp_path: Path) -> None:
    (tmp_path / "py.xml").write_text(PYTEST_XML)
    (tmp_path / "TEST-CloningIT.xml").write_text(FAILSAFE_XML)
    py = stages.Stage("pytest", "pytest", ("py.xml",))
    java = stages.Stage("java-3.4", "java-test-3.4", ("TEST-*.xml",))
    r_py = stages.collect(py, 60.0, 1, tmp_path)
    r_java = stages.collect(java, 400.0, 0, tmp_path)
    assert (len(r_py.cases), r_py.count("passed"), r_py.count("failed"), r_py.count("skipped")) == (
        4,
        2,
        1,
        1,
    )
    assert {s.group: s.seconds for s in r_py.suites} == {
        "tests/rpc/test_a.py": 4.0,
        "tests/core/test_b.py": 4.0,
    }
    assert (len(r_java.cases), r_java.count("error")) == (2, 1)
    # The class's own time (its mini cluster's start included), not the sum of its tests.
    assert [(s.group, s.seconds) for s in r_java.suites] == [("io.dollymp.yarn.e2e.CloningIT", 388.2)]
    text = stages.table([r_py, r_java])
    assert "pytest             1:00 rc 1          4      2      1      0       1" in text
    assert "java-3.4           6:40 ok            2      1      0      1       0" in text
    assert text.index("6:28  java-3.4        io.dollymp.yarn.e2e.CloningIT") < text.index("0:04  pytest")


def test_run_stops_at_the_first_failing_stage_and_still_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Makefile").write_text(
        "ok:\n\tmkdir -p out && printf '%s' '" + PYTEST_XML.replace("\n", "") + "' > out/ok.xml\n"
        "bad:\n\texit 3\n"
        "never:\n\ttouch never-ran\n"
    )
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stale.xml").write_text(PYTEST_XML)  # an old report of the stage: removed first
    ok = stages.Stage("pytest", "ok", ("out/*.xml",))
    bad = stages.Stage("lint", "bad")
    never = stages.Stage("compose", "never")
    assert stages.run([[ok], [bad], [never]], root=tmp_path) == 2  # make's own code for a failed recipe
    assert not (tmp_path / "never-ran").exists()
    assert not (tmp_path / "out" / "stale.xml").exists()
    out = capsys.readouterr().out
    assert "not run" in out and "rc 2" in out
    saved = json.loads((tmp_path / stages.REPORTS / "timing.json").read_text())["stages"]
    assert [(s["stage"], s["tests"], s["returncode"]) for s in saved] == [
        ("pytest", 4, 0),
        ("lint", 0, 2),
        ("compose", 0, None),
    ]


def test_stages_of_one_step_run_side_by_side_and_a_failing_one_shows_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each waits for the other's file: run one after the other, they would time out.
    (tmp_path / "Makefile").write_text(
        "a:\n\ttouch a; timeout 20 sh -c 'until [ -f b ]; do sleep 0.05; done'\n"
        "b:\n\ttouch b; timeout 20 sh -c 'until [ -f a ]; do sleep 0.05; done'; echo the-b-log-line; exit 4\n"
        "c:\n\ttouch c-ran\n"
    )
    a, b, c = stages.Stage("lint", "a"), stages.Stage("pytest", "b"), stages.Stage("compose", "c")
    assert stages.run([[a, b], [c]], root=tmp_path) == 2
    assert not (tmp_path / "c-ran").exists()
    out = capsys.readouterr().out
    assert "stage pytest failed (rc 2)" in out and "the-b-log-line" in out
    assert "the-b-log-line" in (tmp_path / stages.REPORTS / "pytest.log").read_text()
    saved = json.loads((tmp_path / stages.REPORTS / "timing.json").read_text())
    assert [(s["stage"], s["returncode"]) for s in saved["stages"]] == [
        ("lint", 0),
        ("pytest", 2),
        ("compose", None),
    ]
    assert saved["wall_seconds"] < 15


def test_an_unknown_stage_is_refused_naming_the_stages(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        stages.main(["lint", "pytest+jav"])
    assert (
        "unknown stage jav: the stages are lint, bench-ci, pytest, java-3.4, java-3.3, java-3.5, "
        "java-3.5-its, compose-images, compose" in capsys.readouterr().err
    )
