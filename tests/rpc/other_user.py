"""Registers RM sessions from another process as another local user (test_hostile_rm_sessions.py).

    python other_user.py UID PORT RM_ID [RM_ID ...]

Started as root: imports first (the interpreter may live where UID cannot read), then becomes UID, then
connects, so the connection's socket is UID's. Prints one JSON line: for each rm_id, ["OK", session_id]
or [status code name, details], in order.
"""

from __future__ import annotations

import json
import os
import sys

import grpc

from pyscheduler.wire import pb, pb_grpc


def main(argv: list[str]) -> int:
    uid, port, rm_ids = int(argv[0]), int(argv[1]), argv[2:]
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    out: list[list[str]] = []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = pb_grpc.SchedulerServiceStub(ch)
        for rm_id in rm_ids:
            try:
                reg = stub.Register(pb.RegisterRequest(rm_id=rm_id, tick_ms=100), timeout=10)
                out.append(["OK", reg.session_id])
            except grpc.RpcError as exc:
                out.append([exc.code().name, exc.details() or ""])
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
