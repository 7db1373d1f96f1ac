"""POST /v1/config/validate: check a configuration document with the service's own rules.

The body is either the TOML file itself (Content-Type text/plain or application/toml) or the same
document as a JSON object ({"grpc": {"port": 7070}, ...}). Validation is pyscheduler.config.load with
no environment: the answer is about the document, not about the server's variables. Files named in
it (TLS certificates) are not looked up: the answer must not tell a caller which paths exist on the
server (`files=False`); `dollymp serve` checks them at start-up.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any

from pyscheduler.api.models import ConfigCheck
from pyscheduler.echo import detail

SECRET_KEYS = frozenset({"http.token", "http.admin_token"})
BODY = "request body"


def _masked(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: ("***" if k in SECRET_KEYS and v else v) for k, v in values.items()}


def check_toml(text: str) -> ConfigCheck:
    from pyscheduler import config

    fd, path = tempfile.mkstemp(prefix="dollymp-validate-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        cfg = config.load(path, env={}, files=False)
    except config.ConfigError as exc:
        return ConfigCheck(valid=False, key=exc.key, problem=detail(exc.problem.replace(path, BODY)))
    except (UnicodeError, ValueError) as exc:
        return ConfigCheck(valid=False, key="--config", problem=detail(f"not valid TOML: {exc}"))
    finally:
        os.unlink(path)
    return ConfigCheck(valid=True, values=_masked(cfg.values))


def check_document(doc: Mapping[str, Any]) -> ConfigCheck:
    """A JSON document: {section: {name: value}}; flattened into the keys config.load knows."""
    from pyscheduler import config

    flat: dict[str, Any] = {}
    for section, table in doc.items():
        if not isinstance(table, dict):
            return ConfigCheck(valid=False, key=str(section), problem="a section must be an object")
        for name, value in table.items():
            flat[f"{section}.{name}"] = value
    try:
        cfg = config.load(None, env={}, overrides=flat, files=False)
    except config.ConfigError as exc:
        return ConfigCheck(valid=False, key=exc.key, problem=detail(exc.problem))
    return ConfigCheck(valid=True, values=_masked(cfg.values))
