"""What a copy is worth: the expected seconds a running copy, a waiting clone or a waiting original saves
its job, under the phase's run time fitted as a Type-I Pareto (DollyMP Sec. 3, Eq. 1-3), and preemption
decided on those values (`preempt`). Pure: no gRPC, no mirror; the live path (service/round/yield_value.py)
and any simulator driver hand it plain records."""

from pyscheduler.value.model import Draw, expected_min, remaining, value_of_copy, value_of_start
from pyscheduler.value.options import ValueOptions
from pyscheduler.value.preempt import Candidate, Victims, eligible, select_victims

__all__ = [
    "Candidate",
    "Draw",
    "ValueOptions",
    "Victims",
    "eligible",
    "expected_min",
    "remaining",
    "select_victims",
    "value_of_copy",
    "value_of_start",
]
