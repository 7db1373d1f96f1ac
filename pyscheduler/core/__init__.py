"""The simulator's decision loop (loop.py: a policy's `decide` on an injected clock; the service does not
run it, see loop.py for what the two share), the clocks (clock.py: wall time for the service, a manual one
for the simulators) and the queue-share rules the service's round applies (queues.py, queue_limits.py,
preempt.py)."""

from pyscheduler.core.clock import Clock, ManualClock, MonotonicClock, WallClock
from pyscheduler.core.loop import DecisionLoop, LoopStats

__all__ = ["Clock", "DecisionLoop", "LoopStats", "ManualClock", "MonotonicClock", "WallClock"]
