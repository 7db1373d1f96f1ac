"""The `dollymp` command. Each subcommand lives in its own module with `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules under pyscheduler.cli that contribute subcommands; add one line per new subcommand module.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "serve",
    "bench",
    "simulate",
    "report",
    "localcluster",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dollymp", description="DollyMP decision service and simulator")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(f"pyscheduler.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
