"""Durability: kill -9 a writer process mid-stream; every id it reported committed is still there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyscheduler.store import open_store

WRITER = Path(__file__).with_name("kill9_writer.py")


@pytest.mark.parametrize("mode", ["append", "background"])
def test_kill9_loses_nothing_committed(store_url: str, mode: str) -> None:
    batch = 25
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), store_url, mode, str(batch)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        printed: list[tuple[int, int]] = []
        deadline = time.monotonic() + 60
        while len(printed) < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            first, last = map(int, line.split())
            printed.append((first, last))
        assert len(printed) >= 40, "writer produced too few batches"
        os.kill(proc.pid, signal.SIGKILL)  # mid-stream: it is appending the next batch right now
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    for line in rest.splitlines():  # lines already in the pipe were committed before the kill, too
        first, last = map(int, line.split())
        printed.append((first, last))

    with open_store(store_url) as s:
        present = set()
        cursor = None
        while True:
            page = s.query(cursor=cursor, limit=1000)
            present.update(x.id for x in page.items)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        missing = [i for first, last in printed for i in range(first, last + 1) if i not in present]
        assert not missing, f"committed ids lost after kill -9: {missing[:10]}"
        assert max(present) >= printed[-1][1]
        assert len(present) % batch == 0  # transactions are atomic: no half batch survived
        s.append([])  # and the store is usable after the crash
