"""The gRPC decision service: the only module that speaks the wire (proto/dollymp/v1).

loadgen     `dollymp bench service` (with shimmodel, its pretend ResourceManager)
"""
