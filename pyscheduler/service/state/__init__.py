"""What the ResourceManager and the AM helpers reported, as the service keeps it between rounds: the state a
round reads. No gRPC here, and nothing here decides. Below round/ and rmproxy/; the imports of theirs it
still has (the mirror's RoundMemory, the AM registry's AmView, amjob, named_tasks and ambounds) are the
known exceptions tests/core/test_structure.py names (issue 54 item 4: state apart from the round).

resources   YARN resource vectors (Res)
mirror      one ResourceManager's state (nodes, apps, asks, containers) + unconfirmed placements
mirrorbook  the mirror's containers and unconfirmed placements, and the node and ask sums they move
records     the mirror's records (nodes, apps, asks, containers, outstanding placements)
nodearrays  the mirror's per-node figures (capacity, allocation, container and outstanding sums) as arrays
phasehints  what the AM helper reported per phase (θ/σ, waiting clones), by YARN priority (PhaseHint)
amregistry  per-application AM state (profiles, attempts), the hints and running copies RM rounds read
amcopies    the running copies of tasks as the AM helper reported them (Copy)
outcomes    task copies' outcomes as the AM helper reports them, logged as `attempt` decisions
mapreads    reduce copies' reads of map output under delay assignment, logged as `map_read` decisions
runhistory  the recurring-job history and framework-wide prior of applications without an AM helper
"""
