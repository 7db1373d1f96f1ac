"""Prometheus metrics of the decision service, in one registry that the HTTP API serves at /metrics.

Import and update them where the thing happens (the decision service, the decision core, the writer):

    from pyscheduler import metrics
    metrics.DECISION_ROUND_SECONDS.observe(elapsed_s)
    metrics.QUEUE_DEPTH.labels(queue="sync").set(n)
    metrics.PLACEMENTS.inc(len(placements))
    metrics.CLONES_GRANTED.inc(k); metrics.CLONES_WASTED.inc(losers)
    metrics.FALLBACK_SECONDS.inc(seconds)      # time the shim reports it scheduled without the service

The registry is `REGISTRY` (not prometheus_client's global one), so importing this module never
collides with other libraries' metrics, and `render()` gives the text exposition format.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

REGISTRY = CollectorRegistry(auto_describe=True)
# process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds, ... (Linux /proc), for the
# Grafana dashboard (docs/grafana/dollymp.json)
PROCESS = ProcessCollector(registry=REGISTRY)

# A decision round at 10,000 nodes must stay under 100 ms at p99 (issue 5): buckets resolve 1 ms..2.5 s.
_ROUND_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5)

DECISION_ROUND_SECONDS = Histogram(
    "dollymp_decision_round_seconds",
    "Wall-clock latency of one decision round (snapshot in, decisions out).",
    buckets=_ROUND_BUCKETS,
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "dollymp_queue_depth",
    "Items waiting in a bounded queue (queue=sync: state batches per stream; queue=decision_log: "
    "decisions submitted to the log but not yet committed).",
    ["queue"],
    registry=REGISTRY,
)
PLACEMENTS = Counter(
    "dollymp_placements",
    "Placements proposed to the ResourceManager shim.",
    registry=REGISTRY,
)
CLONES_YIELDED = Counter(
    "dollymp_clones_yielded",
    "Running clones the service asked the shim to preempt for waiting originals (service/round/yielding.py).",
    registry=REGISTRY,
)
CLONES_BEATEN = Counter(
    "dollymp_clones_beaten",
    "Running clones at launch the service asked the shim to release because another copy of their task "
    "will clearly finish first (service/round/yielding.py, beaten).",
    registry=REGISTRY,
)
CLONES_GRANTED = Counter(
    "dollymp_clones_granted",
    "Clones granted to tasks (each extra copy counts once).",
    registry=REGISTRY,
)
CLONES_WASTED = Counter(
    "dollymp_clones_wasted",
    "Copies that lost the race and were killed (their work is the price of cloning).",
    registry=REGISTRY,
)
APPMASTER_PLANS_CACHED = Counter(
    "dollymp_appmaster_plans_cached",
    "Clone plans answered from a job's last plan because the fresh-plan budget was spent.",
    registry=REGISTRY,
)
FALLBACK_SECONDS = Counter(
    "dollymp_fallback_seconds",
    "Seconds the shim scheduled with its built-in fallback policy instead of the service.",
    registry=REGISTRY,
)
CLONE_SECONDS_WHILE_ORIGINALS_WAIT = Counter(
    "dollymp_clone_container_seconds_while_originals_wait",
    "Container-seconds that running clones held while an original of some application waited for room "
    "(a deferral waiting for resources), between one round and the next.",
    registry=REGISTRY,
)
DECISIONS_LOGGED = Counter(
    "dollymp_decisions_logged",
    "Decisions committed to the decision log, by kind.",
    ["kind"],
    registry=REGISTRY,
)

CONTENT_TYPE = CONTENT_TYPE_LATEST


def render() -> bytes:
    """The metrics in Prometheus' text exposition format."""
    return generate_latest(REGISTRY)
