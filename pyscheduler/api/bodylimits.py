"""Bounds on an HTTP request body: its size and the nesting depth of its JSON or TOML.

The body is read in chunks and refused (413) as soon as it passes `limits.http_body_bytes`, before the
rest is buffered; its nesting (brackets and braces outside strings) is measured by a linear scan and
refused (400) past `limits.json_depth`, before a parser recurses into it (Python's JSON parser raises
RecursionError on deep input, which answered 500). Both refusals name the limit's key.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTES = frozenset(b"\"'")


async def read_body(request: Any, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body: {declared} bytes, limit {limit} bytes (limits.http_body_bytes)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"body: more than {limit} bytes, limit {limit} (limits.http_body_bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def nesting(raw: bytes) -> int:
    """The deepest nesting of [ and { outside quoted strings (JSON's and TOML's)."""
    depth = deepest = 0
    quote = 0
    escaped = False
    for c in raw:
        if quote:
            if escaped:
                escaped = False
            elif c == 0x5C and quote == 0x22:  # backslash inside "...": escapes the next byte
                escaped = True
            elif c == quote or c == 0x0A:
                quote = 0
        elif c in _QUOTES:
            quote = c
        elif c in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif c in _CLOSE:
            depth = max(0, depth - 1)
    return deepest


def check_depth(raw: bytes, limit: int) -> None:
    found = nesting(raw)
    if found > limit:
        raise HTTPException(400, f"body: nested {found} deep, limit {limit} (limits.json_depth)")
