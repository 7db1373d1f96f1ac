"""One production configuration: `dollymp serve` with no flags, the compose cluster, `make demo`, the cluster
benchmark, the SLS benchmark, the local cluster and the procedure that chooses it all name the policy
`default` (pyscheduler/policies/production.py), and `default` is the candidate the procedure names."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pyscheduler import config, policies
from pyscheduler.bench import choose, mechanisms, sls
from pyscheduler.cli import bench as bench_cli
from pyscheduler.cli import localcluster as localcluster_cli
from pyscheduler.cli import serve
from pyscheduler.deploy import bench_cluster, demo
from pyscheduler.policies.production import NAME, PRODUCTION
from pyscheduler.service.round.policy import LIVE_DEFAULTS, resolve
from pyscheduler.sim.runner import parse_policy

ROOT = Path(__file__).resolve().parents[2]


def _defaults(add: object) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add(p)  # type: ignore[operator]
    return p.parse_args([])


def _command_defaults(register: object, name: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))  # type: ignore[operator]
    return p.parse_args([name])


def _settings(v: Any) -> Any:
    """A policy's configuration as plain data: its public attributes, recursively (no locks, no ids)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_settings(x) for x in v]
    if isinstance(v, dict):
        return {k: _settings(x) for k, x in v.items()}
    fields = getattr(v, "__dict__", None)
    if fields is None:
        slots = [s for c in type(v).__mro__ for s in getattr(c, "__slots__", ())]
        fields = {s: getattr(v, s) for s in slots if hasattr(v, s)}
    return {k: _settings(x) for k, x in fields.items() if not k.startswith("_") and k != "name"}


def test_serve_with_no_flags_runs_the_production_configuration() -> None:
    assert NAME == "default"
    cfg = config.load(env={})
    assert (cfg["policy.name"], cfg["policy.options"]) == (NAME, {})
    assert _command_defaults(serve.register, "serve").policy is None  # no flag: the configuration's above
    assert resolve(cfg["policy.name"], cfg["policy.options"]) is not None


def test_compose_runs_the_production_configuration() -> None:
    toml = tomllib.loads((ROOT / "docker" / "dollymp.toml").read_text())
    assert toml["policy"]["name"] == NAME and "options" not in toml["policy"]
    compose = (ROOT / "docker" / "docker-compose.yml").read_text()
    (policy,) = re.findall(r"DOLLYMP_POLICY_NAME:\s*(\S+)", compose)
    assert policy == "${DOLLYMP_POLICY:-" + NAME + "}"
    (options,) = re.findall(r"DOLLYMP_POLICY_OPTIONS:[ \t]*([^\n#]*)", compose)
    assert options.strip() == ""  # passed on only when the operator sets it


def test_the_demo_and_the_benchmarks_run_the_production_configuration() -> None:
    for add in (demo.add_arguments, bench_cluster.add_arguments):
        args = _defaults(add)
        assert (args.policy, args.policy_options) == (NAME, "{}"), add
    assert sls.SIM_POLICY["dollymp"] == NAME
    assert _command_defaults(localcluster_cli.register, "local-cluster").policy == NAME
    for target in ("engine", "service"):
        p = argparse.ArgumentParser()
        bench_cli.register(p.add_subparsers(dest="command"))
        assert p.parse_args(["bench", target]).policy == NAME, target
    mech = _defaults(mechanisms.add_args)
    assert NAME in mech.policies.split(",")


def test_the_sls_and_rm_benchmarks_services_run_the_production_configuration() -> None:
    assert '"--policy", "default"' in Path(sls.__file__).read_text()
    rm_bench = (
        ROOT / "yarn-plugin" / "src" / "test" / "java" / "io" / "dollymp" / "yarn" / "bench" / "RmBench.java"
    )
    assert '"policy", "default"' in rm_bench.read_text()


def test_default_is_the_chosen_candidate_with_what_the_live_mechanism_sets() -> None:
    """The candidate string `dollymp bench choose` names parses to the base and options `default` runs,
    less the options the service sets for that base itself (LIVE_DEFAULTS), which `default` writes out
    so that the policy-only engine runs the same configuration."""
    assert PRODUCTION.candidate in choose.CANDIDATES
    _, base, opts = parse_policy(PRODUCTION.candidate)
    assert base == PRODUCTION.base
    assert PRODUCTION.options == {**opts, **LIVE_DEFAULTS.get(base, {})}
    live, chosen = resolve(NAME), resolve(base, opts)
    assert live is not None and chosen is not None
    assert live.name == NAME
    assert _settings(live) == _settings(chosen)
    # in the simulator's policy-only engine too (no LIVE_DEFAULTS there)
    assert _settings(policies.get_policy(NAME)) == _settings(chosen)


def test_the_paper_keeps_its_name() -> None:
    paper = policies.get_policy("dollymp")
    assert paper.name == "dollymp"
    assert _settings(paper) != _settings(policies.get_policy(NAME))


def test_an_option_of_default_is_validated_as_its_bases() -> None:
    with pytest.raises(ValueError):
        policies.get_policy(NAME, max_clones=9)
