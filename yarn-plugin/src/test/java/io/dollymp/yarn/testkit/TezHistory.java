package io.dollymp.yarn.testkit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * What a Tez AM recorded of its DAG in its history log: Tez's SimpleHistoryLoggingService writes one JSON
 * record per event, separated by \u0001, to {@code history.txt.<attempt>} in {@code tez.simple.history.logging.dir}.
 */
public final class TezHistory {
  /** A vertex: its tasks (VERTEX_INITIALIZED) and how it ended (VERTEX_FINISHED). */
  public record Vertex(int tasks, String status) {}

  /** DAG_FINISHED's status of each DAG the AM ran. */
  public final List<String> dagStatuses = new ArrayList<>();
  /** Each vertex by name. */
  public final Map<String, Vertex> vertices = new TreeMap<>();
  /** Each task attempt's container (TASK_ATTEMPT_STARTED), in the log's order. */
  public final List<ContainerId> attemptContainers = new ArrayList<>();
  /** TASK_ATTEMPT_FINISHED's status of each attempt, in the log's order. */
  public final List<String> attemptStatuses = new ArrayList<>();
  public final String text;

  private TezHistory(String text) throws IOException {
    this.text = text;
    ObjectMapper json = new ObjectMapper();
    Map<String, String> names = new HashMap<>();
    Map<String, Integer> tasks = new HashMap<>();
    Map<String, String> statuses = new HashMap<>();
    for (String record : text.split("\u0001")) {
      if (record.isBlank()) {
        continue;
      }
      JsonNode n = json.readTree(record);
      String entity = n.path("entity").asText();
      JsonNode info = n.path("otherinfo");
      switch (n.path("events").path(0).path("eventtype").asText()) {
        case "DAG_FINISHED" -> dagStatuses.add(info.path("status").asText());
        case "VERTEX_INITIALIZED" -> {
          names.put(entity, info.path("vertexName").asText());
          tasks.put(entity, info.path("numTasks").asInt());
        }
        case "VERTEX_FINISHED" -> statuses.put(entity, info.path("status").asText());
        case "TASK_ATTEMPT_STARTED" -> {
          for (JsonNode related : n.path("relatedEntities")) {
            if (related.path("entitytype").asText().equals("containerId")) {
              attemptContainers.add(ContainerId.fromString(related.path("entity").asText()));
            }
          }
        }
        case "TASK_ATTEMPT_FINISHED" -> attemptStatuses.add(info.path("status").asText());
        default -> { }
      }
    }
    names.forEach((id, name) -> vertices.put(name, new Vertex(tasks.get(id), statuses.get(id))));
  }

  /**
   * The history log {@code app}'s only attempt wrote to {@code dir}, once it is whole. The AM unregisters
   * (and YARN reports the application FINISHED) before it stops its history service, which flushes and
   * closes the log; so until the AM's process ends the file may stop mid-record. This reads it again until
   * every record parses and DAG_FINISHED is among them, or {@code timeoutMs} passes.
   */
  public static TezHistory awaitWhole(Path dir, ApplicationId app, long timeoutMs)
      throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      String why;
      try {
        TezHistory h = of(dir, app);
        if (!h.dagStatuses.isEmpty()) {
          return h;
        }
        why = "no DAG_FINISHED record yet:\n" + h.text;
      } catch (JsonProcessingException e) {
        why = "a record is cut short: " + e.getOriginalMessage();
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("the history log of " + app + " in " + dir + " was not whole after "
            + timeoutMs + " ms: " + why);
      }
      Thread.sleep(250);
    }
  }

  /** The history log {@code app}'s only attempt wrote to {@code dir}, as it is now. */
  public static TezHistory of(Path dir, ApplicationId app) throws IOException {
    String prefix = "history.txt." + app.toString().replace("application_", "appattempt_");
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
    }
    if (files.size() != 1) {
      throw new IOException("not one history log of " + app + " in " + dir + ": " + files);
    }
    return new TezHistory(Files.readString(files.get(0), StandardCharsets.UTF_8));
  }
}
