"""The decision service, one sub-package per step a decision flows through: the wire -> what the RM and
the AMs reported (state/) -> a round over it -> the round's plan -> back over the wire.

state/      what the ResourceManager and the AM helpers reported: the mirror of each RM, the AM registry
"""
