"""DollyMP decision service, decision core and trace-driven simulator.

Folders (see ../README.md, "Where things live"):
  objects   state: jobs, phases, tasks, attempts, nodes, resources (no policy)
  policies  DollyMP and every baseline, pure functions of a snapshot, registered by name
  estimate  task statistics (recurring-job history, first tasks of a phase, priors, Pareto fit)
  core      the decision loop with an injected clock, shared by the service and the simulator
  rpc       the gRPC servicer (sessions, batching, resync); the only module that speaks the wire
  api       the HTTP API (decision log queries, state, health, metrics)
  store     the decision log and statistics history (SQLite, PostgreSQL)
  sim       the trace-driven discrete-event simulator
  cli       the `dollymp` command
"""

__version__ = "0.1.0"
