"""Property test: any filter combination, paged through with any page size and order, returns exactly
what a plain Python filter over the appended decisions returns (real SQLite file per example)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import open_store

names = st.sampled_from(["", "a", "b", "c"])
decisions = st.builds(
    Decision,
    time=st.floats(min_value=-5, max_value=5, allow_nan=False),
    kind=st.sampled_from(list(DecisionKind)),
    reason=st.sampled_from(["best_fit", "infeasible"]),
    application_id=names,
    job_id=names,
    task_id=names,
    node_id=names,
    inputs=st.dictionaries(st.sampled_from(["x", "y"]), st.integers(-3, 3), max_size=2),
)
filters = st.fixed_dictionaries(
    {},
    optional={
        "application_id": names,
        "job_id": names,
        "task_id": names,
        "node_id": names,
        "kinds": st.lists(st.sampled_from(list(DecisionKind)), max_size=3),
        "since": st.floats(min_value=-6, max_value=6, allow_nan=False),
        "until": st.floats(min_value=-6, max_value=6, allow_nan=False),
    },
)


def _matches(d: Decision, f: dict[str, object]) -> bool:
    for key in ("application_id", "job_id", "task_id", "node_id"):
        if key in f and getattr(d, key) != f[key]:
            return False
    kinds = f.get("kinds")
    if kinds and d.kind not in kinds:  # type: ignore[operator]
        return False
    if "since" in f and not d.time >= f["since"]:  # type: ignore[operator]
        return False
    return not ("until" in f and not d.time < f["until"])  # type: ignore[operator]


@given(
    batches=st.lists(st.lists(decisions, min_size=1, max_size=8), min_size=1, max_size=5),
    f=filters,
    page_size=st.integers(1, 7),
    desc=st.booleans(),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_query_matches_a_plain_filter(
    batches: list[list[Decision]], f: dict[str, object], page_size: int, desc: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "p.db") as store:
        appended: list[tuple[int, Decision]] = []
        for batch in batches:
            appended.extend(zip(store.append(batch), batch, strict=True))
        expected = [(i, d) for i, d in appended if _matches(d, f)]
        if desc:
            expected.reverse()
        got: list[tuple[int, Decision]] = []
        cursor = None
        while True:
            page = store.query(cursor=cursor, limit=page_size, order="desc" if desc else "asc", **f)  # type: ignore[arg-type]
            assert len(page.items) <= page_size
            got.extend((s.id, s.decision) for s in page.items)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert got == expected
