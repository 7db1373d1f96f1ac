package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** A framework's client (spark-submit, a Tez program) run to its end in a process of its own. */
public final class ClientProcess {
  private ClientProcess() {}

  /** How the client ended: exit code, stdout, stderr and how long it ran. */
  public record Result(int exit, String stdout, String stderr, long ms) {}

  /**
   * Runs {@code cmd} in {@code work} with the environment {@code env} made of this one, its stdout and
   * stderr in {@code <name>.out} and {@code <name>.err} there; kills it after {@code timeoutS}.
   */
  public static Result run(List<String> cmd, Path work, String name, Consumer<Map<String, String>> env,
      long timeoutS)
      throws IOException, InterruptedException {
    Path out = work.resolve(name + ".out");
    Path err = work.resolve(name + ".err");
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile())
        .redirectOutput(out.toFile()).redirectError(err.toFile());
    env.accept(pb.environment());
    long t0 = System.currentTimeMillis();
    Process p = pb.start();
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor();
    }
    long ms = System.currentTimeMillis() - t0;
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8), ms);
  }
}
