"""The bounds on everything a caller can make the service hold or compute: one validated object.

Every input that arrives (a Sync batch, an AM report, an HTTP request) is checked against these before
anything is allocated in proportion to a number in it; a refusal names the field and the limit
(`Refusal`). Defaults are in `DEFAULTS` and in the operator's guide (`limits.*` configuration keys).

Not refused but bounded: a YARN ask's container count. It arrives through the ordinary AM-RM protocol,
and refusing the batch that carries it would end the ResourceManager's one Sync stream (and the next
resync would carry it again), so the core is handed at most `containers_per_ask` containers of an ask,
and no more than `ASK_WAVES` times what the cluster's capacity holds (`ask_bound`); the rest wait for a
later round. The waves keep a large job's remaining volume, which orders jobs (DollyMP Algorithm 1), as
it is for any job of up to `ASK_WAVES` cluster-fulls of one ask.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any


class Refusal(ValueError):
    """An input over a limit; `field` names what was counted, `limit` the bound and its key."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Limits:
    containers_per_ask: int = 100_000  # containers of one ask given to the core per round
    tasks_per_phase: int = 100_000  # JobProfile phases[].tasks
    phases_per_job: int = 1_000  # JobProfile phases
    max_duration_s: float = 31_536_000.0  # an attempt's duration_s (one year)
    attempts_per_app: int = 20_000  # attempts kept per application (the oldest finished ones go first)
    attempts_per_report: int = 10_000  # AttemptReports.attempts in one call
    map_reads_per_report: int = 100_000  # AttemptReports.attempts[].map_reads in one call, all attempts
    sessions: int = 64  # live registered sessions
    sessions_per_caller: int = 8  # live sessions one caller registered (service/rmproxy/callers.py)
    session_idle_s: float = 600.0  # a session without a batch or a stream for this long is reaped
    streams_per_peer: int = 4  # Sync streams open from one client connection
    stream_reserve: int = 4  # gRPC workers never taken by Sync streams (Register, AM calls, health)
    sync_idle_s: float = 60.0  # a Sync stream with no batch for this long is closed
    http_body_bytes: int = 1 << 20  # an HTTP request body
    json_depth: int = 32  # nesting of a JSON request body
    http_header_bytes: int = 64 * 1024  # an HTTP request line and headers together (431 past it)
    log_wait_s: float = 1.0  # a round's placements wait this long for the decision log before its plan

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"limits.{f.name}: must be a number, got {v!r}")
            if not math.isfinite(v) or v <= 0:
                raise ValueError(f"limits.{f.name}: must be finite and > 0, got {v!r}")
            if f.type == "int" and not isinstance(v, int):
                raise ValueError(f"limits.{f.name}: must be an integer, got {v!r}")

    @classmethod
    def from_config(cls, cfg: Any) -> Limits:
        return cls(**{f.name: cfg[f"limits.{f.name}"] for f in fields(cls)})

    def max_streams(self, workers: int) -> int:
        """Sync streams open at once: every gRPC worker but the reserve (each stream holds one); at most
        half the workers are reserved."""
        return max(1, workers - min(self.stream_reserve, workers // 2))


DEFAULTS = Limits()


def at_most(value: float, limit: float, field: str, key: str) -> None:
    """Refuse `value` above `limit`, naming the field and the configuration key of the limit."""
    if value > limit:
        raise Refusal(field, f"{value} is above the limit {limit} ({key})")


ASK_WAVES = 64  # an ask's containers handed to a round: at most this many cluster-fulls


def ask_bound(demand: Sequence[float], total: Sequence[float], hard_cap: int) -> int:
    """`ASK_WAVES` times the containers of size `demand` the cluster's total capacity `total` (same
    dimensions) holds, at most `hard_cap`: the most of an ask a round sees (a zero-size demand is bounded
    by the cap alone). At least 1: an ask the cluster cannot hold still reaches the core, which defers it
    with its reason."""
    bound = hard_cap
    for need, have in zip(demand, total, strict=True):
        if need > 0:
            bound = min(bound, ASK_WAVES * int(have // need))
    return max(1, bound)
