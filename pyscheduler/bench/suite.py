"""Benchmarks as data: `dollymp bench all` (`make bench`) runs the scenarios of scenarios.toml and prints
one table; `dollymp bench compare REV` runs them at git revision REV (a temporary worktree) and at this
tree, alternating, and prints each figure's ratio with its spread.

A scenario is a `dollymp` command (its arguments may name `{json}`, a temporary file the command writes
its JSON to, and `{traces}`, ../shared/traces) and a figure read from its JSON: a dotted path, lower is
better, with the bar `max` it must stay under. `--ci` keeps the short subset (`ci = true`), whose bars
are about twice this machine kind's median. Every figure is the median over `--repeats` runs, printed with
its min and max; `compare` pairs run k of REV with run k of this tree, so the spread of the ratios is
that of neighbouring runs on the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pyscheduler.sim.live.compare import Spread

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).resolve().parent / "scenarios.toml"
KEYS = {"name", "args", "figure", "max", "ci"}
MAX_REPEATS = 20
RUN_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class Scenario:
    name: str
    args: tuple[str, ...]
    figure: str
    max: float
    ci: bool = False


def load(path: Path = SCENARIOS) -> list[Scenario]:
    """The scenarios of `path`; ValueError naming the scenario and field for anything malformed."""
    doc = tomllib.loads(path.read_text())
    rows = doc.get("scenario")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{path}: no [[scenario]] tables")
    out: list[Scenario] = []
    for i, row in enumerate(rows):
        where = f"{path}: scenario[{i}]"
        unknown = set(row) - KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(KEYS)}")
        name, args, figure, bar = row.get("name"), row.get("args"), row.get("figure"), row.get("max")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.name: must be a non-empty string")
        if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
            raise ValueError(f"{where}.args: must be a non-empty list of strings")
        if not isinstance(figure, str) or not figure:
            raise ValueError(f"{where}.figure: must be a dotted path into the command's JSON")
        if isinstance(bar, bool) or not isinstance(bar, int | float) or not bar > 0:
            raise ValueError(f"{where}.max: must be a number > 0")
        if not isinstance(row.get("ci", False), bool):
            raise ValueError(f"{where}.ci: must be true or false")
        out.append(Scenario(name, tuple(args), figure, float(bar), bool(row.get("ci", False))))
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: scenario names repeat")
    return out


def figure_of(doc: Any, path: str) -> float:
    """The number at dotted `path` in `doc`; ValueError naming the part that is missing."""
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"figure {path!r}: no {part!r} in the command's JSON")
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise ValueError(f"figure {path!r}: {node!r} is not a number")
    return float(node)


def run_once(s: Scenario, tree: Path, traces: Path) -> float:
    """One run of `s` with the code of `tree` (its own checkout, cwd and import path)."""
    with tempfile.TemporaryDirectory(prefix="dollymp-bench-") as tmp:
        out = Path(tmp) / "out.json"
        args = [a.replace("{json}", str(out)).replace("{traces}", str(traces)) for a in s.args]
        env = dict(os.environ, PYTHONPATH=str(tree))
        proc = subprocess.run(
            [sys.executable, "-m", "pyscheduler", *args],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        if proc.returncode not in (0, 1):  # 1: a benchmark's own bar failed; its figure still counts
            raise RuntimeError(f"{s.name}: exit {proc.returncode}: {proc.stderr.strip()[-800:]}")
        if "{json}" in s.args:
            doc = json.loads(out.read_text())
        else:
            lines = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith("{")]
            if not lines:
                raise RuntimeError(f"{s.name}: printed no JSON line: {proc.stdout.strip()[-400:]}")
            doc = json.loads(lines[-1])
    return figure_of(doc, s.figure)


Figures = Spread  # median, low, high of one figure over runs


Runner = Callable[[Scenario, Path], float]


def measure(scenarios: Sequence[Scenario], repeats: int, run: Runner, tree: Path) -> dict[str, Figures]:
    return {s.name: Figures.of([run(s, tree) for _ in range(repeats)]) for s in scenarios}


def pair(
    scenarios: Sequence[Scenario], repeats: int, run: Runner, base: Path, tree: Path
) -> dict[str, tuple[Figures, Figures, Figures]]:
    """Per scenario: (base's figures, this tree's, the ratios tree / base of runs taken side by side);
    the runs alternate base, tree, base, tree, ... so that the machine's load falls on both alike."""
    out: dict[str, tuple[Figures, Figures, Figures]] = {}
    for s in scenarios:
        a: list[float] = []
        b: list[float] = []
        for _ in range(repeats):
            a.append(run(s, base))
            b.append(run(s, tree))
        ratios = [y / x if x > 0 else float("inf") for x, y in zip(a, b, strict=True)]
        out[s.name] = (Figures.of(a), Figures.of(b), Figures.of(ratios))
    return out


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=3, help=f"runs per scenario (1..{MAX_REPEATS})")
    p.add_argument("--ci", action="store_true", help="only the short subset (ci = true)")
    p.add_argument("--only", default=None, help="comma-separated scenario names (substrings) to run")
    p.add_argument("--scenarios", type=Path, default=SCENARIOS, help="the scenarios file")
    p.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    p.add_argument("--json", dest="json_out", type=Path, default=None, help="also write the JSON here")


def add_compare_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("rev", help="the git revision to compare this tree against (e.g. HEAD~5, a commit id)")
    add_args(p)


def _chosen(args: argparse.Namespace) -> list[Scenario]:
    if not 1 <= args.repeats <= MAX_REPEATS:
        raise SystemExit(f"--repeats must be in 1..{MAX_REPEATS}, got {args.repeats}")
    try:
        scenarios = load(args.scenarios)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"--scenarios: {exc}") from None
    if args.ci:
        scenarios = [s for s in scenarios if s.ci]
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        scenarios = [s for s in scenarios if any(w in s.name for w in wanted)]
    if not scenarios:
        raise SystemExit("no scenario chosen")
    return scenarios


def _runner(traces: Path) -> Runner:
    return lambda s, tree: run_once(s, tree, traces)


def run_all(args: argparse.Namespace) -> int:
    """`dollymp bench all`: exit 1 when a figure's median passes its bar."""
    scenarios = _chosen(args)
    got = measure(scenarios, args.repeats, _runner(args.traces), ROOT)
    print(f"{'scenario':<58}{'figure':<34}{'median [min, max]':>30}{'bar':>10}  ok")
    failed = 0
    for s in scenarios:
        f = got[s.name]
        ok = f.median <= s.max
        failed += not ok
        print(f"{s.name:<58}{s.figure:<34}{f.text('.3g'):>30}{s.max:>10g}  {'yes' if ok else 'NO'}")
    out = {s.name: {"figure": s.figure, "bar": s.max, **asdict(got[s.name])} for s in scenarios}
    line = json.dumps({"repeats": args.repeats, "scenarios": out}, sort_keys=True)
    if args.json_out:
        args.json_out.write_text(line + "\n")
    print(line)
    return 1 if failed else 0


def run_compare(args: argparse.Namespace) -> int:
    """`dollymp bench compare REV`: this tree against REV, side by side."""
    scenarios = _chosen(args)
    with tempfile.TemporaryDirectory(prefix="dollymp-compare-") as tmp:
        base = Path(tmp) / "base"
        add = subprocess.run(
            ["git", "worktree", "add", "--detach", str(base), args.rev],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if add.returncode != 0:
            raise SystemExit(f"rev {args.rev!r}: {add.stderr.strip()}")
        try:
            got = pair(scenarios, args.repeats, _runner(args.traces), base, ROOT)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    print(f"{'scenario':<58}{args.rev[:12]:>26}{'this tree':>26}{'this / rev':>26}")
    out: dict[str, Any] = {}
    for s in scenarios:
        a, b, r = got[s.name]
        print(f"{s.name:<58}{a.text('.3g'):>26}{b.text('.3g'):>26}{r.text('.3f'):>26}")
        out[s.name] = {"figure": s.figure, "rev": asdict(a), "tree": asdict(b), "ratio": asdict(r)}
    line = json.dumps({"rev": args.rev, "repeats": args.repeats, "scenarios": out}, sort_keys=True)
    if args.json_out:
        args.json_out.write_text(line + "\n")
    print(line)
    return 0
