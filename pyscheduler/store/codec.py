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


_PLAIN = frozenset({str, int, bool, float, type(None)})
_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True, allow_nan=False)


def _plain(value: Any) -> bool:
    """True when `json_safe` would return `value` as it is (up to tuples becoming lists): str keys and
    plain scalars all the way down (a non-finite float makes the encoder raise instead)."""
    kind = type(value)
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str or (type(v) not in _PLAIN and not _plain(v)):
                return False
        return True
    if kind is list or kind is tuple:
        return all(type(v) in _PLAIN or _plain(v) for v in value)
    return kind in _PLAIN


def inputs_json(inputs: dict[str, Any]) -> str:
    """The stored JSON text of a decision's inputs: `json_safe` applied, compact, keys sorted. Inputs
    that are JSON as they are (the usual case) are encoded without building the copy."""
    if _plain(inputs):
        try:
            return _ENCODER.encode(inputs)
        except ValueError:  # a NaN or infinity: json_safe spells it
            pass
    return _ENCODER.encode(json_safe(inputs))


def _opt(text: str) -> str | None:
    return text or None


def encode(decision: Decision) -> Row:
    inputs = inputs_json(decision.inputs) if decision.inputs else None
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


def rows_bytes(rows: list[Row]) -> int:
    """`row_bytes` summed over `rows` (one UTF-8 encoding for all: the encoding of a concatenation is
    the concatenation of the encodings)."""
    text = "".join([v for r in rows for v in r[1:] if isinstance(v, str)])
    return 16 * len(rows) + (len(text) if text.isascii() else len(text.encode("utf-8")))


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
