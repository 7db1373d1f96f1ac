"""The operator page in a real browser: headless Chromium loads /ui/ from a real service whose decision
log was fed over gRPC by a shim-like client (nodes, applications, asks: the core's placements, priorities
and deferrals) and an AM-like client (a job profile, then its tasks' copies: a clone launched, the clone
winning, the original killed). The page must show what the log's HTTP answer says, follow the live
stream, and its screenshots (build/test-output/ui/) must not be blank."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rpc_harness import (
    FORMER,
    am_session,
    app,
    ask,
    attempt_report,
    in_process_service,
    map_read,
    node,
    phase_profile,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from ui_browser import chromium, not_blank, output_dir

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"
TOKEN = "ui-test-token"
T0_MS = int(time.time() * 1000) - 60_000


def _attempt(phase: str, task: int, copy: int, state: int, **kw: Any) -> Any:
    return attempt_report(phase, task, copy, state, launch_ms=T0_MS + 1000 * copy, **kw)


def _wait(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DecisionService]:
    svc = in_process_service(
        tmp_path,
        **{"policy.name": "dollymp-ext", "policy.options": FORMER, "http.port": 0, "http.token": TOKEN},
    )
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: WebDriver, name: str) -> Path:
    path = output_dir() / f"{name}.png"
    assert driver.save_screenshot(str(path)), path
    std, colours = not_blank(path)
    assert std > 5.0 and colours > 20, f"{path} looks blank: pixel stddev {std:.1f}, {colours} colours"
    return path


def _texts(driver: WebDriver, selector: str, data: str = "") -> list[str]:
    """Each matching element's text (or its data-`data` attribute), read in one script: the page redraws
    its views live, so element handles kept across calls go stale."""
    script = (
        "return [...document.querySelectorAll(arguments[0])]"
        ".map(e => arguments[1] ? e.dataset[arguments[1]] : e.textContent)"
    )
    return [str(x) for x in driver.execute_script(script, selector, data)]


def _reads(driver: WebDriver) -> set[tuple[str, str, str]]:
    """The map reads table as (reduce attempt, map copy read, own_copy/first_copy), read in one script."""
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#reads tr.read')].map(r => "
        "[r.dataset.attempt, r.dataset.map, r.dataset.kind])"
    )
    return {(str(a), str(m), str(k)) for a, m, k in rows}


def _copies(driver: WebDriver) -> set[tuple[str, str, str]]:
    """The copies table as (attempt, clone flag, outcome), read in one script (the page redraws it live)."""
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#copies tr.copy')].map(r => "
        "[r.dataset.attempt, r.dataset.clone, r.dataset.outcome])"
    )
    return {(str(a), str(c), str(o)) for a, c, o in rows}


def test_page_shows_the_logs_clones_and_winner_and_follows_the_stream(
    service: DecisionService, browser: WebDriver
) -> None:
    base = f"http://127.0.0.1:{service.http.port}"
    http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    nodes = [node(f"h{i}:1", 4096, 4) for i in range(4)]
    with am_session(
        service.port,
        nodes_upserted=nodes,
        apps_upserted=[app(1), app(2, submit_ms=2000)],
        asks=[ask(1, 20, 2), ask(2, 20, 30)],
    ) as (_reg, _stream, am):
        am.ReportJobProfile(
            pb.JobProfile(
                application_id=APP,
                job_name="straggler",
                submit_time_ms=1,
                phases=[phase_profile("map", 2, 20), phase_profile("reduce", 1, 10, ("map",))],
            ),
            timeout=10,
        )
        running = [
            _attempt("map", 0, 0, pb.ATTEMPT_RUNNING, progress=0.1),
            _attempt("map", 1, 0, pb.ATTEMPT_RUNNING, progress=0.5),
            _attempt("map", 0, 1, pb.ATTEMPT_RUNNING, clone=True, progress=0.05),
        ]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=running), timeout=10)
        ended = [
            _attempt("map", 0, 1, pb.ATTEMPT_SUCCEEDED, clone=True, progress=1.0, duration=20.0),
            _attempt("map", 0, 0, pb.ATTEMPT_KILLED, progress=0.25, duration=40.0),
            _attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED, progress=1.0, duration=30.0),
        ]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=ended), timeout=10)

        def logged(kind: str, application: str = APP) -> list[dict[str, Any]]:
            r = http.get("/v1/decisions", params={"application": application, "kind": kind, "limit": 1000})
            assert r.status_code == 200, r.text
            items: list[dict[str, Any]] = r.json()["items"]
            return items

        outcomes = _wait(
            "the AM's outcomes in the log", lambda: len(logged("attempt")) >= 4 and logged("attempt")
        )
        _wait("placements of the first application", lambda: logged("placement"))
        _wait("the second application deferred", lambda: logged("deferral", "application_1700000000000_0002"))
        expected: dict[str, tuple[str, str]] = {}
        for d in outcomes:  # the log's answer: each copy's clone flag and its last outcome
            a = d["inputs"]["attempt_id"]
            clone = str(d["inputs"]["is_clone"]).lower()
            expected[a] = (
                clone,
                d["reason"] if d["reason"] != "clone_launched" else expected.get(a, ("", "running"))[1],
            )
        winners = {a for a, (_, o) in expected.items() if o == "won"}
        assert "attempt_1700000000000_0001_m_000000_1" in winners  # the clone won task 0
        assert expected["attempt_1700000000000_0001_m_000000_0"] == ("false", "lost_race")

        # Login form (the token is required), then the cluster now.
        browser.get(base + "/ui/")
        _wait("the login form", lambda: browser.find_element(By.ID, "login").is_displayed())
        assert not browser.find_element(By.ID, "logout").is_displayed()  # no token kept: nothing to forget
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        browser.find_element(By.CSS_SELECTOR, "#login-form button").click()
        assert browser.find_element(By.ID, "logout").is_displayed()
        shown = _wait("applications in priority order", lambda: _texts(browser, "#apps tbody tr", "app"))
        overview = http.get("/v1/ui/overview").json()
        assert shown == [a["application_id"] for a in overview["applications"]]
        waiting = _texts(browser, 'tr[data-app="application_1700000000000_0002"]')
        assert "resources" in waiting[0] or "priority" in waiting[0], waiting
        assert len(_texts(browser, "#nodes tbody tr")) == 4
        _shot(browser, "cluster")

        # One application's timeline: the same copies, clone flags and winner as the log.
        browser.get(base + "/ui/#app=" + APP)
        want = {(a, c, o) for a, (c, o) in expected.items()}
        _wait("the copies table", lambda: _copies(browser) == want, timeout=15)
        won = _texts(browser, '#copies tr.copy[data-outcome="won"][data-clone="true"]', "attempt")
        assert won == ["attempt_1700000000000_0001_m_000000_1"]
        assert _texts(browser, "#chart .bar.clone.won")
        assert _texts(browser, '#chart .phase[data-phase="map"]')
        why = http.get(f"/v1/applications/{APP}/why").json()["application"]
        now = _wait("what the application waits for", lambda: _texts(browser, "#app-now")[0])
        assert f"waits for {why['waiting_for']}" in now, now
        _shot(browser, "application")

        # Live: a reduce clone launched now appears without reloading the page.
        _wait(
            "the live stream",
            lambda: browser.execute_script("return document.getElementById('live').className === 'live on'"),
        )
        late = [
            _attempt("reduce", 0, 0, pb.ATTEMPT_RUNNING, progress=0.1),
            _attempt("reduce", 0, 1, pb.ATTEMPT_RUNNING, clone=True, progress=0.0),
        ]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=late), timeout=10)
        _wait(
            "the reduce clone on the page",
            lambda: ("attempt_1700000000000_0001_r_000000_1", "true", "running") in _copies(browser),
            timeout=15,
        )

        # Delay assignment: the reduce copies' map reads, as the AM sends them, appear as marks on the
        # reduce task's row and as rows of the map reads table, as the log has them.
        clone_reads = _attempt("reduce", 0, 1, pb.ATTEMPT_RUNNING, clone=True, progress=0.2)
        clone_reads.map_reads.extend(
            [
                map_read(0, 1, pb.MAP_READ_OWN_COPY, 2.0, "own copy 1", T0_MS + 30_000),
                map_read(1, 0, pb.MAP_READ_FIRST_COPY, 20.0, "omega elapsed", T0_MS + 50_000),
            ]
        )
        original_reads = _attempt("reduce", 0, 0, pb.ATTEMPT_RUNNING, progress=0.3)
        original_reads.map_reads.append(
            map_read(0, 0, pb.MAP_READ_OWN_COPY, 0.5, "own copy 0", T0_MS + 29_000)
        )
        am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[clone_reads, original_reads]), timeout=10
        )
        reads = _wait("map reads in the log", lambda: len(logged("map_read")) >= 3 and logged("map_read"))
        want_reads = {(d["inputs"]["attempt_id"], d["inputs"]["map_attempt_id"], d["reason"]) for d in reads}
        assert (
            "attempt_1700000000000_0001_r_000000_1",
            "attempt_1700000000000_0001_m_000001_0",
            "first_copy",
        ) in (want_reads)
        _wait("the map reads on the page", lambda: _reads(browser) == want_reads, timeout=15)
        fell_back = _texts(browser, '#reads tr.read[data-kind="first_copy"]')
        assert len(fell_back) == 1 and "omega elapsed" in fell_back[0] and "clone" in fell_back[0], fell_back
        within = _texts(browser, "#reads tr.read td:nth-child(8)")  # the "within ω" column, oldest first
        assert within == ["yes", "yes", "no"], within
        task = "task_1700000000000_0001_r_000000"
        assert len(_texts(browser, f'#chart .row[data-task="{task}"] .read.own_copy', "attempt")) == 2
        assert _texts(browser, f'#chart .row[data-task="{task}"] .read.first_copy', "map") == [
            "attempt_1700000000000_0001_m_000001_0"
        ]
        _shot(browser, "map-reads")

        latencies = browser.execute_script("return window.dollymp.latencies")
        assert latencies and all(-2000 < x < 15000 for x in latencies), latencies

        # Clone economics: the page's figures are the endpoint's.
        browser.get(base + "/ui/#economics")
        figure = _wait(
            "the economics cards",
            lambda: browser.find_elements(By.CSS_SELECTOR, '[data-figure="clone_wins"] b'),
        )
        econ = http.get("/v1/ui/economics", params={"window_s": 3600}).json()
        lost = next(d["inputs"] for d in outcomes if d["reason"] == "lost_race")
        left = (
            lost["duration_s"] / lost["progress"] - lost["duration_s"]
        )  # the original's estimated time left
        assert econ["clone_wins"] == 1 and econ["saved_s"] == pytest.approx(left, abs=1e-3)
        assert econ["extra_container_s"] == 40.0  # the killed original's 40 s
        assert figure[0].text == "1"
        saved = browser.find_element(By.CSS_SELECTOR, '[data-figure="saved_s"] b').text
        assert saved == f"{econ['saved_s']:.1f}"
        _shot(browser, "economics")
    http.close()
