"""The jars a local cluster runs from: Hadoop's Maven jars, the plugin jar, JDK 17 flags.

Everything is built under ``build/deploy/`` at the repository root (gitignored), never in
``yarn-plugin/target/``: the lead's ``make jar``/``make test`` use that folder concurrently, so it is
only read (a fresh shaded jar there is copied, never written).

- Hadoop's jars: ``mvn dependency:copy-dependencies -DincludeScope=test`` over ``yarn-plugin/pom.xml``
  into ``build/deploy/lib`` (RM, NM, MapReduce, JobHistoryServer, the examples jar, the jobclient test
  jar with SleepJob). Re-collected when the pom changes (a stamp holds the pom's hash).
- The plugin jar: ``$DOLLYMP_PLUGIN_JAR``; else the cached copy ``build/deploy/*-shaded.jar`` when its
  stamp matches the sha256 of the plugin's sources (src/main, pom.xml, proto/); else
  ``yarn-plugin/target/*-shaded.jar`` when it is newer than every source; else a private build of a
  copy of ``yarn-plugin/`` under ``build/deploy/plugin-src``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIR = ROOT / "yarn-plugin"
POM = PLUGIN_DIR / "pom.xml"
SHADED_NAME = "dollymp-yarn-plugin-0.1.0-SNAPSHOT-shaded.jar"
SCHEDULER_CLASSES = {
    "dollymp": "io.dollymp.yarn.scheduler.DollyMPScheduler",
    "capacity": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
}

Progress = Callable[[str], None]


class BuildError(RuntimeError):
    """A build step (Maven, a missing tool or jar) failed; the message says which and how to fix it."""


def build_dir() -> Path:
    """``$DOLLYMP_BUILD_DIR`` or ``<repo>/build/deploy``."""
    return Path(os.environ.get("DOLLYMP_BUILD_DIR", ROOT / "build" / "deploy")).resolve()


def java_home() -> Path:
    """The JDK the daemons and containers run on: ``$JAVA_HOME`` or the one behind ``java`` on PATH."""
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "java").exists():
        return Path(env)
    java = shutil.which("java")
    if java is None:
        raise BuildError("no `java` on PATH and no JAVA_HOME: install a JDK 17")
    return Path(java).resolve().parent.parent


def jdk17_flags(pom: Path = POM) -> list[str]:
    """The ``--add-opens``/``--add-exports`` flags of the pom's ``jdk17.opens`` property."""
    m = re.search(r"<jdk17\.opens>(.*?)</jdk17\.opens>", pom.read_text(encoding="utf-8"), re.S)
    if m is None:
        raise BuildError(f"{pom}: property jdk17.opens not found")
    return m.group(1).split()


def _run(cmd: list[str], what: str, cwd: Path = ROOT) -> None:
    mvn = shutil.which(cmd[0])
    if mvn is None:
        raise BuildError(f"{what}: `{cmd[0]}` not found on PATH (install Maven and JDK 17)")
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-30:])
        raise BuildError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_resolved: dict[tuple[Path, str], Path] = {}  # (lib, pom sha) already settled in this process


def hadoop_lib(progress: Progress = lambda _m: None) -> Path:
    """``build/deploy/lib`` with every jar of the pom's test scope; collected once per pom version."""
    lib = build_dir() / "lib"
    stamp = lib / ".pom-sha256"
    want = _sha(POM)
    if (lib, want) in _resolved:
        return lib
    if stamp.exists() and stamp.read_text().strip() == want and any(lib.glob("hadoop-common-*.jar")):
        return lib
    progress("collecting Hadoop jars from Maven (first run only; ~150 MB into ~/.m2)")
    tmp = lib.with_name("lib.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = ["mvn", "-B", "-q", "-f", str(POM), "dependency:copy-dependencies", "-DincludeScope=test"]
    try:
        _run([*cmd, f"-DoutputDirectory={tmp}"], "collecting Hadoop jars")
    except BuildError as exc:
        if not any(lib.glob("hadoop-common-*.jar")):
            raise
        # The pom changed but cannot be resolved right now (offline, a half-edited pom): the jars
        # collected before still run a cluster of the same Hadoop version.
        progress(f"warning: keeping the jars collected before in {lib}: {str(exc).splitlines()[0]}")
        shutil.rmtree(tmp, ignore_errors=True)
        _resolved[(lib, want)] = lib
        return lib
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    stamp.write_text(want + "\n")
    return lib


def _jar(lib: Path, pattern: str) -> Path:
    found = sorted(lib.glob(pattern))
    if not found:
        raise BuildError(f"no {pattern} in {lib}; delete {lib} to collect the jars again")
    return found[-1]


def examples_jar(lib: Path) -> Path:
    """hadoop-mapreduce-examples (wordcount, ExampleDriver)."""
    return _jar(lib, "hadoop-mapreduce-examples-*.jar")


def jobclient_tests_jar(lib: Path) -> Path:
    """hadoop-mapreduce-client-jobclient tests jar (org.apache.hadoop.mapreduce.SleepJob)."""
    return _jar(lib, "hadoop-mapreduce-client-jobclient-*-tests.jar")


def _plugin_sources() -> list[Path]:
    files = [*PLUGIN_DIR.joinpath("src", "main").rglob("*"), *ROOT.joinpath("proto").rglob("*.proto"), POM]
    return sorted(p for p in files if p.is_file())


def sources_digest() -> str:
    """sha256 over the plugin's sources (paths and contents): what a built jar is stamped with."""
    h = hashlib.sha256()
    for p in _plugin_sources():
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _valid_jar(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            return "io/dollymp/yarn/scheduler/DollyMPScheduler.class" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


@dataclass(frozen=True)
class PluginJar:
    path: Path
    origin: str  # "env", "yarn-plugin/target" or "private build"


def plugin_jar(progress: Progress = lambda _m: None) -> PluginJar:
    """The shaded plugin jar (see the module docstring for where it comes from)."""
    env = os.environ.get("DOLLYMP_PLUGIN_JAR")
    if env:
        if not _valid_jar(Path(env)):
            raise BuildError(f"DOLLYMP_PLUGIN_JAR={env}: not a plugin jar (no DollyMPScheduler.class)")
        return PluginJar(Path(env).resolve(), "env")
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    copy = out / SHADED_NAME
    stamp = out / (SHADED_NAME + ".sources-sha256")
    digest = sources_digest()
    if copy.exists() and stamp.exists() and stamp.read_text().strip() == digest and _valid_jar(copy):
        return PluginJar(copy, "cached copy")
    lead = PLUGIN_DIR / "target" / SHADED_NAME
    newest = max(p.stat().st_mtime for p in _plugin_sources())
    if lead.exists() and lead.stat().st_mtime >= newest:
        tmp = copy.with_suffix(".partial")
        shutil.copy2(lead, tmp)
        if _valid_jar(tmp):
            tmp.replace(copy)
            stamp.write_text(digest + "\n")
            return PluginJar(copy, "yarn-plugin/target")
        tmp.unlink(missing_ok=True)
    progress("building the plugin jar (mvn package in build/deploy/plugin-src; about a minute)")
    src = out / "plugin-src"
    shutil.rmtree(src / "src", ignore_errors=True)
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy2(POM, src / "pom.xml")
    shutil.copytree(PLUGIN_DIR / "src" / "main", src / "src" / "main")
    _run(
        ["mvn", "-B", "-q", "-f", str(src / "pom.xml"), "-DskipTests", f"-Ddollymp.root={ROOT}", "package"],
        "building the plugin jar",
    )
    built = src / "target" / SHADED_NAME
    if not _valid_jar(built):
        raise BuildError(f"mvn package produced no valid {built}")
    shutil.copy2(built, copy)
    stamp.write_text(digest + "\n")
    return PluginJar(copy, "private build")
