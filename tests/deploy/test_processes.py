"""deploy/processes.py's /proc readers, on real processes."""

from __future__ import annotations

import os
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


# A launcher that holds a live gRPC server and channel (as a test process or the demo does) starts
# daemons: each must exec and exit 0, and no fork handler of gRPC's may run in between (with a Python
# preexec_fn they did, and now and then aborted the child before it exec'd: "nm-3 exited with -6").
_GRPC_LAUNCHER = """
import sys, grpc
from concurrent import futures
from pathlib import Path
from pyscheduler.deploy.processes import Daemon
server = grpc.server(futures.ThreadPoolExecutor(2))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
grpc.channel_ready_future(grpc.insecure_channel(f"127.0.0.1:{port}")).result(timeout=10)
codes = [Daemon(f"d{i}", ["true"], Path(sys.argv[1]) / f"d{i}.log").proc.wait() for i in range(30)]
print(codes)
"""


def test_daemons_start_cleanly_from_a_process_holding_grpc(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _GRPC_LAUNCHER, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([0] * 30)
    assert "fork() handlers" not in out.stderr and "fork_posix" not in out.stderr, out.stderr


def test_a_daemon_dies_with_its_launcher(tmp_path: Path) -> None:
    marker = str(tmp_path / "orphan-marker")  # on the daemon's command line only, not the launcher's
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, time; from pathlib import Path; from pyscheduler.deploy.processes import Daemon; "
            "import sys; m = os.environ['MARKER']; "
            "Daemon('sleeper', [sys.executable, '-c', 'import time; time.sleep(300)', m], Path(m + '.log')); "
            "time.sleep(300)",
        ],
        env={**os.environ, "MARKER": marker},
    )
    try:
        deadline = time.monotonic() + 20.0
        while not processes_under(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        (sleeper,) = processes_under(tmp_path)
        assert sleeper != launcher.pid and marker in (cmdline(sleeper) or "")
    finally:
        launcher.kill()  # SIGKILL: no cleanup of its own runs
        launcher.wait()
    deadline = time.monotonic() + 10.0
    while cmdline(sleeper) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cmdline(sleeper) is None, "the daemon outlived its killed launcher"
