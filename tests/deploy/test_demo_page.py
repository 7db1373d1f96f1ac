"""`make demo`'s own cluster on the operator page: the demo's DollyMP half (its job mix, its local cluster
of separate processes, its service and policy) runs as `make demo` runs it, and while the cluster is
still up (where `--hold` keeps it) headless Chromium loads the page the summary points at. For every job
whose AM helper launched clones, the timeline's copies equal the decision log's `attempt` records, and
every clone in the AM helper's own record is a clone row there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyscheduler.deploy import amrecords, artifacts, benchmix, demo
from pyscheduler.deploy.demomix import Run, page_lines, page_url
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.rest import get_json

from . import composeui as ui

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


def _attempt_decisions(api: str, app: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = get_json(f"{api}/v1/decisions?kind=attempt&limit=500&application={app}{cursor}")
        out += page["items"]
        if not page.get("next_cursor"):
            return out
        cursor = f"&cursor={page['next_cursor']}"


def _check_page(run: Run) -> list[str]:
    """The jobs whose clones were checked on the page (called while the demo's cluster is up)."""
    assert run.api is not None and run.records is not None
    cloned = {name: r.app_id for name, r in run.results.items() if r.app_id and run.missions[name].clones}
    assert cloned, f"the demo launched no clone: {run.missions}"
    lines = page_lines(run)
    assert lines[0].startswith(f"Operator page: {page_url(run.api)}"), lines
    with ui.browser() as driver:
        driver.get(page_url(run.api))  # the local cluster's API has no token: no login
        ui.wait("the demo's nodes", lambda: len(ui.texts(driver, "#nodes tbody tr")) == 4)
        ui.shot(driver, "cluster", "demo-ui")
        for name, app in sorted(cloned.items()):
            assert any(page_url(run.api, app) in line for line in lines), (name, lines)  # the summary's link
            expected = ui.logged_copies(_attempt_decisions(run.api, app))
            record_clones = amrecords.launched_clones(run.records, app)
            assert record_clones and record_clones <= {a for a, (c, _) in expected.items() if c == "true"}, (
                name,
                record_clones,
                expected,
            )
            driver.get(page_url(run.api, app))
            ui.wait(
                f"{name}'s copies as the log has them ({expected})",
                lambda: ui.page_copies(driver) == expected,  # noqa: B023 - waited on at once
                timeout=60,
            )
            assert ui.texts(driver, "#chart .bar.clone")  # the timeline draws its clones
            ui.shot(driver, f"application-{name}", "demo-ui")
    return sorted(cloned)


def test_the_demos_clones_appear_on_its_operator_page(tmp_path: Path) -> None:
    show = Display()
    artifacts.hadoop_lib(show.say)
    artifacts.plugin_jar(show.say)
    checked: list[str] = []
    policy = (benchmix.BENCH_POLICY, benchmix.BENCH_POLICY_OPTIONS)
    run = demo.run_scheduler("dollymp", 4, tmp_path, show, lambda r: checked.extend(_check_page(r)), policy)
    assert all(r.ok for r in run.results.values()), run.results
    assert checked, "the page was never checked"
