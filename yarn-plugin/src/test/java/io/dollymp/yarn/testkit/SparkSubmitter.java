package io.dollymp.yarn.testkit;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * Runs Spark's own SparkSubmit in a JVM of its own, on a Spark build's jars ({@code <spark>/jars}, as
 * maven-invoker-plugin lays them out from src/it/spark-jars), with a Hadoop configuration directory as
 * HADOOP_CONF_DIR: what a user's {@code bin/spark-submit --master yarn} does. Spark never shares a
 * classpath with this build's Hadoop (it runs on its shaded Hadoop 3.3 client).
 */
public final class SparkSubmitter {
  private static final Pattern SUBMITTED = Pattern.compile("Submitted application (application_\\d+_\\d+)");
  private final Path spark;
  private final Path work;
  private final Path hadoopConf;

  /** {@code spark}: the Spark build; {@code work}: where runs write their output; {@code hadoopConf}: the client's. */
  public SparkSubmitter(Path spark, Path work, Path hadoopConf) {
    this.spark = spark;
    this.work = work;
    this.hadoopConf = hadoopConf;
  }

  /** YARN's two ways to run a Spark driver: in the submitting process, or in the application's AM container. */
  public enum DeployMode {
    CLIENT, CLUSTER;

    public String flag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A finished spark-submit: its exit code, stdout, stderr and the YARN application it submitted. */
  public record Run(int exit, String stdout, String stderr, ApplicationId appId, long ms) {
    public String describe() {
      return "spark-submit exited " + exit + "\n--- stdout\n" + stdout + "\n--- stderr (tail)\n"
          + stderr.substring(Math.max(0, stderr.length() - 8000));
    }
  }

  /** The Spark build's version, as its spark-core jar names it (spark-core_2.12-3.5.6.jar: 3.5.6). */
  public String version() throws IOException {
    try (Stream<Path> s = Files.list(spark.resolve("jars"))) {
      String jar = s.map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("spark-core_") && n.endsWith(".jar")).findFirst()
          .orElseThrow(() -> new IOException("no spark-core jar in " + spark.resolve("jars")));
      return jar.substring(jar.lastIndexOf('-') + 1, jar.length() - ".jar".length());
    }
  }

  /** The directory runs write their Spark event logs to ({@code spark.eventLog.dir}). */
  public Path eventLogDir() throws IOException {
    return Files.createDirectories(work.resolve("spark-events"));
  }

  /**
   * Submits {@code mainClass} from {@code <spark>/spark-app.jar} to YARN and waits for spark-submit to
   * exit (which, in cluster mode, it does when the application finishes), up to {@code timeoutS}.
   */
  public Run submit(String name, DeployMode mode, String mainClass, List<String> sparkConf, List<String> appArgs,
      long timeoutS) throws IOException, ReflectiveOperationException, InterruptedException {
    return run(name, mode, List.of("--class", mainClass), sparkConf, spark.resolve("spark-app.jar"), appArgs,
        env -> { }, timeoutS);
  }

  /**
   * Python's side of a PySpark application: the interpreter of its driver and of its executors' Python
   * workers, and a directory holding the {@code pyspark} and {@code py4j} packages (PyPI's pyspark of this
   * Spark's version, installed with {@code pip --target}). One host: every node has both in place.
   */
  public record PySpark(Path python, Path packages) {}

  /**
   * Submits the Python application {@code app} as {@link #submit} does a Java one, on the same Spark jars.
   * The driver's Python finds pyspark on PYTHONPATH (spark-submit in client mode, which starts it); the AM's
   * and the executors' through PYSPARK_ARCHIVES_PATH, Spark's own way to name pyspark's files, here as a
   * {@code local:} path that every container puts on its PYTHONPATH as it is (nothing uploaded); all run
   * {@code py.python()} (spark.pyspark.python).
   */
  public Run submitPython(String name, DeployMode mode, Path app, PySpark py, List<String> sparkConf,
      List<String> appArgs, long timeoutS) throws IOException, ReflectiveOperationException, InterruptedException {
    List<String> conf = new ArrayList<>(List.of(
        "spark.pyspark.python=" + py.python(),
        "spark.pyspark.driver.python=" + py.python()));
    conf.addAll(sparkConf);
    return run(name, mode, List.of(), conf, app, appArgs, env -> {
      env.put("PYTHONPATH", py.packages().toString());
      env.put("PYSPARK_ARCHIVES_PATH", "local:" + py.packages());
    }, timeoutS);
  }

  private Run run(String name, DeployMode mode, List<String> appFlags, List<String> sparkConf, Path app,
      List<String> appArgs, Consumer<Map<String, String>> appEnv, long timeoutS)
      throws IOException, ReflectiveOperationException, InterruptedException {
    Path jars = spark.resolve("jars");
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(javaModuleOptions(jars)); // what bin/spark-submit gives the driver; Spark adds them to its AM and executors
    // As bin/spark-submit builds it: the configuration directory, then Spark's jars.
    String classpath = hadoopConf + File.pathSeparator + jars + File.separator + "*";
    cmd.addAll(List.of("-Xmx512m", "-cp", classpath, "org.apache.spark.deploy.SparkSubmit",
        "--master", "yarn", "--deploy-mode", mode.flag(), "--name", name));
    cmd.addAll(appFlags);
    List<String> conf = new ArrayList<>(List.of(
        // Spark's jars are already on every node (one host): no upload, used in place.
        "spark.yarn.jars=local:" + jars + File.separator + "*",
        "spark.yarn.populateHadoopClasspath=false",
        "spark.yarn.stagingDir=" + work.resolve("staging").toUri(),
        "spark.yarn.maxAppAttempts=1",
        "spark.eventLog.enabled=true",
        "spark.eventLog.dir=" + eventLogDir().toUri(),
        // Everything on loopback. In cluster mode Spark drops spark.driver.host and the driver in the AM
        // advertises its local address, which must then be the one it binds (SPARK_LOCAL_IP).
        "spark.driver.host=127.0.0.1",
        "spark.driver.bindAddress=127.0.0.1",
        "spark.yarn.appMasterEnv.SPARK_LOCAL_IP=127.0.0.1",
        "spark.executorEnv.SPARK_LOCAL_IP=127.0.0.1",
        "spark.ui.enabled=false"));
    conf.addAll(sparkConf);
    for (String c : conf) {
      cmd.add("--conf");
      cmd.add(c);
    }
    cmd.add(app.toString());
    cmd.addAll(appArgs);
    Path sparkConfDir = Files.createDirectories(work.resolve("spark-conf"));
    ClientProcess.Result r = ClientProcess.run(cmd, work, name, env -> {
      env.put("HADOOP_CONF_DIR", hadoopConf.toString());
      env.put("YARN_CONF_DIR", hadoopConf.toString());
      env.put("SPARK_CONF_DIR", sparkConfDir.toString());
      env.put("SPARK_LOCAL_IP", "127.0.0.1");
      env.remove("SPARK_HOME");
      appEnv.accept(env);
    }, timeoutS);
    Matcher m = SUBMITTED.matcher(r.stderr());
    ApplicationId appId = m.find() ? ApplicationId.fromString(m.group(1)) : null;
    return new Run(r.exit(), r.stdout(), r.stderr(), appId, r.ms());
  }

  /** Spark's own JVM flags for Java 17 (spark-launcher's JavaModuleOptions), read from the Spark build. */
  private static List<String> javaModuleOptions(Path jars) throws IOException, ReflectiveOperationException {
    Path launcher;
    try (Stream<Path> s = Files.list(jars)) {
      launcher = s.filter(p -> p.getFileName().toString().startsWith("spark-launcher_")).findFirst()
          .orElseThrow(() -> new IOException("no spark-launcher jar in " + jars));
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {launcher.toUri().toURL()}, null)) {
      Method m = loader.loadClass("org.apache.spark.launcher.JavaModuleOptions").getMethod("defaultModuleOptions");
      return List.of(((String) m.invoke(null)).trim().split("\\s+"));
    }
  }
}
