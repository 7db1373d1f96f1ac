"""The HTTP API's roles over a real socket: the read token (http.token) reads, the admin token
(http.admin_token) also reaches the endpoints that probe or change the server (issue 28)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apikit import ADMIN_TOKEN, READ_TOKEN, Api, decision
from fastapi.routing import APIRoute

from pyscheduler.api import ApiSettings, EmptyState, create_app
from pyscheduler.api.roles import ADMIN_ENDPOINTS
from pyscheduler.api.ui import asset
from pyscheduler.store import open_store

APP = "application_1_0001"
READS = (
    "/v1/decisions",
    "/v1/decisions?order=desc&limit=1",
    "/v1/state",
    f"/v1/applications/{APP}/why",
    f"/v1/applications/{APP}/timeline",
    "/v1/ui/overview",
    "/v1/ui/economics",
    "/metrics",
)
TOML = {"content-type": "application/toml"}
GOOD = '[http]\nhost = "0.0.0.0"\ntoken = "t0ken"\nadmin_token = "adm1n"\n'


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _validate(api: Api, token: str | None) -> tuple[int, dict[str, object]]:
    headers = {**TOML, **(_bearer(token) if token is not None else {})}
    r = api.client.post("/v1/config/validate", content=GOOD, headers=headers)
    return r.status_code, r.json()


def test_read_token_reads_and_is_refused_admin(api_with_roles: Api) -> None:
    api_with_roles.store.append([decision(1)])
    c = api_with_roles.client
    for path in READS:
        for token in (READ_TOKEN, ADMIN_TOKEN):  # the admin role reads too
            r = c.get(path, headers=_bearer(token))
            assert r.status_code == 200, (path, token, r.text)
        assert c.get(path).status_code == 401, path
        assert c.get(path, headers=_bearer("wrong")).status_code == 401, path
    status, body = _validate(api_with_roles, READ_TOKEN)
    assert status == 403, body
    assert "admin role" in str(body["detail"]) and "http.admin_token" in str(body["detail"])
    status, body = _validate(api_with_roles, ADMIN_TOKEN)
    assert status == 200 and body["valid"] is True, body
    values = body["values"]
    assert isinstance(values, dict)
    assert values["http.token"] == "***" and values["http.admin_token"] == "***"  # secrets masked
    for token in (None, "wrong", READ_TOKEN + "x", READ_TOKEN[:-1]):
        status, body = _validate(api_with_roles, token)
        assert status == 401, (token, body)
    r = c.post("/v1/config/validate", content=GOOD, headers={**TOML, "Authorization": f"Basic {ADMIN_TOKEN}"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200


def test_admin_endpoints_refused_without_an_admin_token(api_with_token: Api) -> None:
    status, body = _validate(api_with_token, "s3cret-token")
    assert status == 403, body
    assert "no admin token is configured (http.admin_token)" in str(body["detail"])
    assert _validate(api_with_token, None)[0] == 401
    assert _validate(api_with_token, "wrong")[0] == 401
    assert api_with_token.client.get("/v1/state", headers=_bearer("s3cret-token")).status_code == 200


def test_loopback_without_tokens_stays_open(api: Api) -> None:
    assert _validate(api, None)[0] == 200
    assert api.client.get("/v1/state").status_code == 200


def test_admin_token_alone_guards_admin_endpoints_only(api_admin_only: Api) -> None:
    assert api_admin_only.client.get("/v1/state").status_code == 200  # reads open, as with no token
    assert _validate(api_admin_only, None)[0] == 401
    assert _validate(api_admin_only, "wrong")[0] == 401
    assert _validate(api_admin_only, ADMIN_TOKEN)[0] == 200


def test_every_endpoint_but_get_is_admin_and_documented(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/x.db") as store:
        app = create_app(store, EmptyState(), ApiSettings(token="r", admin_token="a"))
        routes = [r for r in app.routes if isinstance(r, APIRoute)]
        other = {(m, r.path) for r in routes for m in r.methods if m not in ("GET", "HEAD")}
        assert other == ADMIN_ENDPOINTS
        spec = app.openapi()
        for method, path in ADMIN_ENDPOINTS:
            answers = spec["paths"][path][method.lower()]["responses"]
            assert {"401", "403"} <= set(answers), (path, answers)
        with pytest.raises(ValueError, match=r"http\.admin_token must differ"):
            create_app(store, EmptyState(), ApiSettings(token="same", admin_token="same"))


def test_web_page_only_reads() -> None:
    """The page works with a read token: it only GETs (fetch with no method) endpoints a read reaches."""
    js = asset("ui.js")
    assert not re.search(r"method\s*:", js) and "POST" not in js
    paths = re.findall(r"""\b(?:fetch|api)\(\s*[`"']([^`"'$?]+)""", js)
    assert len(paths) >= 5, paths
    for path in paths:
        assert path.startswith(("/v1/decisions", "/v1/ui/", "/v1/applications/")), path
