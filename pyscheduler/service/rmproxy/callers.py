"""Who is calling: the identity that bounds a caller's RM registrations (service/rmproxy/session.py).

A TCP peer off the host is its address: `host 10.0.0.7`. A peer on loopback is every local process at
once by its address, so there it is the local user that owns the peer's socket, as Linux lists it in
/proc/net/tcp and /proc/net/tcp6 (the `uid` of the row whose local address is the peer's): `uid 1000`.
The ResourceManager's user and another user on its host are then two callers; two processes of one user
are one (that user can read the shim's secret file anyway). Where the row cannot be read (not Linux,
another network namespace) a loopback peer falls back to its address.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_Ip = ipaddress.IPv4Address | ipaddress.IPv6Address


def _split(peer: str) -> tuple[str, int] | None:
    """(address, port) of a gRPC peer string ("ipv4:127.0.0.1:5", "ipv6:[::1]:5"); None otherwise."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6") or ":" not in rest:
        return None
    host, _, port = rest.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return None


def _hex_address(raw: str) -> tuple[_Ip, int] | None:
    """A /proc/net/tcp{,6} address ("0100007F:1F90": 32-bit words in host order, little-endian here)."""
    addr, _, port = raw.partition(":")
    try:
        words = bytes.fromhex(addr)
        packed = b"".join(words[i : i + 4][::-1] for i in range(0, len(words), 4))
        ip = ipaddress.ip_address(packed)
        return ip, int(port, 16)
    except ValueError:
        return None


def _plain(ip: _Ip) -> _Ip:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def socket_uid(host: str, port: int, tables: tuple[Path, ...] = _TABLES) -> int | None:
    """The uid owning the local TCP socket bound to host:port; None if no table lists it."""
    try:
        want = _plain(ipaddress.ip_address(host))
    except ValueError:
        return None
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) < 8:
                continue
            local = _hex_address(cols[1])
            if local is not None and local[1] == port and _plain(local[0]) == want:
                try:
                    return int(cols[7])
                except ValueError:
                    return None
    return None


def caller_of(peer: str) -> str:
    """The caller behind a gRPC peer string: `uid N` on loopback where the socket's owner is known,
    else `host ADDRESS` (the peer string itself when it is neither IPv4 nor IPv6)."""
    parts = _split(peer)
    if parts is None:
        return peer or "unknown"
    host, port = parts
    try:
        loopback = _plain(ipaddress.ip_address(host)).is_loopback
    except ValueError:
        return f"host {host}"
    if loopback:
        uid = socket_uid(host, port)
        if uid is not None:
            return f"uid {uid}"
    return f"host {host}"
