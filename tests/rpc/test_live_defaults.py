"""The live service's policy defaults (service/round/policy.py LIVE_DEFAULTS): the core's replacement of a
copy is off, since the AM helper carries out no kill the core names; an operator's options still win."""

from __future__ import annotations

from pyscheduler.service.round.policy import resolve


def test_the_live_dollymp_policy_replaces_no_copy_unless_asked() -> None:
    assert resolve("dollymp").replace is False  # the paper's DollyMP has no replacement at all
    assert resolve("dollymp-ext").replace is False  # the extension is off on the live path
    assert resolve("dollymp-ext", {"replace": True}).replace is True
    assert resolve("dollymp-ext", {"max_clones": 1}).replace is False
