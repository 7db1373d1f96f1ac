"""Kept runs of the reproduction report (`dollymp report --cache DIR --reuse`).

Each finished run is pickled under a name made of its exact `dollymp simulate` command, beside a JSON
sidecar naming that command and its policies. A run whose command differs from a kept one only by added
policies reads the kept policies back and runs only the new ones: in one run every policy simulates alone
on the same jobs, cluster, straggler draws and seed (sim/runner.compare), so a policy's results do not
depend on which others ran beside it. A run kept without a sidecar (by an older version) is recognised by
its results' policies, which rebuild its command and so its name.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable
from pathlib import Path

from pyscheduler.sim.runner import Comparison


def path_for(cache: Path, key: str, command: str) -> Path:
    digest = hashlib.sha256(command.encode()).hexdigest()[:16]
    return cache / f"{key}-{digest}.pickle"


def load(path: Path) -> Comparison:
    with path.open("rb") as f:
        kept: Comparison = pickle.load(f)  # our own file, written by `save`
    return kept


def save(path: Path, comparison: Comparison, command: str, policies: list[str]) -> None:
    """Write atomically (a killed report leaves no half file): the pickle, then its sidecar."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump(comparison, f)
    tmp.replace(path)
    describe(path, command, policies)


def describe(path: Path, command: str, policies: list[str]) -> None:
    """The sidecar of a kept run: its command and policies (also for runs kept before sidecars existed)."""
    side = path.with_suffix(".json")
    tmp = side.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"command": command, "policies": policies}))
    tmp.replace(side)


_POLICIES_OF: dict[Path, list[str]] = {}  # pickles without a sidecar: their policies, read once a process


def _describe_kept(cache: Path, key: str, command_with: Callable[[list[str]], str]) -> None:
    """Give a sidecar to each kept run of scenario `key` that has none (kept before sidecars) and is this
    run's with some policy list: its policies are its results' labels, its name is that command's."""
    for pickled in sorted(cache.glob(f"{key}-*.pickle")):
        if pickled.with_suffix(".json").is_file():
            continue
        if pickled not in _POLICIES_OF:
            try:
                _POLICIES_OF[pickled] = list(load(pickled).results)
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
                _POLICIES_OF[pickled] = []
        theirs = _POLICIES_OF[pickled]
        command = command_with(theirs)
        if theirs and path_for(cache, key, command) == pickled:
            describe(pickled, command, theirs)


def fewer_policies(
    cache: Path, key: str, policies: list[str], command_with: Callable[[list[str]], str]
) -> tuple[Path, list[str]] | None:
    """A kept run of scenario `key` whose command is this run's with only some of its `policies`
    (`command_with(theirs)` rebuilds this run's command with their policy list): the one with the most."""
    _describe_kept(cache, key, command_with)
    best: tuple[Path, list[str]] | None = None
    for side in sorted(cache.glob(f"{key}-*.json")):
        try:
            meta = json.loads(side.read_text())
        except (OSError, ValueError):
            continue
        theirs, command = meta.get("policies"), meta.get("command")
        if not (isinstance(theirs, list) and all(isinstance(p, str) for p in theirs)):
            continue
        if not set(theirs) < set(policies) or command_with(theirs) != command:
            continue
        pickled = side.with_suffix(".pickle")
        if pickled.is_file() and (best is None or len(theirs) > len(best[1])):
            best = (pickled, theirs)
    return best


def merged(policies: list[str], kept: Comparison, new: Comparison) -> Comparison:
    """One Comparison in the order of `policies`: the kept policies' results, then the new ones'."""
    results = {p: kept.results[p] if p in kept.results else new.results[p] for p in policies}
    return Comparison(results, new.bound, new.load, new.settings)
