"""Plots (CDFs in the style of the papers' figures) and a Markdown summary of one `dollymp simulate` run."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pyscheduler.sim.runner import Comparison
from pyscheduler.sim.table import format_table


def cdf_plot(series: dict[str, np.ndarray], path: Path, xlabel: str, title: str, logx: bool = True) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=110)
    for name, values in series.items():
        v = np.sort(values[np.isfinite(values)])
        if v.size:
            ax.plot(v, np.arange(1, v.size + 1) / v.size, label=name)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("CDF")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_run_report(cmp: Comparison, out: Path, command: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    flows = {n: m.flowtimes for n, m in cmp.results.items()}
    cdf_plot(flows, out / "flowtime_cdf.png", "job flowtime (s)", "Job flowtime CDF")
    names = list(cmp.results)
    if len(names) > 1:
        ref = names[0]
        ratios = {}
        for n in names[1:]:
            a, b = cmp.results[n], cmp.results[ref]
            if a.flowtimes.size == b.flowtimes.size:
                ratios[n] = 1 - a.flowtimes / np.maximum(b.flowtimes, 1e-9)
        if ratios:
            cdf_plot(
                ratios,
                out / "reduction_cdf.png",
                f"reduction in job flowtime vs {ref}",
                f"Per-job flowtime reduction vs {ref}",
                logx=False,
            )
    text = [
        "# Simulation report",
        "",
        f"Command: `{command}`",
        "",
        "```",
        format_table(cmp),
        "```",
        "",
        "![flowtime CDF](flowtime_cdf.png)",
        "",
    ]
    if (out / "reduction_cdf.png").exists():
        text += ["![reduction CDF](reduction_cdf.png)", ""]
    (out / "summary.md").write_text("\n".join(text))
