# Hadoop (HDFS, YARN, MapReduce) with the DollyMP plugin, built without Docker Hub. Build context: the
# repository root.   docker build -f docker/hadoop.Dockerfile -t dollymp/hadoop:0.1.0 .
# - BASE_IMAGE: any Debian bookworm image (docker/engine.sh makes one with debootstrap where no
#   registry serves it); the JDK comes from Debian's packages.
# - Hadoop is the project's own assembly (pyscheduler/deploy/artifacts.py): the jars of
#   yarn-plugin/pom.xml's dependency tree from Maven Central, so HADOOP_VERSION must equal the pom's
#   hadoop.version (the shim compiles against that release's @LimitedPrivate scheduler API) and
#   JDK_VERSION its maven.compiler.testRelease (the JDK the project builds and tests with; the plugin's
#   own bytecode targets Java 8, maven.compiler.release); the build stops if they differ.
# - The plugin jar is built from this checkout (as `make jar`).
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
ARG HADOOP_VERSION=3.4.3
ARG JDK_VERSION=17
# Extra CAs of the build host's network (docker/ca-certificates/README.md), trusted by Maven's JDK.
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      ca-certificates ca-certificates-java openjdk-${JDK_VERSION}-jdk-headless maven \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY yarn-plugin/pom.xml yarn-plugin/pom.xml
RUN grep -q "<hadoop.version>${HADOOP_VERSION}</hadoop.version>" yarn-plugin/pom.xml \
   || { echo "HADOOP_VERSION=${HADOOP_VERSION} is not hadoop.version of yarn-plugin/pom.xml" >&2; exit 1; } \
 && grep -q "<maven.compiler.testRelease>${JDK_VERSION}</maven.compiler.testRelease>" yarn-plugin/pom.xml \
   || { echo "JDK_VERSION=${JDK_VERSION} is not maven.compiler.testRelease of yarn-plugin/pom.xml" >&2; exit 1; }
# Hadoop's jars, as `make demo`'s local cluster collects them, plus DistributedShell.
RUN mvn -B -q -ntp -f yarn-plugin/pom.xml dependency:copy-dependencies -DincludeScope=test \
      -DoutputDirectory=/opt/hadoop/lib \
 && examples="$(sed -n 's:.*<hadoop.examples.version>\(.*\)</hadoop.examples.version>.*:\1:p' yarn-plugin/pom.xml | head -n 1)" \
 && for v in "${HADOOP_VERSION}" "${examples}"; do \
      mvn -B -q -ntp dependency:copy -DoutputDirectory=/opt/hadoop/lib \
        -Dartifact="org.apache.hadoop:hadoop-yarn-applications-distributedshell:${v}" && break; \
    done \
 && ls /opt/hadoop/lib/hadoop-yarn-applications-distributedshell-*.jar \
 && rm -f /opt/hadoop/lib/junit-* /opt/hadoop/lib/mockito-* /opt/hadoop/lib/testcontainers-*
COPY proto/ proto/
COPY yarn-plugin/src/main/ yarn-plugin/src/main/
RUN mvn -B -q -ntp -f yarn-plugin/pom.xml -Dmaven.test.skip=true -Ddollymp.root=/src package \
 && cp yarn-plugin/target/dollymp-yarn-plugin-*-shaded.jar /opt/hadoop/lib/dollymp-yarn-plugin.jar

FROM ${BASE_IMAGE}
ARG JDK_VERSION=17
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      openjdk-${JDK_VERSION}-jre-headless procps \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /opt/java \
 && useradd --uid 1000 --create-home --shell /bin/bash hadoop
ENV JAVA_HOME=/opt/java \
    HADOOP_HOME=/opt/hadoop \
    HADOOP_CONF_DIR=/opt/hadoop/etc/hadoop \
    PATH=/opt/hadoop/bin:/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Hadoop daemons on JDK 17 (Guice, Hadoop reflection): the flags of jdk17.opens in yarn-plugin/pom.xml.
# Containers get theirs from Hadoop 3.4's mapreduce.jvm.add-opens-as-default.
ENV HADOOP_OPTS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED"
COPY --from=build /opt/hadoop/lib/ /opt/hadoop/lib/
COPY docker/hadoop/ /opt/hadoop/etc/hadoop/
COPY docker/bin/hadoop /opt/hadoop/bin/hadoop
COPY docker/healthcheck.sh /usr/local/bin/dollymp-healthcheck
RUN chmod 755 /opt/hadoop/bin/hadoop /usr/local/bin/dollymp-healthcheck \
 && ln -s hadoop /opt/hadoop/bin/yarn && ln -s hadoop /opt/hadoop/bin/hdfs && ln -s hadoop /opt/hadoop/bin/mapred \
 && cd /opt/hadoop \
 && ln -s lib/hadoop-mapreduce-examples-*.jar hadoop-mapreduce-examples.jar \
 && ln -s lib/hadoop-yarn-applications-distributedshell-*.jar hadoop-yarn-applications-distributedshell.jar \
 && test -f hadoop-mapreduce-examples.jar && test -f hadoop-yarn-applications-distributedshell.jar \
 && mkdir -p /data /opt/hadoop/logs && chown hadoop /data /opt/hadoop/logs
USER hadoop
WORKDIR /home/hadoop
