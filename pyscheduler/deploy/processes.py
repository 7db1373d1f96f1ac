"""Child processes that never outlive the launcher.

Each daemon runs in its own session (its own process group), with ``PR_SET_PDEATHSIG=SIGTERM`` so the
kernel tells it to stop if the launcher dies without cleaning up. The death signal is set by util-linux's
``setpriv --pdeathsig`` exec'ing the daemon, not by Python code between fork and exec (``preexec_fn``):
that runs the interpreter's fork handlers in the child, and in a launcher that holds a gRPC server or
channel (a test process, the demo), gRPC's handlers can abort the child before it execs.

Stopping sends SIGTERM to the group, waits, then SIGKILL. YARN's DefaultContainerExecutor starts
containers with ``setsid``, so they leave the NodeManager's group: :func:`processes_under` finds them by
their working directory or command line, which lie under the cluster's own base directory, and they are
killed by pid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def die_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that it gets SIGTERM when the process that started it dies (no-op without setpriv)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)


class Daemon:
    """One child process in its own process group, output appended to `log`."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                die_with_parent(self.argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM to the group, up to `grace_s` for it to exit, then SIGKILL. Returns the exit code."""
        if self.alive():
            self.signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace_s)
        # Whatever is left in the group (the daemon or a child of it) goes now.
        self.signal_group(signal.SIGKILL)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return None


def _proc_uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def cmdline(pid: int, proc: Path = Path("/proc")) -> str | None:
    """Process `pid`'s command line, arguments joined by spaces ("" for a zombie); None once it is gone."""
    try:
        return (proc / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def processes_under(base: Path) -> list[int]:
    """Pids of this user's processes whose cwd or command line lies under `base` (never our own)."""
    marker = str(base.resolve())
    me = {os.getpid(), os.getppid()}
    uid = os.getuid()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in me or _proc_uid(pid) != uid:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        line = cmdline(pid)
        if not line:  # gone, or a zombie: nothing to kill
            continue
        if cwd.startswith(marker) or marker in line:
            found.append(pid)
    return found


def kill_pids(pids: Sequence[int], grace_s: float = 3.0) -> None:
    """SIGTERM each pid, wait up to `grace_s` for all to go, then SIGKILL the rest."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    left = list(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [p for p in left if pid_alive(p)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
