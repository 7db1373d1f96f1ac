"""The background writer and the statistics history, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
import statistics
import threading
import time

import pytest

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import BackgroundWriter, QueueFull, Retention, StoreError, codec, open_store
from pyscheduler.store.history import JobKey, merge_moments

WORDCOUNT, GREP, OTHER = (JobKey("root.prod", "alice", n) for n in ("wordcount", "grep", "other"))
J, ETL = JobKey("root.q", "u", "j"), JobKey("root.q", "u", "etl")


def _batch(n: int, start: int = 0) -> list[Decision]:
    return [Decision(time=float(start + i), kind=DecisionKind.KILL, reason="lost_race") for i in range(n)]


def test_writer_batches_and_flush_is_the_commit_point(store_url: str) -> None:
    committed: list[int] = []
    with open_store(store_url) as s:
        w = BackgroundWriter(s, max_batch=100, on_commit=lambda ids, ds: committed.extend(ids))
        for r in range(20):
            w.submit(_batch(37, start=r * 37))
        w.submit(_batch(1, start=999)[0])  # a single decision is accepted too
        last = w.flush()
        assert s.count() == 741 and w.depth == 0
        assert last == s.latest_id()
        assert committed == sorted(committed) and len(committed) == 741
        with s.db.read() as cur:  # batched: far fewer transactions than submits
            cur.execute("SELECT COUNT(*) FROM decision_commits")
            assert cur.fetchone()[0] < 21
        times = [x.decision.time for x in s.query(limit=1000).items]
        assert times == [float(i) for i in range(740)] + [999.0]  # submit order is kept
        w.close()
        with pytest.raises(StoreError, match="closed"):
            w.submit(_batch(1))


def test_full_queue_blocks_then_raises_and_recovers(store_url: str) -> None:
    with open_store(store_url) as s:
        w = BackgroundWriter(s, max_queue=50, max_batch=10)
        with s.db.write():  # hold the store's write lock: the writer thread stalls on its commit
            w.submit(_batch(10))
            time.sleep(0.2)  # the writer has taken those 10 and waits for the lock
            w.submit(_batch(50))
            started = time.monotonic()
            with pytest.raises(QueueFull, match="queue full"):
                w.submit(_batch(1), timeout=0.3)
            assert time.monotonic() - started >= 0.29
            with pytest.raises(StoreError, match="flush timed out with 60"):
                w.flush(timeout=0.2)
            assert w.depth == 60
        assert w.flush(timeout=30) == s.latest_id()
        assert s.count() == 60
        w.close()


def test_blocked_submitter_resumes_when_room_frees(store_url: str) -> None:
    with open_store(store_url) as s:
        w = BackgroundWriter(s, max_queue=20, max_batch=5)
        done = threading.Event()
        with s.db.write():
            w.submit(_batch(5))
            time.sleep(0.2)
            w.submit(_batch(20))

            def producer() -> None:
                w.submit(_batch(5), timeout=30)
                done.set()

            t = threading.Thread(target=producer)
            t.start()
            assert not done.wait(0.3)  # blocked while the queue is full
        assert done.wait(30)
        t.join()
        w.close()
        assert s.count() == 30


def test_writer_applies_retention(store_url: str) -> None:
    one_batch = sum(codec.row_bytes(codec.encode(d)) for d in _batch(10))
    with open_store(store_url) as s:
        w = BackgroundWriter(s, retention=Retention(max_bytes=one_batch, interval_s=0.05))
        w.submit(_batch(10))
        w.flush()
        w.submit(_batch(10, start=10))
        last = w.flush()
        deadline = time.monotonic() + 10
        while s.count() > 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        w.close()
        assert [x.id for x in s.query().items] == list(range(last - 9, last + 1))


# -- statistics history -----------------------------------------------------------------------------------
def test_history_moments_match_all_samples(store_url: str) -> None:
    runs = [[30.0, 31.5, 29.0], [45.0], [28.0, 33.3, 30.1, 60.2]]
    with open_store(store_url) as s:
        h = s.history
        for durations in runs:
            h.record(WORDCOUNT, "map", durations)
            h.record_run(WORDCOUNT)
        h.record(WORDCOUNT, "reduce", [12.0, 14.0])
        flat = [v for r in runs for v in r]
        m = h.moments(WORDCOUNT, "map")
        assert m is not None
        assert m.count == len(flat)
        assert m.mean == pytest.approx(statistics.fmean(flat), rel=1e-12)
        assert m.variance == pytest.approx(statistics.variance(flat), rel=1e-12)
        assert m.sd == pytest.approx(statistics.stdev(flat), rel=1e-12)
        assert (m.min, m.max) == (min(flat), max(flat))
        assert h.samples(WORDCOUNT, "map") == flat
        assert h.samples(WORDCOUNT, "map", limit=2) == flat[-2:]
        assert h.runs(WORDCOUNT) == 3 and h.runs(OTHER) == 0
        assert sorted(h.phases(WORDCOUNT)) == ["map", "reduce"]
        assert h.job_keys() == [WORDCOUNT]
        assert h.moments(WORDCOUNT, "sort") is None
        single = h.record(GREP, "map", [5.0])
        assert single is not None and single.variance == 0.0
        assert h.record(GREP, "map", []) == single


def test_history_keeps_only_recent_samples(store_url: str) -> None:
    with open_store(store_url) as s:
        s.history.max_samples = 10
        s.history.record(J, "p", [float(i) for i in range(8)])
        s.history.record(J, "p", [float(i) for i in range(8, 25)])
        assert s.history.samples(J, "p") == [float(i) for i in range(15, 25)]
        moments = s.history.moments(J, "p")
        assert moments is not None and moments.count == 25  # moments still cover everything


@pytest.mark.parametrize(
    ("durations", "bad"),
    [([1.0, math.nan], "durations[1]"), ([-1.0], "durations[0]"), ([1.0, 2.0, math.inf], "durations[2]")],
)
def test_history_refuses_bad_durations(store_url: str, durations: list[float], bad: str) -> None:
    with open_store(store_url) as s:
        with pytest.raises(ValueError, match=bad.replace("[", r"\[").replace("]", r"\]")):
            s.history.record(J, "p", durations)
        with pytest.raises(ValueError, match="job_name"):
            s.history.record(JobKey("q", "u", ""), "p", [1.0])
        with pytest.raises(ValueError, match="queue"):
            s.history.record(JobKey("", "u", "j"), "p", [1.0])
        with pytest.raises(ValueError, match="user"):
            s.history.record(JobKey("q", "", "j"), "p", [1.0])
        with pytest.raises(ValueError, match="phase_id"):
            s.history.record(J, "", [1.0])
        assert s.history.moments(J, "p") is None


def test_merge_moments_is_exact_on_split_data() -> None:
    data = [3.0, 7.0, 1.0, 9.5, 4.25, 8.0]
    for cut in range(len(data) + 1):
        parts = []
        for chunk in (data[:cut], data[cut:]):
            if chunk:
                mean = statistics.fmean(chunk)
                parts.append((len(chunk), mean, sum((v - mean) ** 2 for v in chunk)))
            else:
                parts.append((0, 0.0, 0.0))
        n, mean, m2 = merge_moments(parts[0], parts[1])
        assert n == len(data)
        assert mean == pytest.approx(statistics.fmean(data))
        assert m2 / (n - 1) == pytest.approx(statistics.variance(data))


def test_history_merge_of_moments_and_all_moments(store_url: str) -> None:
    first, second = [10.0, 12.0, 14.0], [20.0, 22.0]
    with open_store(store_url) as s:
        h = s.history
        h.record(ETL, "map", first)
        mean2 = statistics.fmean(second)
        merged = h.merge(ETL, "map", len(second), mean2, sum((v - mean2) ** 2 for v in second), 20.0, 22.0)
        both = first + second
        assert merged is not None and merged.count == 5
        assert merged.mean == pytest.approx(statistics.fmean(both))
        assert merged.variance == pytest.approx(statistics.variance(both))
        assert (merged.min, merged.max) == (10.0, 22.0)
        assert h.samples(ETL, "map") == first  # moments only: no samples were added
        only = h.merge(ETL, "reduce", 4, 7.5, 3.0)  # no min/max known: the mean stands in
        assert only is not None and (only.min, only.max, only.variance) == (7.5, 7.5, 1.0)
        assert h.merge(ETL, "reduce", 0, 0.0, 0.0) == only
        everything = h.all_moments()
        assert set(everything) == {(ETL, "map"), (ETL, "reduce")}
        assert everything[(ETL, "map")] == h.moments(ETL, "map")
        for bad in ({"count": -1}, {"mean": math.nan}, {"m2": -2.0}, {"low": math.inf}):
            args = {"count": 2, "mean": 1.0, "m2": 0.5, **bad}
            with pytest.raises(ValueError, match=next(iter(bad))):
                h.merge(ETL, "map", **args)  # type: ignore[arg-type]
