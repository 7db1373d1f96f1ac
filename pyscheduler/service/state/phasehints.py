"""What the AM helpers told the round about each phase, per YARN priority of an application (`PhaseHint`):
θ/σ and where they came from, and the clones waiting for a container; read by the translation
(service/round/translate.py), clone asks (service/round/clones.py) and yielding
(service/round/yielding.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyscheduler.estimate.runtimes import AM_HELPER, describe


@dataclass(frozen=True, slots=True)
class PhaseHint:
    """What the AM helper told us about the phase a YARN priority belongs to."""

    phase_id: str
    mean: float
    sd: float
    waiting_clones: int = 0  # clones the AM launched that wait for a container (see service/round/clones.py)
    waiting_alone: int = 0  # of those, clones judged alone (late, phase tail, last stage): placed first
    # of the others (clones at launch), those that would be their task's first running clone, of a task not
    # covered: clones worth the least (beaten or covered) yield to them (service/round/yielding.py)
    waiting_first: int = 0
    source: str = AM_HELPER  # where θ/σ came from (estimate/runtimes.py)
    samples: int = 0  # run times behind θ/σ (0: the AM helper's figures)

    def describe(self) -> str:
        return describe(self.mean, self.sd, self.source, self.samples)


# application_id -> {yarn priority -> hint}; filled by the AppMasterService.
HintSource = Callable[[str], dict[int, PhaseHint]]
