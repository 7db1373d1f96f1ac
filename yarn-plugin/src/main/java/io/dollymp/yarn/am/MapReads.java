package io.dollymp.yarn.am;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.MRJobConfig;

/**
 * A reduce copy's reads of map output under delay assignment ({@link DelayAssignment}): which map copy it
 * read for each map, whether that was its own copy or the first, how long it waited. The choice is made in
 * the reduce task's JVM, so the reduce copy writes its reads, replaced atomically at each choice, to
 * {@code <mapreduce.job.dir>/dollymp-reads/<reduce attempt>.tsv}, where the AM reads them
 * ({@link MapReadBook}) and reports them to the service. Columns: {@link #HEADER}; the first four are those
 * of the reduce copy's fetch record in {@code dollymp.am.record.dir/fetch/}.
 */
public final class MapReads {
  public static final String DIR = "dollymp-reads";
  public static final String HEADER = "map_index\tcopy\treason\twaited_ms\tkind\ttime_ms";

  /** One map's read. */
  public static final class Read {
    private final int mapIndex;
    private final String mapAttemptId;
    private final String reason;
    private final long waitedMs;
    private final DelayAssignment.Kind kind;
    private final long timeMs;

    public Read(int mapIndex, String mapAttemptId, String reason, long waitedMs, DelayAssignment.Kind kind,
        long timeMs) {
      this.mapIndex = mapIndex;
      this.mapAttemptId = mapAttemptId;
      this.reason = reason;
      this.waitedMs = waitedMs;
      this.kind = kind;
      this.timeMs = timeMs;
    }

    public int mapIndex() {
      return mapIndex;
    }

    public String mapAttemptId() {
      return mapAttemptId;
    }

    public String reason() {
      return reason;
    }

    public long waitedMs() {
      return waitedMs;
    }

    public DelayAssignment.Kind kind() {
      return kind;
    }

    public long timeMs() {
      return timeMs;
    }

    /** The map task of the copy read: {@code attempt_<job>_m_<index>_<no>} without its copy number. */
    public String mapTaskId() {
      int cut = mapAttemptId.lastIndexOf('_');
      return cut <= "attempt".length() ? "" : "task" + mapAttemptId.substring("attempt".length(), cut);
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Read)) {
        return false;
      }
      Read r = (Read) o;
      return mapIndex == r.mapIndex && waitedMs == r.waitedMs && timeMs == r.timeMs && kind == r.kind
          && Objects.equals(mapAttemptId, r.mapAttemptId) && Objects.equals(reason, r.reason);
    }

    @Override
    public int hashCode() {
      return Objects.hash(mapIndex, mapAttemptId, reason, waitedMs, kind, timeMs);
    }

    @Override
    public String toString() {
      return "Read[" + mapIndex + " " + mapAttemptId + " " + kind + " " + reason + " " + waitedMs + " ms]";
    }
  }

  private MapReads() {}

  /** The directory of the job's reads files, or null outside a MapReduce job. */
  public static Path dir(Configuration conf) {
    String dir = conf.get(MRJobConfig.MAPREDUCE_JOB_DIR);
    return dir == null ? null : new Path(dir, DIR);
  }

  public static String render(Map<Integer, Read> reads) {
    StringBuilder sb = new StringBuilder(HEADER).append('\n');
    reads.forEach((m, r) -> sb.append(m).append('\t').append(r.mapAttemptId()).append('\t').append(r.reason())
        .append('\t').append(r.waitedMs()).append('\t').append(r.kind()).append('\t').append(r.timeMs())
        .append('\n'));
    return sb.toString();
  }

  /** The reads of a file's text; lines that are not complete rows are skipped. */
  public static List<Read> parse(String text) {
    List<Read> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      String[] f = line.split("\t", -1);
      if (f.length < 6 || line.startsWith("map_index")) {
        continue;
      }
      try {
        out.add(new Read(Integer.parseInt(f[0]), f[1], f[2], Long.parseLong(f[3]), DelayAssignment.Kind.valueOf(f[4]),
            Long.parseLong(f[5])));
      } catch (IllegalArgumentException e) {
        // not a row this version wrote: skipped
      }
    }
    return Collections.unmodifiableList(out);
  }

  /** Replaces the reduce copy's reads file atomically (readers see the old or the new text). */
  public static void write(Configuration conf, String reduceAttemptId, String text) throws IOException {
    Path dir = dir(conf);
    if (dir != null) {
      AtomicFiles.replace(conf, new Path(dir, reduceAttemptId + ".tsv"), text);
    }
  }
}
