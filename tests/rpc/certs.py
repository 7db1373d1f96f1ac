"""Test certificates made with openssl: a CA, a server certificate for 127.0.0.1, a client certificate."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(folder: Path) -> Certs:
    folder.mkdir(parents=True, exist_ok=True)
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=dollymp-test-ca",
         "-keyout", "ca.key", "-out", "ca.crt", cwd=folder)  # fmt: skip
    for name, ext in (
        ("server", "subjectAltName=IP:127.0.0.1,DNS:localhost"),
        ("client", "extendedKeyUsage=clientAuth"),
    ):
        _run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN=dollymp-{name}",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=folder)  # fmt: skip
        (folder / f"{name}.ext").write_text(ext + "\n")
        _run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=folder)  # fmt: skip
    return Certs(
        folder / "ca.crt",
        folder / "server.crt",
        folder / "server.key",
        folder / "client.crt",
        folder / "client.key",
    )
