package io.dollymp.yarn.am;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.commons.io.IOUtils;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.MRJobConfig;

/**
 * Delay assignment's out-of-band channel: Hadoop advertises only one copy of each map's output to
 * reducers, so the AM publishes every map copy (attempt, state, shuffle URL) and every reduce task's
 * number of copies in {@code <mapreduce.job.dir>/dollymp-copies.tsv}, which the reducers' shuffle
 * plugin reads. Lines: {@code W omega_ms}, {@code M map_index attempt_no attempt_id state url},
 * {@code R reduce_index copies}.
 */
public final class MapCopies {
  public static final String FILE = "dollymp-copies.tsv";

  /** One map copy. */
  public static final class Copy {
    private final int mapIndex;
    private final int attemptNo;
    private final String attemptId;
    private final String state;
    private final String url;

    public Copy(int mapIndex, int attemptNo, String attemptId, String state, String url) {
      this.mapIndex = mapIndex;
      this.attemptNo = attemptNo;
      this.attemptId = attemptId;
      this.state = state;
      this.url = url;
    }

    public int mapIndex() {
      return mapIndex;
    }

    public int attemptNo() {
      return attemptNo;
    }

    public String attemptId() {
      return attemptId;
    }

    public String state() {
      return state;
    }

    public String url() {
      return url;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Copy)) {
        return false;
      }
      Copy c = (Copy) o;
      return mapIndex == c.mapIndex && attemptNo == c.attemptNo && Objects.equals(attemptId, c.attemptId)
          && Objects.equals(state, c.state) && Objects.equals(url, c.url);
    }

    @Override
    public int hashCode() {
      return Objects.hash(mapIndex, attemptNo, attemptId, state, url);
    }

    @Override
    public String toString() {
      return "Copy[" + mapIndex + "/" + attemptNo + " " + attemptId + " " + state + " " + url + "]";
    }
  }

  private final long omegaMs;
  private final Map<Integer, List<Copy>> maps;
  private final Map<Integer, Integer> reduceCopies;

  public MapCopies(long omegaMs, Map<Integer, List<Copy>> maps, Map<Integer, Integer> reduceCopies) {
    this.omegaMs = omegaMs;
    this.maps = maps;
    this.reduceCopies = reduceCopies;
  }

  public static Path path(Configuration conf) {
    String dir = conf.get(MRJobConfig.MAPREDUCE_JOB_DIR);
    return dir == null ? null : new Path(dir, FILE);
  }

  public long omegaMs() {
    return omegaMs;
  }

  /** Copies of a map task (any state) the AM has placed so far. */
  public List<Copy> copies(int mapIndex) {
    return maps.getOrDefault(mapIndex, Collections.emptyList());
  }

  /** Copies of a reduce task (1 when it has no clones). */
  public int reduceCopies(int reduceIndex) {
    return reduceCopies.getOrDefault(reduceIndex, 1);
  }

  public String render() {
    StringBuilder sb = new StringBuilder("W\t").append(omegaMs).append('\n');
    maps.forEach((i, cs) -> cs.forEach(c -> sb.append("M\t").append(i).append('\t').append(c.attemptNo())
        .append('\t').append(c.attemptId()).append('\t').append(c.state()).append('\t').append(c.url())
        .append('\n')));
    reduceCopies.forEach((i, n) -> sb.append("R\t").append(i).append('\t').append(n).append('\n'));
    return sb.toString();
  }

  public static MapCopies parse(String text) {
    long omega = 0;
    Map<Integer, List<Copy>> maps = new HashMap<>();
    Map<Integer, Integer> reduces = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.split("\t", -1);
      switch (f[0]) {
        case "W":
          omega = Long.parseLong(f[1]);
          break;
        case "M":
          maps.computeIfAbsent(Integer.parseInt(f[1]), k -> new ArrayList<>())
              .add(new Copy(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], f[4], f[5]));
          break;
        case "R":
          reduces.put(Integer.parseInt(f[1]), Integer.parseInt(f[2]));
          break;
        default:
          break;
      }
    }
    return new MapCopies(omega, maps, reduces);
  }

  /** Replaces the file atomically (write a temporary file, then rename). */
  public static void write(Configuration conf, Path file, String text) throws IOException {
    AtomicFiles.replace(conf, file, text);
  }

  /** The current file, or an empty view when the AM has not written one (yet). */
  public static MapCopies read(Configuration conf, Path file) {
    MapCopies now = readOrNull(conf, file);
    return now == null ? new MapCopies(0, Collections.emptyMap(), Collections.emptyMap()) : now;
  }

  /**
   * The current file; an empty view when there is none yet; null when it exists but cannot be read now
   * (the caller keeps what it read last). A local file system's checksum file is renamed after the data
   * file, so the data is read without it: the rename of the data itself is atomic.
   */
  public static MapCopies readOrNull(Configuration conf, Path file) {
    try {
      FileSystem fs = file.getFileSystem(conf);
      if (fs instanceof ChecksumFileSystem) {
        fs = ((ChecksumFileSystem) fs).getRawFileSystem();
      }
      if (!fs.exists(file)) {
        return new MapCopies(0, Collections.emptyMap(), Collections.emptyMap());
      }
      try (FSDataInputStream in = fs.open(file)) {
        return parse(IOUtils.toString(in, StandardCharsets.UTF_8));
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
