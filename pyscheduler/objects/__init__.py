"""State objects: jobs, phases, tasks, attempts, nodes, resources, decisions. No policy here."""

from pyscheduler.objects.cluster import ClusterState, Node
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.objects.job import MAX_CLONES, Attempt, Job, Phase, Task, TaskState
from pyscheduler.objects.resources import DEFAULT_DIMENSIONS, Resources

__all__ = [
    "DEFAULT_DIMENSIONS",
    "MAX_CLONES",
    "Attempt",
    "ClusterState",
    "Decision",
    "DecisionKind",
    "Job",
    "Node",
    "Phase",
    "Resources",
    "Task",
    "TaskState",
]
