"""DollyMP decision service, decision core and trace-driven simulator.

Folders (see ../README.md, "Where things live"):
  objects   state: jobs, phases, tasks, attempts, nodes, resources (no policy)
  policies  DollyMP and every baseline, pure functions of a snapshot, registered by name
  estimate  task statistics (recurring-job history, first tasks of a phase, priors, Pareto fit)
  core      the simulator's decision loop (the service's round does not run it: policies are what the two
            share), the clocks, the queue-share rules the service applies
  service   the decision service: rmproxy/ (the gRPC boundary, the only code that speaks the wire),
            state/ (what the RM and the AMs reported), round/ (state -> plan)
  api       the HTTP API (decision log queries, state, health, metrics)
  store     the decision log and statistics history (SQLite, PostgreSQL)
  sim       the trace-driven discrete-event simulator
  cli       the `dollymp` command
  bench     the benchmarks and load generators (`dollymp bench`)
"""

__version__ = "0.1.0"
