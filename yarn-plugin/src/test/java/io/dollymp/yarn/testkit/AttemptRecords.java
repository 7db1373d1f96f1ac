package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the AM helper's per-attempt record ({@code dollymp.am.record.dir/<app>.tsv}). */
public final class AttemptRecords {
  /** One attempt row. */
  public record Row(String task, String phase, String attempt, boolean isClone, String container, String node,
      String state, long launchMs, long finishMs, boolean winner) {}

  private AttemptRecords() {}

  /** Waits (the AM writes at job end and again as late kills land) until every attempt is final. */
  public static Map<String, List<Row>> awaitFinal(Path file, long timeoutMs) throws IOException,
      InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    Map<String, List<Row>> rows = Map.of();
    while (System.currentTimeMillis() < deadline) {
      if (Files.exists(file)) {
        rows = read(file);
        boolean allFinal = rows.values().stream().flatMap(List::stream)
            .allMatch(r -> r.state().equals("SUCCEEDED") || r.state().equals("KILLED") || r.state().equals("FAILED"));
        if (allFinal && !rows.isEmpty()) {
          return rows;
        }
      }
      Thread.sleep(250);
    }
    if (!Files.exists(file)) {
      throw new IllegalStateException("the AM wrote no attempt record at " + file);
    }
    return rows;
  }

  /** Rows grouped by task id. */
  public static Map<String, List<Row>> read(Path file) throws IOException {
    Map<String, List<Row>> out = new LinkedHashMap<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.startsWith("#") || line.startsWith("task_id") || line.isBlank()) {
        continue;
      }
      String[] f = line.split("\t", -1);
      Row r = new Row(f[0], f[1], f[2], Boolean.parseBoolean(f[3]), f[4], f[5], f[6], Long.parseLong(f[7]),
          Long.parseLong(f[8]), Boolean.parseBoolean(f[9]));
      out.computeIfAbsent(r.task(), k -> new ArrayList<>()).add(r);
    }
    return out;
  }
}
