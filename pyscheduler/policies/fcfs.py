"""FCFS: jobs in strict arrival order (ties by position in the snapshot), no clones.

It is the DollyMP round (policies/dollymp.py) with every job in its own priority class, so each server
takes the earliest job's tasks first; with one job per class the best-fit choice only picks among that
job's ready phases, i.e. tasks go first-fit in node order. Losing copies are killed at once.
"""

from __future__ import annotations

from pyscheduler.policies.base import register_policy
from pyscheduler.policies.common import REASON_FIRST_FIT
from pyscheduler.policies.dollymp import DollyMPPolicy


@register_policy("fcfs")
def fcfs_policy() -> DollyMPPolicy:
    policy = DollyMPPolicy(max_clones=0, order="arrival")
    policy.name = "fcfs"
    policy.placement_reason = REASON_FIRST_FIT
    return policy
