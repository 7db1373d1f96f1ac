"""What a live-mechanism run yields: every placement the service sent, container started, clone launched
and copy killed (who, why), and each job's flowtime. Two runs decided alike have equal records."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

EPOCH_S = 1_700_000_000.0  # simulated time 0 on the service's clock (epoch seconds)


@dataclass
class LiveRecord:
    # (time s, attempt id, priority, node, count, is clone, pb reason)
    placements: list[tuple[float, str, int, str, int, bool, int]] = field(default_factory=list)
    # (time s, container id, attempt id of the copy it runs, node, is clone)
    containers: list[tuple[float, str, str, str, bool]] = field(default_factory=list)
    clones: list[tuple[float, str, str, str]] = field(default_factory=list)  # (time, app, attempt, why)
    # (time s, app, attempt, container, who: "service" (a preemption in the plan) or "am", why)
    kills: list[tuple[float, str, str, str, str, str]] = field(default_factory=list)
    dropped: list[tuple[float, str, int]] = field(default_factory=list)  # (time, placement, outcome kind)
    flowtimes: dict[str, float] = field(default_factory=dict)  # application -> finish - submit, s
    container_s: dict[bool, float] = field(default_factory=lambda: {False: 0.0, True: 0.0})  # by is_clone
    # container-seconds by copy and end: "original won", "clone killed" (by its AM, its task won by another
    # copy), "clone preempted" (by the service's plan), ...
    held_s: dict[str, float] = field(default_factory=dict)
    # what a trace run's measures need (sim/live/fromtrace.py): every container a copy held (start s,
    # end s, vcores, memory MB) and dominant-share-seconds by whether the copy won its task
    spans: list[tuple[float, float, int, int]] = field(default_factory=list)
    share_s: dict[bool, float] = field(default_factory=dict)
    rounds: int = 0
    # rounds within the arrivals' span, and those of them after which an original waited for room
    # (cluster.py `an_original_waits`), when the run counts them (run.py LiveOptions.count_waits)
    span_rounds: int = 0
    wait_rounds: int = 0
    end_s: float = 0.0

    @staticmethod
    def epoch_ms(t: float) -> int:
        return round((EPOCH_S + t) * 1000.0)

    def clone(self, t: float, app: str, attempt: str, why: str) -> None:
        self.clones.append((t, app, attempt, why))

    def kill(self, t: float, app: str, attempt: str, container: str, who: str, why: str) -> None:
        self.kills.append((t, app, attempt, container, who, why))

    def finish(self, app: str, flowtime: float) -> None:
        self.flowtimes[app] = round(flowtime, 6)

    def key(self) -> tuple[object, ...]:
        """Everything decided, for comparing runs."""
        return (
            self.placements,
            self.containers,
            self.clones,
            self.kills,
            self.dropped,
            sorted(self.flowtimes.items()),
        )

    @property
    def mean_flowtime(self) -> float:
        return statistics.fmean(self.flowtimes.values()) if self.flowtimes else float("nan")

    @property
    def clone_share(self) -> float:
        """Clones' share of all container-seconds (start-up included)."""
        total = self.container_s[False] + self.container_s[True]
        return self.container_s[True] / total if total > 0 else 0.0

    @property
    def lost_share(self) -> float:
        """The share of all container-seconds held by copies that did not finish (whichever copy, clone or
        original, lost its task's race): what cloning spent beyond one copy per task."""
        total = self.container_s[False] + self.container_s[True]
        lost = sum(s for k, s in self.held_s.items() if not k.endswith(" won"))
        return lost / total if total > 0 else 0.0

    def held_share(self) -> dict[str, float]:
        """`held_s` as shares of all container-seconds."""
        total = self.container_s[False] + self.container_s[True]
        return {k: s / total for k, s in sorted(self.held_s.items())} if total > 0 else {}
