"""The benchmarks and load generators: the top layer beside the CLI (`dollymp bench <target>` runs them);
nothing below it imports this package.

service_load  `dollymp bench service`: a shim-like load generator against a real `dollymp serve` process
shim_model    the pretend ResourceManager behind it (nodes, applications, containers; commits like the shim)
engine_data   random snapshots for `dollymp bench engine`: heavy-tailed multi-phase jobs, heterogeneous nodes
store         the decision log's size per million decisions and append throughput (python -m, no CLI target)
ui            `dollymp bench ui`: the operator page in headless Chromium under a stream of decisions
streams       `dollymp bench streams`: other HTTP queries and the server's memory under many SSE subscribers
sls           `dollymp bench sls`: a trace slice through Hadoop SLS under Capacity-, FairScheduler and DollyMP
demo_sls      the demo's last part (`dollymp demo`): a short SLS comparison at a cluster's scale
sls_trace     a trace slice (FB-2010, the Alibaba sample) as SLS input and as the same workload for simulate
mechanisms    `dollymp bench mechanisms`: `dollymp simulate`'s service round against the policy-only engine
suite         `dollymp bench all` (make bench) and `dollymp bench compare REV`: the scenarios of
              scenarios.toml, one table; or side by side with another revision
choose        `dollymp bench choose`: the declared procedure that picks the production configuration
tenants       `dollymp bench tenants`: one tenant's RM rounds with and without another tenant's AM flood
am            `dollymp bench am`: a large job's AM plan requests, as the real AM helper makes them, beside the
              cluster's RM rounds, and those rounds with and without it

The cluster benchmark stays in pyscheduler/deploy (bench_cluster with benchmix, benchcds, benchreads): the
demo and the straggler draws there, and the live simulator, use its job, mixes and policy, and
`make bench-cluster` starts it by its module path.
"""
