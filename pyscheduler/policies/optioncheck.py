"""Checks of a DollyMP policy option's value: each raises a ValueError naming the option and its limit."""

from __future__ import annotations

from typing import Any


def count(option: str, value: Any, least: int) -> int:
    """`value` if it is an integer (not a bool) >= `least`; else a ValueError naming the option."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"dollymp option {option} must be an integer >= {least}, got {value!r}")
    return value


def flag(option: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"dollymp option {option} must be true or false, got {value!r}")


def choice(option: str, value: Any, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"dollymp option {option} must be one of {allowed}, got {value!r}")
