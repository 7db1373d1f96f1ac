"""The HTTP API of the decision service (FastAPI; OpenAPI at /openapi.json, docs at /docs and /redoc).

    app = create_app(store, state_provider, ApiSettings.from_config(cfg))
    server = ApiServer(app, host, port); server.start(); ...; server.stop()   # see pyscheduler.api.server

Authentication: when `settings.token` (the read role) is set every endpoint except /healthz and
/readyz requires `Authorization: Bearer <token>`; a token is mandatory when the API is bound beyond
loopback (`create_app` refuses otherwise). Endpoints that probe or change the server's state
(roles.ADMIN_ENDPOINTS) need the admin role, `settings.admin_token`: a read token gets 403 there
(pyscheduler.api.roles). Invalid query parameters are answered 422 with the parameter named
in `detail[].loc`; a store that cannot be reached is 503; nothing a client sends causes a 5xx.

The interactive docs (Swagger UI at /docs, ReDoc at /redoc) load their scripts and styles from this
server (DOCS_ASSETS, packaged by the fastapi-offline dependency), never from a CDN, so they work on an
air-gapped cluster. Like /openapi.json they need no token: they describe the API and hold no data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi_offline import FastAPIOffline
from starlette.background import BackgroundTask

from pyscheduler import __version__, metrics
from pyscheduler.api import configcheck, stream, ui
from pyscheduler.api.bodylimits import check_depth, read_body, too_deep, utf8_text
from pyscheduler.api.models import (
    ApplicationOut,
    ConfigCheck,
    DecisionOut,
    DecisionPage,
    Health,
    Problem,
    StateOut,
    WhyOut,
)
from pyscheduler.api.provider import StateProvider
from pyscheduler.api.roles import Roles
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import DecisionLog, StoreError

API_MAX_PAGE = 1000
_ID_TEXT = r"^[^\x00-\x1f]*$"  # printable: no NUL or control characters (PostgreSQL text refuses NUL)
_CURSOR = r"^[0-9]{1,18}$"
DOCS_ASSETS = "/docs/assets"  # Swagger UI's and ReDoc's JS, CSS and favicon, served by the API itself


@dataclass(frozen=True)
class ApiSettings:
    host: str = "127.0.0.1"  # where the API is bound (decides whether a token is required)
    token: str = ""  # read role's bearer token; empty: no authentication (loopback only)
    admin_token: str = ""  # admin role's bearer token; empty: admin endpoints refused when token is set
    stream_poll_s: float = 0.25  # how often the SSE stream looks for new decisions
    stream_keepalive_s: float = 15.0  # comment line sent on an idle stream
    why_decisions: int = 20  # decisions shown by /why
    body_bytes: int = 1 << 20  # request body size (limits.http_body_bytes)
    json_depth: int = 32  # nesting of a request body (limits.json_depth)
    stream_max_total: int = 1000  # live SSE streams open at once (http.stream_max_total)
    stream_max_per_caller: int = 250  # per token role, or per client address without tokens
    stream_queue_events: int = 10_000  # decisions a stream may fall behind before it is dropped

    @classmethod
    def from_config(cls, cfg: Any) -> ApiSettings:
        """From a pyscheduler.config.Config (keys http.host, http.token, http.admin_token, body limits)."""
        return cls(
            host=str(cfg["http.host"]),
            token=str(cfg["http.token"]),
            admin_token=str(cfg["http.admin_token"]),
            body_bytes=int(cfg["limits.http_body_bytes"]),
            json_depth=int(cfg["limits.json_depth"]),
            stream_max_total=int(cfg["http.stream_max_total"]),
            stream_max_per_caller=int(cfg["http.stream_max_per_caller"]),
            stream_queue_events=int(cfg["http.stream_queue_events"]),
        )


def _text(name: str) -> Any:
    return Query(max_length=256, pattern=_ID_TEXT, description=f"Only decisions with this {name}")


# Shared filter parameters of /v1/decisions and /v1/decisions/stream.
Application = Annotated[str | None, _text("application id")]
Job = Annotated[str | None, _text("job id")]
Node = Annotated[str | None, _text("node id")]
Task = Annotated[str | None, _text("task id")]
Kinds = Annotated[list[DecisionKind] | None, Query(description="Decision kinds (repeat for several)")]
Since = Annotated[float | None, Query(allow_inf_nan=False, description="time >= since (driver clock, s)")]
Until = Annotated[float | None, Query(allow_inf_nan=False, description="time < until (driver clock, s)")]


def create_app(
    store: DecisionLog, state_provider: StateProvider, settings: ApiSettings | None = None
) -> FastAPI:
    from pyscheduler.config import is_loopback

    settings = settings or ApiSettings()
    if not is_loopback(settings.host) and not settings.token:
        raise ValueError(
            f"http.token is required when the HTTP API binds to {settings.host!r} (not loopback)"
        )
    app = FastAPIOffline(
        title="DollyMP decision service",
        version=__version__,
        description="Decision log, live state, health and metrics of the DollyMP scheduler for YARN.",
        static_url=DOCS_ASSETS,
        # No validator badge: Swagger UI would fetch it from validator.swagger.io.
        swagger_ui_parameters={"validatorUrl": None},
    )
    roles = Roles(settings.token, settings.admin_token)
    auth = roles.read()  # without a token: no dependency, no security scheme in the OpenAPI document
    admin = roles.admin()
    unauthorised = roles.read_responses()
    store_down: dict[int | str, dict[str, Any]] = {
        503: {"model": Problem, "description": "The decision log cannot be reached"}
    }
    guarded = {**unauthorised, **store_down}
    hub = stream.StreamHub(store, settings.stream_poll_s, settings.stream_queue_events)
    slots = stream.StreamSlots(settings.stream_max_total, settings.stream_max_per_caller)
    app.state.stream_hub = hub
    app.state.stream_slots = slots

    async def in_thread(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await run_in_threadpool(fn, *args, **kwargs)
        except StoreError as exc:
            raise HTTPException(503, f"decision log unavailable: {exc}") from exc

    @app.get("/healthz", response_model=Health, tags=["health"])
    def healthz() -> Health:
        """Liveness: the process serves HTTP."""
        return Health(status="ok")

    @app.get("/readyz", response_model=Health, responses={503: {"model": Health}}, tags=["health"])
    async def readyz() -> Any:
        """Readiness: a ResourceManager session has resynced and the decision log answers."""
        ok, reason = await run_in_threadpool(state_provider.ready)
        if ok:
            try:
                await run_in_threadpool(store.latest_id)
            except Exception as exc:
                ok, reason = False, f"decision log unavailable: {type(exc).__name__}"
        body = Health(status="ready" if ok else "not ready", reason=reason)
        return JSONResponse(body.model_dump(), status_code=200 if ok else 503)

    @app.get("/metrics", dependencies=auth, tags=["health"], response_class=Response, responses=unauthorised)
    def prometheus_metrics() -> Response:
        """Prometheus text exposition: round latency, queue depth, placements, clones, fallback."""
        return Response(metrics.render(), media_type=metrics.CONTENT_TYPE)

    @app.get(
        "/v1/decisions", response_model=DecisionPage, dependencies=auth, tags=["decisions"], responses=guarded
    )
    async def decisions(
        application: Application = None,
        job: Job = None,
        node: Node = None,
        task: Task = None,
        kind: Kinds = None,
        since: Since = None,
        until: Until = None,
        limit: Annotated[int, Query(ge=1, le=API_MAX_PAGE, description="Page size")] = 100,
        cursor: Annotated[
            str | None, Query(pattern=_CURSOR, description="next_cursor of the last page")
        ] = None,
        order: Annotated[str, Query(pattern="^(asc|desc)$", description="asc: oldest first")] = "asc",
    ) -> DecisionPage:
        """Decisions matching all given filters, keyset-paginated by log id."""
        page = await in_thread(
            store.query,
            application_id=application,
            job_id=job,
            node_id=node,
            task_id=task,
            kinds=kind or (),
            since=since,
            until=until,
            cursor=int(cursor) if cursor is not None else None,
            limit=limit,
            order=order,
        )
        return DecisionPage.of(page)

    @app.get(
        "/v1/decisions/stream",
        dependencies=auth,
        tags=["decisions"],
        response_class=StreamingResponse,
        responses={
            200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"},
            429: {"model": Problem, "description": "Too many live streams open (in total or of this caller)"},
            **guarded,
        },
    )
    async def decision_stream(
        request: Request,
        application: Application = None,
        job: Job = None,
        node: Node = None,
        task: Task = None,
        kind: Kinds = None,
        after: Annotated[
            str | None,
            Query(pattern=_CURSOR, description="Start after this id (default: new decisions only)"),
        ] = None,
    ) -> StreamingResponse:
        """New decisions as server-sent events (`event: decision`, `id:` the log id, `data:` JSON).
        Reconnecting clients may send `Last-Event-ID` instead of `after`."""
        start = after if after is not None else request.headers.get("last-event-id")
        if start is not None and not re.fullmatch(_CURSOR, start):
            raise HTTPException(422, "Last-Event-ID must be a decision id (1 to 18 digits)")
        first = int(start) if start is not None else await in_thread(store.latest_id)
        filters = stream.Filters(application, job, node, task, tuple(kind or ()))
        caller = roles.caller(
            request.headers.get("authorization", ""), request.client.host if request.client else None
        )
        try:
            slot = slots.acquire(caller)
        except stream.StreamRefused as exc:
            raise HTTPException(429, str(exc), headers={"Retry-After": "5"}) from None
        events = stream.decision_events(hub, slot, first, filters, settings.stream_keepalive_s)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
            background=BackgroundTask(slot.release),  # also when the stream never started
        )

    @app.get(
        "/v1/applications/{application_id}/why",
        response_model=WhyOut,
        dependencies=auth,
        tags=["state"],
        responses={
            404: {"model": Problem, "description": "Neither the service nor the log knows the application"},
            **guarded,
        },
    )
    async def why(
        application_id: Annotated[str, Path(max_length=256, pattern=_ID_TEXT)],
    ) -> WhyOut:
        """Why is this application waiting: its priority, position, what it waits for, last decisions."""
        view = await run_in_threadpool(state_provider.application, application_id)
        page = await in_thread(
            store.query, application_id=application_id, order="desc", limit=settings.why_decisions
        )
        if view is None and not page.items:
            raise HTTPException(404, f"application {application_id!r} is unknown to the service and the log")
        return WhyOut(
            application_id=application_id,
            known=view is not None,
            application=ApplicationOut.model_validate(view) if view is not None else None,
            last_decisions=[DecisionOut.of(s) for s in page.items],
        )

    @app.get("/v1/state", response_model=StateOut, dependencies=auth, tags=["state"], responses=unauthorised)
    async def state() -> StateOut:
        """The live state: nodes, applications, pending asks, clones running."""
        return StateOut.model_validate(await run_in_threadpool(state_provider.state))

    @app.post(
        "/v1/config/validate",
        response_model=ConfigCheck,
        dependencies=admin,
        tags=["config"],
        responses={
            400: {"model": Problem, "description": "Not JSON, not UTF-8 (UTF-16/32, NUL), or too deep"},
            413: {"model": Problem, "description": "The body is larger than limits.http_body_bytes"},
            415: {"model": Problem, "description": "Unsupported content type"},
            422: {"model": Problem, "description": "The JSON body is not an object"},
            **roles.admin_responses(),
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"type": "object", "additionalProperties": True}},
                    "text/plain": {"schema": {"type": "string"}},
                },
            }
        },
    )
    async def validate_config(request: Request) -> ConfigCheck:
        """Validate a configuration: the TOML file as text/plain (or application/toml), or the same
        document as a JSON object. Answers `valid` and, if not, the first invalid key and why.
        Admin role (http.admin_token) when tokens are configured."""
        raw = await read_body(request, settings.body_bytes)
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media not in ("application/json", "text/plain", "application/toml", ""):
            raise HTTPException(
                415, f"content-type {media!r}: use text/plain, application/toml or application/json"
            )
        text = utf8_text(raw)
        is_json = media == "application/json"
        check_depth(text, settings.json_depth, toml=not is_json)
        try:
            if not is_json:
                return await run_in_threadpool(configcheck.check_toml, text)
            try:
                doc = json.loads(text)
            except ValueError as exc:
                raise HTTPException(400, f"body: not valid JSON: {exc}") from None
            if not isinstance(doc, dict):
                raise HTTPException(422, "body: must be a JSON object of sections")
            return await run_in_threadpool(configcheck.check_document, doc)
        except RecursionError:  # the depth scan is the first wall; the parser's own limit the second
            raise too_deep(settings.json_depth) from None

    ui.mount(app, store, state_provider, auth, guarded, in_thread)
    return app
