"""The operator's web page (/ui/) and the JSON it reads (/v1/ui/...).

The page (pyscheduler/api/ui_assets: HTML, CSS and plain JavaScript, packaged in the wheel, nothing from a
CDN) holds no data: like /docs it is served without a token. Every JSON endpoint it calls takes the API's
bearer token: the page asks for it once (a login form), keeps it in the tab's sessionStorage and sends it
as `Authorization: Bearer ...`; the live updates read /v1/decisions/stream with fetch, which can send the
header (EventSource cannot).

An application's timeline is read page by page by log id from the `decisions_application` index
(keyset pagination, `DecisionLog.query`); the clone economics read the `attempt` decisions of a window
from the kind index starting at the window's first id (found on the `decisions_time` index), at most
ECONOMICS_MAX_ROWS of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Path, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from pyscheduler.api.models import ApplicationOut, DecisionOut, DecisionPage
from pyscheduler.api.provider import StateProvider
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import DecisionLog

ASSETS = ("ui.css", "ui.js", "ui_reads.js")
_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
ECONOMICS_MAX_ROWS = 50_000
TIMELINE_MAX_PAGE = 1000
_ID_TEXT = r"^[^\x00-\x1f]*$"
_CURSOR = r"^[0-9]{1,18}$"
_LOST = ("lost_race", "killed", "failed")


class NodeUse(BaseModel):
    node_id: str
    state: str
    running_containers: int
    capacity: dict[str, float]
    used: dict[str, float]
    use: float = Field(description="Largest used fraction over the node's resources (0..1)")


class QueueUse(BaseModel):
    queue: str
    running: int = Field(description="Applications with containers and nothing waiting")
    waiting: int = Field(description="Applications with pending asks")
    containers: int


class Overview(BaseModel):
    nodes: list[NodeUse]
    queues: list[QueueUse]
    applications: list[ApplicationOut] = Field(description="In priority order (position 0 first)")
    clones_running: int
    sessions: dict[str, str]
    latest_id: int = Field(description="The newest decision's log id")


class Economics(BaseModel):
    window_s: float
    since: float
    tasks_cloned: int = Field(description="Tasks that had at least one clone in the window")
    clones_launched: int
    clone_wins: int = Field(description="Tasks whose winning copy was a clone")
    original_wins: int = Field(description="Cloned tasks whose original still won")
    extra_container_s: float = Field(description="Container-seconds of copies that lost (thrown away)")
    saved_s: float = Field(
        description="Task time saved where a clone won: the original's estimated time left when it "
        "was killed (its elapsed time / its last progress, minus its elapsed time)"
    )
    tasks_without_estimate: int = Field(description="Clone wins whose original reported no progress")
    scanned: int
    truncated: bool = Field(description="More than the row limit in the window: figures are partial")


def asset(name: str) -> str:
    return resources.files("pyscheduler.api").joinpath("ui_assets", name).read_text("utf-8")


def overview(state_provider: StateProvider, store: DecisionLog) -> Overview:
    view = state_provider.state()
    nodes = []
    for n in view.nodes:
        used = {k: max(0.0, float(v) - float(n.free.get(k, 0.0))) for k, v in n.capacity.items()}
        use = max((used[k] / float(v) for k, v in n.capacity.items() if float(v) > 0), default=0.0)
        nodes.append(
            NodeUse(
                node_id=n.node_id,
                state=n.state,
                running_containers=n.running_containers,
                capacity=dict(n.capacity),
                used=used,
                use=round(use, 4),
            )
        )
    queues: dict[str, QueueUse] = {}
    for a in view.applications:
        q = queues.setdefault(
            a.queue or "default", QueueUse(queue=a.queue or "default", running=0, waiting=0, containers=0)
        )
        q.containers += a.running_containers
        if a.pending_asks:
            q.waiting += 1
        else:
            q.running += 1
    big = 1 << 62
    apps = sorted(
        view.applications, key=lambda a: (a.position if a.position is not None else big, a.application_id)
    )
    return Overview(
        nodes=nodes,
        queues=sorted(queues.values(), key=lambda q: q.queue),
        applications=[ApplicationOut.model_validate(a) for a in apps],
        clones_running=view.clones_running,
        sessions=dict(view.sessions),
        latest_id=store.latest_id(),
    )


def economics(store: DecisionLog, window_s: float, now: float | None = None) -> Economics:
    since = (time.time() if now is None else now) - window_s
    copies: dict[tuple[str, str], list[DecisionOut]] = {}
    first = store.first_id_since(since)
    scanned, truncated = 0, False
    cursor = None if first is None else first - 1
    while first is not None:  # the window's attempt records on the kind index, from its first id on
        page = store.query(kinds=(DecisionKind.ATTEMPT,), since=since, cursor=cursor, limit=5000)
        for s in page.items:
            d = DecisionOut.of(s)
            copies.setdefault((d.application_id, d.task_id), []).append(d)
        scanned += len(page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
        if scanned >= ECONOMICS_MAX_ROWS:
            truncated = True
            break
    out = Economics(
        window_s=window_s,
        since=since,
        tasks_cloned=0,
        clones_launched=0,
        clone_wins=0,
        original_wins=0,
        extra_container_s=0.0,
        saved_s=0.0,
        tasks_without_estimate=0,
        scanned=scanned,
        truncated=truncated,
    )
    for events in copies.values():
        launched = [e for e in events if e.reason == "clone_launched"]
        cloned = launched or [e for e in events if e.inputs.get("is_clone")]
        if not cloned:
            continue
        out.tasks_cloned += 1
        out.clones_launched += len(launched)
        winner = next((e for e in events if e.reason == "won"), None)
        losers = [e for e in events if e.reason in _LOST]
        out.extra_container_s += sum(float(e.inputs.get("duration_s") or 0.0) for e in losers)
        if winner is None:
            continue
        if not winner.inputs.get("is_clone"):
            out.original_wins += 1
            continue
        out.clone_wins += 1
        original = next((e for e in losers if not e.inputs.get("is_clone")), None)
        progress = float(original.inputs.get("progress") or 0.0) if original is not None else 0.0
        if original is None or not 0.0 < progress < 1.0:
            out.tasks_without_estimate += 1
            continue
        elapsed = float(original.inputs.get("duration_s") or 0.0)
        out.saved_s += elapsed / progress - elapsed
    out.extra_container_s = round(out.extra_container_s, 3)
    out.saved_s = round(out.saved_s, 3)
    return out


def mount(
    app: FastAPI,
    store: DecisionLog,
    state_provider: StateProvider,
    auth: Sequence[Any],
    responses: dict[int | str, dict[str, Any]],
    in_thread: Callable[..., Any],
) -> None:
    """Add /ui/, its assets and the JSON endpoints the page reads to `app` (pyscheduler.api.app)."""

    @app.get("/ui", include_in_schema=False)
    def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    @app.get("/ui/", include_in_schema=False, response_class=HTMLResponse)
    def ui_page() -> HTMLResponse:
        return HTMLResponse(asset("index.html"), headers={"Cache-Control": "no-cache"})

    @app.get("/ui/assets/{name}", include_in_schema=False)
    def ui_asset(name: Annotated[str, Path(max_length=64)]) -> Response:
        if name not in ASSETS:
            raise HTTPException(404, f"name: no asset {name!r}")
        return Response(asset(name), media_type=_TYPES[name[name.rindex(".") :]])

    @app.get(
        "/v1/ui/overview", response_model=Overview, dependencies=list(auth), tags=["ui"], responses=responses
    )
    async def ui_overview() -> Overview:
        """The cluster now: nodes and their use, queues, applications in priority order and why each waits."""
        result: Overview = await in_thread(overview, state_provider, store)
        return result

    @app.get(
        "/v1/applications/{application_id}/timeline",
        response_model=DecisionPage,
        dependencies=list(auth),
        tags=["ui"],
        responses=responses,
    )
    async def timeline(
        application_id: Annotated[str, Path(max_length=256, pattern=_ID_TEXT)],
        cursor: Annotated[
            str | None, Query(pattern=_CURSOR, description="next_cursor of the last page")
        ] = None,
        limit: Annotated[int, Query(ge=1, le=TIMELINE_MAX_PAGE, description="Page size")] = 500,
    ) -> DecisionPage:
        """One application's decisions oldest first (asks, placements, deferrals, clones, outcomes, ω),
        keyset-paginated on the log's application index."""
        page = await in_thread(
            store.query,
            application_id=application_id,
            cursor=int(cursor) if cursor is not None else None,
            limit=limit,
        )
        return DecisionPage.of(page)

    @app.get(
        "/v1/ui/economics",
        response_model=Economics,
        dependencies=list(auth),
        tags=["ui"],
        responses=responses,
    )
    async def ui_economics(
        window_s: Annotated[
            float, Query(gt=0, le=30 * 86400, allow_inf_nan=False, description="Window ending now (s)")
        ] = 3600.0,
    ) -> Economics:
        """Clone economics over a window: container-seconds of losing copies against task time saved."""
        result: Economics = await in_thread(economics, store, window_s)
        return result
