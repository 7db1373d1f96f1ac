"""Reduce copies' reads of map output under delay assignment, as the AM helper reports them, logged as
`map_read` decisions.

Delay assignment (Dolly, paper 001, Section 4.4; DollyMP, paper 000, Section 5.2): reduce copy k reads
copy k of each map when that copy finishes within ω, else the first finished copy. The choice is made in
the reduce copy's JVM; the AM reads it and sends it on the reduce attempt's next report
(`AttemptReport.map_reads`). Each read is logged once per (reduce attempt, map task), with reason
`own_copy` or `first_copy`; the reduce copy's own words ("own copy 1", "omega elapsed", "own copy lost",
"fewer upstream copies than downstream clones", "no reduce clones") are in the inputs and the detail.
The operator's page (pyscheduler.api.ui) shows them against the reduce phase.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.service.state.outcomes import about_attempt
from pyscheduler.wire import pb

_REASON = {pb.MAP_READ_OWN_COPY: "own_copy", pb.MAP_READ_FIRST_COPY: "first_copy"}


def read_records(
    app_id: str, attempts: Iterable[Any], seen: dict[str, set[str]], now: float | None = None
) -> list[Decision]:
    """The `map_read` decisions of a report's attempts; `seen` (reduce attempt id -> map task ids already
    logged) is updated, so a read the AM sends again (its call timed out after the service had it, or
    the service forgot the job and the AM sent every report again) is logged once."""
    wall = time.time() if now is None else now
    out: list[Decision] = []
    for a in attempts:
        for m in a.map_reads:
            logged = seen.setdefault(a.attempt_id, set())
            if m.map_task_id in logged:
                continue
            logged.add(m.map_task_id)
            reason = _REASON[m.kind]
            copy = "clone" if a.is_clone else "original"
            detail = (
                f"{a.phase_id} {copy} {a.attempt_id} read {m.map_attempt_id} "
                f"({m.reason or reason.replace('_', ' ')}) after waiting {m.waited_s:.1f} s"
            )
            out.append(
                about_attempt(
                    wall,
                    DecisionKind.MAP_READ,
                    reason,
                    app_id,
                    a,
                    detail,
                    {
                        "attempt_id": a.attempt_id,
                        "phase_id": a.phase_id,
                        "is_clone": bool(a.is_clone),
                        "map_task_id": m.map_task_id,
                        "map_attempt_id": m.map_attempt_id,
                        "kind": pb.MapReadKind.Name(m.kind),
                        "waited_s": round(float(m.waited_s), 3),
                        "why": m.reason,
                        "time_ms": int(m.time_ms),
                    },
                )
            )
    return out
