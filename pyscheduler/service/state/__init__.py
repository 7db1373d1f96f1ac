"""What the ResourceManager and the AM helpers reported, as the service keeps it between rounds: the state a
round reads. No gRPC here, and nothing here decides. Below round/ and rmproxy/, importing neither
(tests/core/test_structure.py).

resources   YARN resource vectors (Res)
mirror      one ResourceManager's state (nodes, apps, asks, containers) + unconfirmed placements
mirrorbook  the mirror's containers and unconfirmed placements, and the node and ask sums they move
records     the mirror's records (nodes, apps, asks, containers, outstanding placements)
nodearrays  the mirror's per-node figures (capacity, allocation, container and outstanding sums) as arrays
phasehints  what the AM helper reported per phase (θ/σ, waiting clones), by YARN priority (PhaseHint)
amregistry  per-application AM state (profiles, attempts), the hints and running copies RM rounds read
amcopies    the running copies of tasks as the AM helper reported them (Copy)
amreports   what attempt reports say: waiting clones, final states, task indices, the copy estimator's records
amkept      what an application's reports imply as a whole (records, copies per task, live attempts, run
            times), kept in step as its AM reports, so that plans and rounds read what changed
amview      one RM round's AM reports (hints, running copies), read once under the registry's lock
named_tasks decision-log records of the tasks a clone plan names on their own (a late copy, the phase tail)
outcomes    task copies' outcomes as the AM helper reports them, logged as `attempt` decisions
mapreads    reduce copies' reads of map output under delay assignment, logged as `map_read` decisions
runhistory  the recurring-job history and framework-wide prior of applications without an AM helper
"""
