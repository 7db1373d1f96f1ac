"""Fixtures: a real SQLite file and a real PostgreSQL server for the decision-log tests.

`store_url` is parametrised over both back ends, so every test that takes it runs twice.

The PostgreSQL server comes from testcontainers when a Docker engine answers and has the image this
project builds from Debian's package (`dollymp/postgres:15`, docker/postgres.Dockerfile; no registry is
asked for anything, and testcontainers' reaper image is not used: TESTCONTAINERS_RYUK_DISABLED);
otherwise the fixture starts a throw-away server from the Debian packages (initdb/pg_ctl of
`postgresql-15`, installed by `.ci/run`), listening on a Unix socket only, as user `postgres` when the
tests run as root (initdb refuses root).
`DOLLYMP_PG_BACKEND=container` requires the testcontainers path (the test session errors, naming the
image, when no engine answers or the image is missing): `make compose-test` runs the store tests so once
its engine is up and the compose test has built the image. `DOLLYMP_PG_BACKEND=local` forces the local
server. Each test gets its own PostgreSQL schema (selected through the URL's search_path), which is
dropped after.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

_counter = itertools.count()


PG_IMAGE = os.environ.get("DOLLYMP_PG_IMAGE", "dollymp/postgres:15")
PG_BACKEND = os.environ.get("DOLLYMP_PG_BACKEND", "")  # "", "container" or "local"


def _engine_has_pg_image() -> bool:
    """A Docker engine answers and holds PG_IMAGE locally (never pulled: there may be no registry)."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        client.ping()
        client.images.get(PG_IMAGE)
        return True
    except Exception:
        return False


def _pg_bindir() -> Path:
    for name in ("initdb",):
        found = shutil.which(name)
        if found:
            return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if candidates:
        return Path(candidates[0]).parent
    raise RuntimeError(
        "no PostgreSQL server found: install Debian's 'postgresql' package (apt-get install -y postgresql) "
        "or provide a Docker engine for testcontainers"
    )


@contextlib.contextmanager
def _local_server() -> Iterator[str]:
    bindir = _pg_bindir()
    base = Path(tempfile.mkdtemp(prefix="dollymp-pg-"))
    data, sock = base / "data", base / "sock"
    data.mkdir()
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(data, "postgres")
        shutil.chown(sock, "postgres")
        os.chmod(base, 0o755)
        prefix = ["runuser", "-u", "postgres", "--"]
    run = {"check": True, "capture_output": True, "text": True, "cwd": base}
    try:
        initdb = [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "dollymp", "--no-sync"]
        subprocess.run([*prefix, *initdb], **run)
        options = f"-k {sock} -c listen_addresses='' -c max_connections=50"
        logfile = str(base / "log")
        pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", logfile, "-w", "start"]
        subprocess.run([*prefix, *pg_ctl], **run)
    except subprocess.CalledProcessError as exc:
        log = (base / "log").read_text() if (base / "log").exists() else ""
        raise RuntimeError(f"cannot start PostgreSQL: {exc.stderr}\n{log}") from exc
    try:
        yield f"postgresql://dollymp@/postgres?host={quote(str(sock), safe='')}"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], **run)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A connection URL of a real PostgreSQL server for this test session."""
    if PG_BACKEND not in ("", "container", "local"):
        raise RuntimeError(f"DOLLYMP_PG_BACKEND={PG_BACKEND!r}: expected 'container', 'local' or unset")
    use_container = PG_BACKEND != "local" and _engine_has_pg_image()
    if PG_BACKEND == "container" and not use_container:
        raise RuntimeError(
            f"DOLLYMP_PG_BACKEND=container: no Docker engine answers or it has no image {PG_IMAGE} "
            "(built by docker/postgres.Dockerfile: docker compose -f docker/docker-compose.yml "
            "--profile postgres build postgres)"
        )
    if use_container:
        from testcontainers.community.postgres import PostgresContainer
        from testcontainers.core.config import testcontainers_config

        # The reaper (testcontainers/ryuk) lives on Docker Hub; the container is stopped by `with`.
        testcontainers_config._ryuk_disabled = True
        with PostgresContainer(PG_IMAGE, driver=None) as pg:
            yield pg.get_connection_url()
    else:
        with _local_server() as url:
            yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty schema on the session's server; the URL selects it through search_path."""
    schema = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{sep}options={quote(f'-csearch_path={schema}', safe='')}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same decision-log suite against a real SQLite file and a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/decisions.db"
    url: str = request.getfixturevalue("postgres_url")
    return url
