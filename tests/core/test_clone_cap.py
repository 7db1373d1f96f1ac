"""The clone cap is defined once, in the wire contract (proto/dollymp/v1/scheduler.proto, CloneCap
.MAX_CLONES_PER_TASK): Python's MAX_CLONES (pyscheduler/objects/job.py) and Java's AmConfig.HARD_MAX_CLONES
(yarn-plugin, asserted equal to the generated enum's value by CloneBookTest) both read it, and no source
writes the number down again."""

from __future__ import annotations

import re
from pathlib import Path

from pyscheduler.objects import MAX_CLONES
from pyscheduler.wire import pb, proto_root

ROOT = Path(__file__).resolve().parents[2]
AM_CONFIG = ROOT / "yarn-plugin/src/main/java/io/dollymp/yarn/am/AmConfig.java"


def test_python_reads_the_cap_from_the_contract() -> None:
    text = (proto_root() / "dollymp/v1/scheduler.proto").read_text()
    declared = re.search(r"enum CloneCap \{[^}]*\bMAX_CLONES_PER_TASK = (\d+);", text)
    assert declared is not None
    assert MAX_CLONES == pb.MAX_CLONES_PER_TASK == pb.CloneCap.Value("MAX_CLONES_PER_TASK")
    assert int(declared.group(1)) == MAX_CLONES
    assert 1 + MAX_CLONES == 3  # DollyMP: at most three copies of a task


def test_java_reads_the_same_constant() -> None:
    src = AM_CONFIG.read_text()
    assert re.search(r"\bint HARD_MAX_CLONES = CloneCap\.MAX_CLONES_PER_TASK_VALUE;", src)
    assert "import io.dollymp.proto.v1.CloneCap;" in src


def test_no_other_source_defines_the_cap() -> None:
    literal = re.compile(r"\b(HARD_)?MAX_CLONES(_PER_TASK)?\s*(:\s*int\s*)?=\s*\d")
    found = [
        str(p.relative_to(ROOT))
        for tree, pattern in (("pyscheduler", "*.py"), ("yarn-plugin/src", "*.java"))
        for p in (ROOT / tree).rglob(pattern)
        if "_generated" not in p.parts and literal.search(p.read_text())
    ]
    assert found == []
