"""Deployment: a local YARN cluster of separate processes from Maven jars, the demo and the cluster benchmark.

artifacts     Hadoop's jars (mvn dependency:copy-dependencies), the plugin jar, JDK 17 flags
hadoopconf    site files and per-NodeManager overrides for a one-host cluster
processes     child processes in their own process groups; nothing outlives the launcher
localcluster  LocalCluster: RM + N NodeManagers (+ history server, + decision service)
jobs          submitting Hadoop's wordcount and SleepJob, results from the RM REST API
rest          a stdlib JSON-over-HTTP client
yarnhistory   a running cluster's JobHistory and RM answers saved as a trace (`dollymp bench record-history`)
shimsecret    the compose service's entrypoint: makes the shim's shared secret at first start
display       progress lines of the demo and the benchmark
demo          the newcomer's demo (`make demo`); demomix its job mix and summary
bench_cluster the cluster benchmark (`make bench-cluster`); benchmix its mixes, cluster sizes and policy
draws         the straggler job's drawn run times (StragglerJob draws the same numbers)
clonebound    from those draws: the flowtime that cloning fewer tasks could keep, against its clone share
cds           a class-data-sharing archive for task and AM JVMs; benchcds the benchmark's, from warm-up jobs
cputally      where a run's CPU went, by process kind
amrecords     the AM helper's attempt records read back; benchreads those and the decision log after a run
repeats       median and spread of a benchmark's figures over repeats
"""
