"""Roles of the HTTP API's bearer tokens: read (`http.token`) and admin (`http.admin_token`).

- read: every GET endpoint (decision log, stream, state, why, the web page's JSON, metrics);
- admin: the endpoints that probe or change the server's state (ADMIN_ENDPOINTS), and every read.

A caller without a valid token is answered 401; a caller whose token is valid but whose role is too
small 403, naming the role and the key of its token. With no admin token configured the admin endpoints
are refused (403 naming `http.admin_token`) whenever a read token is set; with no token at all (an API
on loopback only, pyscheduler.api.app) every endpoint stays open, as before roles. Tokens are compared
with hmac.compare_digest.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import Depends, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from pyscheduler.api.models import Problem

READ = "read"
ADMIN = "admin"
# Method and path of every endpoint that needs the admin role (the rest of /v1 and /metrics need read).
ADMIN_ENDPOINTS = frozenset({("POST", "/v1/config/validate")})
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _same(given: str, token: str) -> bool:
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


class Roles:
    """The FastAPI dependencies and documented answers of the read and admin roles."""

    def __init__(self, read_token: str, admin_token: str) -> None:
        if admin_token and admin_token == read_token:
            raise ValueError("http.admin_token must differ from http.token (the read-only token)")
        self.read_token = read_token
        self.admin_token = admin_token
        self._bearer = HTTPBearer(
            auto_error=False,
            description="http.token (read role: GET endpoints) or http.admin_token (admin role: all)",
        )

    def role(self, given: str) -> str | None:
        """The role a presented bearer token grants, None for no valid token."""
        if _same(given, self.admin_token):
            return ADMIN
        if _same(given, self.read_token):
            return READ
        return None

    def caller(self, authorization: str, client_host: str | None) -> str:
        """Who a request counts as for per-caller limits: its token's role when tokens are configured
        (`role:read`, `role:admin`), else its client address (`address:127.0.0.1`)."""
        scheme, _, given = authorization.partition(" ")
        role = self.role(given.strip()) if scheme.lower() == "bearer" else None
        if role is not None:
            return f"role:{role}"
        return f"address:{client_host or 'unknown'}"

    def _given(self, creds: HTTPAuthorizationCredentials | None) -> str:
        return creds.credentials if creds is not None else ""

    def _unauthorised(self) -> HTTPException:
        return HTTPException(401, "missing or invalid bearer token", headers=_CHALLENGE)

    def read(self) -> list[Any]:
        """Dependencies of a read endpoint: none when no read token is configured (loopback only)."""
        if not self.read_token:
            return []

        def read_role(creds: HTTPAuthorizationCredentials | None = Depends(self._bearer)) -> None:  # noqa: B008
            if self.role(self._given(creds)) is None:
                raise self._unauthorised()

        return [Depends(read_role)]

    def admin(self) -> list[Any]:
        """Dependencies of an admin endpoint: none only when no token at all is configured."""
        if not self.read_token and not self.admin_token:
            return []

        def admin_role(creds: HTTPAuthorizationCredentials | None = Depends(self._bearer)) -> None:  # noqa: B008
            role = self.role(self._given(creds))
            if role == ADMIN:
                return
            if role is None:
                raise self._unauthorised()
            if not self.admin_token:
                raise HTTPException(
                    403,
                    "this endpoint needs the admin role and no admin token is configured "
                    "(http.admin_token): admin endpoints are refused; the read token (http.token) "
                    "grants GET endpoints only",
                )
            raise HTTPException(
                403,
                "this endpoint needs the admin role: send the admin token (http.admin_token); "
                "the read token (http.token) grants GET endpoints only",
            )

        return [Depends(admin_role)]

    def read_responses(self) -> dict[int | str, dict[str, Any]]:
        if not self.read_token:
            return {}
        return {401: {"model": Problem, "description": "Missing or invalid bearer token"}}

    def admin_responses(self) -> dict[int | str, dict[str, Any]]:
        out: dict[int | str, dict[str, Any]] = {}
        if self.read_token or self.admin_token:
            out[401] = {"model": Problem, "description": "Missing or invalid bearer token"}
        if self.read_token:
            out[403] = {"model": Problem, "description": "The token's role is read; this needs admin"}
        return out
