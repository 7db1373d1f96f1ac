"""Configuration: file + environment + flags, validated at start-up; every error names the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rpc_harness import REPO

from pyscheduler import config


def test_defaults_bind_loopback_and_layering(tmp_path: Path) -> None:
    cfg = config.load(None, env={})
    # `dollymp serve` with no flags: the production configuration, gRPC where the shim looks by
    # default, the HTTP API on.
    assert cfg["grpc.host"] == "127.0.0.1" and cfg["grpc.port"] == 50051
    assert cfg["http.host"] == "127.0.0.1" and cfg["http.port"] == 8080 and not cfg["http.token"]
    assert cfg["policy.name"] == "default" and cfg["policy.options"] == {}
    f = tmp_path / "c.toml"
    f.write_text(
        '[grpc]\nport = 7070\nmax_workers = 8\n[policy]\nname = "dollymp"\n[policy.options]\nmax_clones = 1\n'
    )
    cfg = config.load(
        f, env={"DOLLYMP_GRPC_PORT": "7071", "DOLLYMP_HOME": "/ignored"}, overrides={"grpc.max_workers": 4}
    )
    assert cfg["grpc.port"] == 7071 and cfg.sources["grpc.port"] == "env DOLLYMP_GRPC_PORT"
    assert cfg["grpc.max_workers"] == 4 and cfg.sources["grpc.max_workers"] == "command line"
    assert cfg["policy.name"] == "dollymp" and cfg["policy.options"] == {"max_clones": 1}
    cfg = config.load(None, env={"DOLLYMP_POLICY_OPTIONS": '{"max_clones": 2}'})
    assert cfg["policy.options"] == {"max_clones": 2}
    assert config.load(None, env={})["appmaster.clone_yield"] is True
    assert config.load(None, env={"DOLLYMP_APPMASTER_CLONE_YIELD": "off"})["appmaster.clone_yield"] is False
    assert config.load(None, env={})["appmaster.release_beaten_clones"] is True
    off = {"DOLLYMP_APPMASTER_RELEASE_BEATEN_CLONES": "false"}
    assert config.load(None, env=off)["appmaster.release_beaten_clones"] is False
    assert config.load(None, env={})["appmaster.release_beaten_originals"] is False
    assert config.load(None, env={})["appmaster.reduce_phase_progress"] is False
    on = {"DOLLYMP_APPMASTER_REDUCE_PHASE_PROGRESS": "true"}
    assert config.load(None, env=on)["appmaster.reduce_phase_progress"] is True
    rule = config.load(None, env={"DOLLYMP_APPMASTER_BEATEN_MARGIN_S": "2.5"})
    assert (rule["appmaster.beaten_margin_s"], rule["appmaster.beaten_min_progress"]) == (2.5, 0.2)
    # the statistics history: per tenant, not shared across queues unless an operator says so
    d = config.load(None, env={})
    assert d["store.history_share_across_queues"] is False
    assert (d["store.history_max_rows_per_queue"], d["store.history_max_rows_per_user"]) == (10_000, 1_000)
    shared = config.load(None, env={"DOLLYMP_STORE_HISTORY_SHARE_ACROSS_QUEUES": "true"})
    assert shared["store.history_share_across_queues"] is True
    with pytest.raises(config.ConfigError, match=r"appmaster\.beaten_margin_frac"):
        config.load(None, env={"DOLLYMP_APPMASTER_BEATEN_MARGIN_FRAC": "-1"})


@pytest.mark.parametrize(
    ("toml", "env", "key", "words"),
    [
        ("[grpc]\nprot = 1\n", {}, "grpc.prot", "unknown key"),
        ("[grcp]\nport = 1\n", {}, "grcp", "unknown section"),
        ("[grpc]\nport = 70000\n", {}, "grpc.port", "0..65535"),
        ('[grpc]\nport = "x"\n', {}, "grpc.port", "integer"),
        ("[sync]\noutstanding_ttl_s = 0\n", {}, "sync.outstanding_ttl_s", "> 0"),
        ("", {"DOLLYMP_SYNC_QUEUE_SIZE": "-3"}, "sync.queue_size", "1..100000"),
        ("", {"DOLLYMP_GRPC_PROT": "1"}, "grpc.prot", "unknown key"),
        ("", {"DOLLYMP_SERVICE_LOG_LEVEL": "LOUD"}, "service.log_level", "one of"),
        ("", {"DOLLYMP_POLICY_OPTIONS": "{not json"}, "policy.options", "JSON"),
        ('[grpc]\ntls_cert = "/no/such/cert.pem"\n', {}, "grpc.tls_cert", "does not exist"),
        ('[http]\nhost = "0.0.0.0"\nport = 8080\n', {}, "http.token", "not loopback"),
        ('[http]\nhost = "0.0.0.0"\nadmin_token = "a"\n', {}, "http.token", "not loopback"),
        ('[http]\ntoken = "same"\nadmin_token = "same"\n', {}, "http.admin_token", "must differ"),
        ("", {"DOLLYMP_HTTP_TOKEN": "t", "DOLLYMP_HTTP_ADMIN_TOKEN": "t"}, "http.admin_token", "must differ"),
        ("[http]\nadmin_token = 5\n", {}, "http.admin_token", "string"),
        ("[grpc]\nport = 1\n[grpc]\n", {}, "--config", "not valid TOML"),
        ("[appmaster]\nclone_yield = 1\n", {}, "appmaster.clone_yield", "true or false"),
        ("", {"DOLLYMP_APPMASTER_CLONE_YIELD": "maybe"}, "appmaster.clone_yield", "true or false"),
        # keys of the deleted value yield model: refused, saying why (not as unknown)
        ('[appmaster]\nyield_model = "rules"\n', {}, "appmaster.yield_model", "removed: clones yield"),
        ("[yield]\nmargin_s = 5.0\n", {}, "yield.margin_s", "yielding.py's rules, the one yield model"),
        ("[yield]\nmargin = 5.0\n", {}, "yield", "unknown section"),
        ("", {"DOLLYMP_APPMASTER_YIELD_MODEL": "value"}, "appmaster.yield_model", "removed"),
        ("", {"DOLLYMP_YIELD_MIN_WAIT_S": "3"}, "yield.min_wait_s", "removed"),
        (
            "[store]\nhistory_share_across_queues = 1\n",
            {},
            "store.history_share_across_queues",
            "true or false",
        ),
        (
            "",
            {"DOLLYMP_STORE_HISTORY_MAX_ROWS_PER_QUEUE": "0"},
            "store.history_max_rows_per_queue",
            "1..1000000",
        ),
        (
            "[store]\nhistory_max_rows_per_user = 2000000\n",
            {},
            "store.history_max_rows_per_user",
            "1..1000000",
        ),
        (
            "[store]\nhistory_max_rows_per_queue = 10\nhistory_max_rows_per_user = 11\n",
            {},
            "store.history_max_rows_per_user",
            "at most store.history_max_rows_per_queue (10)",
        ),
    ],
)
def test_invalid_configuration_names_the_key(
    tmp_path: Path, toml: str, env: dict[str, str], key: str, words: str
) -> None:
    f = tmp_path / "c.toml"
    f.write_text(toml)
    with pytest.raises(config.ConfigError) as err:
        config.load(f, env=env)
    assert err.value.key == key
    assert str(err.value).startswith(f"config {key} (") and words in str(err.value)


def test_a_removed_key_is_refused_on_the_command_line_too() -> None:
    with pytest.raises(config.ConfigError, match=r"config yield\.startup_s \(command line\): removed"):
        config.load(None, env={}, overrides={"yield.startup_s": 5.0})
    assert "appmaster.yield_model" not in config.SCHEMA and set(config.REMOVED).isdisjoint(config.SCHEMA)
    assert config.load(None, env={"DOLLYMP_YIELD_OTHER": "x"}).values  # no key of the gone section: not ours


def test_http_admin_token(tmp_path: Path) -> None:
    assert config.load(None, env={})["http.admin_token"] == ""
    env = {"DOLLYMP_HTTP_TOKEN": "read", "DOLLYMP_HTTP_ADMIN_TOKEN": "admin"}
    cfg = config.load(None, env=env)
    assert cfg["http.token"] == "read" and cfg["http.admin_token"] == "admin"
    assert cfg.sources["http.admin_token"] == "env DOLLYMP_HTTP_ADMIN_TOKEN"
    f = tmp_path / "c.toml"
    f.write_text('[http]\nhost = "0.0.0.0"\ntoken = "read"\nadmin_token = "admin"\n')
    assert config.load(f, env={})["http.admin_token"] == "admin"


def test_tls_cert_without_key(tmp_path: Path) -> None:
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    with pytest.raises(config.ConfigError) as err:
        config.load(None, env={"DOLLYMP_GRPC_TLS_CERT": str(cert)})
    assert err.value.key == "grpc.tls_key"


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", "pyscheduler", "serve", "--db", str(tmp_path / "d.db"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_serve_refuses_to_start_naming_the_key(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[policy]\nname = "dollymp"\n[policy.options]\nno_such_option = 3\n')
    r = _serve(tmp_path, "--config", str(f))
    assert r.returncode == 2 and "config policy.options (file" in r.stderr and "no_such_option" in r.stderr
    r = _serve(tmp_path, "--policy", "nope")
    assert r.returncode == 2 and "config policy.name (command line): unknown policy 'nope'" in r.stderr
    r = _serve(tmp_path, env={"DOLLYMP_GRPC_MAX_WORKERS": "many"})
    assert r.returncode == 2 and "config grpc.max_workers (env DOLLYMP_GRPC_MAX_WORKERS)" in r.stderr
    r = _serve(tmp_path, "--check-config", "--grpc-port", "0")
    assert r.returncode == 0 and "configuration OK" in r.stdout


@pytest.mark.parametrize(
    ("text", "error"),
    [("{", "--flag: not JSON"), ("[1]", "--flag: must be a JSON object"), ('"x"', "--flag: must be a JSON")],
)
def test_a_flags_json_object_is_refused_with_the_flag_named(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        config.json_object("--flag", text)
    assert config.json_object("--flag", '{"a": 1}') == {"a": 1}
