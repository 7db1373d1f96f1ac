"""Headless Chromium (Debian's `chromium` and `chromium-driver`, started by pyscheduler.bench.ui.chromium)
for the operator page's tests: where screenshots go and whether one is blank."""

from __future__ import annotations

import os
from pathlib import Path

from PIL import Image, ImageStat

from pyscheduler.bench.ui import chromium

__all__ = ["chromium", "not_blank", "output_dir"]

REPO = Path(__file__).resolve().parents[2]


def output_dir() -> Path:
    """Where the screenshots go: $DOLLYMP_TEST_OUTPUT/ui, by default build/test-output/ui in the checkout."""
    base = Path(os.environ.get("DOLLYMP_TEST_OUTPUT", REPO / "build" / "test-output"))
    out = base / "ui"
    out.mkdir(parents=True, exist_ok=True)
    return out


def not_blank(png: Path) -> tuple[float, int]:
    """(pixel standard deviation over the grey image, distinct colours): a blank page has ~0 and 1."""
    with Image.open(png) as img:
        rgb = img.convert("RGB")
        grey = rgb.convert("L")
        std = ImageStat.Stat(grey).stddev[0]
        colours = len(rgb.getcolors(maxcolors=1 << 20) or [])
    return std, colours
