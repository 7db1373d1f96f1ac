"""Generating the Python side of the wire contract (proto/dollymp/v1) with grpcio-tools' protoc.

Used twice: by `pyscheduler.wire` in a source checkout (first import, `make proto`), and by the
build (setup.py's build_py), which puts the .proto and the code generated from it into the wheel as
`pyscheduler/_proto/` and `pyscheduler/_generated/`. The generated folder holds a stamp with the
SHA-256 of the .proto files it was generated from, so whether it is up to date does not depend on
file times (which an installer does not keep). Only the standard library is imported at module
level: setup.py loads this file by path, before the package's dependencies are installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PROTO_FILES = ("dollymp/v1/scheduler.proto",)
STAMP = "proto.sha256"  # in the generated folder: digest() of the sources it was generated from


def digest(proto_root: Path) -> str:
    """SHA-256 over the names and contents of PROTO_FILES under `proto_root`."""
    h = hashlib.sha256()
    for rel in PROTO_FILES:
        h.update(rel.encode() + b"\0")
        h.update((proto_root / rel).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def outputs(out_dir: Path) -> list[Path]:
    """The modules protoc writes for PROTO_FILES into `out_dir`."""
    files = []
    for rel in PROTO_FILES:
        stem = rel.removesuffix(".proto")
        files += [out_dir / f"{stem}_pb2.py", out_dir / f"{stem}_pb2_grpc.py"]
    return files


def up_to_date(proto_root: Path, out_dir: Path) -> bool:
    """Whether `out_dir` holds code generated from exactly the .proto files under `proto_root`."""
    stamp = out_dir / STAMP
    if not stamp.is_file() or not all(p.is_file() for p in outputs(out_dir)):
        return False
    return stamp.read_text().strip() == digest(proto_root)


def generate(proto_root: Path, out_dir: Path) -> None:
    """Run protoc (grpcio-tools) on PROTO_FILES into `out_dir` (messages, stubs, .pyi), then the stamp."""
    import grpc_tools  # imported lazily: only needed when generating
    from grpc_tools import protoc

    out_dir.mkdir(parents=True, exist_ok=True)
    include = Path(grpc_tools.__file__).resolve().parent / "_proto"
    for rel in PROTO_FILES:
        args = [
            "protoc",
            f"-I{proto_root}",
            f"-I{include}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            str(proto_root / rel),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed for {rel}")
    for rel in PROTO_FILES:
        for pkg in Path(rel).parents[:-1]:  # dollymp/v1, dollymp (not ".")
            (out_dir / pkg / "__init__.py").touch()
    (out_dir / STAMP).write_text(digest(proto_root) + "\n")
