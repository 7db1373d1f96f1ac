"""What the cluster bench reads back after a run: the AM helper's attempt records (clone container-seconds)
and the decision service's log (its preemptions of running copies)."""

from __future__ import annotations

import re
import sqlite3
import urllib.request
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


CLONE_WAIT_METRIC = "dollymp_clone_container_seconds_while_originals_wait_total"


def metric_value(text: str, name: str) -> float | None:
    """The value of an unlabelled sample `name` in Prometheus' text format (None when absent)."""
    m = re.search(rf"^{re.escape(name)} ([0-9.eE+-]+)$", text, re.M)
    return float(m.group(1)) if m else None


def clone_s_while_waiting(service_api_url: str | None) -> float | None:
    """The container-seconds clones held while an original waited for room, from the service's /metrics
    (metrics.CLONE_SECONDS_WHILE_ORIGINALS_WAIT); None without the service's API."""
    if service_api_url is None:
        return None
    try:
        with urllib.request.urlopen(f"{service_api_url}/metrics", timeout=5.0) as resp:
            return metric_value(resp.read().decode("utf-8"), CLONE_WAIT_METRIC)
    except OSError:
        return None
