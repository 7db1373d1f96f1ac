"""Ports for a local cluster's daemons (pyscheduler/deploy/hadoopconf.py free_ports): chosen below the
kernel's ephemeral range, so that no outgoing connection can take one before its daemon binds it."""

from __future__ import annotations

import random
import socket
from pathlib import Path

import pytest

from pyscheduler.deploy import hadoopconf


def test_the_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    lo, _ = hadoopconf.ephemeral_range()
    ports = hadoopconf.free_ports(16)
    assert len(set(ports)) == 16
    assert all(hadoopconf.PORTS_FROM <= p < lo for p in ports)
    for p in ports:  # each is free once the call returns
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((hadoopconf.LOOPBACK, p))


def test_a_port_in_use_is_never_chosen() -> None:
    lo, _ = hadoopconf.ephemeral_range()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind((hadoopconf.LOOPBACK, 0 if lo <= hadoopconf.PORTS_FROM else hadoopconf.PORTS_FROM))
        held.listen()
        taken = held.getsockname()[1]

        class FirstTheTakenOne(random.Random):  # the first draw is the port in use, then any
            draws = 0

            def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
                self.draws += 1
                return taken if self.draws == 1 else super().randrange(start, stop)

        rng = FirstTheTakenOne(7)
        ports = hadoopconf.free_ports(4, rng)
        assert taken not in ports and rng.draws >= 5


def test_the_range_is_read_from_the_kernel_or_defaults(tmp_path: Path) -> None:
    f = tmp_path / "ip_local_port_range"
    f.write_text("40000\t50000\n")
    assert hadoopconf.ephemeral_range(f) == (40000, 50000)
    f.write_text("junk\n")
    assert hadoopconf.ephemeral_range(f) == (32768, 60999)
    assert hadoopconf.ephemeral_range(tmp_path / "missing") == (32768, 60999)


def test_with_no_room_below_the_range_the_kernel_chooses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hadoopconf, "ephemeral_range", lambda: (hadoopconf.PORTS_FROM + 10, 65000))
    ports = hadoopconf.free_ports(3)
    assert len(set(ports)) == 3 and all(p > 0 for p in ports)
