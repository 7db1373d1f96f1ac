"""The straggler workload's drawn run times, and what the best of a task's first copies would take.

`io.dollymp.yarn.workload.StragglerJob` sleeps base x Pareto(shape) capped, drawn per (job name, task,
attempt number) from a seeded `java.util.SplittableRandom`; so a job mix's draws are known before it runs.
This module draws the same numbers (the Java test `StragglerJobTest.pinnedDrawsMatchThePythonReplica`
and tests/deploy/test_draws.py pin the same values), so the bench can say how much of a run's flowtime the
draws decide, whatever the scheduler:

- `originals`: each phase's slowest task at its first attempt's draw, summed over the job's phases
  (maps, then the reduce): the straggling a scheduler without speculation or clones gets;
- `best_of(k)`: the same with every task at the least of its first k attempts' draws: what cloning every
  task k - 1 times at its start would get, with a container for every copy at once and no start-up.

`python -m pyscheduler.deploy.draws` prints both per job of the bench's light mix.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

_MASK = (1 << 64) - 1
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def java_string_hash(s: str) -> int:
    """`String.hashCode()`: s[0]*31^(n-1) + ... + s[n-1] in 32-bit two's complement (UTF-16 units)."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def first_double(seed: int) -> float:
    """The first `nextDouble()` of `new SplittableRandom(seed)`."""
    return (_mix64((seed + _GOLDEN_GAMMA) & _MASK) >> 11) * 2.0**-53


def pareto_factor(shape: float, cap: float, u: float) -> float:
    """StragglerJob.paretoFactor: (1 - u)^(-1/shape), capped."""
    return min(float((1.0 - u) ** (-1.0 / shape)), cap)


def java_round(x: float) -> int:
    """`Math.round(double)`: floor(x + 0.5)."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def attempt_ms(
    job: str, task_key: str, base_ms: int, shape: float = 1.5, cap: float = 20.0, seed: int = 1
) -> int:
    """StragglerJob.attemptMs on a node without slowdown: `task_key` is e.g. "m3.0" (map 3, attempt 0)."""
    s = (seed * 1_000_003 + java_string_hash(f"{job}/{task_key}")) & _MASK
    return java_round(base_ms * pareto_factor(shape, cap, first_double(s)))


@dataclass(frozen=True)
class JobDraws:
    name: str
    maps: int
    reduces: int
    map_base_ms: int
    reduce_base_ms: int
    shape: float = 1.5
    cap: float = 20.0
    seed: int = 1

    def task(self, kind: str, i: int, k: int) -> float:
        """The least of task (kind, i)'s first k attempts' draws, s."""
        base = self.map_base_ms if kind == "m" else self.reduce_base_ms
        return (
            min(
                attempt_ms(self.name, f"{kind}{i}.{a}", base, self.shape, self.cap, self.seed)
                for a in range(k)
            )
            / 1000.0
        )

    def best_of(self, k: int) -> float:
        """The job's phases' slowest tasks at the least of their first k draws, summed, s."""
        maps = max((self.task("m", i, k) for i in range(self.maps)), default=0.0)
        reduces = max((self.task("r", i, k) for i in range(self.reduces)), default=0.0)
        return maps + reduces

    def originals(self) -> float:
        return self.best_of(1)


def main(argv: Sequence[str] | None = None) -> int:
    from pyscheduler.deploy import bench_cluster as bc
    from pyscheduler.deploy import benchmix

    p = argparse.ArgumentParser(prog="draws", description=__doc__.splitlines()[0])
    bc.add_arguments(p)
    args = p.parse_args(argv)
    rows = [
        JobDraws(
            j.name,
            j.maps,
            j.reduces,
            bc.base_ms(args),
            bc.base_ms(args) // 2,
            args.shape,
            args.cap,
            args.seed,
        )
        for j in benchmix.mix(args.mix, args.gap_s)
    ]
    print(f"{'job':<14}{'originals s':>12}{'best of 2 s':>12}{'best of 3 s':>12}")
    cols = [[j.originals() for j in rows], [j.best_of(2) for j in rows], [j.best_of(3) for j in rows]]
    for j, a, b, c in zip(rows, *cols, strict=True):
        print(f"{j.name:<14}{a:>12.1f}{b:>12.1f}{c:>12.1f}")
    avg = [sum(c) / len(c) for c in cols]
    print(f"{'avg':<14}{avg[0]:>12.1f}{avg[1]:>12.1f}{avg[2]:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
