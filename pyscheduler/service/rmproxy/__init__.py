"""The gRPC boundary: the only package that speaks the wire (proto/dollymp/v1). Every message is validated
here before the state (service/state) changes; a round (service/round) runs on the state and its plan goes
back from here, after its placements reached the decision log.

server      the grpc.Server: TLS, health checking protocol, graceful stop
servicer    SchedulerService: Register and the Sync stream (bounded queue, coalescing, abort)
session     sessions per rm_id (Register -> full resync -> batches), a decision round (service/round) -> Plan
validate    every wire message checked before anything is applied; errors name the field path
auth        who may call: the shim by its shared secret (or client certificate), an AM by its AMRMToken
callers     who a caller is: the local user owning a loopback peer's socket, else the peer's address
streams     how many Sync streams may be open, per client connection and in all
durable     placements reach the decision log before the plan that carries them is sent
stats       counters of the Sync service, read by the bench and the HTTP metrics
gcpace      CPython's cycle collector kept off the decision path (run by the Sync handler between rounds)
amservice   AppMasterService: validates job profiles and attempt reports (ambounds), answers clone plans
amgate      the AM calls' CPU, costed and budgeted per application and per queue; past it, deferred
ambounds    checks of what an AM helper reports (job profiles, attempt reports) against the limits
service     everything assembled from a validated pyscheduler.config.Config
provider    the live state for the HTTP API (pyscheduler.api), read of the sessions and their mirrors
"""
