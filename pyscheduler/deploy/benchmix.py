"""The cluster benchmark's job mixes, its cluster's sizes and the service's policy for it
(pyscheduler/deploy/bench_cluster.py runs them)."""

from __future__ import annotations

from dataclasses import dataclass

from pyscheduler import config

# A container's memory as the RM rounds it (tasks and AMs alike), so that a NodeManager with --nm-vcores
# vcores is given the memory for as many containers: vcores, not memory, set a node's container count.
CONTAINER_MB = 512


@dataclass(frozen=True)
class MixJob:
    name: str
    maps: int
    reduces: int
    delay_s: float


# The service's policy for the bench: `default`, the production configuration that `dollymp serve` runs
# with no flags (pyscheduler/policies/production.py); `--policy dollymp` runs the paper's DollyMP instead.
BENCH_POLICY = "default"
BENCH_POLICY_OPTIONS = "{}"  # the policy's own configuration

# The job mixes. Every job has one reduce; sizes follow the papers' small-job-dominated mixes.
# "light" (the default): 8 small jobs `--gap-s` apart on an otherwise idle cluster, where only straggler
# handling can differ. "loaded" is the papers' high-load regime (DollyMP Section 6, Fig. 10 at high load;
# SREW+C Section 5): one large job arrives first and holds more map tasks than the cluster has containers,
# then small jobs keep arriving while its waves run, so the order in which jobs get containers matters as
# well as the stragglers.
LIGHT_MAPS = (2, 4, 3, 6, 2, 4, 3, 2)
DEFAULT_GAP_S = 40.0
LOADED_JOBS = ((30, 0.0), (2, 10.0), (3, 20.0), (2, 30.0), (3, 40.0), (2, 50.0), (2, 60.0))
MIXES = ("loaded", "light")
# Each attempt sleeps base x a Pareto(STRAGGLER_SHAPE) factor capped at STRAGGLER_CAP (StragglerJob;
# deploy/draws.py draws the same numbers, and the live simulator's bench mixes use them).
STRAGGLER_SHAPE = 1.5
STRAGGLER_CAP = 20.0
# Map base duration per mix, ms (reduces: half). The loaded mix's tasks are longer so that containers,
# not the 2 shared cores' JVM start-ups, are what jobs wait for (measured with 6 s maps and a 40-map
# job: load average 21-28, every job CPU-bound under both schedulers). The light mix's 40 s maps (not 6 s)
# keep a task's ~15 s JVM start-up on this machine (16 containers on 2 cores) from being
# most of its run, as it is not on a cluster whose containers have their own cores; with 6 s maps the
# straggler-free floor was about Capacity's own flowtime, so no straggler handling could show.
BASE_MS = {"loaded": 20000, "light": 40000}
# Containers per NodeManager (one per vcore) per mix. The light mix's cluster has room for every job's
# copies (4 x 8 = 32 containers; 2-4 jobs of 2-6 maps run at a time): the papers' clones use capacity
# the originals leave idle (Dolly Section 2, DollyMP Algorithm 2); on 16 containers clones and later
# jobs' originals took turns at the same containers (20-31 clones a run yielded theirs, each a task JVM
# started for nothing). The loaded mix's large job still overfills its cluster.
NM_VCORES = {"loaded": 4, "light": 8}


def mix(name: str = "light", gap_s: float = DEFAULT_GAP_S) -> tuple[MixJob, ...]:
    """The jobs of mix `name` with their arrival delays (`gap_s` spaces the "light" mix only)."""
    if name == "light":
        return tuple(MixJob(f"straggler-{i}", maps, 1, gap_s * i) for i, maps in enumerate(LIGHT_MAPS))
    if name == "loaded":
        return tuple(MixJob(f"straggler-{i}", maps, 1, at) for i, (maps, at) in enumerate(LOADED_JOBS))
    raise ValueError(f"--mix: unknown mix {name!r} (known: {', '.join(MIXES)})")


MIX = mix()


def service_env(text: str | None) -> dict[str, str]:
    """`--service`'s keys as the service's environment variables (DOLLYMP_<SECTION>_<NAME>), each checked
    as `dollymp serve` checks it; ValueError names the key and its limit."""
    if not text:
        return {}
    keys = config.json_object("--service", text)
    try:
        config.load(None, env={}, overrides=keys)
    except config.ConfigError as exc:
        raise ValueError(f"--service: {exc}") from None
    text_of = {True: "true", False: "false"}
    return {
        "DOLLYMP_" + k.upper().replace(".", "_"): text_of[v] if isinstance(v, bool) else str(v)
        for k, v in keys.items()
    }
