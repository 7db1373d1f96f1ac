"""The gRPC decision service: the only module that speaks the wire (proto/dollymp/v1).

validate    every wire message checked before anything is applied; errors name the field path
auth        who may call: the shim by its shared secret (or client certificate), an AM by its AMRMToken
streams     how many Sync streams may be open, per client connection and in all
memory      what a session's rounds carry from one to the next (cluster arrays, jobs, kills in flight)
session     sessions per rm_id (Register -> full resync -> batches), a decision round -> Plan
plan        one round's plan: placements, deferrals, preemptions, decisions to log (RoundResult)
placer      service-side FCFS placement with locality ("yarn-fcfs"); the fit/locality invariants
translate   the mirror -> the decision core's Snapshot
clusterview the mirror's running nodes as the core's ClusterState, kept across rounds
coreround   the core's Decisions -> placements and deferrals; the round function of a core policy
amspread    AM containers spread over the running nodes (coreround's choice)
isolate     fault isolation per application: one application's error leaves it out of the round only
queueshare  the queue-share step around any round (pyscheduler/core/queues.py decides)
queuereclaim what queues below their guarantee are still owed, taken from queues above theirs
policy      policy name -> round function (the core's registry, plus "yarn-fcfs")
servicer    SchedulerService: Register and the Sync stream (bounded queue, coalescing, abort)
durable     placements reach the decision log before the plan that carries them is sent
stats       counters of the Sync service, read by the bench and the HTTP metrics
amservice   AppMasterService: validates job profiles and attempt reports (ambounds), answers clone plans
amview      one RM round's AM reports (hints, running copies), read once under the registry's lock
amjob       an AM's job as the core sees it (Job, replayed attempts, copy records for estimate/copies.py)
amplan      the ClonePlan: the core policy decides one job's clones among the jobs it competes with
named       decision-log records of the tasks a clone plan names on their own (a late copy, the phase tail)
clones      clone asks placed in idle capacity after the originals
waiting     containers still waiting for room after a round, which running clones may yield to
yielding    running clones preempted for waiting containers, beaten clones released
yield_value the same by value (appmaster.yield_model = "value", pyscheduler/value)
server      the grpc.Server: TLS, health checking protocol, graceful stop
gcpace      CPython's cycle collector kept off the decision path
service     everything assembled from a validated pyscheduler.config.Config
provider    the live state for the HTTP API (pyscheduler.api)
loadgen     `dollymp bench service` (with shimmodel, its pretend ResourceManager)
"""
