"""The AM helpers' side of one RM round, read once at the round's start: the round state's second half.

A round decides on the mirror (the RM's state) joined with what the AM helpers reported: θ/σ and waiting
clones per YARN priority of each application wanting containers (`hints`, service/state/phasehints.PhaseHint),
and the running copies clones may be preempted among (`copies`, service/state/amcopies.Copy). The registry
builds this view under one hold of its lock (`AmRegistry.round_view`), so every step of the round (the
translation, released beaten clones, yielding, the queues' reclaim) decides on the same reports, and nothing
in the round calls back into the AM state. An application whose hints could not be read is named in `failed`:
reading its hint raises that error, so the round leaves that application out (service/round/isolate.py) and
decides for the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyscheduler.service.state.amcopies import Copy, CopySource
    from pyscheduler.service.state.phasehints import HintSource, PhaseHint

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AmView:
    """One round's AM reports (module docstring). `copies` is None when clones do not yield (no source)."""

    hints: Mapping[str, dict[int, PhaseHint]] = field(default_factory=dict)
    failed: Mapping[str, Exception] = field(default_factory=dict)
    copies: list[Copy] | None = None

    def hint(self, app_id: str) -> dict[int, PhaseHint]:
        """The application's hints ({} when its AM reported none); raises what reading them raised."""
        exc = self.failed.get(app_id)
        if exc is not None:
            raise exc
        return self.hints.get(app_id, {})


# (applications wanting containers: their hints; applications whose copies to read, None: all) -> view
AmSource = Callable[[Collection[str], Collection[str] | None], AmView]


def from_sources(hints: HintSource | None, copies: CopySource | None) -> AmSource:
    """An AmSource over separate readers (tests, and callers without an AM registry): each is read once per
    round; a failing hint is kept per application, failing copies read as none (the round goes on without
    yielding)."""

    def read(hint_apps: Collection[str], copy_apps: Collection[str] | None) -> AmView:
        got: dict[str, dict[int, PhaseHint]] = {}
        failed: dict[str, Exception] = {}
        if hints is not None:
            for app_id in hint_apps:
                try:
                    got[app_id] = hints(app_id)
                except Exception as exc:
                    failed[app_id] = exc
        running: list[Copy] | None = None
        if copies is not None:
            try:
                running = copies(copy_apps) if copy_apps is not None else copies()
            except Exception:
                log.exception("running copies unavailable this round")
                running = []
        return AmView(got, failed, running)

    return read
