"""The bounds' options object (service/limits.py): validated, loaded from the configuration, documented."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from pyscheduler import config
from pyscheduler.service.limits import ASK_WAVES, DEFAULTS, Limits, ask_bound

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "operators-guide.md"


def test_every_limit_is_a_config_key_with_the_same_default_and_documented() -> None:
    cfg = config.load(None, env={})
    assert Limits.from_config(cfg) == DEFAULTS
    guide = GUIDE.read_text()
    for f in fields(Limits):
        assert f"`limits.{f.name}`" in guide, f.name


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "3"])
def test_a_limit_must_be_a_positive_finite_number(bad: object) -> None:
    with pytest.raises(ValueError, match=r"limits\.sessions"):
        Limits(sessions=bad)  # type: ignore[arg-type]


def test_an_environment_value_out_of_range_names_its_key() -> None:
    with pytest.raises(config.ConfigError, match=r"limits\.streams_per_peer"):
        config.load(None, env={"DOLLYMP_LIMITS_STREAMS_PER_PEER": "0"})


def test_ask_bound_is_what_the_cluster_holds_at_most_the_cap_at_least_one() -> None:
    assert ask_bound((1.0, 1024.0), (64.0, 65536.0), 100_000) == 64 * ASK_WAVES  # waves keep the volume
    assert ask_bound((0.0, 0.0), (64.0, 65536.0), 100_000) == 100_000
    assert ask_bound((1.0, 1024.0), (0.0, 0.0), 100_000) == 1  # none fits: the core defers it
    assert ask_bound((1.0, 1.0), (1e9, 1e9), 500) == 500
    assert DEFAULTS.max_streams(32) == 28 and DEFAULTS.max_streams(4) == 2
