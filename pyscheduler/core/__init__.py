"""The decision loop with an injected clock, shared by the service and the simulator."""

from pyscheduler.core.clock import Clock, ManualClock, MonotonicClock, WallClock
from pyscheduler.core.loop import DecisionLoop, LoopStats

__all__ = ["Clock", "DecisionLoop", "LoopStats", "ManualClock", "MonotonicClock", "WallClock"]
