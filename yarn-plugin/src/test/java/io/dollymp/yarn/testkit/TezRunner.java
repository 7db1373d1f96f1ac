package io.dollymp.yarn.testkit;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;

/**
 * Runs a Tez client (one of tez-examples' programs) in a JVM of its own, as {@code hadoop jar} would on a
 * cluster node: a configuration directory (the cluster's core-site.xml and yarn-site.xml, and a tez-site.xml)
 * first on its classpath, then Tez's jars ({@code <tez>/lib}, as maven-invoker-plugin lays them out from
 * src/it/tez-jars, without Hadoop), then the cluster's own Hadoop. Tez is installed the way its docs
 * describe for a cluster with its own Hadoop: {@code tez.lib.uris} names the directory of Tez's jars (on
 * the local filesystem, which every NodeManager of the mini cluster reads), localized into every Tez
 * container, and {@code tez.use.cluster.hadoop-libs} puts the cluster's Hadoop
 * ({@code yarn.application.classpath}) after them on the AM's and the tasks' classpaths.
 */
public final class TezRunner {
  private static final Pattern APP_ID = Pattern.compile("application_\\d+_\\d+");
  private final Path lib;
  private final Path work;
  private final Path confDir;

  /** A finished client: its exit code, stdout, stderr (its log) and the application it submitted. */
  public record Run(int exit, String stdout, String stderr, ApplicationId appId, long ms) {
    public String describe() {
      return "the Tez client exited " + exit + "\n--- stdout\n" + stdout + "\n--- stderr (tail)\n"
          + stderr.substring(Math.max(0, stderr.length() - 8000));
    }
  }

  /**
   * Writes the client's configuration directory under {@code work}: the cluster's configuration, with
   * the cluster's Hadoop jars as {@code yarn.application.classpath}, and a tez-site.xml.
   */
  public TezRunner(Path tez, Path work, Configuration clusterConf) throws IOException {
    this.lib = tez.resolve("lib");
    this.work = work;
    this.confDir = Files.createDirectories(work.resolve("tez-conf"));
    Configuration site = new Configuration(clusterConf);
    // Where an operator's yarn-site.xml lists the cluster's Hadoop installation: here, the jars this
    // mini cluster runs on (the test JVM's classpath).
    site.setStrings(YarnConfiguration.YARN_APPLICATION_CLASSPATH, clusterHadoopJars().toArray(new String[0]));
    write(site, "core-site.xml");
    write(site, "yarn-site.xml");
    Configuration tezSite = new Configuration(false);
    tezSiteSettings().forEach(tezSite::set);
    write(tezSite, "tez-site.xml");
    Files.writeString(confDir.resolve("log4j.properties"), String.join("\n",
        "log4j.rootLogger=INFO,stderr",
        "log4j.appender.stderr=org.apache.log4j.ConsoleAppender",
        "log4j.appender.stderr.target=System.err",
        "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.stderr.layout.ConversionPattern=%d{HH:mm:ss,SSS} %p %c{1}: %m%n", ""),
        StandardCharsets.UTF_8);
  }

  private Map<String, String> tezSiteSettings() {
    String opens = String.join(" ", jdkOpens());
    Map<String, String> s = new LinkedHashMap<>();
    s.put("tez.lib.uris", lib.toUri().toString());
    s.put("tez.use.cluster.hadoop-libs", "true");
    s.put("tez.staging-dir", work.resolve("staging").toUri().toString());
    // The AM's history log (SimpleHistoryLoggingService) where the test reads it, not in a random log dir.
    s.put("tez.simple.history.logging.dir", historyDir().toUri().toString());
    s.put("tez.am.resource.memory.mb", "512");
    s.put("tez.am.launch.cmd-opts", "-Xmx384m " + MiniClusters.SHORT_JVM + " " + opens);
    s.put("tez.task.resource.memory.mb", "384");
    s.put("tez.task.launch.cmd-opts", "-Xmx256m " + MiniClusters.SHORT_JVM + " " + opens);
    s.put("tez.runtime.io.sort.mb", "32");
    // One attempt, as SparkOnYarnIT's spark.yarn.maxAppAttempts: a failing AM fails the run at once.
    s.put("tez.am.max.app.attempts", "1");
    return s;
  }

  /** Where the AMs write their history logs (see {@link TezHistory}). */
  public Path historyDir() {
    return work.resolve("history");
  }

  private void write(Configuration conf, String name) throws IOException {
    try (OutputStream out = Files.newOutputStream(confDir.resolve(name))) {
      conf.writeXml(out);
    }
  }

  /** The jars of the test JVM's classpath: the Hadoop the mini cluster runs, with its dependencies. */
  private static List<String> clusterHadoopJars() {
    return List.of(System.getProperty("java.class.path").split(File.pathSeparator)).stream()
        .filter(e -> e.endsWith(".jar")).collect(Collectors.toList());
  }

  /** The --add-opens/--add-exports flags this JVM runs Hadoop with on Java 17 (the build's jdk17.opens). */
  private static List<String> jdkOpens() {
    return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-opens=") || a.startsWith("--add-exports=")).collect(Collectors.toList());
  }

  /**
   * Runs {@code mainClass} with {@code args} and waits for it to exit, up to {@code timeoutS}; {@code name}
   * names its output files under the work directory.
   */
  public Run run(String name, String mainClass, List<String> args, long timeoutS)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jdkOpens());
    String classpath = confDir + File.pathSeparator + lib + File.separator + "*" + File.pathSeparator
        + String.join(File.pathSeparator, clusterHadoopJars());
    cmd.addAll(List.of("-Xmx512m", "-cp", classpath, mainClass));
    cmd.addAll(args);
    ClientProcess.Result r = ClientProcess.run(cmd, work, name,
        env -> env.put("HADOOP_CONF_DIR", confDir.toString()), timeoutS);
    Matcher m = APP_ID.matcher(r.stderr());
    ApplicationId appId = m.find() ? ApplicationId.fromString(m.group()) : null;
    return new Run(r.exit(), r.stdout(), r.stderr(), appId, r.ms());
  }
}
