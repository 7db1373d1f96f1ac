"""The reproduction report's runs and scenarios (reproduce.py lists them; reproduce_doc writes them up):
a Run is one `dollymp simulate` invocation, a Scenario a claim checked on its runs' results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pyscheduler.sim.reproduce_checks import Check
from pyscheduler.sim.runner import Comparison

SYNTHETIC = "synthetic:master-worker"


@dataclass(slots=True)
class Run:
    """One `dollymp simulate` invocation."""

    label: str
    workload: str
    fmt: str
    cluster: str
    policies: list[str]
    load: float | None = None
    straggler: str = "empirical"
    seed: int = 1
    tick: float = 5.0
    shuffle: str = "delay"
    limit: int | None = None
    quick_limit: int | None = None
    load_by: str = "arrivals"
    every: int = 1  # keep every N-th job by arrival (the trace's whole window)
    cluster_scale: float | None = None  # multiply node counts (before --load)
    # the report's runs are the policy-only engine's (`--mechanism core`): the service's round is slower
    # by two orders of magnitude (sim/live/fromtrace.py)
    mechanism: str = "core"

    def command(self, quick: bool) -> str:
        if self.workload == SYNTHETIC:
            wl = "var/reproduction/master_worker.jsonl"
        elif self.fmt == "synthetic":
            wl = self.workload  # a generator spec (pyscheduler/sim/synthetic.py)
        else:
            wl = f"../shared/traces/{self.workload}"
        parts = [
            "dollymp simulate",
            f"--mechanism {self.mechanism}",
            f"--workload {wl}",
            f"--format {self.fmt}",
            f"--cluster pyscheduler/sim/clusters/{self.cluster}",
            f"--policies {_quoted(','.join(self.policies))}",
            f"--straggler {self.straggler}",
            f"--seed {self.seed}",
            f"--tick {self.tick:g}",
            f"--shuffle {self.shuffle}",
        ]
        if self.every > 1:
            parts.append(f"--every {self.every}")
        if self.cluster_scale is not None:
            parts.append(f"--cluster-scale {self.cluster_scale:g}")
        if self.load is not None:
            parts.append(f"--load {self.load:g}")
            if self.load_by != "arrivals":
                parts.append(f"--load-by {self.load_by}")
        limit = self.quick_limit if quick and self.quick_limit else self.limit
        if limit:
            parts.append(f"--limit {limit}")
        return " ".join(parts)


def _quoted(text: str) -> str:
    """Single-quote a shell word that holds parentheses or semicolons (policy options)."""
    return f"'{text}'" if any(ch in text for ch in "();") else text


@dataclass(slots=True)
class Scenario:
    key: str
    title: str
    claim: str
    runs: list[Run]
    summarize: Callable[[dict[str, Comparison]], list[Check]]
    discussion: str = ""
    results: dict[str, Comparison] = field(default_factory=dict)
    # a summary table in place of one table per run (scenarios with many runs: seeds x traces x models)
    table: Callable[[dict[str, Comparison]], list[str]] | None = None
