from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rpc_harness import FORMER, Service, in_process_service

from pyscheduler.rpc.service import DecisionService


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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The hostile-tenant suite's table (tests/rpc/hostile.py), when any of it ran."""
    import hostile

    if hostile.TABLE:
        terminalreporter.write_sep("=", "hostile-tenant table")
        terminalreporter.write_line(hostile.render(hostile.dump()))
