"""The hostile-tenant table's totals are asserted: a crash, a hang, a cross-tenant effect, a lost record
or an input with neither a clear error nor a bound fails the run (tests/rpc/conftest.py,
pytest_sessionfinish), for the attacks that ran."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import hostile
import pytest

# The child run's one test, a file pytest collects only when named (not test_*.py): planted_crash.py
PLANTED = Path(__file__).with_name("planted_crash.py")


def _row(**counts: int) -> dict[str, int | str]:
    return asdict(hostile.Row("probe", **counts))


def test_failures_name_each_gated_total_and_unclear_inputs() -> None:
    assert hostile.failures([]) == []
    assert hostile.failures([_row(inputs=3, clear_errors=2, bounded=1), _row(inputs=1, bounded=2)]) == []
    found = hostile.failures([_row(inputs=2, clear_errors=2, crashes=1, records_lost=4)])
    assert found == [
        "crashes total 1, must be 0 (probe: 1)",
        "records_lost total 4, must be 0 (probe: 4)",
    ]
    for col in ("hangs", "cross_tenant"):
        assert hostile.failures([_row(inputs=1, clear_errors=1, **{col: 2})])[0].startswith(f"{col} total 2")
    unclear = hostile.failures([_row(inputs=5, clear_errors=2, bounded=1)])
    assert unclear == ["inputs with neither a clear error nor a bound: 2 (probe: 2)"]


def test_a_failing_total_fails_the_run() -> None:
    """Every test passes in the child run, yet its table shows a crash: pytest exits non-zero."""
    here = Path(__file__)
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PLANTED)],
        cwd=here.parents[2],
        # not $DOLLYMP_HOSTILE_TABLE: the planted row must not reach the real run's table
        env={k: v for k, v in os.environ.items() if k != "DOLLYMP_HOSTILE_TABLE"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = child.stdout + child.stderr
    assert child.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert "1 passed" in out and "hostile-tenant totals FAILED" in out, out
    assert "crashes total 1, must be 0 (planted crash: 1)" in out, out
