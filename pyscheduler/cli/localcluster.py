"""`dollymp local-cluster` (a local multi-process YARN cluster until Ctrl-C) and `dollymp demo`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "local-cluster",
        help="run a local YARN cluster of separate processes (RM, NodeManagers, service) until Ctrl-C",
    )
    p.add_argument("--nodes", type=int, default=4, help="NodeManagers (default 4)")
    p.add_argument("--scheduler", choices=("dollymp", "capacity"), default="dollymp")
    p.add_argument("--policy", default="default", help="decision service policy (default %(default)s)")
    p.add_argument("--history-server", action="store_true", help="also run the JobHistoryServer")
    p.add_argument("--base-dir", type=Path, default=None, help="conf, logs, data (default: a temp dir)")
    p.set_defaults(func=run_local_cluster)

    from pyscheduler.deploy import demo

    d = subparsers.add_parser(
        "demo", help="the newcomer's demo: real jobs under CapacityScheduler and DollyMP"
    )
    demo.add_arguments(d)
    from pyscheduler.bench import demo_sls

    demo_sls.add_arguments(d)
    d.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """The real jobs (pyscheduler/deploy/demo.py), then the Scheduler Load Simulator part
    (pyscheduler/bench/demo_sls.py) unless --sls-jobs 0."""
    from pyscheduler.bench import demo_sls
    from pyscheduler.deploy import demo

    if args.sls_jobs < 0 or args.sls_nodes < 1:
        print("dollymp demo: --sls-jobs must be >= 0 and --sls-nodes >= 1", file=sys.stderr)
        return 2
    code = demo.run(args)
    if code or args.sls_jobs == 0:
        return code
    print(f"\nScheduler Load Simulator part: {args.sls_jobs} jobs on {args.sls_nodes} NodeManagers, 3 runs")
    code, text = demo_sls.run_section(args.sls_jobs, args.sls_nodes, args.work_dir / "sls")
    print("\n".join(text))
    return code


def run_local_cluster(args: argparse.Namespace) -> int:
    from pyscheduler.deploy.localcluster import ClusterError, LocalCluster

    if args.nodes < 1:
        print("dollymp local-cluster: --nodes must be >= 1")
        return 2
    cluster = LocalCluster(
        nodes=args.nodes,
        scheduler=args.scheduler,
        policy=args.policy,
        history_server=args.history_server,
        base_dir=args.base_dir,
        keep_dir=True,
        progress=lambda m: print(f"[local-cluster] {m}", flush=True),
    )
    try:
        with cluster:
            print(f"RM UI            {cluster.rm_web_url}")
            if cluster.service_api_url:
                print(f"decision log API {cluster.service_api_url}/v1/decisions")
                print(f"service gRPC     127.0.0.1:{cluster.grpc_port}")
            if cluster.history_url:
                print(f"history server   {cluster.history_url}")
            print(f"conf dir         {cluster.conf_dir}  (HADOOP_CONF_DIR for job clients)")
            print(f"logs             {cluster.log_dir}")
            print("Ctrl-C stops every process.", flush=True)
            while True:
                time.sleep(1)
    except KeyboardInterrupt:
        return 0
    except ClusterError as exc:
        print(f"dollymp local-cluster: {exc}")
        return 1
