"""The service's configuration: defaults < file (TOML) < environment < command line.

Every key is `section.name`. The file is TOML with one table per section::

    [grpc]
    host = "127.0.0.1"
    port = 7070
    tls_cert = "/etc/dollymp/tls.crt"

    [policy]
    name = "dollymp"    # the paper's DollyMP; the default is "default", the production configuration
    [policy.options]
    max_clones = 2

The environment variable for `grpc.port` is DOLLYMP_GRPC_PORT (section and name upper-cased);
`policy.options` takes a JSON object (DOLLYMP_POLICY_OPTIONS='{"max_clones": 1}'). A variable
that starts with a section's prefix (DOLLYMP_GRPC_...) but names no key is an error, as is an unknown
key in the file. Validation happens once, at start-up, and the first problem stops it with
`ConfigError`, whose message names the key and where its value came from.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyscheduler.echo import shown

ENV_PREFIX = "DOLLYMP_"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class ConfigError(ValueError):
    """An invalid configuration key or value; `key` is the dotted key, `source` where it came from."""

    def __init__(self, key: str, source: str, problem: str) -> None:
        super().__init__(f"config {key} ({source}): {problem}")
        self.key = key
        self.source = source
        self.problem = problem


Parser = Callable[[Any, bool], Any]  # (raw value, raw is text from env/CLI) -> typed value; ValueError why


def _int(low: int, high: int | None = None) -> Parser:
    def parse(v: Any, text: bool) -> int:
        if text:
            try:
                v = int(str(v).strip())
            except ValueError:
                raise ValueError(f"must be an integer, got {shown(v)}") from None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"must be an integer, got {shown(v)}")
        if v < low or (high is not None and v > high):
            raise ValueError(f"must be in {low}..{high if high is not None else 'inf'}, got {v}")
        return v

    return parse


def _bool(v: Any, text: bool) -> bool:
    if text:
        t = str(v).strip().lower()
        if t in ("true", "1", "yes", "on"):
            return True
        if t in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"must be true or false, got {shown(v)}")
    if not isinstance(v, bool):
        raise ValueError(f"must be true or false, got {shown(v)}")
    return v


def _float(low: float, low_open: bool = False) -> Parser:
    def parse(v: Any, text: bool) -> float:
        if text:
            try:
                v = float(str(v).strip())
            except ValueError:
                raise ValueError(f"must be a number, got {shown(v)}") from None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"must be a finite number, got {shown(v)}")
        if v < low or (low_open and v == low):
            raise ValueError(f"must be {'>' if low_open else '>='} {low}, got {v}")
        return float(v)

    return parse


def _str(choices: tuple[str, ...] = (), upper: bool = False) -> Parser:
    def parse(v: Any, text: bool) -> str:
        if not isinstance(v, str):
            raise ValueError(f"must be a string, got {shown(v)}")
        s = v.upper() if upper else v
        if choices and s not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {shown(v)}")
        return s

    return parse


def _host(v: Any, text: bool) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"must be a host name or IP address, got {shown(v)}")
    return v.strip()


def _file(v: Any, text: bool) -> str:
    if not isinstance(v, str):
        raise ValueError(f"must be a file path, got {shown(v)}")
    if v and not Path(v).is_file():
        raise ValueError(f"file {shown(v)} does not exist")
    if v and not os.access(v, os.R_OK):
        raise ValueError(f"file {shown(v)} is not readable")
    return v


def _path(v: Any, text: bool) -> str:
    if not isinstance(v, str):
        raise ValueError(f"must be a file path, got {shown(v)}")
    return v


def _options(v: Any, text: bool) -> dict[str, Any]:
    if text:
        try:
            v = json.loads(str(v))
        except json.JSONDecodeError as exc:
            raise ValueError(f"must be a JSON object: {exc}") from None
    if not isinstance(v, dict):
        raise ValueError(f"must be a table/object, got {shown(v)}")
    return dict(v)


def json_object(flag: str, text: str) -> dict[str, Any]:
    """A command-line flag's JSON object (policy options, service keys); ValueError names the flag."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{flag}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{flag}: must be a JSON object")
    return value


# key -> (default, parser)
SCHEMA: dict[str, tuple[Any, Parser]] = {
    "grpc.host": ("127.0.0.1", _host),
    # The shim's default yarn.scheduler.dollymp.service.address is 127.0.0.1:50051; 0 picks a free port.
    "grpc.port": (50051, _int(0, 65535)),
    "grpc.max_workers": (32, _int(2, 1024)),
    "grpc.max_message_mb": (64, _int(1, 2047)),
    "grpc.grace_s": (5.0, _float(0.0)),
    "grpc.tls_cert": ("", _file),
    "grpc.tls_key": ("", _file),
    "grpc.tls_client_ca": ("", _file),
    # The shim's shared secret (a file; its bytes, surrounding whitespace stripped):
    # pyscheduler.service.rmproxy.auth.
    "grpc.auth_secret_file": ("", _file),
    # Serve gRPC on a non-loopback address with neither a secret nor client certificates.
    "grpc.insecure": (False, _bool),
    # A client connection with no RPC in progress this long is closed (grpc.max_connection_idle_ms); an
    # open Sync stream is an RPC in progress, so the shim's stream is never cut by it.
    "grpc.idle_timeout_s": (300.0, _float(0.0, low_open=True)),
    "sync.queue_size": (64, _int(1, 100_000)),
    "sync.max_coalesce": (64, _int(1, 100_000)),
    "sync.outstanding_ttl_s": (30.0, _float(0.0, low_open=True)),
    "store.url": ("dollymp-decisions.db", _str()),
    "store.retention_max_age_s": (0.0, _float(0.0)),
    "store.retention_max_bytes": (0, _int(0)),
    # Recurring-job history of applications without an AM helper (pyscheduler.store.runhistory): at most
    # this many (application name, queue, YARN priority) keys, each weighing at most this many run times.
    "store.run_history_max_keys": (10_000, _int(1, 1_000_000)),
    "store.run_history_max_samples": (2_000, _int(1, 1_000_000)),
    # Recurring-job history of AM-helper jobs (pyscheduler.store.history), keyed by the RM's queue, user and
    # job name: shared across queues only when an operator says so; at most this many (job, phase) rows of
    # one user in one queue, and of one queue (the tenant's own least recently updated rows forgotten).
    "store.history_share_across_queues": (False, _bool),
    "store.history_max_rows_per_queue": (10_000, _int(1, 1_000_000)),
    "store.history_max_rows_per_user": (1_000, _int(1, 1_000_000)),
    "appmaster.plans_per_s": (50.0, _float(0.0, low_open=True)),
    # CPU the AM calls of one application, and of one queue, may take per second; past it a call is
    # deferred: answered with the last plan and the reason, its report applied later
    # (pyscheduler/service/rmproxy/amgate.py)
    "appmaster.app_cpu_ms_per_s": (20.0, _float(0.0, low_open=True)),
    "appmaster.queue_cpu_ms_per_s": (100.0, _float(0.0, low_open=True)),
    "appmaster.cpu_burst_s": (10.0, _float(0.0, low_open=True)),  # a budget holds this many seconds' worth
    # Running clones yield their containers to waiting originals (service/round/yielding.py,
    # docs/operators-guide.md).
    "appmaster.clone_yield": (True, _bool),
    # Clones at launch that another copy of their task clearly beats are released at once
    # (service/round/yielding.py, beaten); only with appmaster.clone_yield, which supplies the running copies.
    "appmaster.release_beaten_clones": (True, _bool),
    # When a clone at launch is beaten (service/round/yielding.py BeatenRule): later than its task's lead copy
    # by more than margin_s and margin_frac of the lead's run time, both copies past min_progress of their
    # work.
    "appmaster.beaten_margin_s": (10.0, _float(0.0)),
    "appmaster.beaten_margin_frac": (0.2, _float(0.0)),
    "appmaster.beaten_min_progress": (0.2, _float(0.0)),
    # An original that a clone of its task clearly beats is released too (by the same rule).
    "appmaster.release_beaten_originals": (False, _bool),
    # A reduce copy's progress, for every estimate of when it finishes, is its reduce phase's, (score - 2/3)
    # x 3 (estimate/copies.py reduce_work_progress), not Hadoop's score, 2/3 once the shuffle is done.
    "appmaster.reduce_phase_progress": (False, _bool),
    # A job phase with neither a recurring-job history nor a finished task takes θ/σ from its queue's
    # earlier jobs' phase of the same id (DollyMP Sec. 5.2's framework prior, store/history.py framework)
    # instead of 1 s and 0. Off by default: Algorithm 1 orders jobs by critical path, not volume, so a
    # small job that arrives behind a large one of the same task times waits behind it once its θ is
    # known, where the 1 s prior put it first (docs/design/production.md).
    "appmaster.framework_prior": (False, _bool),
    # The live form of the core's late_first extension (policies/dollymp.py): clones of tasks judged on their
    # own (a late copy, the phase tail, a job's last stage) go to the core's round with their job's originals,
    # in its priority order, instead of waiting for capacity no original can use (service/round/clones.py).
    "appmaster.late_first": (False, _bool),
    "policy.name": ("default", _str()),
    "policy.options": ({}, _options),
    "http.host": ("127.0.0.1", _host),
    "http.port": (8080, _int(-1, 65535)),  # -1: no HTTP API; 0: an ephemeral port
    "http.token": ("", _str()),  # the read role's bearer token (GET endpoints; pyscheduler/api/roles.py)
    "http.admin_token": ("", _str()),  # the admin role's: also POST /v1/config/validate; empty: refused
    # A connection with no request in progress this long (none yet, between two, or a head still arriving,
    # counted from its last response) is closed (pyscheduler/api/connection.py); SSE streams are requests.
    "http.idle_timeout_s": (30.0, _float(0.0, low_open=True)),
    # Live decision streams (GET /v1/decisions/stream, pyscheduler/api/stream.py): open at once in total
    # and per caller (token role, or client address without tokens), over which a stream is answered 429;
    # decisions a stream may fall behind before it is dropped (its client reconnects and catches up).
    "http.stream_max_total": (1000, _int(1, 100_000)),
    "http.stream_max_per_caller": (250, _int(1, 100_000)),
    "http.stream_queue_events": (10_000, _int(100, 10_000_000)),
    # Bounds on what callers can make the service hold (pyscheduler/service/limits.py; operator's guide)
    "limits.containers_per_ask": (100_000, _int(1, 10_000_000)),
    "limits.tasks_per_phase": (100_000, _int(1, 10_000_000)),
    "limits.phases_per_job": (1_000, _int(1, 100_000)),
    "limits.max_duration_s": (31_536_000.0, _float(0.0, low_open=True)),
    "limits.attempts_per_app": (20_000, _int(1, 10_000_000)),
    "limits.attempts_per_report": (10_000, _int(1, 10_000_000)),
    "limits.map_reads_per_report": (100_000, _int(1, 10_000_000)),
    "limits.sessions": (64, _int(1, 100_000)),
    "limits.sessions_per_caller": (8, _int(1, 100_000)),
    "limits.session_idle_s": (600.0, _float(0.0, low_open=True)),
    "limits.streams_per_peer": (4, _int(1, 1024)),
    "limits.stream_reserve": (4, _int(1, 1024)),
    "limits.sync_idle_s": (60.0, _float(0.0, low_open=True)),
    "limits.http_body_bytes": (1 << 20, _int(1, 1 << 30)),
    "limits.http_header_bytes": (64 * 1024, _int(1024, 1 << 24)),  # request line and headers: else 431
    "limits.json_depth": (32, _int(1, 1000)),
    "limits.log_wait_s": (1.0, _float(0.0, low_open=True)),
    "service.port_file": ("", _str()),
    "service.log_level": ("INFO", _str(LOG_LEVELS, upper=True)),
}
SECTIONS = tuple(sorted({k.split(".")[0] for k in SCHEMA}))

# Keys an earlier version took, with why they are gone: naming one (file, environment or command line) is
# an error that says so, not an unknown key's.
_NO_VALUE_MODEL = (
    "removed: clones yield to waiting originals by service/round/yielding.py's rules, the one yield model "
    "(the value model tied them on the simulator's median over seeds and was deleted); drop this key"
)
REMOVED: dict[str, str] = {
    "appmaster.yield_model": _NO_VALUE_MODEL,
    "yield.margin_s": _NO_VALUE_MODEL,
    "yield.min_wait_s": _NO_VALUE_MODEL,
    "yield.startup_s": _NO_VALUE_MODEL,
}
_REMOVED_SECTIONS = tuple(sorted({k.split(".")[0] for k in REMOVED} - set(SECTIONS)))


@dataclass(frozen=True)
class Config:
    """Validated settings; `values[key]` for every key of SCHEMA, `sources[key]` where it came from."""

    values: Mapping[str, Any]
    sources: Mapping[str, str]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _flatten(doc: Mapping[str, Any], source: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for section, table in doc.items():
        if section not in SECTIONS and section not in _REMOVED_SECTIONS:
            raise ConfigError(section, source, f"unknown section; known: {', '.join(SECTIONS)}")
        if not isinstance(table, dict):
            raise ConfigError(section, source, "must be a table")
        for name, value in table.items():
            key = f"{section}.{name}"
            if key in REMOVED:
                raise ConfigError(key, source, REMOVED[key])
            if section not in SECTIONS:
                raise ConfigError(section, source, f"unknown section; known: {', '.join(SECTIONS)}")
            if key not in SCHEMA:
                known = ", ".join(k for k in SCHEMA if k.startswith(section + "."))
                raise ConfigError(key, source, f"unknown key; known in [{section}]: {known}")
            flat[key] = value
    return flat


def _env_keys(env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for var, value in env.items():
        if not var.startswith(ENV_PREFIX):
            continue
        rest = var[len(ENV_PREFIX) :].lower()
        section = next((s for s in (*SECTIONS, *_REMOVED_SECTIONS) if rest.startswith(s + "_")), None)
        if section is None:
            continue  # not ours (e.g. DOLLYMP_HOME)
        key = f"{section}.{rest[len(section) + 1 :]}"
        if key in REMOVED:
            raise ConfigError(key, f"env {var}", REMOVED[key])
        if section not in SECTIONS:
            continue  # not ours: a removed section's prefix, naming none of its keys
        if key not in SCHEMA:
            raise ConfigError(key, f"env {var}", "unknown key")
        found[key] = (value, f"env {var}")
    return found


def load(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    files: bool = True,
) -> Config:
    """Merge and validate; `overrides` (command-line flags) hold typed values or None for unset.
    `files=False`: file paths are checked to be strings only, not looked up (the HTTP API's validation
    must not tell which paths exist on the server)."""
    raw: dict[str, tuple[Any, str, bool]] = {k: (d, "default", False) for k, (d, _) in SCHEMA.items()}
    if path is not None:
        source = f"file {path}"
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except OSError as exc:
            raise ConfigError("--config", source, f"cannot read: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("--config", source, f"not valid TOML: {exc}") from None
        for k, v in _flatten(doc, source).items():
            raw[k] = (v, source, False)
    for k, (env_text, env_source) in _env_keys(os.environ if env is None else env).items():
        raw[k] = (env_text, env_source, True)
    for k, v in (overrides or {}).items():
        if k in REMOVED:
            raise ConfigError(k, "command line", REMOVED[k])
        if k not in SCHEMA:
            raise ConfigError(k, "command line", "unknown key")
        if v is not None:
            raw[k] = (v, "command line", False)
    values: dict[str, Any] = {}
    for k, (v, source, is_text) in raw.items():
        try:
            parse = SCHEMA[k][1] if files or SCHEMA[k][1] is not _file else _path
            values[k] = parse(v, is_text)
        except ValueError as exc:
            raise ConfigError(k, source, str(exc)) from None
    sources = {k: raw[k][1] for k in raw}
    _cross_check(values, sources)
    return Config(values, sources)


def _cross_check(v: Mapping[str, Any], src: Mapping[str, str]) -> None:
    if bool(v["grpc.tls_cert"]) != bool(v["grpc.tls_key"]):
        missing = "grpc.tls_key" if v["grpc.tls_cert"] else "grpc.tls_cert"
        raise ConfigError(missing, src[missing], "grpc.tls_cert and grpc.tls_key must be set together")
    if v["grpc.tls_client_ca"] and not v["grpc.tls_cert"]:
        raise ConfigError(
            "grpc.tls_client_ca", src["grpc.tls_client_ca"], "client certificates need grpc.tls_cert"
        )
    if (
        not is_loopback(v["grpc.host"])
        and not v["grpc.auth_secret_file"]
        and not v["grpc.tls_client_ca"]
        and not v["grpc.insecure"]
    ):
        raise ConfigError(
            "grpc.auth_secret_file",
            src["grpc.auth_secret_file"],
            f"required when grpc.host {v['grpc.host']!r} is not loopback (or grpc.tls_client_ca for client "
            "certificates; grpc.insecure = true to serve unauthenticated callers anyway)",
        )
    if v["http.port"] >= 0 and not is_loopback(v["http.host"]) and not v["http.token"]:
        raise ConfigError(
            "http.token", src["http.token"], f"required when http.host {v['http.host']!r} is not loopback"
        )
    if v["http.admin_token"] and v["http.admin_token"] == v["http.token"]:
        raise ConfigError(
            "http.admin_token", src["http.admin_token"], "must differ from http.token (the read-only token)"
        )
    if not v["policy.name"]:
        raise ConfigError("policy.name", src["policy.name"], "must be non-empty")
    if not v["store.url"]:
        raise ConfigError("store.url", src["store.url"], "must be non-empty")
    if v["store.history_max_rows_per_user"] > v["store.history_max_rows_per_queue"]:
        raise ConfigError(
            "store.history_max_rows_per_user",
            src["store.history_max_rows_per_user"],
            f"must be at most store.history_max_rows_per_queue ({v['store.history_max_rows_per_queue']})",
        )
