"""The decision service, one sub-package per step a decision flows through: the wire -> what the RM and
the AMs reported (state/) -> a round over it -> the round's plan -> back over the wire.

state/      what the ResourceManager and the AM helpers reported: the mirror of each RM, the AM registry
round/      state -> plan: the translation for the core, the round functions and the steps around them,
            clones and yielding; the AM plan
limits      the bounds on everything a caller can make the service hold or compute, one validated object:
            read at the wire (refusals), by the state (attempts kept) and by the rounds (an ask's bound)
"""
