"""Delay assignment's omega per job (DollyMP Sec. 5.2, Dolly Sec. 4.4; the model is policies/delay.py),
from the phases' observed run times when there are some, else from quantiles of their (theta, sigma)."""

from __future__ import annotations

from pyscheduler.estimate.pareto import quantile_samples
from pyscheduler.estimate.transfer import TransferStats
from pyscheduler.objects import Job
from pyscheduler.policies.base import Snapshot
from pyscheduler.policies.delay import choose_omega, sample_pairs


class OmegaChooser:
    """omega for a downstream phase; answers are cached by their inputs (the same inputs give the same
    omega: sample_pairs is seeded)."""

    def __init__(self, output_bytes: float, transfer: TransferStats, omega_samples: int) -> None:
        self.output_bytes, self.transfer, self.omega_samples = output_bytes, transfer, omega_samples
        self._omega_cache: dict[tuple[float, ...], float] = {}
        self._omega_of: dict[tuple[object, ...], float] = {}  # omega_for's exact inputs -> omega

    def omega_for(self, snapshot: Snapshot, job: Job, k: int) -> float:
        """Delay assignment's omega for phase k reading its first parent's outputs ."""
        up, down = job.phases[job.parent_idx[k][0]], job.phases[k]
        tu, su = snapshot.theta_sigma(job, up)
        td, sd = snapshot.theta_sigma(job, down)
        bw, alpha = self.transfer.bandwidth(), self.transfer.alpha()
        est = snapshot.estimator
        obs_up: list[float] = list(getattr(est, "samples", lambda *_: [])(job, up)) if est is not None else []
        obs_down: list[float] = (
            list(getattr(est, "samples", lambda *_: [])(job, down)) if est is not None else []
        )
        key = tuple(float(f"{x:.3g}") for x in (tu, su, td, sd, bw, alpha, self.output_bytes))
        if not obs_up and not obs_down and key in self._omega_cache:
            return self._omega_cache[key]
        # the same inputs give the same omega (sample_pairs is seeded): computed once (speed)
        inputs = (tuple(obs_up), tuple(obs_down), tu, su, td, sd, bw, alpha, self.output_bytes)
        omega = self._omega_of.get(inputs)
        if omega is None:
            n = self.omega_samples
            ups = obs_up if len(obs_up) >= 2 else quantile_samples(tu, su, n)
            downs = obs_down if len(obs_down) >= 2 else quantile_samples(td, sd, n)
            m = min(len(ups), len(downs))
            gaps, c1, c2 = sample_pairs(ups[:m], downs[:m])
            omega, _ = choose_omega(self.output_bytes, bw, alpha, gaps, c1, c2)
            if len(self._omega_of) > 4096:
                self._omega_of.clear()
            self._omega_of[inputs] = omega
        if len(self._omega_cache) > 4096:
            self._omega_cache.clear()
        self._omega_cache[key] = omega
        return omega
