"""The generated Python code for proto/dollymp/v1 (the one wire contract).

Generated code is never committed. An installed package (wheel) carries the .proto as
pyscheduler/_proto/ and the code generated from it at build time as pyscheduler/_generated/ (setup.py),
so importing this module never writes into site-packages. In a source checkout the .proto is the
repo's proto/, and the code is generated into pyscheduler/_generated/ by `make proto` or here, on
first import, whenever it is missing or was generated from another version of the .proto
(pyscheduler.protogen compares digests), so a fresh checkout works with a plain `pip install -e .`.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import ModuleType

from pyscheduler import protogen

_PKG_DIR = Path(__file__).resolve().parent
GENERATED_DIR = _PKG_DIR / "_generated"
_lock = threading.Lock()


def proto_root() -> Path:
    """Where the .proto sources live: the packaged copy (installed wheel) or the repo's proto/."""
    for candidate in (_PKG_DIR / "_proto", _PKG_DIR.parent / "proto"):
        if (candidate / protogen.PROTO_FILES[0]).is_file():
            return candidate
    raise FileNotFoundError(
        f"cannot find {protogen.PROTO_FILES[0]} in {_PKG_DIR / '_proto'} (installed package) "
        f"or {_PKG_DIR.parent / 'proto'} (source checkout)"
    )


def generate() -> None:
    """Run grpcio-tools' protoc on the .proto files into pyscheduler/_generated/."""
    protogen.generate(proto_root(), GENERATED_DIR)


def _load() -> tuple[ModuleType, ModuleType]:
    with _lock:
        if not protogen.up_to_date(proto_root(), GENERATED_DIR):
            generate()
        if str(GENERATED_DIR) not in sys.path:
            sys.path.insert(0, str(GENERATED_DIR))
    from dollymp.v1 import scheduler_pb2, scheduler_pb2_grpc

    return scheduler_pb2, scheduler_pb2_grpc


pb, pb_grpc = _load()

__all__ = ["GENERATED_DIR", "generate", "pb", "pb_grpc", "proto_root"]
