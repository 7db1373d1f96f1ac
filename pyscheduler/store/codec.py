"""Row encoding of a Decision: empty strings become NULL, inputs become compact JSON."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

from pyscheduler.objects.decision import Decision, DecisionKind

# Column order of a decision row (after `id`) as the store reads and writes it.
COLUMNS = ("time", "kind", "reason", "application_id", "job_id", "task_id", "node_id", "detail", "inputs")

Row = tuple[float, str, str, str | None, str | None, str | None, str | None, str | None, str | None]


def json_safe(value: Any) -> Any:
    """A JSON-encodable copy of `value`. Non-finite floats become the strings "nan", "inf", "-inf"
    (JSON has no such numbers); enums become their value; anything else unknown becomes str(value).
    The decision is stored rather than refused: a decision log must never drop a decision over its inputs.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, enum.Enum):
        return json_safe(value.value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)


def _opt(text: str) -> str | None:
    return text or None


def encode(decision: Decision) -> Row:
    inputs = (
        json.dumps(json_safe(decision.inputs), separators=(",", ":"), sort_keys=True, allow_nan=False)
        if decision.inputs
        else None
    )
    return (
        float(decision.time),
        str(decision.kind.value),
        decision.reason,
        _opt(decision.application_id),
        _opt(decision.job_id),
        _opt(decision.task_id),
        _opt(decision.node_id),
        _opt(decision.detail),
        inputs,
    )


def row_bytes(row: Row) -> int:
    """Logical size of a stored row: 8 bytes each for id and time plus the UTF-8 text of the other columns.
    Retention by size counts these bytes (identical on SQLite and PostgreSQL); see DecisionLog.prune."""
    return 16 + sum(len(v.encode("utf-8")) for v in row[1:] if isinstance(v, str))


def decode(row: tuple[Any, ...]) -> tuple[int, Decision]:
    """(id, Decision) from a row selected as `id, <COLUMNS>`."""
    ident, time_, kind, reason, app, job, task, node, detail, inputs = row
    return int(ident), Decision(
        time=float(time_),
        kind=DecisionKind(kind),
        reason=reason,
        application_id=app or "",
        job_id=job or "",
        task_id=task or "",
        node_id=node or "",
        detail=detail or "",
        inputs=json.loads(inputs) if inputs else {},
    )
