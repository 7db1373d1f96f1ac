"""The trace-driven simulator, with two mechanisms (`dollymp simulate --mechanism`): by default the decision
service's own round driven by a simulated shim and AM helpers (live/, live/fromtrace.py); `core`, the
policies alone (pyscheduler.policies, through pyscheduler.core.DecisionLoop) with the engine's own shim and
AM helper (starts, ends), a faster approximation that `dollymp report` runs. Both take the same workloads,
draws and measures.

workload        the native workload and cluster formats (JobSpec, PhaseSpec); loaders/ reads the traces
synthetic       the Master-Worker model of paper 003 (Sec. II) in the native format
synthetic_dag   a held-out workload: multi-phase DAGs, heavy-tailed sizes, straggling tasks
straggler       an attempt's run time: base time x per-attempt slowdown / node speed (pareto, empirical)
engine          the discrete-event driver of DecisionLoop with a ManualClock; events its event queue
starts          a round's placements started (the shim's part); ends a copy's end (the AM helper's part)
copies          running copies as records; running the same as numpy columns for policies that read them all
shuffle         reduce copies' reads of map output (Dolly Sec. 4: CAC, CC, delay assignment)
runner          several policies on one workload, cluster, straggler model and seed, side by side, through
                either mechanism; table
                their table, as `dollymp simulate` prints it
metrics         flowtime, makespan, resources (design.md, "Measures that count"); loadmeter measured load
lowerbound      a lower bound on any schedule's total flowtime (SREW+C Eq. 18)
owntime         each job's own time (alone, no clone) and a run's flowtime split into it, waiting, saved
report          CDF plots and a Markdown summary of one `dollymp simulate` run
reproduce       the reproduction report's scenarios (reproduce_runs: a run, a scenario); reproduce_checks
                its two-sided checks; reproduce_doc its Markdown (docs/reproduction.md); reproduce_cache its
                kept runs; reproduce_pool its runs at once, in processes or on a Ray cluster
ablation        DollyMP's extensions: the paper's DollyMP2, each extension alone, all together, over seeds
ordering        why DollyMP trails Tetris at high load: job order by class, volume and time, tested
floors          issue 25's bar for the best configuration beside what the draws allow (own time, two clones)
textio          plain or gzip text files alike
live/           the live mechanism simulated: a simulated shim and AM helper driving the real service, on
                its own small workloads or a trace's (live/fromtrace.py)
"""
