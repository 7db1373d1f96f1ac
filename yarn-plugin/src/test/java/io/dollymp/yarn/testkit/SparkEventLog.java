package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;

/**
 * What a finished Spark application's driver recorded of its executors and jobs, read from its event
 * log ({@code spark.eventLog.dir}; one JSON event a line, in the order the driver saw them): Spark's
 * own account of when executors came and went, independent of the application's code.
 */
public final class SparkEventLog {
  public static final String EXECUTOR_ADDED = "SparkListenerExecutorAdded";
  public static final String EXECUTOR_REMOVED = "SparkListenerExecutorRemoved";
  public static final String JOB_START = "SparkListenerJobStart";
  private static final Pattern EVENT = Pattern.compile("\"Event\":\"(\\w+)\"");
  private static final Pattern EXECUTOR = Pattern.compile("\"Executor ID\":\"([^\"]*)\"");
  private static final Pattern REASON = Pattern.compile("\"Removed Reason\":\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** An executor added or removed (with Spark's reason), or a job started (no executor). */
  public record Event(String kind, String executor, String reason) {}

  private final Path file;
  private final List<Event> events;

  private SparkEventLog(Path file, List<Event> events) {
    this.file = file;
    this.events = events;
  }

  /** The completed event log of {@code app} in {@code dir} (the driver renames it from .inprogress at stop). */
  public static SparkEventLog of(Path dir, ApplicationId app, long timeoutMs)
      throws IOException, InterruptedException {
    long until = System.currentTimeMillis() + timeoutMs;
    Optional<Path> found = find(dir, app);
    while (found.isEmpty() && System.currentTimeMillis() < until) {
      Thread.sleep(200);
      found = find(dir, app);
    }
    Path file = found.orElseThrow(() -> new IOException("no completed event log of " + app + " in " + dir));
    List<Event> events = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      Matcher kind = EVENT.matcher(line);
      if (!kind.find() || !Set.of(EXECUTOR_ADDED, EXECUTOR_REMOVED, JOB_START).contains(kind.group(1))) {
        continue;
      }
      Matcher executor = EXECUTOR.matcher(line);
      Matcher reason = REASON.matcher(line);
      events.add(new Event(kind.group(1), executor.find() ? executor.group(1) : null,
          reason.find() ? reason.group(1) : null));
    }
    return new SparkEventLog(file, events);
  }

  private static Optional<Path> find(Path dir, ApplicationId app) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().startsWith(app.toString())
          && !p.getFileName().toString().endsWith(".inprogress")).findFirst();
    }
  }

  public List<Event> events() {
    return events;
  }

  public long count(String kind) {
    return events.stream().filter(e -> e.kind().equals(kind)).count();
  }

  /** Executors removed before the application's last job started, that is while it still had work to do. */
  public List<Event> removedBeforeLastJob() {
    int lastJob = -1;
    for (int i = 0; i < events.size(); i++) {
      if (events.get(i).kind().equals(JOB_START)) {
        lastJob = i;
      }
    }
    return events.subList(0, Math.max(lastJob, 0)).stream().filter(e -> e.kind().equals(EXECUTOR_REMOVED)).toList();
  }

  /** Executors added after the first removal: allocated anew once the first ones were given back. */
  public long addedAfterFirstRemoval() {
    boolean removed = false;
    long added = 0;
    for (Event e : events) {
      removed |= e.kind().equals(EXECUTOR_REMOVED);
      if (removed && e.kind().equals(EXECUTOR_ADDED)) {
        added++;
      }
    }
    return added;
  }

  /** The most executors the driver held at once. */
  public int maxLive() {
    Set<String> live = new HashSet<>();
    int max = 0;
    for (Event e : events) {
      if (e.kind().equals(EXECUTOR_ADDED)) {
        live.add(e.executor());
      } else if (e.kind().equals(EXECUTOR_REMOVED)) {
        live.remove(e.executor());
      }
      max = Math.max(max, live.size());
    }
    return max;
  }

  @Override
  public String toString() {
    return file + ": " + events;
  }
}
