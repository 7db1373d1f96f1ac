"""The docker-compose cluster, built and run for real (`make compose-test`, part of `make test`).

A Docker engine (docker/engine.sh), the images built from this checkout, HDFS + YARN with the shim +
three NodeManagers + the history server + the decision service up, secured as compose sets it up by
default (the shim's secret made at the service's first start, shared with the RM only; AMs bound to
their AMRMToken; the HTTP API behind its token); then, from the client container as a user would: the
operator's guide's smoke test word for word, wordcount on HDFS with its counts checked, pi,
teragen/terasort/teravalidate, DistributedShell, a straggler job whose clones win and whose losers are
killed (decision log over HTTP with the token, and the AM's record), that job's clones and winner on the
operator page in headless Chromium (screenshots in build/test-output/compose-ui/), the service killed in
the middle of a job (the shim's fallback finishes it) and restarted (the RM resyncs), the `postgres`
profile (refused without a password, naming it; with one, the service's decision log in PostgreSQL, the
rows the API serves), and finally `docker compose down -v` leaving no container, network or volume. A
stranger on the service's network (a container of its own, without the secret) is refused. The tests
run in file order on one cluster."""

from __future__ import annotations

import random
import re
import secrets
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from . import composeui as ui
from .composecluster import (
    DSHELL,
    EXAMPLES,
    PLUGIN,
    RM_ID,
    SECRET_FILE,
    ComposeCluster,
    am_records,
    smoke_test_block,
    submitted_app,
)

# The first test's setup builds the images (on a fresh machine, most of the run) and starts the cluster.
pytestmark = [pytest.mark.compose, pytest.mark.timeout(3600)]
# The compose file's own policy: `default`, the production configuration (no DOLLYMP_POLICY set), which
# clones small jobs at launch and copies that run late (a cold service running the paper's `dollymp` has
# seen no run-time spread and grants no clone, Corollary 4.1).
POLICY: dict[str, str] = {}

STRAGGLER = "io.dollymp.yarn.workload.StragglerJob"


@pytest.fixture(scope="module")
def cluster() -> Iterator[ComposeCluster]:
    c = ComposeCluster(env=dict(POLICY))
    try:
        # Images first with the build's own timeout (the smoke test's `up --build` then finds them).
        c.compose("build", timeout=2400)
        # The guide's block exports its own token: keep it for the API calls of the later tests.
        out = c.bash(smoke_test_block() + '\necho "token=$DOLLYMP_HTTP_TOKEN"\n', timeout=900).stdout
        c.token = out.rsplit("token=", 1)[1].strip()
        c.env["DOLLYMP_HTTP_TOKEN"] = c.token  # what a later `up` recreating the service must pass again
        c.smoke = out  # type: ignore[attr-defined]
        yield c
    finally:
        c.down()


def test_smoke_test_of_the_guide_ran_pi_and_read_the_decision_log(cluster: ComposeCluster) -> None:
    out: str = cluster.smoke  # type: ignore[attr-defined]
    m = re.search(r"Estimated value of Pi is (\d+\.\d+)", out)
    assert m is not None, out[-3000:]
    assert 3.0 < float(m.group(1)) < 3.3
    assert '"kind":"placement"' in out.replace(" ", "")  # the curl of the guide, from the host


def test_the_shim_authenticates_with_the_generated_secret_and_strangers_are_refused(
    cluster: ComposeCluster,
) -> None:
    # The service made the secret at its first start: owned by its user, readable by the RM's group.
    assert "wrote a new shim secret" in cluster.compose("logs", "dollymp").stdout
    mode = cluster.exec("dollymp", "stat", "-c", "%a %U %g %s", SECRET_FILE).stdout.split()
    assert mode == ["440", "dollymp", "1000", "65"], mode  # 64 hex digits and a newline
    digest = cluster.exec("dollymp", "sha256sum", SECRET_FILE).stdout.split()[0]
    # The RM (user hadoop) reads the same file from the shared volume, mounted read-only ...
    assert cluster.exec("resourcemanager", "id", "-g").stdout.strip() == "1000"
    assert cluster.exec("resourcemanager", "sha256sum", SECRET_FILE).stdout.split()[0] == digest
    assert cluster.exec("resourcemanager", "touch", SECRET_FILE, check=False).returncode != 0
    # ... and no container running users' code or their clients has it.
    for service in ("nodemanager-1", "client"):
        assert cluster.exec(service, "test", "-e", SECRET_FILE, check=False).returncode != 0, service
    # /readyz is 200 only for a session an authenticated shim registered and resynced.
    state = cluster.wait_ready()
    assert len(state["nodes"]) == 3, state["nodes"]
    placed = cluster.decisions("placement")
    assert placed, "no placement in the log after the smoke test"
    app = placed[0]["application_id"]
    # A container of a stranger's own on the service's network (where YARN containers reach it): the
    # RM's Register and Sync without the secret or with a wrong one, and an AM call without the
    # application's AMRMToken, are refused ...
    got = cluster.stranger(RM_ID, app)
    assert {call: code for call, (code, _) in got.items()} == dict.fromkeys(
        ("register", "register_wrong_secret", "sync", "clone_plan"), "UNAUTHENTICATED"
    ), got
    assert "x-dollymp-secret" in got["register"][1], got
    assert app in got["clone_plan"][1] or "x-dollymp-amrm-sha256" in got["clone_plan"][1], got
    # ... and the RM's session goes on: still ready, placements still come from the service.
    assert cluster.api("/readyz")[0] == 200
    last = cluster.decisions("placement")[-1]["id"]
    cluster.client("yarn", "jar", EXAMPLES, "pi", "2", "100")
    assert cluster.decisions("placement")[-1]["id"] > last


def test_wordcount_on_hdfs_counts_every_word(cluster: ComposeCluster) -> None:
    rng = random.Random(27)
    words = ["straggler", "clone", "yarn", "dolly", "flowtime", "knapsack", "pareto", "reduce", "map", "ω"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(4000)]
    text = "\n".join(lines) + "\n"
    expected = Counter(text.split())
    cluster.client("hdfs", "dfs", "-mkdir", "-p", "/wordcount/in")
    for part in range(3):  # three files: three map tasks
        chunk = "\n".join(lines[part::3]) + "\n"
        cluster.client("hdfs", "dfs", "-put", "-f", "-", f"/wordcount/in/part-{part}", stdin=chunk)
    job = cluster.client(
        "yarn", "jar", EXAMPLES, "wordcount", "-Dmapreduce.job.reduces=2", "/wordcount/in", "/wordcount/out"
    )
    assert "completed successfully" in job.stderr, job.stderr[-3000:]
    out = cluster.client("bash", "-c", "hdfs dfs -cat /wordcount/out/part-r-*").stdout
    counted = Counter({w: int(n) for w, n in (ln.split("\t") for ln in out.splitlines() if ln)})
    assert counted == expected


def test_teragen_terasort_teravalidate(cluster: ComposeCluster) -> None:
    rows = 20000
    cluster.client("yarn", "jar", EXAMPLES, "teragen", "-Dmapreduce.job.maps=2", str(rows), "/tera/in")
    cluster.client("yarn", "jar", EXAMPLES, "terasort", "-Dmapreduce.job.reduces=2", "/tera/in", "/tera/out")
    cluster.client("yarn", "jar", EXAMPLES, "teravalidate", "/tera/out", "/tera/report")
    report = cluster.client("bash", "-c", "hdfs dfs -cat /tera/report/part-r-*").stdout
    assert "checksum" in report and "misorder" not in report and "error" not in report, report
    size = cluster.client("bash", "-c", "hdfs dfs -cat '/tera/out/part-r-*' | wc -c").stdout
    assert int(size) == rows * 100  # every 100-byte row sorted, none lost


def test_distributed_shell(cluster: ComposeCluster) -> None:
    proc = cluster.client(
        "yarn",
        "jar",
        DSHELL,
        "org.apache.hadoop.yarn.applications.distributedshell.Client",
        "-jar",
        DSHELL,
        "-shell_command",
        "echo dollymp-dshell",
        "-num_containers",
        "3",
        "-container_memory",
        "256",
        "-master_memory",
        "512",
    )
    assert "Application completed successfully" in proc.stderr, proc.stderr[-3000:]


def test_straggler_clones_win_and_losers_are_killed(cluster: ComposeCluster) -> None:
    # Map 1's first attempt is pinned 30x slow: a clone of it wins and the original is killed.
    job = cluster.client(
        "yarn",
        "jar",
        PLUGIN,
        STRAGGLER,
        "-Ddollymp.straggler.maps=4",
        "-Ddollymp.straggler.reduces=1",
        "-Ddollymp.straggler.map.base-ms=1500",
        "-Ddollymp.straggler.reduce.base-ms=500",
        "-Ddollymp.straggler.slow-attempts=m1.0=30",
        "compose-stragglers",
        timeout=600,
    )
    app = submitted_app(job.stderr)
    cluster.apps["straggler"] = app
    assert "completed successfully" in job.stderr, job.stderr[-3000:]
    # The decision log (from the host, with the token) holds the clones granted to the job; the losers
    # are killed by the AM once a copy wins (a `kill` decision only when the service orders one).
    grants = cluster.decisions("clone_grant", app)
    assert any(int(g["inputs"].get("clones", 0)) >= 1 for g in grants), f"no clone granted to {app}: {grants}"
    records = am_records(cluster, app)
    clones = [r for r in records if r["is_clone"] == "true"]
    assert clones, records
    winners = {r["task_id"] for r in records if r["winner"] == "true" and r["is_clone"] == "true"}
    assert winners, f"no clone won: {records}"
    for task in winners:  # one copy won each task: the one MapReduce took
        assert sum(r["winner"] == "true" for r in records if r["task_id"] == task) == 1, records
    losers = [r for r in records if r["task_id"] in winners and r["winner"] != "true"]
    # A loser is killed, unless it finished before its kill reached it (it then succeeded, not won).
    assert losers and all(r["state"] in ("KILLED", "SUCCEEDED") for r in losers), records
    assert any(r["state"] == "KILLED" for r in losers), records


def _app_with_a_winning_clone(cluster: ComposeCluster) -> str:
    """The straggler job if the log holds a clone of it that won, else any application whose does."""
    by_app: dict[str, list[dict[str, Any]]] = {}
    for d in cluster.decisions("attempt"):
        by_app.setdefault(d["application_id"], []).append(d)
    won = [a for a, ds in by_app.items() if ("true", "won") in ui.logged_copies(ds).values()]
    assert won, f"no application with a clone that won in the log: {sorted(by_app)}"
    return cluster.apps["straggler"] if cluster.apps.get("straggler") in won else won[0]


def test_operator_page_shows_the_clones_and_winner_of_the_decision_log(cluster: ComposeCluster) -> None:
    # Headless Chromium on the host loads the service's page through the published port, with the token.
    app = _app_with_a_winning_clone(cluster)
    expected = ui.logged_copies(cluster.decisions("attempt", app))  # the log over HTTP
    clones = {a for a, (clone, _) in expected.items() if clone == "true"}
    clone_winners = {a for a, (clone, outcome) in expected.items() if clone == "true" and outcome == "won"}
    assert clones and clone_winners, expected
    if app == cluster.apps.get("straggler"):  # the AM's own record names the same winning clones
        records = am_records(cluster, app)
        assert clone_winners <= {
            r["attempt_id"] for r in records if r["is_clone"] == "true" and r["winner"] == "true"
        }, (expected, records)
    with ui.browser() as driver:
        ui.login(driver, cluster.api_url, cluster.token)
        ui.wait("the cluster's nodes", lambda: len(ui.texts(driver, "#nodes tbody tr")) == 3)
        ui.shot(driver, "cluster")
        driver.get(f"{cluster.api_url}/ui/#app={app}")
        ui.wait(
            f"the copies of {app} as the log has them ({expected})",
            lambda: ui.page_copies(driver) == expected,
            timeout=60,
        )
        won = ui.texts(driver, '#copies tr.copy[data-outcome="won"][data-clone="true"]', "attempt")
        assert set(won) == clone_winners
        assert ui.texts(driver, "#chart .bar.clone.won")  # the timeline draws the winning clone
        summary = ui.texts(driver, "#app-summary")[0]
        assert f"{len(clones)} clone(s), {len(clone_winners)} won by a clone" in summary, summary
        ui.shot(driver, "application")
        driver.get(f"{cluster.api_url}/ui/#economics")
        ui.wait("the economics cards", lambda: ui.texts(driver, '[data-figure="clone_wins"] b'))
        ui.shot(driver, "economics")


def test_jobs_finish_without_the_service_and_the_rm_resyncs_after_restart(cluster: ComposeCluster) -> None:
    before = cluster.wait_ready()
    assert len(before["nodes"]) == 3, before["nodes"]
    job = cluster.client_bg(
        "yarn",
        "jar",
        PLUGIN,
        STRAGGLER,
        "-Ddollymp.straggler.maps=6",
        "-Ddollymp.straggler.reduces=1",
        "-Ddollymp.straggler.map.base-ms=6000",
        "-Ddollymp.straggler.reduce.base-ms=2000",
        "compose-fallback",
    )
    try:
        time.sleep(8)  # the job is submitted and its AM is running
        assert job.poll() is None, "the job ended before the service was killed"
        cluster.compose("kill", "dollymp")
        with pytest.raises(OSError):
            cluster.api("/healthz", timeout=3)
        out, _ = job.communicate(timeout=600)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0 and "completed successfully" in out, out[-3000:]
    cluster.compose("start", "dollymp")
    after = cluster.wait_ready(timeout_s=180)
    assert sorted(n["node_id"] for n in after["nodes"]) == sorted(n["node_id"] for n in before["nodes"])
    # Placements resume through the service once resynced.
    last = cluster.decisions("placement")[-1]["id"] if cluster.decisions("placement") else 0
    cluster.client("yarn", "jar", EXAMPLES, "pi", "2", "100")
    assert cluster.decisions("placement")[-1]["id"] > last


def test_postgres_profile_needs_a_password_then_holds_the_decision_log(cluster: ComposeCluster) -> None:
    # Without a password the database container stops at once and says which variable is missing.
    assert not cluster.env.get("POSTGRES_PASSWORD")
    refused = cluster.compose("--profile", "postgres", "run", "--rm", "--no-deps", "postgres", check=False)
    assert refused.returncode != 0, refused.stdout[-2000:]
    assert "POSTGRES_PASSWORD is required" in refused.stdout + refused.stderr, refused.stderr[-2000:]
    # With one, as the guide says: the service's decision log moves to PostgreSQL.
    password = secrets.token_hex(12)
    cluster.env["POSTGRES_PASSWORD"] = password
    cluster.env["DOLLYMP_STORE_URL"] = f"postgresql://dollymp:{password}@postgres:5432/dollymp"
    cluster.compose(
        "--profile", "postgres", "up", "-d", "--build", "--wait", "--wait-timeout", "600", timeout=1500
    )
    cluster.wait_ready(timeout_s=240)
    job = cluster.client("yarn", "jar", EXAMPLES, "pi", "2", "100")
    app = submitted_app(job.stdout + job.stderr)
    served = cluster.decisions("placement", app)
    assert served, f"no placement of {app} in the decision log"
    query = (
        "SELECT count(*) FROM decisions d JOIN names n ON n.id = d.application "
        f"WHERE n.name = '{app}' AND d.kind = 'placement'"
    )
    stored = cluster.exec("postgres", "psql", "-U", "dollymp", "-d", "dollymp", "-tAc", query)
    assert int(stored.stdout.strip()) == len(served), (stored.stdout, len(served))


def test_down_leaves_no_container_network_or_volume(cluster: ComposeCluster) -> None:
    assert any(cluster.leftovers().values())  # the cluster was there
    cluster.down()
    assert cluster.leftovers() == {"container": [], "network": [], "volume": []}
