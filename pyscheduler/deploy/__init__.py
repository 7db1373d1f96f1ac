"""Deployment: a local YARN cluster of separate processes from Maven jars, and the demo.

artifacts     Hadoop's jars (mvn dependency:copy-dependencies), the plugin jar, JDK 17 flags
hadoopconf    site files and per-NodeManager overrides for a one-host cluster
processes     child processes in their own process groups; nothing outlives the launcher
localcluster  LocalCluster: RM + N NodeManagers (+ history server, + decision service)
jobs          submitting Hadoop's wordcount and SleepJob, results from the RM REST API
rest          a stdlib JSON-over-HTTP client
shimsecret    the compose service's entrypoint: makes the shim's shared secret at first start
"""
