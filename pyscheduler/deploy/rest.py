"""Tiny JSON-over-HTTP client for the RM, history server and decision-service REST APIs (stdlib only)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def get_json(url: str, timeout_s: float = 5.0) -> Any:
    """GET `url` and decode its JSON body. Connection errors raise OSError; HTTP 404 returns None."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
