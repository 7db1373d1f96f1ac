"""deploy/processes.py's /proc readers, on real processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pyscheduler.deploy.processes import cmdline, processes_under


def test_cmdline_reads_a_live_process_and_none_once_it_is_gone(tmp_path: Path) -> None:
    marker = str(tmp_path / "marker-arg")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker])
    try:
        deadline = time.monotonic() + 10.0
        line = cmdline(child.pid)
        while not (line and line.split()[-1] == marker) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the child has exec'd
            line = cmdline(child.pid)
        assert line is not None and line.split()[-1] == marker
        assert child.pid in processes_under(tmp_path)  # named by an argument under the folder
    finally:
        child.kill()
        child.wait()
    assert cmdline(child.pid) is None
    assert child.pid not in processes_under(tmp_path)
