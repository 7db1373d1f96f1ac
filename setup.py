"""Build step of the `dollymp` package (everything else is in pyproject.toml).

The wheel carries the wire contract: build_py copies the repo's proto/ into the package as
pyscheduler/_proto/ and generates the Python code from it into pyscheduler/_generated/ (grpcio-tools,
a build requirement), so that an installed `pyscheduler.wire` neither looks for the repo nor writes
into site-packages. proto/ stays the one contract; neither copy is ever committed. Editable installs
skip this: there `pyscheduler.wire` reads proto/ and generates on first import.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _protogen() -> ModuleType:
    """pyscheduler/protogen.py, loaded by path (importing the package would need its dependencies)."""
    spec = importlib.util.spec_from_file_location("_dollymp_protogen", ROOT / "pyscheduler" / "protogen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithProto(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        protogen = _protogen()
        source = ROOT / "proto"
        package = Path(self.build_lib) / "pyscheduler"
        packaged = package / "_proto"
        shutil.rmtree(packaged, ignore_errors=True)
        for rel in protogen.PROTO_FILES:
            if not (source / rel).is_file():
                raise FileNotFoundError(f"{source / rel}: the wire contract is missing from the source tree")
            (packaged / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, packaged / rel)
        generated = package / "_generated"
        shutil.rmtree(generated, ignore_errors=True)
        protogen.generate(packaged, generated)


setup(cmdclass={"build_py": BuildPyWithProto})
