"""docs/grafana/dollymp.json queries only metrics that exist: every metric in its decision-service panels
(job="dollymp-service") is in the /metrics scrape of a real running service that has handled a shim
session; the ResourceManager panels' metrics (job="yarn-resourcemanager") are checked against Hadoop's
Prometheus sink by the Java test ShimMetricsPrometheusTest, which reads the same file."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
from rpc_harness import REPO, am_session, app, ask, in_process_service, node

DASHBOARD = REPO / "docs" / "grafana" / "dollymp.json"
# PromQL words that are not metric names
_WORDS = {
    "sum",
    "rate",
    "irate",
    "increase",
    "histogram_quantile",
    "by",
    "without",
    "max",
    "min",
    "avg",
    "count",
    "le",
    "on",
    "ignoring",
    "and",
    "or",
    "unless",
    "topk",
    "bottomk",
    "offset",
}


def metric_names(expr: str) -> set[str]:
    """The metric names an expression reads: label matchers, ranges, grouping lists and numbers removed."""
    bare = re.sub(r"\{[^}]*\}", " ", expr)
    bare = re.sub(r"\[[^\]]*\]", " ", bare)
    bare = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", bare)
    bare = re.sub(r'"[^"]*"', " ", bare)
    words = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", bare))
    return {w for w in words if w not in _WORDS and not re.fullmatch(r"e\d+", w)}


def dashboard_metrics(job: str) -> set[str]:
    doc = json.loads(DASHBOARD.read_text())
    out: set[str] = set()
    for panel in doc["panels"]:
        for target in panel["targets"]:
            if f'job="{job}"' in target["expr"]:
                out |= metric_names(target["expr"])
    return out


def exported(text: str) -> set[str]:
    """Sample names in a scrape, plus each family's series names (a labelled family without samples yet
    still has its # TYPE line)."""
    names = {
        line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")
    }
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.M):
        names |= {m.group(1) + s for s in suffixes.get(m.group(2), ("",))}
    return names


def test_metric_names_are_parsed_from_expressions() -> None:
    expr = 'histogram_quantile(0.99, sum by (le) (rate(a_b_bucket{job="x", le!="+Inf"}[5m]))) / c_d'
    assert metric_names(expr) == {"a_b_bucket", "c_d"}
    assert metric_names('process_resident_memory_bytes{job="s"} / 1e9') == {"process_resident_memory_bytes"}


def test_every_service_metric_the_dashboard_queries_is_exported(tmp_path: Path) -> None:
    wanted = dashboard_metrics("dollymp-service")
    assert {"dollymp_decision_round_seconds_bucket", "process_cpu_seconds_total"} <= wanted
    assert any(p.startswith("process_") for p in wanted) and len(wanted) >= 12
    assert dashboard_metrics("yarn-resourcemanager"), "the shim's panels"
    svc = in_process_service(tmp_path, **{"http.port": 0})
    try:
        with am_session(
            svc.port, nodes_upserted=[node("h0:1")], apps_upserted=[app(1)], asks=[ask(1, 20, 2)]
        ):
            url = f"http://127.0.0.1:{svc.http.port}/metrics"
            deadline = time.monotonic() + 20
            while True:
                text = httpx.get(url, timeout=10).text
                if "dollymp_placements_total" in text and "dollymp_decision_round_seconds_bucket" in text:
                    break
                assert time.monotonic() < deadline, "no decision round within 20 s"
                time.sleep(0.2)
    finally:
        svc.stop()
    missing = wanted - exported(text)
    assert not missing, f"the dashboard queries metrics /metrics does not export: {sorted(missing)}"
