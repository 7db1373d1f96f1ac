"""The decision log and the statistics history (SQLite by default, PostgreSQL by URL).

    store = open_store("sqlite:////var/lib/dollymp/decisions.db")   # or a path, or postgresql://...
    ids = store.append(decisions)             # one transaction; committed when it returns
    page = store.query(application_id="application_1_0001", limit=50)
    writer = BackgroundWriter(store)          # for the decision loop: submit() now, flush() when needed
    store.history.record(JobKey("root.prod", "alice", "wordcount"), "map", [30.1, 28.4])

Modules: db (connections, durability), schema (migrations), codec (row encoding), names (the id
dictionary of application, job and node names), log (DecisionLog, queries, retention), writer
(BackgroundWriter), history (StatisticsHistory: jobs with an AM helper, by the RM's queue, user and job
name), runhistory (AppRunHistory: applications without an AM helper, by name, queue and YARN priority).
The log's size and append benchmark is pyscheduler/bench/store.py.
"""

from pyscheduler.store.db import StoreError
from pyscheduler.store.history import JobKey, PhaseMoments, StatisticsHistory
from pyscheduler.store.log import MAX_PAGE, DecisionLog, Page, StoredDecision, open_store
from pyscheduler.store.runhistory import AppRunHistory, AppRunMoments
from pyscheduler.store.writer import BackgroundWriter, QueueFull, Retention

__all__ = [
    "MAX_PAGE",
    "AppRunHistory",
    "AppRunMoments",
    "BackgroundWriter",
    "DecisionLog",
    "JobKey",
    "Page",
    "PhaseMoments",
    "QueueFull",
    "Retention",
    "StatisticsHistory",
    "StoreError",
    "StoredDecision",
    "open_store",
]
