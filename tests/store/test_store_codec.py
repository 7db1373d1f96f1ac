"""The codec's fast paths store exactly what the plain encoding does: inputs JSON encoded without the
json_safe copy when they are JSON as they are, and row sizes summed with one UTF-8 encoding."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyscheduler.store import codec


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 2


def _reference(inputs: dict[str, Any]) -> str:
    """The encoding before the fast path: json_safe, then json.dumps."""
    return json.dumps(codec.json_safe(inputs), separators=(",", ":"), sort_keys=True, allow_nan=False)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from([Colour.RED, Level.HIGH, math.nan, -math.inf, frozenset({1})]),
)
_keys = st.one_of(st.text(max_size=6), st.integers(-20, 20), st.booleans(), st.none())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_keys, inner, max_size=4),
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=8), _values, min_size=1, max_size=6))
@settings(max_examples=300, deadline=None)
def test_inputs_json_equals_the_json_safe_encoding(inputs: dict[str, Any]) -> None:
    assert codec.inputs_json(inputs) == _reference(inputs)


def test_the_cases_json_alone_would_spell_differently_take_the_safe_path() -> None:
    for inputs in (
        {"by_node": {True: 1, None: 2}},  # json: "true"/"null"; json_safe: "True"/"None"
        {"by_rank": {10: "a", 2: "b"}},  # json sorts 2 < 10; json_safe sorts "10" < "2"
        {"speed": math.inf, "level": Level.HIGH, "colour": Colour.RED, "ids": {3, 1}},
    ):
        assert codec.inputs_json(inputs) == _reference(inputs)
    assert codec.inputs_json({"by_rank": {10: "a", 2: "b"}}) == '{"by_rank":{"10":"a","2":"b"}}'


@given(st.lists(st.tuples(st.text(max_size=10), st.one_of(st.none(), st.text(max_size=10))), max_size=20))
def test_rows_bytes_is_row_bytes_summed(texts: list[tuple[str, str | None]]) -> None:
    rows: list[codec.Row] = [(1.0, "placement", a, b, None, "", b, a, None) for a, b in texts]
    assert codec.rows_bytes(rows) == sum(codec.row_bytes(r) for r in rows)
