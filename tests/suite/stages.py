"""`make test`'s runner: each stage's make target in turn, then one timing table of what ran.

A stage is a make target whose tests write JUnit XML reports: pytest's `--junitxml`, Maven surefire's and
failsafe's `TEST-*.xml`. Before a stage runs, its old reports are removed, so the table counts only this
run. Stages joined by `+` run side by side (the first one's output on the console, the others' in
build/test-reports/<stage>.log). The table gives, per stage, the wall time and the tests run, passed,
failed and skipped; then the slowest test files and classes (a class's time includes its set-up, e.g. the
mini cluster it starts) and the slowest single tests. It is printed at the end, even when a stage failed
(the run stops after the first step with a failing stage, as make would), and written to
build/test-reports/timing.txt and timing.json.

    python tests/suite/stages.py lint bench-ci pytest+compose-images java-3.4+java-3.5 java-3.3 \
        java-3.5-its compose
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORTS = "build/test-reports"


@dataclass(frozen=True)
class Stage:
    name: str
    target: str  # the make target that runs it
    reports: tuple[str, ...] = ()  # JUnit XML globs, relative to the checkout


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("lint", "lint"),
        Stage("bench-ci", "bench-ci"),
        Stage("pytest", "pytest", (f"{REPORTS}/pytest.xml",)),
        Stage(
            "java-3.4",
            "java-test-3.4",
            (
                "yarn-plugin/target/surefire-reports/TEST-*.xml",
                "yarn-plugin/target/failsafe-reports/TEST-*.xml",
            ),
        ),
        Stage(
            "java-3.3",
            "java-test-3.3",
            (
                "yarn-plugin/target-hadoop-3.3/surefire-reports/TEST-*.xml",
                "yarn-plugin/target-hadoop-3.3/failsafe-reports/TEST-*.xml",
            ),
        ),
        Stage(
            "java-3.5",
            "java-test-3.5",
            (
                "yarn-plugin/target-hadoop-3.5/surefire-reports/TEST-*.xml",
                "yarn-plugin/target-hadoop-3.5/failsafe-reports/TEST-*.xml",
            ),
        ),
        Stage(
            "java-3.5-its",
            "java-test-3.5-its",
            (
                "yarn-plugin/target-hadoop-3.5/surefire-reports/TEST-*.xml",
                "yarn-plugin/target-hadoop-3.5/failsafe-reports/TEST-*.xml",
            ),
        ),
        Stage("compose-images", "compose-images"),
        Stage("compose", "compose-test", (f"{REPORTS}/compose.xml", f"{REPORTS}/store-container.xml")),
    )
}


@dataclass
class Case:
    group: str  # the test file or class
    name: str
    seconds: float
    outcome: str  # passed, failed, error or skipped


@dataclass
class Suite:
    group: str
    seconds: float  # the class's or file's wall time, set-up included where the report gives it


@dataclass
class StageResult:
    name: str
    seconds: float = 0.0
    returncode: int | None = None  # None: not run
    cases: list[Case] = field(default_factory=list)
    suites: list[Suite] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome)


def _outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    if "failure" in tags:
        return "failed"
    if "error" in tags:
        return "error"
    if "skipped" in tags:
        return "skipped"
    return "passed"


def _group(classname: str, file: str | None) -> str:
    if file:
        return file
    # pytest writes "tests.rpc.test_x" (class name appended when there is one); Maven the Java class name.
    return classname


def read_reports(paths: Iterable[Path]) -> tuple[list[Case], list[Suite]]:
    """The test cases and per-suite times in JUnit XML files (pytest, surefire and failsafe dialects)."""
    cases: list[Case] = []
    suites: list[Suite] = []
    for path in sorted(paths):
        root = ET.parse(path).getroot()
        for suite in root.iter("testsuite"):
            per_group: dict[str, float] = {}
            for case in suite.iter("testcase"):
                group = _group(case.get("classname", ""), case.get("file"))
                seconds = float(case.get("time") or 0.0)
                cases.append(Case(group, case.get("name", ""), seconds, _outcome(case)))
                per_group[group] = per_group.get(group, 0.0) + seconds
            suite_name = suite.get("name", "")
            if suite_name in per_group and len(per_group) == 1:
                # A Maven report: one class per file, whose suite time includes @BeforeAll and @AfterAll.
                per_group[suite_name] = max(per_group[suite_name], float(suite.get("time") or 0.0))
            suites.extend(Suite(g, s) for g, s in per_group.items())
    return cases, suites


def _pytest_group(case: Case) -> Case:
    # "tests.rpc.test_auth" or "tests.rpc.test_auth.TestX" -> "tests/rpc/test_auth.py"
    parts = case.group.split(".")
    while parts and not parts[-1].startswith("test"):
        parts.pop()
    if parts and parts[0] == "tests":
        return Case("/".join(parts) + ".py", case.name, case.seconds, case.outcome)
    return case


def stage_report_files(stage: Stage, root: Path = ROOT) -> list[Path]:
    return [Path(p) for pattern in stage.reports for p in glob.glob(str(root / pattern))]


def collect(stage: Stage, seconds: float, returncode: int | None, root: Path = ROOT) -> StageResult:
    cases, suites = read_reports(stage_report_files(stage, root))
    if stage.name in ("pytest", "compose"):
        cases = [_pytest_group(c) for c in cases]
        per_file: dict[str, float] = {}
        for c in cases:
            per_file[c.group] = per_file.get(c.group, 0.0) + c.seconds
        suites = [Suite(g, s) for g, s in per_file.items()]
    return StageResult(stage.name, seconds, returncode, cases, suites)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}:{secs:02d}"


def table(results: Sequence[StageResult], wall: float | None = None, top: int = 15) -> str:
    lines = ["", "== make test: where the time went =="]
    columns = ("tests", "passed", "failed", "errors")
    lines.append(
        f"{'stage':<15} {'wall':>7} {'status':<8} " + " ".join(f"{c:>6}" for c in columns) + " skipped"
    )
    for r in results:
        status = "not run" if r.returncode is None else ("ok" if r.returncode == 0 else f"rc {r.returncode}")
        lines.append(
            f"{r.name:<15} {_clock(r.seconds):>7} {status:<8} {len(r.cases):>6} {r.count('passed'):>6} "
            f"{r.count('failed'):>6} {r.count('error'):>6} {r.count('skipped'):>7}"
        )
    if wall is not None:
        lines.append(f"{'all':<15} {_clock(wall):>7} (wall; stages side by side overlap)")
    suites = sorted(((s.seconds, r.name, s.group) for r in results for s in r.suites), reverse=True)[:top]
    if suites:
        lines += ["", f"slowest test files and classes (set-up included where the report has it), top {top}:"]
        lines += [f"{_clock(sec):>7}  {stage:<15} {group}" for sec, stage, group in suites]
    cases = sorted(((c.seconds, r.name, c.group, c.name) for r in results for c in r.cases), reverse=True)[
        :top
    ]
    if cases:
        lines += ["", f"slowest tests, top {top}:"]
        lines += [f"{_clock(sec):>7}  {stage:<15} {group}::{name}" for sec, stage, group, name in cases]
    return "\n".join(lines) + "\n"


def _start(stage: Stage, make: str, root: Path, log: Path | None) -> subprocess.Popen[bytes]:
    for old in stage_report_files(stage, root):
        old.unlink()
    where = "" if log is None else f" (beside the stage before it; output in {log.relative_to(root)})"
    print(f"== stage {stage.name}: make {stage.target}{where}", flush=True)
    out = None if log is None else log.open("wb")
    try:
        return subprocess.Popen([*make.split(), stage.target], cwd=root, stdout=out, stderr=subprocess.STDOUT)
    finally:
        if out is not None:
            out.close()


def run(steps: Sequence[Sequence[Stage]], make: str = "make", root: Path = ROOT) -> int:
    """Runs the steps in turn, the stages of one step side by side (the first one's output on the console,
    the others' in build/test-reports/<stage>.log, whose tail is printed if it fails); stops after the first
    step with a failing stage; prints the table."""
    results = {s.name: StageResult(s.name) for step in steps for s in step}
    (root / REPORTS).mkdir(parents=True, exist_ok=True)
    rc = 0
    wall = 0.0
    for step in steps:
        start = time.monotonic()
        logs = [None] + [root / REPORTS / f"{s.name}.log" for s in step[1:]]
        procs = [_start(s, make, root, log) for s, log in zip(step, logs, strict=True)]
        for stage, proc, log in zip(step, procs, logs, strict=True):
            code = proc.wait()
            results[stage.name] = collect(stage, time.monotonic() - start, code, root)
            if code != 0:
                rc = rc or code
                if log is not None:
                    tail = log.read_text(errors="replace").splitlines()[-200:]
                    print(f"== stage {stage.name} failed (rc {code}); last lines of {log}:", flush=True)
                    print("\n".join(tail), flush=True)
        wall += time.monotonic() - start
        if rc != 0:
            break
    ordered = list(results.values())
    text = table(ordered, wall)
    print(text, end="", flush=True)
    (root / REPORTS / "timing.txt").write_text(text)
    (root / REPORTS / "timing.json").write_text(
        json.dumps(
            {
                "wall_seconds": round(wall, 1),
                "stages": [
                    {
                        "stage": r.name,
                        "seconds": round(r.seconds, 1),
                        "returncode": r.returncode,
                        "tests": len(r.cases),
                        **{k: r.count(k) for k in ("passed", "failed", "error", "skipped")},
                        "suites": [asdict(s) for s in r.suites],
                    }
                    for r in ordered
                ],
            },
            indent=1,
        )
    )
    return rc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "steps", nargs="+", help=f"stages in turn, 'a+b' side by side; of {', '.join(STAGES)}"
    )
    parser.add_argument(
        "--make", default=os.environ.get("MAKE", "make"), help="the make to run (default: make)"
    )
    args = parser.parse_args(argv)
    unknown = sorted({n for step in args.steps for n in step.split("+")} - set(STAGES))
    if unknown:
        parser.error(f"unknown stage {', '.join(unknown)}: the stages are {', '.join(STAGES)}")
    steps = [[STAGES[n] for n in step.split("+")] for step in args.steps]
    return run(steps, make=args.make)


if __name__ == "__main__":
    sys.exit(main())
