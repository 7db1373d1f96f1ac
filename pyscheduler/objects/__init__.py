"""State objects: jobs, phases, tasks, attempts, nodes, resources, decisions. No policy here."""

from pyscheduler.objects.decision import Decision, DecisionKind

__all__ = ["Decision", "DecisionKind"]
