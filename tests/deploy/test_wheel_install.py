"""The Python package installs like a package: the wheel built from this tree, installed into a clean
virtual environment (dependencies from PyPI, through pip's cache), runs `dollymp serve` away from the
source tree, and answers a gRPC round and HTTP queries over real loopback sockets.

This is what an operator's `pip install .` does; the wire contract must come with the wheel (the
.proto as pyscheduler/_proto/, the code generated from it as pyscheduler/_generated/, setup.py).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import grpc
import httpx
import pytest

from pyscheduler.wire import pb, pb_grpc

REPO = Path(__file__).resolve().parents[2]
# What the build needs from the tree (the service image copies the same).
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "proto", "pyscheduler")
NOT_SOURCES = shutil.ignore_patterns("__pycache__", "_generated", "_proto", "*.pyc")
PROTO = "dollymp/v1/scheduler.proto"
TOKEN = "wheel-test-token"


def _run(cmd: list[str | Path], env: dict[str, str], cwd: Path | None = None) -> str:
    r = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, env=env, cwd=cwd, timeout=240
    )
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _clean_env(tmp: Path) -> dict[str, str]:
    """This environment without anything that would find the source tree or configure the service."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("DOLLYMP_")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["NUMBA_CACHE_DIR"] = str(tmp / "numba-cache")
    return env


def build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=NOT_SOURCES)
        else:
            shutil.copy2(REPO / name, src / name)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, src], env=_clean_env(tmp))
    (wheel,) = dist.glob("dollymp-*.whl")
    return wheel


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_wheel_installs_into_a_clean_venv_and_serves(tmp_path: Path) -> None:
    started = time.monotonic()
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        assert f"pyscheduler/_proto/{PROTO}" in names, sorted(n for n in names if "proto" in n)
        assert zf.read(f"pyscheduler/_proto/{PROTO}") == (REPO / "proto" / PROTO).read_bytes()
        for module in ("scheduler_pb2.py", "scheduler_pb2_grpc.py"):
            assert f"pyscheduler/_generated/dollymp/v1/{module}" in names
        assert "pyscheduler/_generated/proto.sha256" in names
        assert "setup.py" not in names and not any(n.startswith("proto/") for n in names)
        assets = sorted(p.name for p in (REPO / "pyscheduler" / "api" / "ui_assets").iterdir())
        assert "index.html" in assets and "ui.js" in assets, assets  # the operator page (api/ui.py)
        for asset in assets:
            assert f"pyscheduler/api/ui_assets/{asset}" in names, asset
    built = time.monotonic()

    env = _clean_env(tmp_path)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], env=env)
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", wheel], env=env)
    installed = time.monotonic()

    run = tmp_path / "run"  # not the source tree: the installed package must stand on its own
    run.mkdir()
    where = _run(
        [python, "-c", "import pyscheduler.wire as w; print(w.__file__); print(w.proto_root())"],
        env=env,
        cwd=run,
    ).split()
    site = venv.resolve()
    assert all(Path(p).resolve().is_relative_to(site) for p in where), where
    package = Path(where[0]).parent
    before = {p for p in package.rglob("*") if "__pycache__" not in p.parts}

    port_file = tmp_path / "grpc.port"
    out = tmp_path / "serve.out"
    proc = subprocess.Popen(
        # The policy is the default one (the production configuration); free ports on loopback, a
        # temporary log.
        [
            str(venv / "bin" / "dollymp"),
            "serve",
            "--grpc-port",
            "0",
            "--port-file",
            str(port_file),
            "--http-port",
            "0",
            "--db",
            str(tmp_path / "decisions.db"),
        ],
        cwd=run,
        env={**env, "DOLLYMP_HTTP_TOKEN": TOKEN},
        stdout=out.open("w"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        http_port = None
        while http_port is None:
            assert proc.poll() is None, f"serve exited {proc.returncode}:\n{out.read_text()}"
            assert time.monotonic() < deadline, f"serve did not start in 60 s:\n{out.read_text()}"
            m = re.search(r"^HTTP_PORT=(\d+)$", out.read_text(), re.M)
            if m and port_file.exists():
                http_port = int(m.group(1))
            time.sleep(0.1)
        grpc_port = int(port_file.read_text())
        assert "policy default (the production configuration: dollymp-ext(" in out.read_text()

        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as ch:
            reg = pb_grpc.SchedulerServiceStub(ch).Register(
                pb.RegisterRequest(rm_id="rm-wheel", tick_ms=100), timeout=30
            )
            assert reg.policy == "default" and reg.session_id
            batch = pb.StateBatch(
                session_id=reg.session_id,
                seq=1,
                full_resync=True,
                rm_time_ms=1,
                nodes_upserted=[
                    pb.NodeInfo(
                        node_id="h1:8041",
                        rack="/r1",
                        capacity=pb.Resource(memory_mb=4096, vcores=4),
                        allocated=pb.Resource(memory_mb=0, vcores=0),
                        state=pb.NODE_STATE_RUNNING,
                        speed=1.0,
                    )
                ],
                apps_upserted=[
                    pb.ApplicationInfo(
                        application_id="application_1700000000000_0001",
                        attempt_id="appattempt_1700000000000_0001_000001",
                        queue="default",
                        user="u",
                        name="job1",
                        submit_time_ms=1000,
                        application_type="MAPREDUCE",
                    )
                ],
                asks=[
                    pb.Ask(
                        attempt_id="appattempt_1700000000000_0001_000001",
                        priority=0,
                        allocation_request_id=-1,
                        capability=pb.Resource(memory_mb=1024, vcores=1),
                        num_containers=1,
                        am_container=True,
                        relax_locality=True,
                    )
                ],
            )
            (plan,) = pb_grpc.SchedulerServiceStub(ch).Sync(iter([batch]), timeout=30)
        assert plan.status == pb.BATCH_ACCEPTED, plan
        assert [(p.node_id, p.count, p.reason) for p in plan.placements] == [
            ("h1:8041", 1, pb.REASON_AM_CONTAINER)
        ]

        base = f"http://127.0.0.1:{http_port}"
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=base, timeout=10) as http:
            assert http.get("/healthz").json()["status"] == "ok"
            assert http.get("/v1/decisions").status_code == 401
            placed: list[object] = []
            deadline = time.monotonic() + 20  # the log is written by a background writer
            while not placed and time.monotonic() < deadline:
                r = http.get("/v1/decisions", params={"kind": "placement"}, headers=auth)
                assert r.status_code == 200, r.text
                placed = r.json()["items"]
                time.sleep(0.1)
            assert placed and placed[0]["application_id"] == "application_1700000000000_0001"
            # The interactive docs come from the installed packages, not from a CDN.
            docs = http.get("/docs")
            assert docs.status_code == 200
            for word in ("https://", "http://", "cdn", "jsdelivr", "unpkg"):
                assert word not in docs.text, word
            assets = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
            assert any(a.endswith("swagger-ui-bundle.js") for a in assets), assets
            for asset in assets:
                assert http.get(asset).status_code == 200, asset
            # The operator page and its script and style, from the installed package.
            page = http.get("/ui/")
            assert page.status_code == 200 and "/ui/assets/ui.js" in page.text
            for asset in re.findall(r'(?:src|href)="(/ui/[^"]+)"', page.text):
                assert http.get(asset).status_code == 200, asset
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, out.read_text()
    after = {p for p in package.rglob("*") if "__pycache__" not in p.parts}
    assert after == before, f"serve wrote into site-packages: {sorted(map(str, after - before))}"
    print(
        f"wheel built in {built - started:.1f} s, installed in {installed - built:.1f} s, "
        f"served in {time.monotonic() - installed:.1f} s"
    )
