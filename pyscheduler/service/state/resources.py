"""Resource vectors as YARN speaks them: memory (MB), vcores, and further resource types by name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyscheduler.wire import pb


@dataclass(frozen=True, slots=True)
class Res:
    """A resource vector: memory (MB), vcores, and further YARN resource types by name."""

    memory_mb: int = 0
    vcores: int = 0
    others: tuple[tuple[str, int], ...] = ()

    @staticmethod
    def of(r: Any) -> Res:
        others = tuple(sorted((k, int(v)) for k, v in r.others.items())) if r.others else ()
        return Res(int(r.memory_mb), int(r.vcores), others)

    def to_pb(self) -> Any:
        if not self.others:
            return pb.Resource(memory_mb=self.memory_mb, vcores=self.vcores)
        return pb.Resource(memory_mb=self.memory_mb, vcores=self.vcores, others=dict(self.others))

    def to_json(self) -> dict[str, Any]:
        return {"memory_mb": self.memory_mb, "vcores": self.vcores, "others": dict(self.others)}


ZERO = Res()

_INTERNED: dict[tuple[int, int], Res] = {}  # the few container sizes of a cluster, shared


def res_of_wire(r: Any) -> Res:
    """`Res.of(r)`, sharing one Res per (memory, vcores) when there are no other resource types."""
    if r.others:
        return Res.of(r)
    return interned(r.memory_mb, r.vcores)


def interned(memory_mb: int, vcores: int) -> Res:
    """Res(memory_mb, vcores), one shared object per pair."""
    key = (memory_mb, vcores)
    hit = _INTERNED.get(key)
    if hit is None:
        if len(_INTERNED) >= 4096:
            _INTERNED.clear()
        hit = _INTERNED[key] = Res(int(memory_mb), int(vcores))
    return hit


def same_as_wire(r: Res, msg: Any) -> bool:
    """`r` equals the wire Resource `msg` (without building a Res)."""
    return (
        r.memory_mb == msg.memory_mb
        and r.vcores == msg.vcores
        and (dict(r.others) == dict(msg.others) if (r.others or msg.others) else True)
    )


def res_add(a: Res, b: Res, times: int = 1) -> Res:
    if not b.others and not a.others:
        return Res(a.memory_mb + b.memory_mb * times, a.vcores + b.vcores * times)
    merged = dict(a.others)
    for k, v in b.others:
        merged[k] = merged.get(k, 0) + v * times
    return Res(a.memory_mb + b.memory_mb * times, a.vcores + b.vcores * times, tuple(sorted(merged.items())))


def res_max(a: Res, b: Res) -> Res:
    keys = {k for k, _ in a.others} | {k for k, _ in b.others}
    da, db = dict(a.others), dict(b.others)
    others = tuple(sorted((k, max(da.get(k, 0), db.get(k, 0))) for k in keys))
    return Res(max(a.memory_mb, b.memory_mb), max(a.vcores, b.vcores), others)


def fits_count(ask: Res, free: Res, limit: int) -> int:
    """How many copies of `ask` fit in `free`, at most `limit` (0 if none)."""
    n = limit
    if ask.memory_mb > 0:
        n = min(n, free.memory_mb // ask.memory_mb)
    if ask.vcores > 0:
        n = min(n, free.vcores // ask.vcores)
    if ask.others:
        fo = dict(free.others)
        for k, v in ask.others:
            if v > 0:
                n = min(n, fo.get(k, 0) // v)
    return max(n, 0)
