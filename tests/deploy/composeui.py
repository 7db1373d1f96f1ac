"""The operator page (/ui/) of the compose cluster's service in headless Chromium, from the host through
the published HTTP port. The browser and the blank-screenshot check are the in-process browser test's
(tests/rpc/ui_browser.py: Debian's chromium and chromedriver driven by selenium); what the page must show
for an application is computed here from the decision log's `attempt` records, as the page's
copiesOf (pyscheduler/api/ui_assets/ui.js) reads them."""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import staticcheck as sc


def _ui_browser() -> Any:
    """tests/rpc/ui_browser.py, imported as the tests under tests/rpc import it."""
    rpc_tests = str(sc.ROOT / "tests" / "rpc")
    if rpc_tests not in sys.path:
        sys.path.append(rpc_tests)
    return importlib.import_module("ui_browser")


def output_dir(folder: str = "compose-ui") -> Path:
    """Where the screenshots go: $DOLLYMP_TEST_OUTPUT/<folder>, by default build/test-output/<folder>."""
    out = Path(os.environ.get("DOLLYMP_TEST_OUTPUT", sc.ROOT / "build" / "test-output")) / folder
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextmanager
def browser() -> Iterator[Any]:
    driver = _ui_browser().chromium()
    try:
        yield driver
    finally:
        driver.quit()


def wait(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def shot(driver: Any, name: str, folder: str = "compose-ui") -> Path:
    """Save a screenshot and check it is not blank (pixel spread and colours, as tests/rpc)."""
    path = output_dir(folder) / f"{name}.png"
    assert driver.save_screenshot(str(path)), path
    std, colours = _ui_browser().not_blank(path)
    assert std > 5.0 and colours > 20, f"{path} looks blank: pixel stddev {std:.1f}, {colours} colours"
    return path


def login(driver: Any, base: str, token: str) -> None:
    """Open /ui/ and sign in with the API's bearer token (the page keeps it for the session)."""
    from selenium.webdriver.common.by import By

    driver.get(base + "/ui/")
    wait("the login form", lambda: driver.find_element(By.ID, "login").is_displayed())
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()


def texts(driver: Any, selector: str, data: str = "") -> list[str]:
    """Each matching element's text (or its data-`data` attribute), read in one script (the page redraws
    its views live, so element handles kept across calls go stale)."""
    script = (
        "return [...document.querySelectorAll(arguments[0])]"
        ".map(e => arguments[1] ? e.dataset[arguments[1]] : e.textContent)"
    )
    return [str(x) for x in driver.execute_script(script, selector, data)]


def page_copies(driver: Any) -> dict[str, tuple[str, str]]:
    """The application view's copies table: attempt -> (clone flag, outcome)."""
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#copies tr.copy')].map(r => "
        "[r.dataset.attempt, r.dataset.clone, r.dataset.outcome])"
    )
    return {str(a): (str(c), str(o)) for a, c, o in rows}


def logged_copies(attempts: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """attempt -> (clone flag, outcome) from an application's `attempt` decisions in log order: a copy is
    `running` until a record other than `clone_launched` gives its outcome (won, lost_race, killed...)."""
    out: dict[str, tuple[str, str]] = {}
    for d in sorted(attempts, key=lambda d: int(d["id"])):
        inputs = d.get("inputs") or {}
        attempt = str(inputs["attempt_id"])
        clone, outcome = out.get(attempt, (str(bool(inputs.get("is_clone"))).lower(), "running"))
        if d["reason"] != "clone_launched":
            outcome = d["reason"]
        out[attempt] = (clone, outcome)
    return out
