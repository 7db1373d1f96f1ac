"""The production configuration: the policy `default`, which `dollymp serve` runs with no flags and which
the compose cluster, `make demo`, the cluster benchmark, the SLS benchmark and `dollymp simulate
--policies default` run too.

It is not the paper: `dollymp` keeps DollyMP's algorithm under its name (policies/dollymp.py). `default` is
the candidate that the declared procedure of pyscheduler/bench/choose.py (`dollymp bench choose`) picks
from measured runs of the service's own round: the point of the flowtime-versus-resources front with the
best worst-case ratio to Tetris over the tuning traces, both straggler models and seeds. Where it departs
from the paper, and why, is in docs/design/production.md beside the measured front.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyscheduler.policies.base import Policy, get_policy, register_policy

NAME = "default"


@dataclass(frozen=True)
class Production:
    """`candidate` as `dollymp bench choose` and `dollymp simulate --policies` name it; `base` and
    `options`: the registered policy and options it runs with, the candidate's own and those the live
    mechanism sets for that base (service/round/policy.py LIVE_DEFAULTS, written here so that the
    policy-only engine runs the same configuration)."""

    candidate: str
    base: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        return self.candidate


PRODUCTION = Production(
    candidate="dollymp-ext(clone_rule=none;sigma_factor=1;small_job_clones=7;tail_tasks=1)",
    base="dollymp-ext",
    options={
        "clone_rule": "none",
        "sigma_factor": 1,
        "small_job_clones": 7,
        "tail_tasks": 1,
        "replace": False,
    },
)


@register_policy(NAME)
def default_policy(**options: Any) -> Policy:
    """The production configuration (module docstring); `options` change it as they would its base."""
    policy = get_policy(PRODUCTION.base, **{**PRODUCTION.options, **options})
    policy.name = NAME
    return policy
