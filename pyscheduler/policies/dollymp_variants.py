"""The DollyMP policy's named variants: `dolly` (Dolly's budgeted cloning in arrival order) and
`dollymp-ext` (the paper's DollyMP with the extensions of pyscheduler.policies.dollymp's docstring on, all
but the order inside a class)."""

from __future__ import annotations

from typing import Any

from pyscheduler.policies.base import register_policy
from pyscheduler.policies.dolly import DollyBudget
from pyscheduler.policies.dollymp import DollyMPPolicy


@register_policy("dolly")
def dolly_policy(**options: Any) -> DollyMPPolicy:
    """Dolly: arrival order, Pseudocode 1's budgeted cloning (beta, tau, epsilon, straggler_p options;
    defaults the paper's, policies/dolly.py)."""
    options.setdefault("max_clones", 2)
    options.setdefault("tau", DollyBudget().tau)  # Dolly 5.2's 80% (DollyMPPolicy's own default differs)
    policy = DollyMPPolicy(clone_rule="dolly", order="arrival", **options)
    policy.name = "dolly"
    return policy


# The extensions of policies/dollymp.py's docstring but `order`: what `dollymp-ext` adds to the paper.
EXTENSIONS: dict[str, Any] = {
    "late": True,
    "late_first": True,
    "replace": True,
    "small_job_clones": 10,
    "phase_tail": True,
}


@register_policy("dollymp-ext")
def dollymp_ext_policy(**options: Any) -> DollyMPPolicy:
    """The paper's DollyMP (the `dollymp` policy) with the extensions of EXTENSIONS on; any of them can be
    turned off again by its option (e.g. replace=false), and order=size_class_volume added."""
    policy = DollyMPPolicy(**{**EXTENSIONS, **options})
    policy.name = "dollymp-ext"
    return policy
