"""The simulator's running copies as numpy columns, so a policy that reads every running copy each round
(policies/late.py, through `Snapshot.attempt_columns()`) needs no Python loop over them.

Copies are appended in launch order (uid) and never reordered, so the live ones are always listed in the
order of `Simulation.running` and of the Attempt objects the snapshot would otherwise carry. Starts and
ends are only noted (`started`: a block of copies per round; `ended`: one list append per copy) and
applied to the arrays when a policy reads them; dead entries are squeezed out once they outnumber the
live ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from numba import njit

from pyscheduler.policies.attempts import AttemptColumns

_INT_COLUMNS = ("uid", "jidx", "k", "task")
# copies started together: (uid, jidx, k, task, start, end), sequences of one length (start: or one float)
Block = tuple[
    Sequence[int], Sequence[int], Sequence[int], Sequence[int], Sequence[float] | float, Sequence[float]
]


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _progress_one(now: float, start: float, end: float) -> float:
    dur = end - start
    return min(1.0, (now - start) / dur) if dur > 0 else 1.0


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _progress(
    now: float, start: npt.NDArray[np.float64], end: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    out = np.empty(start.shape[0], np.float64)
    for i in range(start.shape[0]):
        out[i] = _progress_one(now, start[i], end[i])
    return out


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _gather(
    alive: npt.NDArray[np.bool_],
    jidx: npt.NDArray[np.int64],
    k: npt.NDArray[np.int64],
    task: npt.NDArray[np.int64],
    start: npt.NDArray[np.float64],
    end: npt.NDArray[np.float64],
    pos: npt.NDArray[np.int64],
    top: int,
    now: float,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
]:
    """AttemptColumns' arrays of the live copies of the jobs with pos >= 0, in launch order, in one pass:
    (job position, phase, task, start, progress at `now`, rank among all live copies)."""
    n = 0
    for i in range(top):
        if alive[i] and pos[jidx[i]] >= 0:
            n += 1
    at = np.empty(n, np.int64)
    kk = np.empty(n, np.int64)
    tt = np.empty(n, np.int64)
    st = np.empty(n, np.float64)
    pr = np.empty(n, np.float64)
    rank = np.empty(n, np.int64)
    n = 0
    live = 0
    for i in range(top):
        if alive[i]:
            p = pos[jidx[i]]
            if p >= 0:
                at[n] = p
                kk[n] = k[i]
                tt[n] = task[i]
                st[n] = start[i]
                pr[n] = _progress_one(now, start[i], end[i])
                rank[n] = live
                n += 1
            live += 1
    return at, kk, tt, st, pr, rank


def progress_at(
    now: float, start: npt.NDArray[np.float64], end: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Fraction of each copy's work done at `now` (Hadoop's progress score), as `SimAttempt.progress`
    computes it for one copy: min(1, (now - start) / (end - start)), 1 for a copy of no duration."""
    result: npt.NDArray[np.float64] = _progress(float(now), start, end)
    return result


class RunningColumns:
    """(uid, job index, phase, task, start, expected end) of the running copies, in launch order."""

    def __init__(self, n_jobs: int, capacity: int = 1024) -> None:
        self.uid = np.zeros(capacity, np.int64)  # increasing over [0, top)
        self.jidx = np.zeros(capacity, np.int64)
        self.k = np.zeros(capacity, np.int64)
        self.task = np.zeros(capacity, np.int64)
        self.start = np.zeros(capacity, np.float64)
        self.end = np.zeros(capacity, np.float64)
        self.alive = np.zeros(capacity, bool)
        self.top = 0  # entries [0, top) are in use, live or dead
        self.live = 0
        # noted and not yet applied: blocks of copies started, in launch order (uids increase), each
        # block's (uid, jidx, k, task, start, end) as sequences of equal length (start may be one float
        # for the whole block: a round's copies start together), and uids of copies ended
        self.started: list[Block] = []
        self.ended: list[int] = []
        self._pos = np.full(n_jobs, -1, np.int64)  # scratch: job index -> position in the snapshot
        self._live: npt.NDArray[np.intp] | None = None  # entries of the live copies (uid_at), until a change

    def _apply(self) -> None:
        if self.started or self.ended:
            self._live = None
        if self.started:
            m = sum(len(b[0]) for b in self.started)
            if self.top + m > self.uid.size:
                self._squeeze(self.top + m)
            top = self.top
            for uid, jidx, k, task, start, end in self.started:  # one block a round (speed)
                at = slice(top, top + len(uid))
                self.uid[at], self.jidx[at], self.k[at], self.task[at] = uid, jidx, k, task
                self.start[at], self.end[at] = start, end
                top += len(uid)
            self.alive[self.top : top] = True
            self.top = top
            self.live += m
            self.started.clear()
        if self.ended:
            gone = np.searchsorted(self.uid[: self.top], np.asarray(self.ended, np.int64))
            self.alive[gone] = False
            self.live -= len(self.ended)
            self.ended.clear()
        if self.top > 2 * self.live + 1024:
            self._squeeze(self.top)

    def _squeeze(self, need: int) -> None:
        """Drop dead entries (order kept); grow the arrays to hold `need` - (dead) entries."""
        self._live = None
        keep = np.flatnonzero(self.alive[: self.top])
        size = self.uid.size
        while size < keep.size + (need - self.top) + 1:
            size *= 2
        for name in (*_INT_COLUMNS, "start", "end", "alive"):
            a = getattr(self, name)
            b = np.zeros(size, a.dtype)
            b[: keep.size] = a[keep]
            setattr(self, name, b)
        self.top = keep.size

    def columns(self, job_index: npt.NDArray[np.int64], now: float) -> AttemptColumns:
        """The running copies of the jobs `job_index` (simulator job indices, in Snapshot.jobs order),
        in launch order, with their progress at `now`."""
        self._apply()
        pos = self._pos
        pos[job_index] = np.arange(job_index.size)
        # live copies of these jobs, in launch order, with their positions among all live copies (the
        # order of Simulation.running, so of Snapshot.attempts)
        cols = _gather(
            self.alive, self.jidx, self.k, self.task, self.start, self.end, pos, self.top, float(now)
        )
        pos[job_index] = -1
        return AttemptColumns(*cols)

    def uid_at(self, i: int) -> int:
        """The uid of the i-th live copy in launch order (Snapshot.attempts[i] of the simulator)."""
        self._apply()
        if self._live is None:  # kept while no copy starts or ends (several lookups a round: speed)
            self._live = self.alive[: self.top].nonzero()[0]
        return int(self.uid[self._live[i]])
