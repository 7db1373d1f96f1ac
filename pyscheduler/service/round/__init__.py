"""A decision round: the reported state (service/state) -> a plan (plan.py). Each RM round translates the
mirror for the core, runs the policy's round function and the steps around it (queue shares, clones in idle
capacity, yielding); the AM plan decides a job's clones the same way. No gRPC here (service/rmproxy).

translate    the mirror -> the decision core's Snapshot
clusterview  the mirror's running nodes as the core's ClusterState, kept across rounds
round_memory what a session's rounds carry from one to the next (cluster arrays, jobs, waiting seen)
coreround    the core's Decisions -> placements and deferrals; the round function of a core policy
amspread     AM containers spread over the running nodes (coreround's choice)
isolate      fault isolation per application: one application's error leaves it out of the round only
queueshare   the queue-share step around any round (pyscheduler/core/queues.py decides)
queuereclaim what queues below their guarantee are still owed, taken from queues above theirs
placer       service-side FCFS placement with locality ("yarn-fcfs"); the fit/locality invariants
clones       clone asks placed in idle capacity after the originals
waiting      containers still waiting for room after a round, which running clones may yield to
yielding     running clones preempted for waiting containers, beaten clones released
policy       policy name -> round function (the core's registry, plus "yarn-fcfs")
plan         one round's plan: placements, deferrals, preemptions, decisions to log (RoundResult)
amjob        an AM's job as the core sees it (Job, replayed attempts, running copies as attempts)
amplan       the ClonePlan: the core policy decides one job's clones among the jobs it competes with
planview     what an RM round leaves for the AM plans: the session's state after it, frozen
"""
