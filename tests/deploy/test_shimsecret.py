"""The compose service's entrypoint (pyscheduler.deploy.shimsecret): the shim's secret is made once, where
the service's configuration says, with the right owner and mode, and is one the service accepts."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

from pyscheduler.deploy import shimsecret
from pyscheduler.service.rmproxy.auth import read_secret

from . import staticcheck as sc


def test_the_secret_is_made_once_and_accepted_by_the_service(tmp_path: Path) -> None:
    path = tmp_path / "run" / "shim.secret"
    assert shimsecret.ensure_secret(path, uid=os.getuid(), gid=os.getgid())
    secret = read_secret(str(path))  # the service's own check: 16..4096 printable bytes
    assert len(secret) == 64 and all(c in b"0123456789abcdef" for c in secret)
    assert stat.S_IMODE(path.stat().st_mode) == 0o440
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o750
    assert (path.stat().st_uid, path.stat().st_gid) == (os.getuid(), os.getgid())
    assert not shimsecret.ensure_secret(path)  # kept across restarts
    assert read_secret(str(path)) == secret
    assert [p.name for p in path.parent.iterdir()] == ["shim.secret"]  # no temporary file left
    other = tmp_path / "other.secret"
    assert shimsecret.ensure_secret(other) and read_secret(str(other)) != secret


def test_the_path_is_the_one_serve_will_read(tmp_path: Path) -> None:
    toml = sc.ROOT / "docker" / "dollymp.toml"
    serve = ["dollymp", "serve", "--config", str(toml)]
    env = {"DOLLYMP_HTTP_TOKEN": "t"}
    assert shimsecret.secret_path(serve, env) == "/run/dollymp/shim.secret"
    moved = {**env, "DOLLYMP_GRPC_AUTH_SECRET_FILE": str(tmp_path / "s")}
    assert shimsecret.secret_path(serve, moved) == str(tmp_path / "s")
    assert shimsecret.secret_path([*serve, "--auth-secret-file", "/x"], env) == "/x"
    assert shimsecret.secret_path(["dollymp", "serve", f"--config={toml}"], env) == "/run/dollymp/shim.secret"
    # a configuration that does not load: nothing is made, serve reports it
    assert shimsecret.secret_path(serve, {}) == ""


def test_entrypoint_makes_the_secret_then_runs_the_command(tmp_path: Path) -> None:
    secret = tmp_path / "d" / "shim.secret"
    me = pwd.getpwuid(os.getuid()).pw_name
    env = {**os.environ, "DOLLYMP_GRPC_AUTH_SECRET_FILE": str(secret), "DOLLYMP_GRPC_HOST": "127.0.0.1"}
    show = "import sys; print(open(sys.argv[1]).read().strip())"
    cmd = [sys.executable, "-m", "pyscheduler.deploy.shimsecret", "--user", me, "--group", str(os.getgid())]
    first = subprocess.run(
        [*cmd, "--", sys.executable, "-c", show, str(secret)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert first.stdout.strip() == read_secret(str(secret)).decode()
    assert "wrote a new shim secret" in first.stderr
    again = subprocess.run(
        [*cmd, "--", sys.executable, "-c", show, str(secret)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout == first.stdout and "wrote" not in again.stderr
