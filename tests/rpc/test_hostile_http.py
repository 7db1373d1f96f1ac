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

from pyscheduler.service.rmproxy.service import DecisionService

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


def test_bodies_that_hid_their_nesting_are_refused_naming_the_limit(svc: DecisionService) -> None:
    """The depth scan read a TOML comment's quote as a string (a backslash then carried it past the
    newline) and a UTF-16 body's bytes (U+2241 is 0x41 0x22, a quote byte) while the parser decoded it:
    both hid 5000 brackets and the parser's RecursionError answered 500."""
    port = svc.http.port
    depth = "limit 32 (limits.json_depth)"
    deep = "[" * 5000 + "]" * 5000
    for comment in ('# "\\\n', "# '\n", '# """\n', "# '''\n"):
        _refused(port, f"{comment}x = {deep}\n".encode(), "text/plain", 400, depth)
    for string in ('s = "a\\"#"\n', "s = '''a\n#'''\n", 's = """\\\n"\n"""\n', "s = 'a\\'\n"):
        _refused(port, f"{string}x = {deep}\n".encode(), "application/toml", 400, depth)
    utf16 = ('["\u2241", ' + deep + "]").encode("utf-16-le")
    for body in (utf16, b"\xff\xfe" + utf16, ('["\u2241", ' + deep + "]").encode("utf-16")):
        _refused(port, body, "application/json", 400, "UTF-8")
    _refused(port, "x = 1\n".encode("utf-16"), "text/plain", 400, "UTF-8")
    code, text = _post(port, b'# a "quoted \\ comment\ngrpc.port = 7071\n', "text/plain")
    assert code == 200 and json.loads(text)["valid"] is True, text  # comments and strings still parse


def test_a_parser_that_recurses_too_deep_is_answered_naming_the_limit(tmp_path: Path) -> None:
    """The second wall: with limits.json_depth at its maximum the scan lets 1000 levels through, deeper
    than the TOML and JSON parsers recurse; their RecursionError is a 400 naming the limit, not a 500."""
    s = in_process_service(tmp_path, **{"http.port": 0, "limits.json_depth": 1000})
    try:
        port = s.http.port
        depth = "limit 1000 (limits.json_depth)"
        deep = "[" * 1000 + "]" * 1000
        _refused(port, f"x = {deep}\n".encode(), "text/plain", 400, depth)
        doc = '{"policy": {"options": {"a": ' + deep + "}}}"
        _refused(port, doc.encode(), "application/json", 400, depth)
    finally:
        s.stop()


def test_a_huge_value_is_echoed_bounded_naming_the_key(svc: DecisionService) -> None:
    port = svc.http.port
    r = hostile.row(ATTACK)
    for doc in ({"service": {"log_level": "x" * 500_000}}, {"grpc": {"port": "9" * 500_000}}):
        r.inputs += 1
        code, text = _post(port, json.dumps(doc).encode(), "application/json")
        body = json.loads(text)
        key = next(f"{s}.{k}" for s, t in doc.items() for k in t)
        ok = code == 200 and body["key"] == key and "... (500000 characters)" in body["problem"]
        r.clear_errors += ok
        assert ok and len(text) < 1000, (code, text[:300])
