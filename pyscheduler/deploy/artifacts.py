"""The jars a local cluster runs from: Hadoop's Maven jars, the plugin jar, JDK 17 flags.

Everything is built under ``build/deploy/`` at the repository root (gitignored), never in
``yarn-plugin/target/``: ``make jar``/``make test`` use that folder concurrently, so it is only read
(a fresh shaded jar there is copied, never written). Outputs are immutable and named by the hash of
what they were built from, and builds take a file lock, so several processes (clusters, tests,
benchmarks) can share build/deploy/ at once.

- Hadoop's jars: ``mvn dependency:copy-dependencies -DincludeScope=test`` over ``yarn-plugin/pom.xml``
  into ``build/deploy/lib-<pom sha>`` (RM, NM, MapReduce, JobHistoryServer, the examples jar, the
  jobclient test jar with SleepJob).
- The plugin jar ``build/deploy/dollymp-yarn-plugin-<sources sha>.jar``: ``$DOLLYMP_PLUGIN_JAR`` if set;
  else the jar already there for the current sources (src/main, pom.xml, proto/); else a copy of
  ``yarn-plugin/target/*-shaded.jar`` when it is newer than every source; else a private build of a
  copy of ``yarn-plugin/``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import zipfile
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """One builder at a time across processes (several clusters, tests and benchmarks share build/)."""
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _complete_libs() -> list[Path]:
    return sorted(
        (d for d in build_dir().glob("lib-*") if (d / ".complete").exists()), key=lambda d: d.stat().st_mtime
    )


def hadoop_lib(progress: Progress = lambda _m: None) -> Path:
    """``build/deploy/lib-<pom sha>``: every jar of the pom's test scope, collected once per pom version.

    Each folder is written once (into a temporary name, then renamed) and never changed after, so a
    running cluster is never disturbed by another process collecting jars for a newer pom.
    """
    lib = build_dir() / f"lib-{_sha(POM)[:16]}"
    if (lib / ".complete").exists():
        return lib
    with _build_lock():
        if (lib / ".complete").exists():
            return lib
        progress("collecting Hadoop jars from Maven (first run only; ~150 MB into ~/.m2)")
        tmp = build_dir() / f".lib-partial-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = ["mvn", "-B", "-q", "-f", str(POM), "dependency:copy-dependencies", "-DincludeScope=test"]
        try:
            _run([*cmd, f"-DoutputDirectory={tmp}"], "collecting Hadoop jars")
        except BuildError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            older = _complete_libs()
            if not older:
                raise
            # The pom changed but cannot be resolved right now (offline, a half-edited pom): the jars
            # collected before still run a cluster of the same Hadoop version.
            progress(f"warning: using the jars collected before in {older[-1]}: {str(exc).splitlines()[0]}")
            return older[-1]
        (tmp / ".complete").write_text(POM.read_text(encoding="utf-8"))
        tmp.rename(lib)
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
    digest = sources_digest()
    # One immutable jar per source digest: a running cluster's jar is never rewritten.
    jar = out / f"dollymp-yarn-plugin-{digest[:16]}.jar"
    if _valid_jar(jar):
        return PluginJar(jar, "cached copy")
    with _build_lock():
        if _valid_jar(jar):
            return PluginJar(jar, "cached copy")
        tmp = out / f".plugin-partial-{os.getpid()}.jar"
        lead = PLUGIN_DIR / "target" / SHADED_NAME
        newest = max(p.stat().st_mtime for p in _plugin_sources())
        if lead.exists() and lead.stat().st_mtime >= newest:
            shutil.copyfile(lead, tmp)
            if _valid_jar(tmp):
                tmp.rename(jar)
                return PluginJar(jar, "yarn-plugin/target")
            tmp.unlink(missing_ok=True)
        progress("building the plugin jar (mvn package on a copy of yarn-plugin/; about a minute)")
        src = out / f".plugin-src-{os.getpid()}"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        try:
            shutil.copy2(POM, src / "pom.xml")
            shutil.copytree(PLUGIN_DIR / "src" / "main", src / "src" / "main")
            cmd = ["mvn", "-B", "-q", "-f", str(src / "pom.xml"), "-DskipTests", f"-Ddollymp.root={ROOT}"]
            _run([*cmd, "package"], "building the plugin jar")
            built = src / "target" / SHADED_NAME
            if not _valid_jar(built):
                raise BuildError(f"mvn package produced no valid {built}")
            shutil.copyfile(built, tmp)
            tmp.rename(jar)
        finally:
            shutil.rmtree(src, ignore_errors=True)
    return PluginJar(jar, "private build")
