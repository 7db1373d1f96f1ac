"""The docker-compose cluster of docker/ driven as an operator drives it: `docker compose` commands on
the host, jobs submitted from the `client` container, the decision log read over HTTP from the host
with the bearer token; and as a stranger would try it: gRPC calls without the shim's secret from a
container of its own on the service's network. Used by test_compose_cluster.py (`make compose-test`)."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscheduler.deploy import hadoopconf

from . import staticcheck as sc

COMPOSE_FILE = "docker/docker-compose.yml"
GUIDE = sc.ROOT / "docs" / "operators-guide.md"
SMOKE_MARK = "<!-- compose-smoke-test -->"
EXAMPLES = "/opt/hadoop/hadoop-mapreduce-examples.jar"
DSHELL = "/opt/hadoop/hadoop-yarn-applications-distributedshell.jar"
PLUGIN = "/opt/hadoop/lib/dollymp-yarn-plugin.jar"
PORT_VARS = ("DOLLYMP_API_PORT", "RM_UI_PORT", "JHS_UI_PORT", "NN_UI_PORT")
SERVICE_IMAGE = "dollymp/service:0.1.0"  # the `dollymp` service's image in docker/docker-compose.yml
SECRET_FILE = "/run/dollymp/shim.secret"  # dollymp.toml grpc.auth_secret_file, on the dollymp-secret volume
RM_ID = "dollymp-compose"  # yarn-site.xml yarn.scheduler.dollymp.rm-id

# Run with the service image's Python on the `scheduler` network, where YARN containers reach the service:
# the calls a stranger without the shim's secret (or an AM without its AMRMToken) could make. Prints the
# status code and details of each as JSON.
STRANGER_PROBE = """
import json, sys
import grpc
from pyscheduler.wire import pb, pb_grpc

rm_id, app_id = sys.argv[1], sys.argv[2]
ch = grpc.insecure_channel("dollymp:50051")
grpc.channel_ready_future(ch).result(timeout=60)
shim, am = pb_grpc.SchedulerServiceStub(ch), pb_grpc.AppMasterServiceStub(ch)
register = pb.RegisterRequest(rm_id=rm_id, tick_ms=100)
calls = {
    "register": lambda: shim.Register(register, timeout=10),
    "register_wrong_secret": lambda: shim.Register(
        register, timeout=10, metadata=(("x-dollymp-secret", "not-the-secret-0123456789abcdef"),)
    ),
    "sync": lambda: list(shim.Sync(iter([pb.StateBatch(session_id="x", seq=1)]), timeout=10)),
    "clone_plan": lambda: am.GetClonePlan(pb.ClonePlanRequest(application_id=app_id), timeout=10),
}
out = {}
for name, call in calls.items():
    try:
        call()
        out[name] = ["OK", ""]
    except grpc.RpcError as exc:
        out[name] = [exc.code().name, exc.details()]
print(json.dumps(out))
"""


def smoke_test_block(guide: Path = GUIDE) -> str:
    """The bash block that follows the smoke-test mark in the operator's guide, verbatim."""
    text = guide.read_text(encoding="utf-8")
    m = re.search(re.escape(SMOKE_MARK) + r"\s*```bash\n(.*?)```", text, re.S)
    if m is None:
        raise AssertionError(f"{guide}: no ```bash block after {SMOKE_MARK}")
    return m.group(1)


class ComposeError(AssertionError):
    """A compose command failed; the message carries its output."""


@dataclass
class ComposeCluster:
    """One compose project of docker/docker-compose.yml with its own name and free host ports."""

    project: str = field(default_factory=lambda: f"dollymp-test-{os.getpid()}")
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    env: dict[str, str] = field(default_factory=dict)
    apps: dict[str, str] = field(default_factory=dict)  # application ids the tests ran, by their role

    def __post_init__(self) -> None:
        ports = hadoopconf.free_ports(len(PORT_VARS))
        self.env = {
            **os.environ,
            "COMPOSE_PROJECT_NAME": self.project,
            "DOLLYMP_HTTP_TOKEN": self.token,
            **{var: str(p) for var, p in zip(PORT_VARS, ports, strict=True)},
            **self.env,
        }

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.env['DOLLYMP_API_PORT']}"

    def compose(
        self, *args: str, timeout: float = 900, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        cmd = ["docker", "compose", "-f", COMPOSE_FILE, *args]
        return self.run(cmd, " ".join(cmd), timeout=timeout, check=check)

    def run(
        self, argv: list[str], what: str, stdin: str | None = None, timeout: float = 900, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv` from the repository root with the cluster's environment; raise if it fails."""
        proc = subprocess.run(
            argv,
            cwd=sc.ROOT,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise ComposeError(f"{what} exited {proc.returncode}:\n{_tail(proc)}")
        return proc

    def bash(self, script: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        """Run `script` as an operator's shell would (bash -euo pipefail), from the repository root."""
        return self.run(["bash", "-euo", "pipefail", "-c", script], f"script\n{script}\n", timeout=timeout)

    def client(
        self, *argv: str, stdin: str | None = None, timeout: float = 600, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`docker compose exec -T client ARGV...` (a job or HDFS command, as a user would run it)."""
        cmd = ["docker", "compose", "-f", COMPOSE_FILE, "exec", "-T", "client", *argv]
        return self.run(cmd, " ".join(argv), stdin=stdin, timeout=timeout, check=check)

    def exec(self, service: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`docker compose exec -T SERVICE ARGV...` as the service's own user."""
        return self.compose("exec", "-T", service, *argv, timeout=120, check=check)

    def stranger(self, rm_id: str, app_id: str) -> dict[str, tuple[str, str]]:
        """STRANGER_PROBE from a container of its own on the service's network (not a compose service,
        no secret): {call: (status code name, details)}."""
        proc = self.run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                f"{self.project}_scheduler",
                "--entrypoint",
                "python",
                SERVICE_IMAGE,
                "-c",
                STRANGER_PROBE,
                rm_id,
                app_id,
            ],
            "the stranger's gRPC calls",
            timeout=180,
        )
        return {k: (v[0], v[1]) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}

    def client_bg(self, *argv: str) -> subprocess.Popen[str]:
        cmd = ["docker", "compose", "-f", COMPOSE_FILE, "exec", "-T", "client", *argv]
        return subprocess.Popen(
            cmd, cwd=sc.ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def api(self, path: str, timeout: float = 10) -> tuple[int, Any]:
        """GET the decision service's HTTP API from the host with the bearer token: (status, JSON)."""
        req = urllib.request.Request(self.api_url + path, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def decisions(self, kind: str, application: str | None = None) -> list[dict[str, Any]]:
        """Every decision of `kind` (for `application` if given), following the pages."""
        out: list[dict[str, Any]] = []
        cursor = ""
        while True:
            query = f"kind={kind}&limit=500" + (f"&application={application}" if application else "")
            status, page = self.api(f"/v1/decisions?{query}{cursor}")
            assert status == 200, (status, page)
            out += page["items"]
            if not page.get("next_cursor"):
                return out
            cursor = f"&cursor={page['next_cursor']}"

    def wait_ready(self, timeout_s: float = 180) -> dict[str, Any]:
        """Wait until /readyz answers 200 (an RM session resynced); return /v1/state."""
        deadline = time.monotonic() + timeout_s
        last: Any = None
        while time.monotonic() < deadline:
            try:
                status, last = self.api("/readyz", timeout=5)
                if status == 200:
                    status, state = self.api("/v1/state")
                    if status == 200:
                        return dict(state)
                    last = f"/readyz answers 200 but /v1/state {status}: {state}"
            except (OSError, ValueError) as exc:
                last = exc
            time.sleep(1)
        raise AssertionError(f"service not ready after {timeout_s}s: {last}")

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, networks and volumes still labelled with this project."""
        label = f"label=com.docker.compose.project={self.project}"
        found = {}
        for kind, fmt in (("container", "{{.Names}}"), ("network", "{{.Name}}"), ("volume", "{{.Name}}")):
            args = ["docker", kind, "ls", "--filter", label, "--format", fmt]
            if kind == "container":
                args.insert(3, "--all")
            proc = subprocess.run(args, capture_output=True, text=True, check=True)
            found[kind] = proc.stdout.split()
        return found

    def down(self) -> None:
        self.compose("--profile", "postgres", "down", "-v", "--remove-orphans", "-t", "10", timeout=300)


def _tail(proc: subprocess.CompletedProcess[str], lines: int = 60) -> str:
    out = (proc.stdout or "") + (proc.stderr or "")
    return "\n".join(out.strip().splitlines()[-lines:])


def submitted_app(output: str) -> str:
    m = re.search(r"Submitted application (application_\d+_\d+)", output)
    assert m is not None, f"no application id in the job's output:\n{output[-3000:]}"
    return m.group(1)


_FINAL = frozenset({"SUCCEEDED", "FAILED", "KILLED"})


def am_records(cluster: ComposeCluster, app_id: str, settle_s: float = 60.0) -> list[dict[str, str]]:
    """The DollyMP AM's per-attempt record of `app_id` (dollymp.am.record.dir on HDFS). The AM rewrites
    it as the last kills land after the job's end, so this reads until every attempt has ended or
    `settle_s` passes, and returns the last read either way (the caller's assertions judge it)."""
    deadline = time.monotonic() + settle_s
    while True:
        proc = cluster.client("bash", "-c", f"hdfs dfs -cat '/dollymp/am-records/{app_id}*'")
        lines = [ln for ln in proc.stdout.splitlines() if ln and not ln.startswith("#")]
        header = lines[0].split("\t")
        rows = [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[1:]]
        if all(r["state"] in _FINAL for r in rows) or time.monotonic() > deadline:
            return rows
        time.sleep(3.0)
