"""Workloads of the live-mechanism simulator: a small YARN cluster and jobs of phases (map, reduce), each
task's copies with run times drawn by common random numbers (sim/straggler.py `copy_unit`), so every
yield model sees the same run time for the same copy of the same task."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.deploy.draws import attempt_ms
from pyscheduler.sim.live.progress import ProgressModel
from pyscheduler.sim.straggler import StragglerModel, StragglerSpec, copy_unit

DRAWS = ("crn", "bench", "model")
EXACT = ProgressModel()


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    phase_id: str
    tasks: int
    base_s: float  # a task's run time without slowdown (its work, after the container's start-up)
    priority: int  # the YARN priority the AM asks this phase's containers at
    parents: tuple[str, ...] = ()
    mem_mb: int = 1024
    vcores: int = 1
    # Each task's own base time (a trace's tasks, sim/runner.py `draw_bases`), in place of `base_s`
    # (with `Workload.draws` "model")
    task_base_s: tuple[float, ...] = ()
    read_s: float = 0.0  # a copy's shuffle read after its work (read_mb / bandwidth), seconds


@dataclass(frozen=True, slots=True)
class NodeKind:
    """One node of a cluster whose nodes differ (a trace's cluster JSON): its capacity and speed (a
    copy's work runs base / speed)."""

    mem_mb: int
    vcores: int
    speed: float = 1.0


@dataclass(frozen=True, slots=True)
class JobSpec:
    n: int  # the application's sequence number (application_<ts>_<n>)
    name: str
    submit_s: float
    phases: tuple[PhaseSpec, ...]


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    seed: int
    jobs: tuple[JobSpec, ...]
    nodes: int = 4
    node_mem_mb: int = 8192
    node_vcores: int = 4
    startup_s: float = 2.0  # a container's start-up (JVM, localisation) before the task's work begins
    alpha: float = 2.0  # Pareto tail index of a copy's slowdown (DollyMP Eq. 2), xm = 1
    cap: float = 8.0  # at most this slowdown (a bounded Pareto)
    # "crn": each copy's draw from `copy_unit`; "bench": the cluster benchmark's StragglerJob draws
    # (deploy/draws.py: by job name, phase ("m", "r"), task and attempt number, with `alpha` and `cap`)
    draws: str = "crn"
    # The AM's own container (YARN runs each application's AM in one, asked at priority 0 before any
    # task): its memory (0: an unmanaged AM outside the cluster, taking no container) and how long the AM
    # takes from its container's start to its first asks (its JVM and job set-up).
    am_mem_mb: int = 0
    am_startup_s: float = 0.0
    # The cores the cluster's containers start on (0: start-ups do not contend, each takes its flat time).
    # With cores, a container's start-up (startup_s, or am_startup_s for an AM) is that many CPU-seconds,
    # shared with every container starting at the same time (processor sharing): the benchmark's 16-32
    # JVMs start on the machine's 2 cores.
    host_cores: float = 0.0
    # Wall time of every start-up (a task's or an AM's) that takes no shared CPU: the NodeManager's launch,
    # the JVM's exec and the task's first call to its AM. With host_cores it comes before the start-up's
    # CPU-seconds; without, it adds to the flat time.
    startup_fixed_s: float = 0.0
    # What an AM sees of its attempts' progress (progress.py): "exact" by default
    progress: ProgressModel = EXACT
    # The AM helper's dollymp.am.clone.after-start-ms in seconds: a task's clones wait until one of its
    # copies reported progress or its first copy was launched this long ago (0: no wait)
    clone_after_start_s: float = 0.0
    # Nodes one by one (a trace's cluster, sim/live/fromtrace.py), in place of `nodes` x (node_mem_mb,
    # node_vcores) at speed 1
    node_kinds: tuple[NodeKind, ...] = ()
    # With draws "model": the trace engine's straggler model (sim/straggler.py), whose draws for the
    # same (job index, phase, task, n-th copy) and seed are the ones `dollymp simulate` draws
    straggler: StragglerSpec | None = None
    _model: StragglerModel | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.draws == "model":
            if self.straggler is None:
                raise ValueError("Workload.straggler: draws 'model' needs a straggler model")
            object.__setattr__(self, "_model", StragglerModel(self.straggler, self.seed))
        if self.draws not in DRAWS:
            raise ValueError(f"Workload.draws: {self.draws!r} is not one of {', '.join(DRAWS)}")
        if self.am_mem_mb < 0 or self.am_mem_mb > self.node_mem_mb:
            raise ValueError(f"Workload.am_mem_mb: {self.am_mem_mb} outside [0, {self.node_mem_mb}]")
        if self.am_startup_s < 0:
            raise ValueError(f"Workload.am_startup_s: {self.am_startup_s} below 0")
        if not 0 <= self.host_cores <= 4096:
            raise ValueError(f"Workload.host_cores: {self.host_cores} outside [0, 4096]")
        for name in ("startup_s", "startup_fixed_s", "clone_after_start_s"):
            if not 0 <= getattr(self, name) <= 3600:
                raise ValueError(f"Workload.{name}: {getattr(self, name)} outside [0, 3600]")

    @property
    def node_count(self) -> int:
        return len(self.node_kinds) if self.node_kinds else self.nodes

    def capacity(self, node: int) -> tuple[int, int]:
        """Node `node`'s (memory MB, vcores)."""
        if self.node_kinds:
            k = self.node_kinds[node]
            return k.mem_mb, k.vcores
        return self.node_mem_mb, self.node_vcores

    def speed(self, node: int) -> float:
        return self.node_kinds[node].speed if self.node_kinds else 1.0

    def run_s(
        self, job: int, phase: int, task: int, nth: int, is_clone: bool = False, node: int = 0
    ) -> float:
        """The work of copy `nth` (0: the original) of a task: base time x Pareto slowdown, the copy's own
        draw, the same whatever order copies start in; with draws "model", the trace engine's run time of
        that copy on node `node` (base x slowdown / speed, sim/starts.py), then its shuffle read."""
        spec = self.jobs[job].phases[phase]
        if self._model is not None:
            bases = spec.task_base_s
            run = self._model.copy_time(bases[task], bases, is_clone, (job, phase, task, nth))
            return float(run / self.speed(node) + spec.read_s)
        if self.draws == "bench":  # copy nth is the task's attempt nth, as the AM helper numbers them
            kind = "m" if phase == 0 else "r"
            base_ms = round(spec.base_s * 1000.0)
            key = f"{kind}{task}.{nth}"
            return attempt_ms(self.jobs[job].name, key, base_ms, self.alpha, self.cap, self.seed) / 1000.0
        u = copy_unit(self.seed, self.jobs[job].n, phase, task, nth)
        slowdown = min(self.cap, (1.0 - u) ** (-1.0 / self.alpha))
        return float(spec.base_s * slowdown)


def _map_reduce(
    n: int, submit_s: float, maps: int, reduces: int, map_s: float, reduce_s: float, name: str = ""
) -> JobSpec:
    return JobSpec(
        n,
        name or f"live-job-{n}",
        submit_s,
        (
            PhaseSpec("map", maps, map_s, 20),
            PhaseSpec("reduce", reduces, reduce_s, 10, ("map",)),
        ),
    )


def small_mapreduce(seed: int, jobs: int = 4, nodes: int = 4) -> Workload:
    """`jobs` MapReduce jobs of 4-8 maps and 1-3 reduces, one every 5 s, on `nodes` nodes of 4 vcores."""
    rng = random.Random(seed)
    out = tuple(
        _map_reduce(
            i + 1,
            5.0 * i,
            rng.randint(4, 8),
            rng.randint(1, 3),
            round(rng.uniform(8.0, 16.0), 1),
            round(rng.uniform(6.0, 12.0), 1),
        )
        for i in range(jobs)
    )
    return Workload("small-mapreduce", seed, out, nodes=nodes)


def mixed_sizes(seed: int, jobs: int = 8, nodes: int = 6) -> Workload:
    """A heavier mix: jobs of 2 to 24 maps (log-uniform) and reduces in proportion, arrivals Poisson at one
    every 8 s on average, on `nodes` nodes of 4 vcores: small jobs queue behind large ones."""
    rng = random.Random(seed ^ 0x5EED)
    t = 0.0
    out = []
    for i in range(jobs):
        maps = max(2, round(math.exp(rng.uniform(math.log(2), math.log(24)))))
        out.append(
            _map_reduce(
                i + 1,
                round(t, 1),
                maps,
                max(1, maps // 6),
                round(rng.uniform(6.0, 20.0), 1),
                round(rng.uniform(6.0, 15.0), 1),
            )
        )
        t += rng.expovariate(1.0 / 8.0)
    return Workload("mixed-sizes", seed, tuple(out), nodes=nodes)


# The benchmark's container start-ups, measured on its 2-core machine with the class-data archive.
# A map copy's start-up (launch to finish, less the sleep StragglerJob drew for it) was about 10 s when
# at most 6 containers launched within 15 s of it and 16-19 s with 7-18, so most of it is a wait that
# takes no shared CPU (the NodeManager's launch, the JVM's exec, the task's first call to its AM) and a
# little CPU shared with the containers starting beside it; a task JVM uses about 1-2 CPU-seconds.
# Processor sharing of 5 CPU-seconds alone (no fixed part) put the same copies at 12, 27 and 44 s, so it
# charged every extra copy started beside others (launch clones) far more than the cluster does.
BENCH_STARTUP_FIXED_S = 6.0
BENCH_STARTUP_CPU_S = 1.5
# From an AM container's start to its first task asks on the benchmark's idle cluster: about 5-8 s in the
# decision log (placement am_container, then the job's first best_fit placement): the fixed wait, then
# AM_STARTUP_S of CPU.
AM_STARTUP_S = 1.0


def bench_mix(name: str, seed: int) -> Workload:
    """The cluster benchmark's job mix `name` ("light" or "loaded", deploy/benchmix.py): its jobs (by their
    names), arrivals, map base time (reduces half) and containers per node, on its 4 NodeManagers; each
    attempt's run time is the one the benchmark's StragglerJob draws for it at `seed` (deploy/draws.py,
    with the benchmark's default shape and cap), start-ups as measured there (BENCH_STARTUP_FIXED_S, then
    BENCH_STARTUP_CPU_S of CPU, shared with --host-cores), progress as its tasks report it (progress.py's
    "hadoop": StragglerJob's steps, Hadoop's reduce score and report interval). Each job's AM takes one
    container of a task's size, as the benchmark's MapReduce AMs do (512 MB, a container slot), and asks
    for its tasks its start-up (the fixed wait, then AM_STARTUP_S) after its container starts."""
    from pyscheduler.deploy import benchmix as bench

    base_s = bench.BASE_MS[name] / 1000.0
    jobs = tuple(
        _map_reduce(i + 1, j.delay_s, j.maps, j.reduces, base_s, base_s / 2.0, j.name)
        for i, j in enumerate(bench.mix(name))
    )
    vcores = bench.NM_VCORES[name]
    return Workload(
        name,
        seed,
        jobs,
        nodes=4,
        node_mem_mb=vcores * 1024,
        node_vcores=vcores,
        startup_s=BENCH_STARTUP_CPU_S,
        startup_fixed_s=BENCH_STARTUP_FIXED_S,
        alpha=bench.STRAGGLER_SHAPE,
        cap=bench.STRAGGLER_CAP,
        draws="bench",
        am_mem_mb=1024,
        am_startup_s=AM_STARTUP_S,
        progress=ProgressModel.named("hadoop"),
    )


def light(seed: int) -> Workload:
    return bench_mix("light", seed)


def loaded(seed: int) -> Workload:
    return bench_mix("loaded", seed)


# ../shared/traces beside the repository (as the simulator's tests find them)
TRACES = Path(__file__).resolve().parents[3].parent / "shared" / "traces"
FB2010 = "swim_facebook/FB-2010_samples_24_times_1hr_0.tsv"


def swim_fb2010(seed: int, jobs: int = 16, max_tasks: int = 24, traces: Path = TRACES) -> Workload:
    """The first `jobs` jobs of SWIM's Facebook 2010 sample (sim/loaders/swim.py's derivation: tasks and
    mean task times from the bytes), at the trace's arrivals, each phase cut to `max_tasks` tasks, on 6
    nodes of 4 vcores (its two large jobs overfill the cluster while small ones keep arriving); 1 GB and 1
    vcore per task."""
    from pyscheduler.sim.loaders import load_workload

    specs, _ = load_workload(traces / FB2010, "swim", limit=jobs)
    t0 = specs[0].arrival
    out = []
    for i, j in enumerate(specs):
        phases = tuple(
            PhaseSpec(
                ph.id,
                min(max_tasks, ph.tasks),
                round(ph.mean, 1),
                20 if k == 0 else 10,
                tuple(ph.parents),
            )
            for k, ph in enumerate(j.phases)
        )
        out.append(JobSpec(i + 1, f"fb2010-{j.id}", round(j.arrival - t0, 1), phases))
    return Workload("swim-fb2010", seed, tuple(out), nodes=6)


WORKLOADS = {
    "small-mapreduce": small_mapreduce,
    "mixed-sizes": mixed_sizes,
    "light": light,
    "loaded": loaded,
    "swim-fb2010": swim_fb2010,
}
