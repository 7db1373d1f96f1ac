"""The operator page's JSON (/v1/ui/..., /v1/applications/{id}/timeline) and assets (/ui/), over a real
socket and a real SQLite log: what each answers, the token, and that timeline pages come from an index."""

from __future__ import annotations

import time

from apikit import Api

from pyscheduler.api.ui import ASSETS, economics
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import DecisionLog

APP = "application_1_0001"


def _outcome(
    t: float, reason: str, task: str, attempt: str, clone: bool, duration: float, progress: float
) -> Decision:
    return Decision(
        t,
        DecisionKind.ATTEMPT,
        reason,
        application_id=APP,
        job_id=APP,
        task_id=task,
        node_id="host1:8041",
        inputs={"attempt_id": attempt, "is_clone": clone, "duration_s": duration, "progress": progress},
    )


def test_page_and_assets_are_served_without_a_token_and_data_needs_it(api_with_token: Api) -> None:
    c = api_with_token.client
    page = c.get("/ui/")
    assert page.status_code == 200 and '<script src="/ui/assets/ui.js">' in page.text
    assert "http" not in page.text.split("<body>")[1].replace("http.token", "")  # nothing from elsewhere
    for name in ASSETS:
        r = c.get(f"/ui/assets/{name}")
        assert r.status_code == 200 and r.text, name
        assert "https://" not in r.text and "http://" not in r.text, name
    assert c.get("/ui/assets/..%2Fapp.py").status_code == 404
    assert c.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
    for path in ("/v1/ui/overview", "/v1/ui/economics", f"/v1/applications/{APP}/timeline"):
        assert c.get(path).status_code == 401, path
        ok = c.get(path, headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200, (path, ok.text)


def test_overview_orders_applications_and_sums_nodes_and_queues(api: Api) -> None:
    o = api.client.get("/v1/ui/overview").json()
    assert [a["application_id"] for a in o["applications"]] == ["application_1_0001", "application_1_0002"]
    assert o["applications"][1]["waiting_for"] == "resources"
    uses = {n["node_id"]: n["use"] for n in o["nodes"]}
    assert uses == {"host1:8041": 0.75, "host2:8041": 1.0}
    assert o["nodes"][0]["used"] == {"memory-mb": 6144.0, "vcores": 6.0}
    assert o["queues"] == [{"queue": "default", "running": 1, "waiting": 1, "containers": 4}]


def test_timeline_pages_follow_the_cursor_and_refuse_bad_input(api: Api) -> None:
    api.store.append(
        [
            Decision(float(i), DecisionKind.PLACEMENT, "best_fit", application_id=APP if i % 2 else "other")
            for i in range(30)
        ]
    )
    seen: list[int] = []
    cursor = None
    while True:
        params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
        page = api.client.get(f"/v1/applications/{APP}/timeline", params=params).json()
        seen += [d["id"] for d in page["items"]]
        assert all(d["application_id"] == APP for d in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 15 and seen == sorted(seen)
    bad = api.client.get(f"/v1/applications/{APP}/timeline", params={"limit": 5000})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "limit"]
    bad = api.client.get(f"/v1/applications/{APP}/timeline", params={"cursor": "1; DROP"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "cursor"]
    assert api.client.get("/v1/ui/economics", params={"window_s": -1}).status_code == 422


def test_timeline_and_economics_pages_are_read_from_indexes(api: Api) -> None:
    store: DecisionLog = api.store
    store.append(
        [Decision(float(i), DecisionKind.PLACEMENT, "best_fit", application_id=APP) for i in range(50)]
    )
    timeline = " | ".join(store.query_plan(application_id=APP, cursor=10, limit=500))
    assert (
        "USING INDEX decisions_application" in timeline
        or "USING COVERING INDEX decisions_application" in timeline
    ), timeline
    assert "SCAN d " not in timeline + " " and "SCAN decisions" not in timeline, timeline
    first = store.first_id_since(10.0)
    assert first == 11
    window = " | ".join(
        store.query_plan(kinds=(DecisionKind.ATTEMPT,), since=10.0, cursor=first - 1, limit=5000)
    )
    assert "INDEX decisions_kind (kind=? AND id>?)" in window, window
    assert "SCAN d " not in window + " " and "SCAN decisions" not in window, window


def test_economics_counts_losers_and_time_saved_by_clone_wins(api: Api) -> None:
    now = time.time()
    api.store.append(
        [
            _outcome(now - 30, "clone_launched", "t1", "a1_1", True, 0.0, 0.0),
            _outcome(now - 10, "won", "t1", "a1_1", True, 20.0, 1.0),
            # the original had done 25% in 40 s: 120 s left when it was killed
            _outcome(now - 10, "lost_race", "t1", "a1_0", False, 40.0, 0.25),
            _outcome(now - 29, "clone_launched", "t2", "a2_1", True, 0.0, 0.0),
            _outcome(now - 9, "won", "t2", "a2_0", False, 21.0, 1.0),
            _outcome(now - 9, "lost_race", "t2", "a2_1", True, 20.0, 0.5),
            _outcome(now - 9, "won", "t3", "a3_0", False, 5.0, 1.0),  # never cloned: not counted
            _outcome(now - 7200, "clone_launched", "t4", "a4_1", True, 0.0, 0.0),  # outside the window
        ]
    )
    e = api.client.get("/v1/ui/economics", params={"window_s": 3600}).json()
    assert (e["tasks_cloned"], e["clones_launched"], e["clone_wins"], e["original_wins"]) == (2, 2, 1, 1)
    assert e["extra_container_s"] == 60.0 and e["saved_s"] == 120.0
    assert e["tasks_without_estimate"] == 0 and e["scanned"] == 7 and not e["truncated"]
    late = economics(api.store, 9.5, now=now)  # only t2 and t3 ended in the last 9.5 s
    assert (late.tasks_cloned, late.clone_wins, late.original_wins) == (1, 0, 1)
