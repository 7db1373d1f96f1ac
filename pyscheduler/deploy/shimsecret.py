"""The shim's shared secret, made at first start: the compose service's entrypoint.

    python -m pyscheduler.deploy.shimsecret [--user dollymp] [--group GID] -- dollymp serve --config FILE

docker/docker-compose.yml starts the `dollymp` service with this as root. It reads the service's
configuration as `serve` will (the command's `--config` file and the `DOLLYMP_*` environment, files not
looked up) and, when `grpc.auth_secret_file` names a file that does not exist, writes a new secret there:
64 hex digits from `secrets` (256 random bits), written to a temporary file and renamed into place, owned
by USER and group GID with mode 0440, in a directory of the same owner and group with mode 0750. An
existing file is kept as it is: restarts reuse the secret; to rotate it, write a new one (or delete the
volume) and restart the service and then the ResourceManager. Then it runs the command as USER (its own
groups only), in place of this process (exec: the command keeps the container's PID 1 and its signals).

In the compose cluster the file is on the `dollymp-secret` volume, which only the service (read-write)
and the ResourceManager (read-only, at the path of `yarn.scheduler.dollymp.auth.secret-file`) mount; the
RM's `hadoop` user reads it through its group (GID). Run as another user than root, nothing is chowned
and the command runs as that user.
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from pyscheduler import config

SECRET_HEX_BYTES = 32  # 64 hex characters; pyscheduler.service.rmproxy.auth accepts 16..4096 printable bytes


def secret_path(command: Sequence[str], env: dict[str, str] | None = None) -> str:
    """grpc.auth_secret_file as `command` (a `dollymp serve` command line) will read it; "" if unset or
    the configuration does not load (then `serve` reports why itself)."""
    path: str | None = None
    for i, arg in enumerate(command):
        if arg == "--config" and i + 1 < len(command):
            path = command[i + 1]
        elif arg.startswith("--config="):
            path = arg.split("=", 1)[1]
    for i, arg in enumerate(command):  # a --auth-secret-file flag wins over the file and the environment
        if arg == "--auth-secret-file" and i + 1 < len(command):
            return command[i + 1]
        if arg.startswith("--auth-secret-file="):
            return arg.split("=", 1)[1]
    try:
        cfg = config.load(path, env=os.environ if env is None else env, files=False)
    except config.ConfigError:
        return ""
    return str(cfg["grpc.auth_secret_file"])


def ensure_secret(path: Path, uid: int | None = None, gid: int | None = None) -> bool:
    """Write a new secret to `path` unless it exists; True if written. Owner/group applied when given."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    if uid is not None or gid is not None:
        os.chown(path.parent, -1 if uid is None else uid, -1 if gid is None else gid)
        os.chmod(path.parent, 0o750)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(SECRET_HEX_BYTES) + "\n").encode("ascii"))
        if uid is not None or gid is not None:
            os.fchown(fd, -1 if uid is None else uid, -1 if gid is None else gid)
        os.fchmod(fd, 0o440)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # never replaces a file another start wrote meanwhile
    except FileExistsError:
        return False
    finally:
        tmp.unlink()
    return True


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pyscheduler.deploy.shimsecret",
        description="Make the shim's shared secret if missing, then run COMMAND as USER.",
    )
    p.add_argument("--user", default="dollymp", help="who owns the secret and runs COMMAND (when root)")
    p.add_argument("--group", type=int, default=None, help="GID that may read the secret (mode 0440)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. dollymp serve ...")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command to run")
    root = os.geteuid() == 0
    user = pwd.getpwnam(args.user) if root else None
    path = secret_path(command)
    if path and ensure_secret(
        Path(path), uid=user.pw_uid if user else None, gid=args.group if root else None
    ):
        print(f"shimsecret: wrote a new shim secret to {path}", file=sys.stderr, flush=True)
    if user is not None:
        os.initgroups(user.pw_name, user.pw_gid)
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
        os.environ.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name)
    os.execvp(command[0], command)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
