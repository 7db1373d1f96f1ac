"""One RM round reads the AM helpers' reports once (pyscheduler.service.state.amview): the registry builds the
view under one hold of its lock, a round calls its source once, and every step of the round (the translation,
yielding, the queues' reclaim) decides on that one view."""

from __future__ import annotations

import threading
from collections.abc import Collection
from typing import Any

import pytest
from round_memories import memory_of
from rpc_harness import ask, attempt_report, phase_profile, two_app_mirror

from pyscheduler.policies import get_policy
from pyscheduler.service.limits import DEFAULTS
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.amregistry import AmRegistry, AppState
from pyscheduler.service.state.amview import AmView, from_sources
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.wire import pb

APP1, APP2 = "application_1700000000000_0001", "application_1700000000000_0002"


class CountingLock:
    """threading.Lock that counts its acquisitions."""

    def __init__(self) -> None:
        self.inner = threading.Lock()
        self.acquired = 0

    def __enter__(self) -> None:
        self.inner.acquire()
        self.acquired += 1

    def __exit__(self, *exc: object) -> None:
        self.inner.release()

    def acquire(self, timeout: float = -1) -> bool:  # as AmRegistry.round_view takes it
        got = self.inner.acquire(timeout=timeout)
        self.acquired += got
        return got

    def release(self) -> None:
        self.inner.release()


class HintsFailFor(AmRegistry):
    """An AmRegistry whose hints raise for one application: an INJECTED fault (no input we know of makes
    reading the hints raise once the reports are bounded), to show the view keeps it per application."""

    def __init__(self, bad: str) -> None:
        super().__init__(None)
        self.bad = bad

    def _hints(self, st: AppState) -> dict[int, PhaseHint]:
        if st.profile.application_id == self.bad:
            raise KeyError("injected fault in one application's hints")
        return super()._hints(st)


def _profiled(reg: AmRegistry, app_id: str) -> None:
    reg.put_profile(
        pb.JobProfile(
            application_id=app_id,
            job_name="mr",
            submit_time_ms=1,
            phases=[phase_profile("map", 2, 20)],
            clones_preemptible=True,
        )
    )


def test_the_registry_reads_hints_and_copies_under_one_hold_of_its_lock() -> None:
    reg = HintsFailFor(APP2)
    for app_id in (APP1, APP2):
        _profiled(reg, app_id)
    running = attempt_report("map", 0, 0, pb.ATTEMPT_RUNNING, progress=0.3, launch_ms=1)
    reg.record(pb.AttemptReports(application_id=APP1, attempts=[running]), DEFAULTS)
    lock = CountingLock()
    reg.lock = lock  # type: ignore[assignment]
    view = reg.round_view([APP1, APP2, "application_1700000000000_0009"], [APP1])
    assert lock.acquired == 1
    assert set(view.hints) == {APP1} and view.hints[APP1][20].phase_id == "map"
    assert set(view.failed) == {APP2}
    with pytest.raises(KeyError, match="injected fault"):
        view.hint(APP2)
    assert view.hint("application_1700000000000_0009") == {}  # no AM helper: no hints
    assert view.copies is not None and [c.attempt_id for c in view.copies] == [running.attempt_id]
    assert reg.round_view([APP1], None, with_copies=False).copies is None  # clones do not yield


def test_a_round_reads_its_source_once_and_hands_its_copies_on() -> None:
    calls: list[tuple[set[str], set[str] | None]] = []
    clone = Copy(APP2, "task_2_m_0", "attempt_2_m_0_1", "container_2", True, 0.1, 1)

    def source(hint_apps: Collection[str], copy_apps: Collection[str] | None) -> AmView:
        calls.append((set(hint_apps), None if copy_apps is None else set(copy_apps)))
        return AmView({}, {}, [clone])

    m = two_app_mirror(4, [ask(1, 20, 2)])
    result = core_round(get_policy("dollymp"), clock=lambda: 100.0, am=source, scoped=True)(m, memory_of(m))
    assert calls == [({APP1}, {APP1, APP2})]  # hints of the application that asks; copies of the mirror's
    assert sum(p.count for p in result.placements) == 2
    assert result.copies == [clone]  # what the queues' reclaim reads (service/round/queueshare.py)
    idle = two_app_mirror(4, [])
    assert core_round(get_policy("dollymp"), am=source)(idle, memory_of(idle)).copies == [
        clone
    ]  # nothing to place: read once
    assert len(calls) == 2 and calls[1] == (set(), None)


def test_separate_readers_are_read_once_each_and_their_faults_kept() -> None:
    seen: list[str] = []

    def hints(app_id: str) -> dict[int, Any]:
        seen.append(app_id)
        if app_id == APP2:
            raise KeyError("injected fault in the AM hints")
        return {}

    def copies(*apps: Any) -> list[Copy]:
        raise RuntimeError("injected fault: the AM reports' side is down")

    view = from_sources(hints, copies)([APP1, APP2], None)
    assert seen == [APP1, APP2] and set(view.failed) == {APP2}
    assert view.copies == []  # the round goes on without yielding
    assert from_sources(None, None)([APP1], None) == AmView()
