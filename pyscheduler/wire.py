"""The generated Python code for proto/dollymp/v1 (the one wire contract).

Generated code is never committed: it is produced by `make proto` (grpcio-tools) into
pyscheduler/_generated/, and regenerated here on first import if it is missing or older than the
.proto file, so a fresh checkout works with a plain `pip install -e .`.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import ModuleType

_PKG_DIR = Path(__file__).resolve().parent
GENERATED_DIR = _PKG_DIR / "_generated"
_PROTO_FILES = ("dollymp/v1/scheduler.proto",)
_lock = threading.Lock()


def proto_root() -> Path:
    """Where the .proto sources live: the repo's proto/ (source checkout) or the packaged copy."""
    for candidate in (_PKG_DIR.parent / "proto", _PKG_DIR / "_proto"):
        if (candidate / _PROTO_FILES[0]).is_file():
            return candidate
    raise FileNotFoundError(f"cannot find {_PROTO_FILES[0]} next to {_PKG_DIR}")


def _stale() -> bool:
    root = proto_root()
    for rel in _PROTO_FILES:
        src = root / rel
        out = GENERATED_DIR / rel.replace(".proto", "_pb2.py")
        if not out.is_file() or out.stat().st_mtime < src.stat().st_mtime:
            return True
    return False


def generate() -> None:
    """Run grpcio-tools' protoc on proto/ into pyscheduler/_generated/."""
    import grpc_tools
    from grpc_tools import protoc  # imported lazily: only needed when regenerating

    root = proto_root()
    GENERATED_DIR.mkdir(parents=True, exist_ok=True)
    include = Path(grpc_tools.__file__).resolve().parent / "_proto"
    for rel in _PROTO_FILES:
        args = [
            "protoc",
            f"-I{root}",
            f"-I{include}",
            f"--python_out={GENERATED_DIR}",
            f"--pyi_out={GENERATED_DIR}",
            f"--grpc_python_out={GENERATED_DIR}",
            str(root / rel),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed for {rel}")
    for pkg in ("dollymp", "dollymp/v1"):
        (GENERATED_DIR / pkg / "__init__.py").touch()


def _load() -> tuple[ModuleType, ModuleType]:
    with _lock:
        if _stale():
            generate()
        if str(GENERATED_DIR) not in sys.path:
            sys.path.insert(0, str(GENERATED_DIR))
    from dollymp.v1 import scheduler_pb2, scheduler_pb2_grpc

    return scheduler_pb2, scheduler_pb2_grpc


pb, pb_grpc = _load()

__all__ = ["GENERATED_DIR", "generate", "pb", "pb_grpc", "proto_root"]
