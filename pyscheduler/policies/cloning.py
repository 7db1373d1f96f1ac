"""Which running tasks may get another copy, and how many clones a phase is granted.

Rules (DollyMP Section 5, Dolly Section 3.2):
* at most `max_clones` clones per task (DollyMP: two, i.e. three copies);
* clone rule "idle" (Algorithm 2 as written: clones wherever idle resources remain after every original),
  "corollary" (Corollary 4.1's r_j - 1, see policies/model.py) or "dolly" (Pseudocode 1 with its budget);
* downstream clones never exceed upstream copies (Dolly 3.2, "Multi-phased jobs"). Choice: a phase with
  parents may have at most as many copies per task as the *fewest* copies any task of a parent phase had
  (Phase.peak), so each downstream copy can read a distinct upstream copy of every upstream task.
"""

from __future__ import annotations

from pyscheduler.objects import Job
from pyscheduler.policies.dolly import REASON_STARTED, REASON_STICKY, DollyBudget

REASON_IDLE = "algorithm2_idle_capacity"
REASON_COROLLARY = "corollary_4_1"
REASON_UPSTREAM = "upstream_copies_limit"
REASON_NO_ROOM = "corollary_4_1_not_packed"  # r_j = 1, or r_j v_j does not fit the knapsack's slack


def dolly_grant(
    job: Job, k: int, budget: DollyBudget, share: float, theta: float, sigma: float, max_clones: int
) -> tuple[int, str]:
    """Dolly admission for phase k, evaluated when its first task is to run (see policies/dolly.py)."""
    p = job.phases[k]
    if int(p.peak.max()) > 1:
        return min(max_clones, int(p.peak.max()) - 1), REASON_STICKY
    if p.num_pending + p.num_finished < p.num_tasks or p.num_finished > 0:
        return 0, REASON_STARTED
    return budget.admit(p.num_tasks, share, theta, sigma, max_clones)
