# syntax=docker/dockerfile:1
# The official Apache Hadoop image plus the DollyMP plugin jar, JDK 17 and this cluster's config.
# Build context: the repo root.
#   docker build -f docker/hadoop.Dockerfile -t dollymp/hadoop:0.1.0 .
# HADOOP_VERSION must equal hadoop.version in yarn-plugin/pom.xml: the shim compiles against the
# ResourceManager's @LimitedPrivate/@Evolving scheduler API of that exact release.
ARG HADOOP_VERSION=3.4.3

# 1. The shaded plugin jar, built from the same sources as `make jar`.
FROM maven:3.9-eclipse-temurin-17 AS plugin
WORKDIR /src
COPY proto/ proto/
COPY yarn-plugin/pom.xml yarn-plugin/pom.xml
COPY yarn-plugin/src/main/ yarn-plugin/src/main/
RUN mvn -B -q -ntp -f yarn-plugin/pom.xml -Dmaven.test.skip=true package \
 && cp yarn-plugin/target/dollymp-yarn-plugin-*-shaded.jar /dollymp-yarn-plugin.jar

# 2. A JDK 17 runtime: the plugin is compiled for Java 17, whatever JDK the base image ships.
FROM eclipse-temurin:17-jre AS jdk17

# 3. The Hadoop image the operators run, with the jar on the ResourceManager's classpath.
FROM apache/hadoop:${HADOOP_VERSION}
USER root
COPY --from=jdk17 /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    PATH=/opt/java/openjdk/bin:/opt/hadoop/bin:/opt/hadoop/sbin:${PATH} \
    HADOOP_CONF_DIR=/opt/hadoop/etc/hadoop
# Hadoop daemons on JDK 17 (Guice, Hadoop reflection): the flags of jdk17.opens in yarn-plugin/pom.xml.
# Containers get theirs from Hadoop 3.4's mapreduce.jvm.add-opens-as-default.
ENV HADOOP_OPTS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED"
COPY --from=plugin /dollymp-yarn-plugin.jar /opt/hadoop/share/hadoop/yarn/lib/dollymp-yarn-plugin.jar
COPY docker/hadoop/core-site.xml docker/hadoop/yarn-site.xml docker/hadoop/mapred-site.xml \
     docker/hadoop/capacity-scheduler.xml /opt/hadoop/etc/hadoop/
COPY --chmod=755 docker/healthcheck.sh /usr/local/bin/dollymp-healthcheck
# The shared volume stands in for HDFS in this compose file (fs.defaultFS=file:///, one disk for all).
RUN mkdir -p /data/shared/staging /data/shared/history \
 && chown -R hadoop /data/shared
USER hadoop
WORKDIR /opt/hadoop
