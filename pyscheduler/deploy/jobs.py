"""Submitting Hadoop's own example jobs to a :class:`~pyscheduler.deploy.localcluster.LocalCluster`.

Each job client is a separate JVM (``ExampleDriver wordcount`` from hadoop-mapreduce-examples, or
``org.apache.hadoop.mapreduce.SleepJob`` from the jobclient tests jar) in its own process group; its
application id comes from the client's "Submitted application" log line and its final state from the
RM REST API, so a result never depends on parsing the client's progress output.
"""

from __future__ import annotations

import abc
import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyscheduler.deploy.processes import Daemon
from pyscheduler.deploy.rest import get_json

WORDCOUNT_DRIVER = "org.apache.hadoop.examples.ExampleDriver"
SLEEP_JOB = "org.apache.hadoop.mapreduce.SleepJob"
_SUBMITTED = re.compile(r"Submitted application (application_\d+_\d+)")
VOCABULARY = ("straggler", "clone", "yarn", "dolly", "flowtime", "knapsack", "pareto", "reduce", "map")


@dataclass(frozen=True)
class JobResult:
    name: str
    app_id: str | None
    exit_code: int | None
    final_status: str  # the RM's finalStatus: SUCCEEDED, FAILED, KILLED, UNDEFINED, or "UNKNOWN"
    elapsed_s: float  # submission to client exit, wall clock
    rm_elapsed_s: float | None  # the RM's elapsedTime (application start to finish)
    log: Path
    # The RM's own accounting of the application's containers (AM included), every attempt, clones and
    # copies killed too: vcoreSeconds and memorySeconds (MB-seconds) of its application report.
    vcore_s: float | None = None
    memory_mb_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.final_status == "SUCCEEDED"


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else None


class JobHandle:
    """A running job client; :meth:`wait` returns its :class:`JobResult`."""

    def __init__(self, name: str, daemon: Daemon, rm_web_url: str) -> None:
        self.name = name
        self.proc = daemon.proc
        self.daemon = daemon
        self.rm_web_url = rm_web_url
        self.started = time.monotonic()
        self.finished: float | None = None

    def alive(self) -> bool:
        return self.daemon.alive()

    def app_id(self) -> str | None:
        m = _SUBMITTED.search(self.daemon.log_tail(400))
        return m.group(1) if m else None

    def rm_report(self) -> dict[str, Any] | None:
        app = self.app_id()
        if app is None:
            return None
        try:
            doc = get_json(f"{self.rm_web_url}/ws/v1/cluster/apps/{app}")
        except OSError:
            return None
        return (doc or {}).get("app")

    def wait(self, timeout_s: float = 600.0) -> JobResult:
        deadline = self.started + timeout_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.alive():
            self.kill()
            code: int | None = None
        else:
            code = self.proc.returncode
        if self.finished is None:
            self.finished = time.monotonic()
        report = self.rm_report() or {}
        rm_elapsed = report.get("elapsedTime")
        return JobResult(
            name=self.name,
            app_id=self.app_id(),
            exit_code=code,
            final_status=str(report.get("finalStatus", "UNKNOWN")),
            elapsed_s=self.finished - self.started,
            rm_elapsed_s=rm_elapsed / 1000.0 if isinstance(rm_elapsed, int) else None,
            log=self.daemon.log,
            vcore_s=_number(report.get("vcoreSeconds")),
            memory_mb_s=_number(report.get("memorySeconds")),
        )

    def kill(self) -> None:
        if self.alive():
            self.daemon.stop(grace_s=5.0)


class JobsMixin(abc.ABC):
    """Job helpers of LocalCluster (needs its java_argv, env, base, log_dir, rm_web_url, _jobs)."""

    base: Path
    log_dir: Path
    env: dict[str, str]
    _jobs: list[JobHandle]

    @property
    @abc.abstractmethod
    def rm_web_url(self) -> str: ...

    @abc.abstractmethod
    def java_argv(self, main: str, args: Sequence[str] = (), heap_mb: int | None = None) -> list[str]: ...

    def submit(self, name: str, main: str, args: Sequence[str], program: Sequence[str] = ()) -> JobHandle:
        """Start a job client JVM: ``main [program] -Dmapreduce.job.name=<name> args``.

        `program` is what a driver takes before the tool's own options (``wordcount`` for ExampleDriver).
        """
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        log = self.log_dir / "jobs" / f"{len(self._jobs):03d}-{safe}.log"
        argv = self.java_argv(main, [*program, f"-Dmapreduce.job.name={name}", *args], heap_mb=256)
        handle = JobHandle(
            name, Daemon(f"job {name}", argv, log, env=self.env, cwd=self.base), self.rm_web_url
        )
        self._jobs.append(handle)
        return handle

    def run_job(
        self, name: str, main: str, args: Sequence[str], program: Sequence[str] = (), timeout_s: float = 600.0
    ) -> JobResult:
        """:meth:`submit` and wait for the result."""
        return self.submit(name, main, args, program).wait(timeout_s)

    def submit_wordcount(
        self, input_dir: Path, output_dir: Path, reduces: int = 1, name: str = "", extra: Sequence[str] = ()
    ) -> JobHandle:
        """Hadoop's wordcount (``ExampleDriver wordcount``) over the text files in `input_dir`."""
        args = [*extra, f"-Dmapreduce.job.reduces={reduces}", str(input_dir), str(output_dir)]
        return self.submit(name or "wordcount", WORDCOUNT_DRIVER, args, program=["wordcount"])

    def submit_sleep(
        self, maps: int, reduces: int, map_ms: int, reduce_ms: int, name: str = "", extra: Sequence[str] = ()
    ) -> JobHandle:
        """Hadoop's SleepJob: `maps` map tasks of `map_ms` ms and `reduces` reduce tasks of `reduce_ms`."""
        args = [*extra, "-m", str(maps), "-r", str(reduces), "-mt", str(map_ms), "-rt", str(reduce_ms)]
        return self.submit(name or f"sleep-{maps}x{map_ms}ms", SLEEP_JOB, args)

    def run_sleep(self, maps: int, reduces: int, map_ms: int, reduce_ms: int, name: str = "") -> JobResult:
        return self.submit_sleep(maps, reduces, map_ms, reduce_ms, name).wait()

    def run_wordcount(self, input_dir: Path, output_dir: Path, reduces: int = 1, name: str = "") -> JobResult:
        return self.submit_wordcount(input_dir, output_dir, reduces, name).wait()


def write_text(directory: Path, files: int, words_per_file: int, seed: int = 7) -> Counter[str]:
    """Write `files` text files of random words into `directory`; returns the true count of each word."""
    rnd = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    for f in range(files):
        words = [rnd.choice(VOCABULARY) for _ in range(words_per_file)]
        counts.update(words)
        lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
        (directory / f"part-{f}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return counts


def read_counts(output_dir: Path) -> Counter[str]:
    """The word counts of a wordcount output directory (``word TAB count`` lines in part-r-*)."""
    counts: Counter[str] = Counter()
    parts = sorted(output_dir.glob("part-r-*"))
    if not parts:
        raise FileNotFoundError(f"no part-r-* files in {output_dir}")
    for part in parts:
        for line in part.read_text(encoding="utf-8").splitlines():
            word, _, n = line.partition("\t")
            counts[word] = int(n)
    return counts
