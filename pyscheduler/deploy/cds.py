"""A class-data-sharing archive for the task and AM JVMs of a local cluster (the cluster benchmark).

On the 2-core bench machine a container's JVM start-up is CPU: measured on a 2-NodeManager cluster
(6 StragglerJob maps that sleep), a task JVM used 1.37-1.61 CPU-s, 0.90-1.02 CPU-s with this archive.
When a job arrives its copies start together, so that CPU is what each extra copy costs the others:
a reduce's JVM has taken 23 s from its container's start to its first log line while another
job's 18 copies started. A real cluster's containers have cores of their own; this brings the bench
closer to that, for both schedulers alike (both halves' jobs get the same options).

How: one warm-up job (1 map, 1 reduce, an AM) writes the classes its JVMs load
(``-XX:DumpLoadedClassList``), then ``java -Xshare:dump`` archives them (JDK 17 application CDS). The
JVMs use it through ``-XX:SharedArchiveFile`` with a fixed ``-cp``: the archive is only valid for a
class path that starts with the one it was dumped with, and a container's own class path starts with
its working directory, different for every container. The fixed class path is the cluster's (the
plugin jar, the Hadoop jars), then the cluster's configuration directory, which may differ between
the clusters that share the archive because it comes last. A JVM that cannot map the archive (a
changed jar) starts without it (``-Xshare:auto``, the default): slower, not wrong.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

KINDS = ("am", "map", "reduce")


@dataclass(frozen=True)
class Archive:
    """A dumped archive and the class path (jars only) it was dumped with."""

    path: Path
    jars: tuple[str, ...]

    def jvm_opts(self, conf_dir: Path) -> str:
        """JVM options that run a container on the archive's class path, `conf_dir` last."""
        return f"-cp {':'.join([*self.jars, str(conf_dir)])} -XX:SharedArchiveFile={self.path}"


def list_opts(jars: Sequence[str], conf_dir: Path, out_dir: Path) -> dict[str, str]:
    """JVM options, per kind of JVM ("am", "map", "reduce"), that write its loaded classes to out_dir, each
    JVM to a list of its own, `<kind>.pid<pid>.classlist` (the JVM expands %p): copies of one task (clones,
    speculative attempts) run at once, and JVMs writing one file overwrite each other's lines."""
    cp = ":".join([*jars, str(conf_dir)])
    return {k: f"-cp {cp} -XX:DumpLoadedClassList={out_dir / f'{k}.%p.classlist'}" for k in KINDS}


def lists_of(out_dir: Path, kind: str) -> list[Path]:
    """The class lists that JVMs of `kind` started with `list_opts(..., out_dir)` wrote."""
    return sorted(out_dir.glob(f"{kind}.pid*.classlist"))


def merge_lists(lists: Sequence[Path], out: Path) -> int:
    """Write the lines of `lists` to `out` once each, in order of first appearance; returns the count. A
    list's last line without its newline is left out: its JVM was killed while writing it (a copy that
    lost its task), and `java -Xshare:dump` refuses a cut line."""
    seen: dict[str, None] = {}
    for f in lists:
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            lines.pop()
        for line in lines:
            if line and not line.startswith("#"):
                seen.setdefault(line, None)
    if not seen:
        raise ValueError(f"no classes in {', '.join(str(f) for f in lists)}")
    out.write_text("\n".join(seen) + "\n", encoding="utf-8")
    return len(seen)


def dump(
    java: str, jars: Sequence[str], lists: Sequence[Path], out: Path, log: Callable[[str], None]
) -> Archive:
    """Archive the classes of `lists` (``java -Xshare:dump``) for the class path `jars`."""
    merged = lists[0].with_name("merged.classlist")
    n = merge_lists(lists, merged)
    argv = [java, "-Xshare:dump", f"-XX:SharedClassListFile={merged}", f"-XX:SharedArchiveFile={out}"]
    argv += ["-cp", ":".join(jars)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"java -Xshare:dump failed ({proc.returncode}): {' | '.join(tail)}")
    log(f"class-data archive {out} ({n} classes, {out.stat().st_size // 2**20} MiB)")
    return Archive(out, tuple(jars))
