"""What the cluster bench reads back after a run: the AM helper's attempt records (clone container-seconds)
and the decision service's log (its preemptions of running copies)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pyscheduler.deploy import amrecords


def clone_overhead(records: Path) -> tuple[float, float, float, int]:
    """(clone container-seconds, all attempts' container-seconds, lost container-seconds, clones) from the
    AM records; lost: the attempts whose work was not used, every copy but its task's winner (a clone
    that wins counts as a clone but not as lost, the original it beat as lost)."""
    m = amrecords.read_all(records)
    return m.clone_s, m.attempt_s, m.lost_s, m.clones


def kills_by_reason(db: Path) -> dict[str, int]:
    """The service's preemptions of running copies, per reason (decision-log kind `kill`: `clone_yields`
    for a waiting original, `clone_beaten` for a clone its task's lead clearly beats, `original_beaten` for
    an original a clone clearly beats, with appmaster.release_beaten_originals)."""
    if not db.exists():
        return {}
    con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT reason, COUNT(*) FROM decisions WHERE kind = 'kill' GROUP BY reason")
        return {str(reason): int(n) for reason, n in rows}
    finally:
        con.close()
