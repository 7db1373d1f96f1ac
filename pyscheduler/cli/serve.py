"""`dollymp serve`: the decision service (gRPC for the shim and the AM helper)."""

from __future__ import annotations

import argparse
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
    p.add_argument("--grpc-host", default=None, help="gRPC bind address (default 127.0.0.1)")
    p.add_argument("--grpc-port", type=int, default=None, help="gRPC port; 0 picks a free one (default 0)")
    p.add_argument(
        "--port-file",
        type=Path,
        default=None,
        help="write the bound gRPC port here (atomically) once serving",
    )
    p.add_argument("--db", default=None, help="decision log: SQLite path or sqlite:///, postgresql:// URL")
    p.add_argument("--policy", default=None, help="policy name (default fcfs)")
    p.add_argument("--grace", type=float, default=None, help="seconds to finish rounds in flight on shutdown")
    p.add_argument("--log-level", default="INFO")
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
    from pyscheduler.rpc import policy as rpc_policy
    from pyscheduler.rpc.server import GrpcServer, ServerOptions
    from pyscheduler.rpc.servicer import SchedulerServicer, SyncOptions
    from pyscheduler.rpc.session import SessionRegistry
    from pyscheduler.store.log import open_store

    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    policy_name = args.policy or "fcfs"
    try:
        round_fn = rpc_policy.round_for(policy_name)
    except ValueError as exc:
        print(f"dollymp serve: policy: {exc}", file=sys.stderr)
        return 2
    db = args.db or "dollymp-decisions.db"
    try:
        store = open_store(db)
    except Exception as exc:
        print(f"dollymp serve: db: cannot open decision log {db!r}: {exc}", file=sys.stderr)
        return 2
    servicer = SchedulerServicer(SessionRegistry(), round_fn, policy_name, store, SyncOptions())
    host = args.grpc_host or "127.0.0.1"
    port = 0 if args.grpc_port is None else args.grpc_port
    try:
        server = GrpcServer(servicer, ServerOptions(host=host, port=port))
    except (OSError, RuntimeError) as exc:
        print(f"dollymp serve: grpc: {exc}", file=sys.stderr)
        store.close()
        return 2
    server.start()
    if args.port_file is not None:
        write_port_file(args.port_file, server.port)
    print(f"GRPC_PORT={server.port}", flush=True)
    log.info("serving gRPC on %s:%d with policy %s", host, server.port, policy_name)

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.wait(0.5):
        pass
    log.info("shutting down: finishing rounds in flight")
    server.stop(args.grace if args.grace is not None else 5.0)
    store.close()
    log.info("stopped")
    return 0
