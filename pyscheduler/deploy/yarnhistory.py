"""Record a running cluster's history for `bench sls`: `dollymp bench record-history --rm URL --history URL
--out FILE` saves the MapReduce JobHistory server's REST answers for each finished job and the RM's
application records, as the JSON Lines that the `yarn-history` loader reads
(pyscheduler/sim/loaders/yarnhistory.py documents the file).

Reads only: `GET /ws/v1/history/mapreduce/jobs` (the jobs), per job `.../jobs/{id}`, `.../jobs/{id}/conf`
(the four container sizes kept), `.../jobs/{id}/tasks` and per task `.../tasks/{tid}/attempts`, and the
RM's `GET /ws/v1/cluster/apps`. At most `limit` jobs, the newest by finish time, and at most MAX_TASKS
tasks a job (a job with more is left out and counted: its per-task calls would take the history server
minutes). The file is written beside its final name and renamed into place once complete.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pyscheduler.deploy.rest import get_json
from pyscheduler.sim.loaders.yarnhistory import FORMAT, SIZES, VERSION

MAX_TASKS = 20_000
Fetch = Callable[[str], Any]


@dataclass(frozen=True)
class Recorded:
    path: Path
    jobs: int
    left_out: int  # jobs over MAX_TASKS tasks or not found when asked


def _list(answer: Any, outer: str, inner: str) -> list[dict[str, Any]]:
    """Hadoop's `{"jobs": {"job": [...]}}` shape (null or missing when empty)."""
    box = (answer or {}).get(outer) if isinstance(answer, dict) else None
    items = box.get(inner) if isinstance(box, dict) else None
    return [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []


def _app_id(job_id: str) -> str:
    return "application_" + job_id.removeprefix("job_")


def record(
    history_url: str,
    rm_url: str,
    out: str | Path,
    limit: int = 1000,
    fetch: Fetch | None = None,
) -> Recorded:
    """Write the history file (module docstring); `fetch` GETs a URL's JSON (default: deploy/rest.py)."""
    get: Fetch = fetch or (lambda url: get_json(url, timeout_s=30.0))
    base = history_url.rstrip("/") + "/ws/v1/history/mapreduce/jobs"
    summaries = _list(get(base), "jobs", "job")
    summaries.sort(key=lambda j: j.get("finishTime") or 0, reverse=True)
    apps = {a.get("id"): a for a in _list(get(rm_url.rstrip("/") + "/ws/v1/cluster/apps"), "apps", "app")}
    lines = [
        json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "history": history_url,
                "rm": rm_url,
                "recorded_ms": int(time.time() * 1000),
            }
        )
    ]
    left_out = 0
    for summary in summaries[:limit]:
        job_id = str(summary.get("id") or "")
        if not job_id:
            continue
        at = f"{base}/{quote(job_id)}"
        total = int(summary.get("mapsTotal") or 0) + int(summary.get("reducesTotal") or 0)
        job = (get(at) or {}).get("job")
        if not isinstance(job, dict) or total > MAX_TASKS:
            left_out += 1
            continue
        props = _list(get(f"{at}/conf"), "conf", "property")
        conf = {p["name"]: p.get("value") for p in props if p.get("name") in SIZES}
        tasks = _list(get(f"{at}/tasks"), "tasks", "task")
        for t in tasks:
            tid = quote(str(t.get("id") or ""))
            t["attempts"] = _list(get(f"{at}/tasks/{tid}/attempts"), "taskAttempts", "taskAttempt")
        line = {"job": job, "conf": conf, "tasks": tasks, "app": apps.get(_app_id(job_id))}
        lines.append(json.dumps(line, sort_keys=True))
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Recorded(path, len(lines) - 1, left_out)


def add_args(p: Any) -> None:
    p.add_argument("--history", required=True, help="the JobHistory server's web address, http://host:19888")
    p.add_argument("--rm", required=True, help="the ResourceManager's web address, http://host:8088")
    p.add_argument("--out", required=True, help="the history file to write (JSON Lines)")
    p.add_argument("--limit", type=int, default=1000, help="at most this many jobs, the newest first")


def run(args: Any) -> int:
    if args.limit < 1:
        raise SystemExit(f"--limit must be >= 1, got {args.limit}")
    got = record(args.history, args.rm, args.out, args.limit)
    print(
        f"record-history: {got.jobs} jobs written to {got.path}"
        + (f" ({got.left_out} left out: over {MAX_TASKS} tasks or gone)" if got.left_out else "")
        + f"; replay it with `dollymp bench sls --trace {got.path} --format yarn-history`"
    )
    return 0
