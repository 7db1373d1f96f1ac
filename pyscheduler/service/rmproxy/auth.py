"""Who may call the service: the shim by its shared secret (or client certificate), an AM by its AMRMToken.

* The shim (SchedulerService: Register, Sync) presents the shared secret of `grpc.auth_secret_file` as
  call metadata `x-dollymp-secret`, compared in constant time; with `grpc.tls_client_ca` (mutual TLS) a
  verified client certificate also authenticates it. Anything else is UNAUTHENTICATED, so a stranger's
  Register cannot supersede the real RM's session (and push it into fallback).
* A Sync stream is bound to the connection that registered its session: a batch naming a session that
  another connection registered ends the stream with PERMISSION_DENIED, before the batch is applied.
* An AM (AppMasterService) presents `x-dollymp-amrm-sha256`, the hex SHA-256 of its AMRMToken's
  password; the shim forwards the same digest per application attempt (ApplicationInfo.
  amrm_token_sha256, the mirror's `AppRec.amrm_tokens`: the current and the previous one, across a
  roll-over). A call is accepted only for the application that digest belongs to, and an attempt report
  only for containers of that application. The digest is the one of the RM the application belongs to:
  the first rm_id whose session mirrored it owns it (session.py `SessionRegistry.claim`), across that
  RM's registrations; another session mirroring the same application never changes which digest is
  accepted. With shim authentication on, an application no authenticated RM session knows is refused;
  with it off (loopback only) such calls are accepted as before, but a digest the RM sent is still
  required. Off, RM registrations are also bound to their caller (service/rmproxy/callers.py: the local
  user on loopback): another local user cannot register the RM's rm_id while its session is live.
* The recurring-job history is kept only for applications the RM knows, by the queue, user and name the
  RM knows (`history_key`), never by what the AM says of itself.
"""

from __future__ import annotations

import hmac
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from pyscheduler.echo import detail, shown
from pyscheduler.service.rmproxy.session import SessionRegistry
from pyscheduler.service.state.records import application_of_attempt
from pyscheduler.store.history import JobKey

SECRET_HEADER = "x-dollymp-secret"
AM_TOKEN_HEADER = "x-dollymp-amrm-sha256"
MIN_SECRET_BYTES = 16
MAX_SECRET_BYTES = 4096
_SHIM = "/dollymp.v1.SchedulerService/"
_AM = "/dollymp.v1.AppMasterService/"
_CONTAINER_RE = re.compile(r"^container_(?:e\d+_)?(\d+)_(\d+)_\d+_\d+$")


class SecretError(ValueError):
    pass


def read_secret(path: str) -> bytes:
    """The shared secret in `path` (surrounding whitespace stripped); SecretError says what is wrong."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SecretError(f"cannot read {path!r}: {exc.strerror}") from None
    secret = raw.strip()
    if not MIN_SECRET_BYTES <= len(secret) <= MAX_SECRET_BYTES:
        raise SecretError(
            f"{path!r} holds {len(secret)} bytes; the secret must be {MIN_SECRET_BYTES}..{MAX_SECRET_BYTES}"
        )
    if any(b < 0x21 or b > 0x7E for b in secret):  # gRPC metadata values are printable ASCII
        raise SecretError(f"{path!r}: the secret must be printable ASCII without spaces")
    return secret


def application_of_container(container_id: str) -> str | None:
    """application_<ts>_<seq> for container_[e<epoch>_]<ts>_<seq>_<attempt>_<n>; None if not that shape."""
    m = _CONTAINER_RE.match(container_id)
    return f"application_{m.group(1)}_{m.group(2)}" if m else None


@dataclass(frozen=True, slots=True)
class AuthSettings:
    secret: bytes | None = None
    client_certs: bool = False  # mutual TLS: a verified client certificate authenticates the shim

    @property
    def required(self) -> bool:
        return self.secret is not None or self.client_certs


def _metadata(context: grpc.ServicerContext, key: str) -> str | None:
    for k, v in context.invocation_metadata() or ():
        if k == key:
            return v if isinstance(v, str) else v.decode("ascii", "replace")
    return None


class Guard(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """The server interceptor that enforces all of the above (pyscheduler.service.rmproxy.server installs
    it)."""

    def __init__(self, settings: AuthSettings, registry: SessionRegistry) -> None:
        self.settings = settings
        self.registry = registry
        self._lock = threading.Lock()
        self._peers: dict[str, str] = {}  # session id -> peer of the authenticated Register

    # ---- the interceptor -----------------------------------------------------------------------

    def intercept_service(self, continuation: Callable[[Any], Any], details: Any) -> Any:
        handler = continuation(details)
        method: str = details.method
        if handler is None:
            return None
        if method == _SHIM + "Register":
            return grpc.unary_unary_rpc_method_handler(
                self._register(handler.unary_unary), handler.request_deserializer, handler.response_serializer
            )
        if method == _SHIM + "Sync":
            return grpc.stream_stream_rpc_method_handler(
                self._sync(handler.stream_stream), handler.request_deserializer, handler.response_serializer
            )
        if method.startswith(_AM) and handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._am(handler.unary_unary), handler.request_deserializer, handler.response_serializer
            )
        return handler

    # ---- the shim ------------------------------------------------------------------------------

    def shim_refusal(self, context: grpc.ServicerContext) -> str | None:
        """Why this call is not the shim's (None: it is)."""
        s = self.settings
        if not s.required:
            return None
        if s.secret is not None:
            given = _metadata(context, SECRET_HEADER)
            if given is not None and hmac.compare_digest(given.encode("ascii", "replace"), s.secret):
                return None
        if s.client_certs and context.auth_context().get("x509_pem_cert"):
            return None
        if s.secret is None:
            return "a client certificate signed by grpc.tls_client_ca is required"
        return f"metadata {SECRET_HEADER!r}: missing or not the secret of grpc.auth_secret_file"

    def _register(self, inner: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def register(request: Any, context: grpc.ServicerContext) -> Any:
            why = self.shim_refusal(context)
            if why is not None:
                context.abort(grpc.StatusCode.UNAUTHENTICATED, detail(f"Register: {why}"))
            response = inner(request, context)
            with self._lock:
                live = {s.session_id for s in self.registry.sessions()}
                for sid in [sid for sid in self._peers if sid not in live]:
                    del self._peers[sid]
                self._peers[response.session_id] = context.peer()
            return response

        return register

    def _sync(self, inner: Callable[[Any, Any], Iterator[Any]]) -> Callable[[Any, Any], Iterator[Any]]:
        # Binding a stream to the connection that registered its session is the servicer's
        # (service/rmproxy/session.py `Session.peer`); the guard only checks who the caller is.
        def sync(request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
            why = self.shim_refusal(context)
            if why is not None:
                context.abort(grpc.StatusCode.UNAUTHENTICATED, detail(f"Sync: {why}"))
            yield from inner(request_iterator, context)

        return sync

    def authenticated(self, session_id: str) -> bool:
        """A session registered through this guard (by an authenticated shim when one is required)."""
        with self._lock:
            return session_id in self._peers

    # ---- the AMs -------------------------------------------------------------------------------

    def _am(self, inner: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            app_id = getattr(request, "application_id", None)  # Malformed: the servicer refuses it
            if app_id:
                code, why = self.am_refusal(app_id, _metadata(context, AM_TOKEN_HEADER), request)
                if code is not None:
                    context.abort(code, detail(why))
            return inner(request, context)

        return call

    def _tokens(self, app_id: str) -> tuple[bool, tuple[bytes, ...]]:
        """(known to a live RM, the AMRMToken digests that RM sent): the RM that owns the application
        (SessionRegistry.claim), never another session that mirrors it too; between the owner's Register
        and its full resync the digests it sent before."""
        owned = self.registry.owner(app_id)
        if owned is not None:
            return True, owned[0].tokens
        return False, ()

    def am_refusal(self, app_id: str, presented: str | None, request: Any) -> tuple[Any, str]:
        """(status code, why) for an AM call that must be refused; (None, "") to accept it."""
        known, tokens = self._tokens(app_id)
        if tokens:
            try:
                digest = bytes.fromhex(presented or "")
            except ValueError:
                digest = b""
            if not any(hmac.compare_digest(digest, t) for t in tokens):
                return grpc.StatusCode.UNAUTHENTICATED, (
                    f"metadata {AM_TOKEN_HEADER!r}: missing or not the AMRMToken of {shown(app_id)}"
                )
        elif self.settings.required:
            return grpc.StatusCode.UNAUTHENTICATED, (
                f"application_id: {shown(app_id)} is not known to an authenticated ResourceManager session"
                + (" (no AMRMToken issued yet)" if known else "")
            )
        attempts = [
            (i, a.container_id) for i, a in enumerate(getattr(request, "attempts", ())) if a.container_id
        ]
        owners = self._container_owners([cid for _, cid in attempts])
        for i, cid in attempts:
            owner = owners.get(cid)
            if owner is not None and owner != app_id:
                return grpc.StatusCode.PERMISSION_DENIED, (
                    f"attempts[{i}].container_id: {shown(cid)} belongs to {shown(owner)}, not {shown(app_id)}"
                )
        return None, ""

    def _container_owners(self, container_ids: list[str]) -> dict[str, str]:
        """The application each container belongs to: by the RM's record where a session mirrors it,
        else by its id (containers of neither kind are left out). Without the sessions' locks: an AM's
        report (up to limits.attempts_per_report containers) would hold the RM's Sync thread off its batches
        and rounds for the whole loop; each lookup is one dict read (atomic), and a container's record, once
        mirrored, names the same attempt until it goes (records are replaced, never rewritten). While a
        full resync refills the mirror a record may be missed: the container's id names its application."""
        out: dict[str, str] = {}
        if not container_ids:
            return out
        for s in self.registry.sessions():
            known = s.mirror.containers
            for cid in container_ids:
                rec = known.get(cid)
                if rec is not None and cid not in out:
                    out[cid] = application_of_attempt(rec.attempt_id)
        for cid in container_ids:
            if cid not in out and (app := application_of_container(cid)) is not None:
                out[cid] = app
        return out

    def history_key(self, app_id: str) -> JobKey | None:
        """The queue, user and job name the RM that owns `app_id` knows it by; None for an application
        no live RM owns (or between its Register and full resync). Without the session's lock: from its
        last round's view (service/round/planview.py: a copy no batch writes, so a full resync that
        clears the live mirror is never seen half-done), else one read of the live mirror (an application
        upserted since that round; records are replaced on change, never rewritten)."""
        owned = self.registry.owner(app_id)
        if owned is None:
            return None
        s = owned[1]
        view = s.view
        rec = view.mirror.apps.get(app_id) if view is not None else None
        if rec is None:
            rec = s.mirror.apps.get(app_id)
        return JobKey(rec.queue, rec.user, rec.name) if rec is not None else None
