"""A planted hostile-table row with a crash, for test_hostile_table.py's child run only: pytest collects
this file when it is named on the command line (it does not match test_*.py)."""

from __future__ import annotations

import hostile


def test_planted_crash() -> None:
    r = hostile.row("planted crash")
    r.inputs += 1
    r.clear_errors += 1
    r.crashes += 1
