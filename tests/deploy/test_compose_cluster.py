"""The docker-compose cluster, built and run for real (`make compose-test`, part of `make test`).

A Docker engine (docker/engine.sh), the images built from this checkout, HDFS + YARN with the shim +
three NodeManagers + the history server + the decision service up; then, from the client container as
a user would: the operator's guide's smoke test word for word, wordcount on HDFS with its counts
checked, pi, teragen/terasort/teravalidate, DistributedShell, a straggler job whose clones win and whose
losers are killed (decision log over HTTP with the token, and the AM's record), the service killed in
the middle of a job (the shim's fallback finishes it) and restarted (the RM resyncs), and finally
`docker compose down -v` leaving no container, network or volume. The tests run in file order on one
cluster."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from .composecluster import (
    DSHELL,
    EXAMPLES,
    PLUGIN,
    ComposeCluster,
    am_records,
    smoke_test_block,
    submitted_app,
)

# The first test's setup builds the images (on a fresh machine, most of the run) and starts the cluster.
pytestmark = [pytest.mark.compose, pytest.mark.timeout(3600)]
# A cold service running the paper's policy has seen no run-time spread and grants no clone (Corollary
# 4.1); dollymp-ext also clones small jobs into idle capacity and copies that run late, as the e2e tests.
POLICY = {
    "DOLLYMP_POLICY": "dollymp-ext",
    "DOLLYMP_POLICY_OPTIONS": '{"clone_rule": "none", "sigma_factor": 1}',
}

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
    killed = [r for r in records if r["task_id"] in winners and r["winner"] != "true"]
    assert killed and all(r["state"] == "KILLED" for r in killed), records


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


def test_down_leaves_no_container_network_or_volume(cluster: ComposeCluster) -> None:
    assert any(cluster.leftovers().values())  # the cluster was there
    cluster.down()
    assert cluster.leftovers() == {"container": [], "network": [], "volume": []}
