"""Building, starting and gracefully stopping the gRPC server."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from pyscheduler.service.rmproxy import amservice
from pyscheduler.service.rmproxy.servicer import SERVICE_NAME, SchedulerServicer, generic_handler


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM file contents for TLS; client_ca set means client certificates are required."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None


@dataclass(frozen=True, slots=True)
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 0
    max_workers: int = 32  # each open Sync stream holds one worker thread
    max_message_mb: int = 64  # a full resync of a large cluster is one message
    idle_timeout_s: float = 300.0  # a connection with no RPC in progress this long is closed (GOAWAY)
    tls: TlsFiles | None = None


class GrpcServer:
    """The service's gRPC server; `port` is the bound port (useful with port 0)."""

    def __init__(
        self,
        servicer: SchedulerServicer,
        options: ServerOptions,
        am_servicer: amservice.AppMasterServicer | None = None,
        interceptors: Sequence[grpc.ServerInterceptor[Any, Any]] = (),
    ) -> None:
        self.servicer = servicer
        self.options = options
        limit = options.max_message_mb * 1024 * 1024
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=options.max_workers, thread_name_prefix="grpc"),
            handlers=[generic_handler(servicer)],
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", limit),
                ("grpc.so_reuseport", 0),
                # Only connections without an active RPC: an open Sync stream is never cut by it.
                ("grpc.max_connection_idle_ms", max(1, round(options.idle_timeout_s * 1000))),
            ],
            maximum_concurrent_rpcs=options.max_workers * 4,
            interceptors=list(interceptors),  # pyscheduler.service.rmproxy.auth.Guard
        )
        if am_servicer is not None:
            self.server.add_generic_rpc_handlers((amservice.generic_handler(am_servicer),))
        # The standard gRPC health checking protocol (grpc.health.v1.Health).
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._names = ("", SERVICE_NAME, *((amservice.SERVICE_NAME,) if am_servicer is not None else ()))
        address = f"{_bracket(options.host)}:{options.port}"
        if options.tls is not None:
            creds = grpc.ssl_server_credentials(
                [(options.tls.private_key, options.tls.cert_chain)],
                root_certificates=options.tls.client_ca,
                require_client_auth=options.tls.client_ca is not None,
            )
            self.port = self.server.add_secure_port(address, creds)
        else:
            self.port = self.server.add_insecure_port(address)
        if self.port == 0:
            raise OSError(f"cannot bind gRPC to {address}")

    def start(self) -> None:
        self.server.start()
        for name in self._names:
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace_s: float) -> None:
        """Stop taking new work, let each stream finish its round in flight, then close."""
        self.health.enter_graceful_shutdown()  # NOT_SERVING for every service name
        self.servicer.draining.set()
        self.server.stop(grace_s).wait(grace_s + 1.0)

    def wait(self, timeout: float | None = None) -> bool:
        return self.server.wait_for_termination(timeout)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
