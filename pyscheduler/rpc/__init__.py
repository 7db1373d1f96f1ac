"""The gRPC decision service: the only module that speaks the wire (proto/dollymp/v1).

validate    every wire message checked before anything is applied; errors name the field path
res         YARN resource vectors
mirror      one ResourceManager's state (nodes, apps, asks, containers) + unconfirmed placements
mirrorbook  the mirror's containers and unconfirmed placements, and the node and ask sums they move
records     the mirror's records (nodes, apps, asks, containers, outstanding placements)
nodearrays  the mirror's per-node figures (capacity, allocation, container and outstanding sums) as arrays
memory      what a session's rounds carry from one to the next (cluster arrays, jobs, kills in flight)
session     sessions per rm_id (Register -> full resync -> batches), a decision round -> Plan
placer      service-side FCFS placement with locality ("yarn-fcfs"); the fit/locality invariants
translate   the mirror -> the decision core's Snapshot
clusterview the mirror's running nodes as the core's ClusterState, kept across rounds
coreround   the core's Decisions -> placements and deferrals; the round function of a core policy
policy      policy name -> round function (the core's registry, plus "yarn-fcfs")
servicer    SchedulerService: Register and the Sync stream (bounded queue, coalescing, abort)
amservice   AppMasterService: validates job profiles and attempt reports (ambounds), answers clone plans
amregistry  per-application AM state (profiles, attempts), the hints and running copies RM rounds read
amview      one RM round's AM reports (hints, running copies), read once under the registry's lock
amjob       an AM's job as the core sees it (Job, replayed attempts, copy records for estimate/copies.py)
amplan      the ClonePlan: the core policy decides one job's clones among the jobs it competes with
clones      clone asks placed in idle capacity after the originals
waiting     containers still waiting for room after a round, which running clones may yield to
yielding    running clones preempted for waiting containers, beaten clones released
server      the grpc.Server: TLS, health checking protocol, graceful stop
service     everything assembled from a validated pyscheduler.config.Config
provider    the live state for the HTTP API (pyscheduler.api)
loadgen     `dollymp bench service` (with shimmodel, its pretend ResourceManager)
"""
