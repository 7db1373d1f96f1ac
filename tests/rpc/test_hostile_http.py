"""Hostile HTTP caller: deeply nested and oversized bodies at POST /v1/config/validate are refused with
400/413 naming the limit (deep JSON answered 500 before), and the answer does not tell which paths
exist on the server; a shim session keeps scheduling meanwhile."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import hostile
import pytest
from rpc_harness import in_process_service

from pyscheduler.rpc.service import DecisionService

ATTACK = "HTTP body (size, nesting, path probing)"


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[DecisionService]:
    s = in_process_service(tmp_path, **{"http.port": 0})
    try:
        yield s
    finally:
        s.stop()


def _post(port: int, body: bytes, media: str, chunked: bool = False) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        if chunked:
            conn.putrequest("POST", "/v1/config/validate")
            conn.putheader("Content-Type", media)
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            for i in range(0, len(body), 65536):
                part = body[i : i + 65536]
                conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            conn.send(b"0\r\n\r\n")
        else:
            conn.request("POST", "/v1/config/validate", body=body, headers={"Content-Type": media})
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    finally:
        conn.close()


def _refused(port: int, body: bytes, media: str, status: int, names: str, chunked: bool = False) -> None:
    r = hostile.row(ATTACK)
    r.inputs += 1
    try:
        code, text = _post(port, body, media, chunked)
    except (ConnectionError, http.client.HTTPException):
        r.crashes += 1
        raise
    if code >= 500:
        r.crashes += 1
    if code == status and names in text:
        r.clear_errors += 1
    assert code == status and names in text, (code, text[:300])


def test_nested_and_oversized_bodies_are_refused_naming_the_limit(svc: DecisionService) -> None:
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        port = svc.http.port
        depth = "limit 32 (limits.json_depth)"
        for n in (33, 1000, 100_000):
            _refused(port, b"[" * n + b"]" * n, "application/json", 400, depth)
            _refused(port, b'{"a":' * n + b"1" + b"}" * n, "application/json", 400, depth)
            _refused(port, b"x = " + b"[" * n + b"]" * n, "text/plain", 400, depth)
        code, _ = _post(port, b'{"grpc": {"host": "' + b"[" * 5000 + b'"}}', "application/json")
        assert code == 200  # brackets inside a string are not nesting
        size = "(limits.http_body_bytes)"
        big = b'{"grpc": {"host": "' + b"a" * (2 << 20) + b'"}}'
        _refused(port, big, "application/json", 413, size)
        _refused(port, big, "application/json", 413, size, chunked=True)  # no Content-Length
        assert good.unaffected(ATTACK, base), good.why
    finally:
        good.close()


def test_validation_does_not_tell_which_paths_exist(svc: DecisionService, tmp_path: Path) -> None:
    port = svc.http.port
    there = tmp_path / "cert.pem"
    there.write_text("not a certificate")
    answers = []
    for path in (str(there), str(tmp_path / "absent.pem"), "/etc/shadow"):
        doc = {"grpc": {"tls_cert": path, "tls_key": path}}
        r = hostile.row(ATTACK)
        r.inputs += 1
        code, text = _post(port, json.dumps(doc).encode(), "application/json")
        assert code == 200, text
        body = json.loads(text)
        answers.append((body["valid"], body.get("key"), body.get("problem")))
        r.clear_errors += 1
    assert len(set(answers)) == 1 and answers[0][0] is True, answers  # same answer for every path
