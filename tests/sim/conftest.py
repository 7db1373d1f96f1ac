from __future__ import annotations

from pathlib import Path

import pytest

from pyscheduler.sim.workload import ClusterSpec, NodeSpec

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"


@pytest.fixture
def small_cluster() -> ClusterSpec:
    return ClusterSpec(tuple([NodeSpec(8, 16384, 1.0)] * 4 + [NodeSpec(4, 8192, 0.5)] * 2))


@pytest.fixture
def traces() -> Path:
    if not TRACES.exists():
        pytest.fail(f"shared traces not found at {TRACES}")
    return TRACES
