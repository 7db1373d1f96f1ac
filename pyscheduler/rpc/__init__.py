"""The gRPC decision service: the only module that speaks the wire (proto/dollymp/v1).

validate    every wire message checked before anything is applied; errors name the field path
auth        who may call: the shim by its shared secret (or client certificate), an AM by its AMRMToken
streams     how many Sync streams may be open, per client connection and in all
session     sessions per rm_id (Register -> full resync -> batches), a decision round -> Plan
servicer    SchedulerService: Register and the Sync stream (bounded queue, coalescing, abort)
durable     placements reach the decision log before the plan that carries them is sent
stats       counters of the Sync service, read by the bench and the HTTP metrics
amservice   AppMasterService: validates job profiles and attempt reports (ambounds), answers clone plans
server      the grpc.Server: TLS, health checking protocol, graceful stop
gcpace      CPython's cycle collector kept off the decision path
service     everything assembled from a validated pyscheduler.config.Config
provider    the live state for the HTTP API (pyscheduler.api)
loadgen     `dollymp bench service` (with shimmodel, its pretend ResourceManager)
"""
