"""Bounds on an HTTP request body: its size, its encoding and the nesting depth of its JSON or TOML.

The body is read in chunks and refused (413) as soon as it passes `limits.http_body_bytes`, before the
rest is buffered; a client that leaves before sending it all is logged in one line (no traceback).
It must be UTF-8 text without NUL (400 otherwise): the depth scan and the parser then read the same
characters (a UTF-16 body read as bytes by the scan but decoded by json.loads hid its
brackets behind a quote byte). Its nesting (brackets and braces outside strings and, for TOML, comments)
is measured by a linear scan of that text and refused (400) past `limits.json_depth`, before a parser
recurses into it (Python's JSON and TOML parsers raise RecursionError on deep input, which answered
500). A parser's RecursionError is still answered 400 naming the limit (`too_deep`): the scan is the
first wall, not the only one. Every refusal names the field (body) and the limit's key.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import HTTPException
from starlette.requests import ClientDisconnect

log = logging.getLogger(__name__)

DEPTH_KEY = "limits.json_depth"
SIZE_KEY = "limits.http_body_bytes"
_OPEN = frozenset("[{")
_CLOSE = frozenset("]}")


async def read_body(request: Any, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body: {declared} bytes, limit {limit} bytes ({SIZE_KEY})")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HTTPException(413, f"body: more than {limit} bytes, limit {limit} ({SIZE_KEY})")
            chunks.append(chunk)
    except ClientDisconnect:  # nobody to answer: one line, no stack trace (uvicorn drops the answer)
        log.info(
            "%s %s: client gone after %d of %s body bytes",
            request.method,
            request.url.path,
            size,
            declared or "?",
        )
        raise HTTPException(400, f"body: client disconnected after {size} bytes") from None
    return b"".join(chunks)


def utf8_text(raw: bytes) -> str:
    """The body as text; 400 unless it is UTF-8 without NUL (UTF-16 and UTF-32 are refused)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(
            400, f"body: not UTF-8 text (byte {exc.start}); send UTF-8 (UTF-16/32 are refused)"
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        raise HTTPException(
            400, f"body: NUL character at offset {nul}; send UTF-8 text (UTF-16/32 are refused)"
        )
    return text


def _line_string_end(text: str, i: int, quote: str) -> int:
    """Past the one-line string opened before `i`: its closing quote, or the line's end (a newline
    ends it even after a backslash: neither JSON nor TOML continues a one-line string)."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            return i
        if c == quote:
            return i + 1
        i += 2 if c == "\\" and quote == '"' and i + 1 < n and text[i + 1] != "\n" else 1
    return n


def _multiline_end(text: str, i: int, quote: str) -> int:
    """Past TOML's multi-line string opened (three quotes) before `i`; up to two more quotes right
    before the closing three belong to the string."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\" and quote == '"':
            i += 2  # escapes the next character, a newline too (line-ending backslash)
        elif text.startswith(quote * 3, i):
            i += 3
            for _ in range(2):
                if i < n and text[i] == quote:
                    i += 1
            return i
        else:
            i += 1
    return n


def nesting(text: str, toml: bool = False) -> int:
    """The deepest nesting of [ and { outside strings: JSON's ("..." with backslash escapes) or, with
    `toml`, TOML's (also '...', the multi-line strings of three quotes, and # comments to the line's end)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or (toml and c == "'"):
            if toml and text.startswith(c * 3, i):
                i = _multiline_end(text, i + 3, c)
            else:
                i = _line_string_end(text, i + 1, c)
            continue
        if toml and c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        i += 1
    return deepest


def check_depth(text: str, limit: int, toml: bool = False) -> None:
    found = nesting(text, toml)
    if found > limit:
        raise HTTPException(400, f"body: nested {found} deep, limit {limit} ({DEPTH_KEY})")


def too_deep(limit: int) -> HTTPException:
    """The parser recursed too deep (RecursionError): the body's nesting is past what it can parse."""
    return HTTPException(400, f"body: nested too deep to parse, limit {limit} ({DEPTH_KEY})")
