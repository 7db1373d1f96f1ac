package io.dollymp.yarn.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real Python decision service as a separate process on a real loopback socket, started with
 * {@code python -m pyscheduler serve}. Ports are ephemeral and read back from the port file.
 */
public final class DecisionServiceProcess implements AutoCloseable {
  private static final Pattern HTTP_PORT = Pattern.compile("HTTP_PORT=(\\d+)");

  private final Process process;
  private final Path portFile;
  private final Path log;
  public final Path db;

  public DecisionServiceProcess(Path workDir, String policy) throws IOException {
    this(workDir, policy, 0);
  }

  /** A service on a fixed gRPC port (0 = ephemeral), e.g. to restart it where the shim expects it. */
  public DecisionServiceProcess(Path workDir, String policy, int grpcPort) throws IOException {
    this(workDir, policy, grpcPort, java.util.Map.of());
  }

  /** As above, with configuration keys set through the environment (e.g. DOLLYMP_APPMASTER_CLONE_YIELD). */
  public DecisionServiceProcess(Path workDir, String policy, int grpcPort, java.util.Map<String, String> env)
      throws IOException {
    this(workDir, policy, grpcPort, env, List.of());
  }

  /** As above, with further `dollymp serve` flags (e.g. --auth-secret-file, --tls-cert). */
  public DecisionServiceProcess(Path workDir, String policy, int grpcPort, java.util.Map<String, String> env,
      List<String> extraArgs) throws IOException {
    Files.createDirectories(workDir);
    this.portFile = workDir.resolve("ports");
    this.db = workDir.resolve("decisions.db");
    this.log = workDir.resolve("service.log");
    Files.deleteIfExists(portFile);
    Files.deleteIfExists(log);
    String python = System.getProperty("dollymp.python", "python3");
    String root = System.getProperty("dollymp.root", "..");
    List<String> cmd = new ArrayList<>(List.of(python, "-m", "pyscheduler", "serve",
        "--grpc-host", "127.0.0.1", "--grpc-port", Integer.toString(grpcPort), "--port-file", portFile.toString(),
        "--db", db.toString(), "--policy", policy));
    cmd.addAll(List.of("--http-port", "0"));
    cmd.addAll(extraArgs);
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(new File(root)).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().put("PYTHONUNBUFFERED", "1");
    pb.environment().putAll(env);
    this.process = pb.start();
  }

  /** Waits for the service to write its port file; returns the gRPC port. */
  public int awaitGrpcPort(long timeoutMs) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      ensureAlive();
      if (Files.exists(portFile)) {
        return Integer.parseInt(Files.readString(portFile, StandardCharsets.UTF_8).trim());
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("decision service did not write its port file in time:\n" + logText());
  }

  /** The HTTP API's port, from the {@code HTTP_PORT=} line the service prints once serving. */
  public int awaitHttpPort(long timeoutMs) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      ensureAlive();
      Matcher m = HTTP_PORT.matcher(logText());
      if (m.find()) {
        return Integer.parseInt(m.group(1));
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("decision service did not report its HTTP port in time:\n" + logText());
  }

  private void ensureAlive() throws IOException {
    if (!process.isAlive()) {
      throw new IllegalStateException("decision service exited with " + process.exitValue() + ":\n" + logText());
    }
  }

  public String logText() throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** kill -9: no graceful shutdown, exactly what a crash looks like to the shim. */
  public void killHard() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
