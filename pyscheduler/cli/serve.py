"""`dollymp serve`: the decision service (gRPC for the shim and the AM helper, HTTP API).

With no flags: policy default (the production configuration, pyscheduler/policies/production.py), gRPC
on 127.0.0.1:50051 (where the shim looks by default), the HTTP API on 127.0.0.1:8080, the decision log in
./dollymp-decisions.db.

Configuration: defaults < --config FILE (TOML) < DOLLYMP_* environment < these flags; see
pyscheduler.config for every key. An invalid key or value stops start-up with exit code 2 and a
message naming the key. SIGTERM/SIGINT: graceful shutdown (rounds in flight finish, the decision
log is flushed), exit code 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

log = logging.getLogger("dollymp.serve")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="run the decision service")
    p.add_argument("--config", type=Path, default=None, help="TOML configuration file")
    p.add_argument("--check-config", action="store_true", help="validate the configuration and exit")
    p.add_argument("--grpc-host", default=None, help="gRPC bind address (grpc.host, default 127.0.0.1)")
    p.add_argument(
        "--grpc-port", type=int, default=None, help="gRPC port (grpc.port, default 50051); 0 picks a free one"
    )
    p.add_argument(
        "--auth-secret-file",
        default=None,
        help="file holding the shim's shared secret (grpc.auth_secret_file); callers without it are refused",
    )
    p.add_argument(
        "--insecure",
        action="store_true",
        default=None,
        help="allow a non-loopback --grpc-host with no secret and no client certificates (grpc.insecure)",
    )
    p.add_argument("--tls-cert", default=None, help="PEM server certificate chain (grpc.tls_cert)")
    p.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert (grpc.tls_key)")
    p.add_argument(
        "--tls-client-ca",
        default=None,
        help="PEM CA that signs client certificates: mutual TLS (grpc.tls_client_ca)",
    )
    p.add_argument("--port-file", default=None, help="write the bound gRPC port here, atomically")
    p.add_argument(
        "--db",
        default=None,
        help="decision log (store.url, default dollymp-decisions.db): SQLite path, sqlite:/// or "
        "postgresql:// URL",
    )
    p.add_argument(
        "--policy",
        default=None,
        help="policy name (policy.name, default default: the production configuration)",
    )
    p.add_argument(
        "--policy-options",
        default=None,
        help="policy options as JSON (policy.options), e.g. '{\"max_clones\": 1}'",
    )
    p.add_argument(
        "--http-port",
        type=int,
        default=None,
        help="HTTP API port (http.port, default 8080, on http.host 127.0.0.1); 0 ephemeral, -1 off",
    )
    p.add_argument("--grace", type=float, default=None, help="seconds for rounds in flight on shutdown")
    p.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING or ERROR")
    p.set_defaults(func=run)


def write_port_file(path: Path, port: int) -> None:
    """Write `port` to `path` atomically (temp file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".port-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{port}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    from pyscheduler import config

    overrides = {
        "grpc.host": args.grpc_host,
        "grpc.port": args.grpc_port,
        "grpc.auth_secret_file": args.auth_secret_file,
        "grpc.insecure": args.insecure,
        "grpc.tls_cert": args.tls_cert,
        "grpc.tls_key": args.tls_key,
        "grpc.tls_client_ca": args.tls_client_ca,
        "service.port_file": args.port_file,
        "store.url": args.db,
        "policy.name": args.policy,
        "policy.options": None,
        "grpc.grace_s": args.grace,
        "http.port": args.http_port,
        "service.log_level": args.log_level.upper() if args.log_level else None,
    }
    if args.policy_options is not None:
        try:
            overrides["policy.options"] = json.loads(args.policy_options)
        except json.JSONDecodeError as exc:
            print(
                f"dollymp serve: --policy-options (policy.options): must be a JSON object: {exc}",
                file=sys.stderr,
            )
            return 2
    try:
        cfg = config.load(args.config, overrides=overrides)
    except config.ConfigError as exc:
        print(f"dollymp serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=cfg["service.log_level"],
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from pyscheduler.service.rmproxy.service import DecisionService

    try:
        service = DecisionService(cfg)
    except config.ConfigError as exc:
        print(f"dollymp serve: {exc}", file=sys.stderr)
        return 2
    if args.check_config:
        service.stop()
        print("configuration OK")
        return 0
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # SIGUSR1: a new statistics window (the bench marks the end of its warm-up so).
    signal.signal(signal.SIGUSR1, lambda signum, frame: service.servicer.stats.reset_window())
    try:
        service.start(manage_gc=True)  # the collector runs between rounds (service/rmproxy/gcpace.py)
    except config.ConfigError as exc:
        print(f"dollymp serve: {exc}", file=sys.stderr)
        service.stop()
        return 2
    if cfg["service.port_file"]:
        write_port_file(Path(cfg["service.port_file"]), service.port)
    print(f"GRPC_PORT={service.port}", flush=True)
    if service.http is not None:
        print(f"HTTP_PORT={service.http.port}", flush=True)
    while not stop.wait(0.5):
        pass
    log.info("shutting down: finishing rounds in flight")
    service.stop()
    print(f"SYNC_STATS={json.dumps(service.servicer.stats.summary())}", flush=True)
    log.info("stopped")
    return 0
