from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rpc_harness import FORMER, Service, in_process_service

from pyscheduler.service.rmproxy.service import DecisionService


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """A real `dollymp serve` process on an ephemeral loopback port with its own SQLite log."""
    svc = Service(tmp_path)
    try:
        yield svc
    finally:
        code = svc.stop()
        assert code == 0, f"serve exited {code} on SIGTERM: {svc.stderr.read_text()}"


@pytest.fixture
def inproc(tmp_path: Path) -> Iterator[DecisionService]:
    """`in_process_service` with DollyMP and the extensions the live mechanism was built for (late copies,
    small-job and phase-tail clones, no clones at launch by Corollary 4.1: `FORMER`)."""
    svc = in_process_service(tmp_path, **{"policy.name": "dollymp-ext", "policy.options": FORMER})
    try:
        yield svc
    finally:
        svc.stop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the hostile-tenant table's totals, over the attacks that ran, show a crash, a
    hang, a cross-tenant effect, a lost record or an input without a clear error or a bound (issue 28)."""
    import hostile

    if hostile.failures(hostile.rows()) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The hostile-tenant suite's table (tests/rpc/hostile.py), when any of it ran, and what fails it."""
    import hostile

    if hostile.TABLE:
        terminalreporter.write_sep("=", "hostile-tenant table")
        table = hostile.dump()
        terminalreporter.write_line(hostile.render(table))
        problems = hostile.failures(table)
        if problems:
            terminalreporter.write_sep("!", "hostile-tenant totals FAILED (the run fails)", red=True)
            for line in problems:
                terminalreporter.write_line(line, red=True)
