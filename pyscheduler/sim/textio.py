"""Open plain or gzip-compressed text files the same way."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import TextIO


def open_text(path: str | Path) -> TextIO:
    p = Path(path)
    if p.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8", newline="")
    return open(p, encoding="utf-8", newline="")
