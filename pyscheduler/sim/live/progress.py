"""What a running attempt's AM sees of its progress: the live simulator's progress model.

"exact" (the default): the share of the copy's work done at this instant, a map's scaled to
MAP_PHASE_SHARE in a job with reduces.

"hadoop": the score a MapReduce task reports, as the cluster benchmark's StragglerJob and Hadoop make it:
- a map's record reader counts its input in `map_steps` steps (StragglerJob's dollymp.straggler.steps, 20)
  and reports (records read - 1) / steps, so its score is floor(share x steps) / steps of its work, then
  scaled to MAP_PHASE_SHARE as Hadoop's MapTask scales it;
- a reduce's score has three equal parts (Hadoop's ReduceTask: copy, sort, reduce), and with the
  benchmark's slowstart 1.0 and small map outputs the copy and sort are done as its work begins, so the
  score runs from `reduce_from` (2/3) to 1 over its work;
- the task tells its AM its score every `report_s` (mapreduce.task.progress-report.interval, 3 s), at a
  phase of its own, so the AM sees the score as of the task's last report.

The estimator (estimate/copies.py) takes a copy's rate from two reports that show progress; with steps
and a report's lag a young copy's rate is off by up to a step and a report interval, which the exact model
never is, and a reduce's score starts at 2/3. Rules that act on a copy's first steps are judged on these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyscheduler.estimate.copies import MAP_PHASE_SHARE, REDUCE_PHASE_FROM

MODELS = ("exact", "hadoop")
HADOOP_MAP_STEPS = 20  # StragglerJob's default dollymp.straggler.steps
HADOOP_REPORT_S = 3.0  # Hadoop's mapreduce.task.progress-report.interval default
HADOOP_REDUCE_FROM = REDUCE_PHASE_FROM  # a ReduceTask's score once its copy and sort phases are done


@dataclass(frozen=True, slots=True)
class ProgressModel:
    map_steps: int = 0  # a map's score grows in this many steps (0: continuously)
    report_s: float = 0.0  # a task reports its score this often (0: its AM sees it at once)
    reduce_from: float = 0.0  # a reduce's score when its work begins

    def __post_init__(self) -> None:
        if not 0 <= self.map_steps <= 100_000:
            raise ValueError(f"ProgressModel.map_steps: {self.map_steps} outside [0, 100000]")
        if not 0 <= self.report_s <= 600:
            raise ValueError(f"ProgressModel.report_s: {self.report_s} outside [0, 600]")
        if not 0 <= self.reduce_from < 1:
            raise ValueError(f"ProgressModel.reduce_from: {self.reduce_from} outside [0, 1)")

    @classmethod
    def named(cls, name: str) -> ProgressModel:
        if name == "exact":
            return cls()
        if name == "hadoop":
            return cls(HADOOP_MAP_STEPS, HADOOP_REPORT_S, HADOOP_REDUCE_FROM)
        raise ValueError(f"progress model {name!r} is not one of {', '.join(MODELS)}")

    def seen_at(self, now: float, work_begin_s: float, offset: float) -> float:
        """When the score the AM holds at `now` was reported: the task's last report, its reports
        `report_s` apart at `offset` (a share of `report_s`, the attempt's own) from its work's start."""
        if self.report_s <= 0 or now <= work_begin_s:
            return now
        first = work_begin_s - offset * self.report_s
        return first + math.floor((now - first) / self.report_s) * self.report_s

    def score(self, share: float, first_phase: bool, upstream: bool) -> float:
        """The reported score of a task that did `share` (0..1) of its work: a task of its job's first
        phase (a map) in steps; of a phase others wait for (a map of a job with reduces) scaled to
        MAP_PHASE_SHARE; of a later phase (a reduce) from `reduce_from`."""
        share = min(0.999, max(0.0, share))
        if first_phase and self.map_steps > 0:
            share = math.floor(share * self.map_steps) / self.map_steps
        if upstream:
            return share * MAP_PHASE_SHARE
        return share if first_phase else self.reduce_from + (1.0 - self.reduce_from) * share
