"""What the AM helper did, read back from its records (``dollymp.am.record.dir``).

The helper writes one ``<application>.tsv`` per job when the job ends (every attempt: task, clone or
original, container, node, final state, launch and finish times, whether it won its task) and, for each
reduce copy, ``fetch/<attempt>.tsv``: which copy of each map's output it read and why (Dolly's delay
assignment: ``own copy k`` when reduce copy k read map copy k within ω, ``omega elapsed`` when it gave
up waiting and read the first copy). The demo and the cluster benchmark summarise these files.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Mission:
    """One job's (or several jobs') cloning, as the AM helper recorded it."""

    attempts: int = 0  # attempts launched
    clones: int = 0  # ... of which clones
    clones_won: int = 0  # clones that finished first, so their task's result is theirs
    losers_killed: int = 0  # copies killed because another copy of their task won
    reduce_clone_reads: int = 0  # map outputs a reduce clone fetched
    own_copy_reads: int = 0  # ... of which from its own map copy within ω (delay assignment)
    omega_elapsed: int = 0  # ... of which from the first copy after waiting ω
    clone_s: float = 0.0  # container-seconds of clones
    attempt_s: float = 0.0  # container-seconds of all attempts
    lost_s: float = 0.0  # container-seconds of attempts whose work was not used (all but a task's winner)

    def add(self, other: Mission) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _rows(path: Path) -> list[dict[str, str]]:
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def launched_clones(records: Path, app_id: str) -> set[str]:
    """The attempt ids of `app_id`'s clones that the AM helper launched (empty without a record)."""
    path = records / f"{app_id}.tsv"
    if not path.is_file():
        return set()
    return {
        row.get("attempt_id", "")
        for row in _rows(path)
        if row.get("is_clone") == "true" and int(row.get("launch_ms") or 0) > 0
    }


def read_app(records: Path, app_id: str) -> Mission:
    """The mission of application `app_id` from `records` (empty when the AM wrote nothing)."""
    m = Mission()
    path = records / f"{app_id}.tsv"
    if not path.is_file():
        return m
    clone_attempts: set[str] = set()
    for row in _rows(path):
        launch, finish = int(row.get("launch_ms") or 0), int(row.get("finish_ms") or 0)
        if launch <= 0:
            continue  # asked for but never launched
        m.attempts += 1
        is_clone = row.get("is_clone") == "true"
        won = row.get("winner") == "true"
        if is_clone:
            m.clones += 1
            clone_attempts.add(row.get("attempt_id", ""))
            m.clones_won += won
        if row.get("state") == "KILLED" and not won:
            m.losers_killed += 1
        if finish >= launch:
            s = (finish - launch) / 1000.0
            m.attempt_s += s
            m.clone_s += s if is_clone else 0.0
            m.lost_s += 0.0 if won else s
    fetch = records / "fetch"
    for attempt in sorted(clone_attempts):
        f = fetch / f"{attempt}.tsv"
        if "_r_" not in attempt or not f.is_file():
            continue
        for row in _rows(f):
            m.reduce_clone_reads += 1
            reason = row.get("reason", "")
            m.own_copy_reads += reason.startswith("own copy")
            m.omega_elapsed += reason == "omega elapsed"
    return m


def read_all(records: Path, app_ids: Iterable[str] | None = None) -> Mission:
    """The missions of `app_ids` (default: every application with a record in `records`), summed."""
    total = Mission()
    if app_ids is None:
        app_ids = [p.stem for p in sorted(records.glob("application_*.tsv"))]
    for app in app_ids:
        total.add(read_app(records, app))
    return total
