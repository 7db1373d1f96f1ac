"""The cluster bench's class-data archive is dumped from warm-up jobs under both halves' ApplicationMasters
on a real DollyMP cluster, so the DollyMP AM helper's classes are in it beside MapReduce's AM's, and a
JVM started with the archive's options maps it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pyscheduler.deploy import cds
from pyscheduler.deploy.benchcds import WARMUPS, ArchiveCache
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster

pytestmark = pytest.mark.slow
STRAGGLER_JOB = "io.dollymp.yarn.workload.StragglerJob"
JAVA = shutil.which("java") or "java"  # make test runs with a JDK on the PATH (it builds the plugin)


def _classes(*paths: Path) -> set[str]:
    assert paths, "no class list"
    return {
        line.split()[0]
        for path in paths
        for line in path.read_text(encoding="utf-8").splitlines()
        if line[:1].isalpha()
    }


def test_the_archive_holds_both_halves_am_classes(tmp_path: Path) -> None:
    made: list[tuple[str, Path]] = []

    def make(scheduler: str, base: Path) -> LocalCluster:
        made.append((scheduler, base))
        return LocalCluster(nodes=2, scheduler=scheduler, policy="dollymp", base_dir=base)

    cache = ArchiveCache(True, tmp_path, STRAGGLER_JOB, make)
    measured = LocalCluster(nodes=2, scheduler="capacity", base_dir=tmp_path / "measured")
    opts = cache.opts(measured, Display())
    assert [s for s, _ in made] == ["dollymp"]  # one warm-up cluster, with the shim and the service
    assert cache.opts(measured, Display()) == opts  # dumped once, then shared
    archive = cache.archive
    assert archive is not None and archive.path.is_file()
    assert opts.endswith(f"-XX:SharedArchiveFile={archive.path}")
    assert f":{measured.conf_dir} " in opts  # the measured cluster's configuration, last on the class path

    am = {name: _classes(*cds.lists_of(tmp_path / "cds" / name, "am")) for name in WARMUPS}
    helper = "io/dollymp/yarn/am/DollyMPAppMaster"
    assert helper in am["dollymp-am"] and helper not in am["mapreduce-am"]
    assert any(c.startswith("io/dollymp/shaded/io/grpc/") for c in am["dollymp-am"])  # the helper's gRPC
    assert "org/apache/hadoop/mapreduce/v2/app/MRAppMaster" in am["mapreduce-am"]
    merged = _classes(tmp_path / "cds" / "mapreduce-am" / "merged.classlist")
    assert am["dollymp-am"] | am["mapreduce-am"] <= merged

    # A JVM on the archive's options maps it (-Xshare:on fails otherwise) and loads the helper's AM class
    # from it, not from the plugin jar (the class has no main here to run: only its loading is looked at).
    run = subprocess.run(
        [JAVA, *opts.split(), "-Xshare:on", "-Xlog:class+load=info", helper.replace("/", ".")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert f"{helper.replace('/', '.')} source: shared objects file" in run.stdout, run.stdout[-2000:]
