"""`dollymp report --ray`: a quick report's runs as tasks on a Ray cluster of 2 CPUs started as an operator
starts one (`ray start --head`, here on free ports with its session files in a temporary folder), kept in
--cache and read back by a second report with --reuse; an address where no cluster answers, or one that is
not an address, refused at once with a message naming --ray; --ray with --jobs refused."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyscheduler.cli import main
from pyscheduler.deploy import hadoopconf

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
# the one scenario that reads no trace: 3 runs of the Master-Worker model, seconds each on slices
SCENARIO = "redundancy"
LABELS = ("load=0.3", "load=0.6", "load=0.9")
# every port a head node binds that has a fixed default (the rest the kernel chooses)
PORT_FLAGS = (
    "--port",
    "--ray-client-server-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
    "--node-manager-port",
    "--object-manager-port",
)


def _env() -> dict[str, str]:
    """This checkout's pyscheduler for the report and for the cluster's workers (the processes `ray start`
    starts). No token authentication, whether or not a ~/.ray/auth_token is there (with one, `ray start`
    turns it on, and a driver given an address then needs RAY_AUTH_MODE=token)."""
    return dict(os.environ, PYTHONPATH=str(ROOT), RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")


def _started(head: subprocess.Popen[bytes], log: Path, timeout_s: float = 120.0) -> None:
    """Wait for `ray start` to say the node is up: its GCS port answers before its raylet has registered,
    and a driver joining then finds no node to join."""
    deadline = time.monotonic() + timeout_s
    while "Ray runtime started" not in log.read_text(errors="replace"):
        assert head.poll() is None, f"ray start --head exited:\n{log.read_text(errors='replace')[-3000:]}"
        assert time.monotonic() < deadline, f"the Ray head did not start within {timeout_s:.0f} s"
        time.sleep(0.2)


@pytest.fixture
def ray_head(tmp_path: Path) -> Iterator[str]:
    """A Ray head node of 2 CPUs, its address; stopped, with every process it started, afterwards."""
    ports = hadoopconf.free_ports(len(PORT_FLAGS))
    # short: the session folder holds Unix sockets, whose paths are limited to about 100 characters
    session = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    ray = Path(sys.executable).parent / "ray"
    argv = [str(ray), "start", "--head", "--block", "--num-cpus", "2", "--temp-dir", session]
    # no dashboard (the plain `ray` package has none), and a small object store: the runs return kilobytes
    argv += ["--include-dashboard", "false", "--disable-usage-stats", "--object-store-memory", str(100 << 20)]
    # workers on ports the kernel picks: Ray's default range (10002-19999) would overlap free_ports'
    argv += ["--min-worker-port", "0", "--max-worker-port", "0"]
    argv += [w for flag, port in zip(PORT_FLAGS, ports, strict=True) for w in (flag, str(port))]
    log = tmp_path / "ray-head.log"
    with log.open("wb") as out:
        head = subprocess.Popen(
            argv, env=_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _started(head, log)
        yield f"127.0.0.1:{ports[0]}"
    finally:
        head.send_signal(signal.SIGTERM)  # --block stops the head's processes on SIGTERM
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)  # any left in its process group
        head.wait()
        shutil.rmtree(session, ignore_errors=True)


def _report(address: str, tmp_path: Path, out: str, *more: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pyscheduler", "report", "--quick", "--only", SCENARIO, "--ray", address]
    argv += ["--traces", str(tmp_path), "--cache", str(tmp_path / "cache")]
    argv += ["--out", str(tmp_path / f"{out}.md"), "--figures", str(tmp_path / f"{out}-fig"), *more]
    return subprocess.run(argv, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=240)


def _summary(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith(f"| {SCENARIO} |")]


def test_a_quick_report_runs_on_a_ray_cluster_and_reads_its_kept_runs_back(
    ray_head: str, tmp_path: Path
) -> None:
    t0 = time.perf_counter()
    first = _report(ray_head, tmp_path, "first")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Connected to Ray cluster" in first.stderr
    print(f"report on Ray: {time.perf_counter() - t0:.1f} s")
    for label in LABELS:
        assert f"{SCENARIO} / {label}: 600 jobs" in first.stdout, first.stdout
    rows = _summary(tmp_path / "first.md")
    assert len(rows) == len(LABELS), rows
    # the summary in the runs' order, whichever ended first
    assert [next(i for i, r in enumerate(rows) if label in r) for label in LABELS] == [0, 1, 2], rows
    assert f"--only {SCENARIO} --ray {ray_head}" in (tmp_path / "first.md").read_text()
    kept = sorted((tmp_path / "cache").glob(f"{SCENARIO}-*.pickle"))
    assert len(kept) == len(LABELS) and all(p.with_suffix(".json").is_file() for p in kept)
    written = {p: p.stat().st_mtime_ns for p in kept}

    t1 = time.perf_counter()
    again = _report(ray_head, tmp_path, "again", "--reuse")
    assert again.returncode == 0, again.stderr[-3000:]
    print(f"report on Ray with --reuse: {time.perf_counter() - t1:.1f} s")
    assert sorted(p.name for p in written) == sorted(
        line.rsplit(" ", 1)[1] for line in again.stdout.splitlines() if ": reused " in line
    ), again.stdout
    assert {p: p.stat().st_mtime_ns for p in kept} == written  # read, not written again
    assert _summary(tmp_path / "again.md") == rows


def test_an_address_where_no_cluster_answers_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = hadoopconf.free_ports(1)[0]
    base = ["report", "--quick", "--only", SCENARIO, "--traces", str(tmp_path), "--cache", str(tmp_path)]
    base += ["--out", str(tmp_path / "r.md"), "--figures", str(tmp_path / "fig")]
    t0 = time.perf_counter()
    assert main([*base, "--ray", f"127.0.0.1:{closed}"]) == 2
    err = capsys.readouterr().err
    assert f"error: --ray 127.0.0.1:{closed}: no Ray cluster answers there" in err, err
    assert main([*base, "--ray", "head-node"]) == 2
    assert "error: --ray head-node: not HOST:PORT, auto or local" in capsys.readouterr().err
    assert time.perf_counter() - t0 < 30
    assert not list(tmp_path.glob("*.pickle")) and not (tmp_path / "r.md").exists()
    with pytest.raises(SystemExit) as refused:
        main([*base, "--ray", "auto", "--jobs", "2"])
    assert refused.value.code == 2
    assert "argument --jobs: not allowed with argument --ray" in capsys.readouterr().err


def test_the_command_imports_ray_only_for_ray() -> None:
    """Every subcommand's module loaded (the report's with its pool), and no Ray: only --ray needs it."""
    probe = (
        "import sys; from pyscheduler.cli import build_parser; build_parser(); print('ray' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "False", loaded
