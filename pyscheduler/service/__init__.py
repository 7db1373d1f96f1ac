"""The decision service, one sub-package per step a decision flows through: the wire (rmproxy/) -> what the
RM and the AMs reported (state/) -> a round over it (round/) -> the round's plan (round/plan.py) -> back over
the wire (rmproxy/).

rmproxy/    the gRPC boundary, the only gRPC code: the servers, RM sessions, validation, who may call, the
            AM service; a plan leaves only after its placements reached the decision log
state/      what the ResourceManager and the AM helpers reported: the mirror of each RM, the AM registry
round/      state -> plan: the translation for the core, the round functions and the steps around them,
            clones and yielding; the AM plan
limits      the bounds on everything a caller can make the service hold or compute, one validated object:
            read at the wire (refusals), by the state (attempts kept) and by the rounds (an ask's bound)
roundsfirst RM rounds first: AM work waits at its checkpoints while a round runs (the Sync handler marks
            its rounds; the AM calls' steps in rmproxy/, round/ and state/ check)

Layers: rmproxy/ may import round/ and state/, round/ may import state/, state/ imports neither; limits
and roundsfirst import none of them (tests/core/test_structure.py checks it, with its known exceptions).
"""
