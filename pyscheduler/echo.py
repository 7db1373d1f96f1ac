"""Bounded echoes of what a caller sent, for error messages.

An error that repeats a caller's value must not grow with it: a 1 MB application id repeated in a gRPC
status message made the status trailer pass gRPC's metadata limit, and the client saw RESOURCE_EXHAUSTED
about metadata instead of the error naming the field. `shown` is the value as an error quotes it, cut
past ECHO_CHARS with an ellipsis and its original length; `detail` bounds a whole message (the last
wall, where a status or problem text leaves the service) the same way, in UTF-8 bytes.
"""

from __future__ import annotations

ECHO_CHARS = 64  # of a value quoted in an error
DETAIL_BYTES = 2048  # of a whole error message (UTF-8; gRPC percent-encodes it in a trailer)


def shown(value: object, limit: int = ECHO_CHARS) -> str:
    """ascii(value) (printable ASCII, quoted like repr), cut to `limit` characters of the value and
    followed by "... (N characters)" when longer."""
    if isinstance(value, str | bytes) and len(value) > limit:
        unit = "characters" if isinstance(value, str) else "bytes"
        return f"{value[:limit]!a}... ({len(value)} {unit})"
    text = ascii(value)
    if len(text) > 4 * limit:  # containers (a tuple of ids): cut what they print
        return f"{text[: 4 * limit]}... ({len(text)} characters)"
    return text


def detail(text: str, limit: int = DETAIL_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (and a short suffix) with "... (N characters)"."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    return f"{raw[:limit].decode('utf-8', 'ignore')}... ({len(text)} characters)"
