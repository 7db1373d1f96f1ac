"""The gRPC decision service: the only module that speaks the wire (proto/dollymp/v1).

validate    every wire message checked before anything is applied; errors name the field path
res         YARN resource vectors
mirror      one ResourceManager's state (nodes, apps, asks, containers) + unconfirmed placements
records     the mirror's records (nodes, apps, asks, containers, outstanding placements)
nodearrays  the mirror's per-node figures (capacity, allocation, container and outstanding sums) as arrays
session     sessions per rm_id (Register -> full resync -> batches), a decision round -> Plan
placer      service-side FCFS placement with locality ("yarn-fcfs"); the fit/locality invariants
translate   the mirror -> the decision core's Snapshot, its Decisions -> placements and deferrals
policy      policy name -> round function (the core's registry, plus "yarn-fcfs")
servicer    SchedulerService: Register and the Sync stream (bounded queue, coalescing, abort)
appmaster   AppMasterService: job profiles, attempt reports, clone plans
server      the grpc.Server: TLS, health checking protocol, graceful stop
service     everything assembled from a validated pyscheduler.config.Config
provider    the live state for the HTTP API (pyscheduler.api)
loadgen     `dollymp bench service` (with shimmodel, its pretend ResourceManager)
"""
