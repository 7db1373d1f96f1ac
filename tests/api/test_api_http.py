"""The HTTP API over a real socket and a real SQLite decision log."""

from __future__ import annotations

import json
import threading

import pytest
from apikit import Api, decision

from pyscheduler import metrics
from pyscheduler.api import ApiSettings, EmptyState, create_app
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import open_store


def test_health_and_readiness(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok", "reason": ""}
    assert api.client.get("/readyz").status_code == 200
    api.state.is_ready, api.state.reason = False, "awaiting resync"
    r = api.client.get("/readyz")
    assert r.status_code == 503 and r.json() == {"status": "not ready", "reason": "awaiting resync"}


def test_decisions_filters_and_pages(api: Api) -> None:
    api.store.append([decision(i, app=f"application_1_000{i % 2 + 1}") for i in range(30)])
    api.store.append([decision(99, kind=DecisionKind.KILL)])
    r = api.client.get("/v1/decisions", params={"application": "application_1_0002", "limit": 4})
    body = r.json()
    assert r.status_code == 200 and [d["time"] for d in body["items"]] == [1.0, 3.0, 5.0, 7.0]
    assert body["items"][0]["inputs"] == {"free_mb": 2047} and body["items"][0]["kind"] == "placement"
    seen = [d["id"] for d in body["items"]]
    while body["next_cursor"] is not None:
        params = {"application": "application_1_0002", "limit": 4, "cursor": body["next_cursor"]}
        body = api.client.get("/v1/decisions", params=params).json()
        seen.extend(d["id"] for d in body["items"])
    assert len(seen) == 15 and seen == sorted(seen)
    kinds = api.client.get("/v1/decisions", params=[("kind", "kill"), ("kind", "fallback")]).json()
    assert [d["time"] for d in kinds["items"]] == [99.0]
    ranged = api.client.get("/v1/decisions", params={"since": 10, "until": 12.5, "node": "host1:8041"}).json()
    assert [d["time"] for d in ranged["items"]] == [10.0, 12.0]
    newest = api.client.get("/v1/decisions", params={"order": "desc", "limit": 2, "job": "job_1_0001"}).json()
    assert [d["time"] for d in newest["items"]] == [99.0, 28.0]
    task = api.client.get("/v1/decisions", params={"task": "t7"}).json()
    assert [d["task_id"] for d in task["items"]] == ["t7"]


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 100000}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"since": "nan"}, "since"),
        ({"until": "inf"}, "until"),
        ({"since": "yesterday"}, "since"),
        ({"kind": "reboot"}, "kind"),
        ({"cursor": "-1"}, "cursor"),
        ({"cursor": "9" * 30}, "cursor"),
        ({"order": "sideways"}, "order"),
        ({"application": "a\x00b"}, "application"),
        ({"node": "n" * 300}, "node"),
    ],
)
def test_invalid_query_parameters_are_named(api: Api, params: dict[str, object], name: str) -> None:
    r = api.client.get("/v1/decisions", params=params)  # type: ignore[arg-type]
    assert r.status_code == 422, r.text
    assert name in {str(part) for err in r.json()["detail"] for part in err["loc"]}


def test_why_explains_a_waiting_application(api: Api) -> None:
    api.store.append([decision(i, app="application_1_0002", kind=DecisionKind.DEFERRAL) for i in range(25)])
    body = api.client.get("/v1/applications/application_1_0002/why").json()
    assert body["known"] is True
    app = body["application"]
    assert (app["priority"], app["position"], app["waiting_for"]) == (2.5, 1, "resources")
    assert app["detail"] == "no node has 4096 MB free"
    assert [d["time"] for d in body["last_decisions"]] == [float(i) for i in range(24, 4, -1)]
    # known to the service, nothing logged yet
    quiet = api.client.get("/v1/applications/application_1_0001/why").json()
    assert quiet["known"] and quiet["last_decisions"] == []
    # gone from the service but still in the log
    api.store.append([decision(1, app="application_1_0009")])
    gone = api.client.get("/v1/applications/application_1_0009/why").json()
    assert gone["known"] is False and gone["application"] is None and len(gone["last_decisions"]) == 1
    missing = api.client.get("/v1/applications/application_7_7777/why")
    assert missing.status_code == 404 and "application_7_7777" in missing.json()["detail"]


def test_state(api: Api) -> None:
    body = api.client.get("/v1/state").json()
    assert [n["node_id"] for n in body["nodes"]] == ["host1:8041", "host2:8041"]
    assert body["nodes"][0]["free"] == {"memory-mb": 2048.0, "vcores": 2.0}
    assert [a["application_id"] for a in body["applications"]] == ["application_1_0001", "application_1_0002"]
    assert body["pending_asks"] == [
        {
            "application_id": "application_1_0002",
            "capability": {"memory-mb": 4096.0, "vcores": 1.0},
            "count": 3,
            "priority": 0,
            "locality": ["host1"],
            "task_id": "",
        }
    ]
    assert body["clones_running"] == 1 and body["sessions"] == {"rm1": "active"}


def _read_events(
    api: Api,
    params: dict[str, str],
    n: int,
    headers: dict[str, str] | None = None,
    on_open: threading.Event | None = None,
) -> list[dict]:
    events: list[dict] = []
    with api.client.stream("GET", "/v1/decisions/stream", params=params, headers=headers) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        if on_open is not None:
            on_open.set()  # the stream's starting point is fixed once the response has begun
        event_id = None
        for line in r.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                assert data["id"] == event_id
                events.append(data)
                if len(events) == n:
                    break
    return events


def test_stream_sends_new_decisions_in_order(api: Api) -> None:
    old = api.store.append([decision(i) for i in range(3)])  # before connecting: not sent by default
    started = threading.Event()

    def produce() -> None:
        started.wait(10)
        for b in range(5):
            api.store.append(
                [decision(100 + b * 10 + i, app=f"application_1_000{i % 2 + 1}") for i in range(4)]
            )

    t = threading.Thread(target=produce)
    t.start()
    events = _read_events(api, {"application": "application_1_0002"}, 10, on_open=started)
    t.join()
    assert all(e["application_id"] == "application_1_0002" for e in events)
    ids = [e["id"] for e in events]
    assert ids == sorted(ids) and min(ids) > old[-1] and len(set(ids)) == 10
    # resuming from a Last-Event-ID replays exactly what followed it
    resumed = _read_events(
        api, {"application": "application_1_0002"}, 5, headers={"Last-Event-ID": str(ids[4])}
    )
    assert [e["id"] for e in resumed] == ids[5:10]
    from_start = _read_events(api, {"after": "0"}, 3)
    assert [e["id"] for e in from_start] == old


def test_stream_parameters_are_checked(api: Api) -> None:
    r = api.client.get("/v1/decisions/stream", params={"kind": "nope"})
    assert r.status_code == 422 and "kind" in r.text
    r = api.client.get("/v1/decisions/stream", headers={"Last-Event-ID": "abc"})
    assert r.status_code == 422 and "Last-Event-ID" in r.text


def test_config_validation(api: Api) -> None:
    good = '[grpc]\nport = 7070\n[http]\nhost = "0.0.0.0"\nport = 8080\ntoken = "t0ken"\n'
    r = api.client.post("/v1/config/validate", content=good, headers={"content-type": "application/toml"})
    body = r.json()
    assert r.status_code == 200 and body["valid"] is True
    assert body["values"]["grpc.port"] == 7070 and body["values"]["http.token"] == "***"
    bad = api.client.post(
        "/v1/config/validate", content="[grpc]\nprot = 1\n", headers={"content-type": "text/plain"}
    )
    assert bad.json()["valid"] is False and bad.json()["key"] == "grpc.prot"
    syntax = api.client.post("/v1/config/validate", content="[grpc\n", headers={"content-type": "text/plain"})
    assert syntax.json()["valid"] is False and "TOML" in syntax.json()["problem"]
    as_json = api.client.post("/v1/config/validate", json={"grpc": {"port": 70000}})
    assert as_json.json()["valid"] is False and as_json.json()["key"] == "grpc.port"
    needs_token = api.client.post("/v1/config/validate", json={"http": {"host": "10.0.0.1", "port": 80}})
    assert needs_token.json()["key"] == "http.token"
    not_object = api.client.post("/v1/config/validate", json=[1, 2])
    assert not_object.status_code == 422 and "body" in not_object.text
    section = api.client.post("/v1/config/validate", json={"grpc": 5}).json()
    assert section["valid"] is False and section["key"] == "grpc"
    broken = api.client.post(
        "/v1/config/validate", content=b"{", headers={"content-type": "application/json"}
    )
    assert broken.status_code == 400 and "JSON" in broken.text
    other = api.client.post("/v1/config/validate", content=b"x", headers={"content-type": "image/png"})
    assert other.status_code == 415


def test_bearer_token(api_with_token: Api) -> None:
    c = api_with_token.client
    assert c.get("/v1/decisions").status_code == 401
    assert c.get("/v1/decisions", headers={"Authorization": "Bearer wrong"}).status_code == 401
    r = c.get("/v1/state", headers={"Authorization": "Bearer s3cret-token"})
    assert r.status_code == 200
    assert c.get("/metrics").status_code == 401
    assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200
    spec = c.get("/openapi.json").json()
    assert "HTTPBearer" in spec["components"]["securitySchemes"]


def test_token_required_beyond_loopback(tmp_path: object) -> None:
    with open_store(f"sqlite:///{tmp_path}/x.db") as store:
        with pytest.raises(ValueError, match=r"http\.token"):
            create_app(store, EmptyState(), ApiSettings(host="0.0.0.0"))
        create_app(store, EmptyState(), ApiSettings(host="0.0.0.0", token="t"))
        create_app(store, EmptyState(), ApiSettings(host="::1"))


def test_metrics_exposition(api: Api) -> None:
    metrics.PLACEMENTS.inc(3)
    metrics.DECISION_ROUND_SECONDS.observe(0.004)
    metrics.FALLBACK_SECONDS.inc(1.5)
    api.store.append([decision(1, kind=DecisionKind.CLONE_GRANT)])
    r = api.client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    for name in (
        "dollymp_decision_round_seconds_bucket",
        "dollymp_queue_depth",
        "dollymp_placements_total",
        "dollymp_clones_granted_total",
        "dollymp_clones_wasted_total",
        "dollymp_fallback_seconds_total",
        'dollymp_decisions_logged_total{kind="clone_grant"}',
    ):
        assert name in text, name
    placements = next(line for line in text.splitlines() if line.startswith("dollymp_placements_total"))
    assert float(placements.split()[-1]) >= 3


def test_openapi_documents_every_endpoint(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    for path in (
        "/v1/decisions",
        "/v1/decisions/stream",
        "/v1/applications/{application_id}/why",
        "/v1/state",
        "/v1/config/validate",
        "/healthz",
        "/readyz",
        "/metrics",
    ):
        assert path in spec["paths"], path
    params = {p["name"] for p in spec["paths"]["/v1/decisions"]["get"]["parameters"]}
    assert params == {
        "application",
        "job",
        "node",
        "task",
        "kind",
        "since",
        "until",
        "limit",
        "cursor",
        "order",
    }
