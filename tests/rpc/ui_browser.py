"""Headless Chromium (Debian's `chromium` and `chromium-driver`) driven by selenium, for the operator page's
tests and its benchmark (pyscheduler/api/ui_bench.py has its own copy of the options: no test imports)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PIL import Image, ImageStat
from selenium import webdriver
from selenium.webdriver.chrome.service import Service as DriverService

REPO = Path(__file__).resolve().parents[2]


def output_dir() -> Path:
    """Where the screenshots go: $DOLLYMP_TEST_OUTPUT/ui, by default build/test-output/ui in the checkout."""
    base = Path(os.environ.get("DOLLYMP_TEST_OUTPUT", REPO / "build" / "test-output"))
    out = base / "ui"
    out.mkdir(parents=True, exist_ok=True)
    return out


def chromium() -> webdriver.Chrome:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert browser and driver, "install Debian's chromium and chromium-driver (.ci/run does)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--no-first-run",
        "--disable-extensions",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(options=opts, service=DriverService(executable_path=driver))


def not_blank(png: Path) -> tuple[float, int]:
    """(pixel standard deviation over the grey image, distinct colours): a blank page has ~0 and 1."""
    with Image.open(png) as img:
        rgb = img.convert("RGB")
        grey = rgb.convert("L")
        std = ImageStat.Stat(grey).stddev[0]
        colours = len(rgb.getcolors(maxcolors=1 << 20) or [])
    return std, colours
