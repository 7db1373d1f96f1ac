"""Progress lines of the demo and the cluster benchmark."""

from __future__ import annotations

import time


class Display:
    """Progress lines prefixed with the time since the demo started."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def say(self, message: str) -> None:
        print(f"[dollymp-demo {time.monotonic() - self.t0:6.1f}s] {message}", flush=True)
