package io.dollymp.yarn.am;

import io.dollymp.proto.v1.AttemptReport;
import io.dollymp.proto.v1.MapRead;
import io.dollymp.proto.v1.MapReadKind;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.commons.io.IOUtils;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFileSystem;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AM's side of the reduce copies' map reads ({@link MapReads}): it reads the files the reduce copies
 * write, keeps each reduce attempt's reads not yet sent, and puts them on that attempt's next report to the
 * service ({@code AttemptReport.map_reads}). A read is sent once; a report that failed, or a service that
 * lost the job, puts its reads back. Bookkeeping ({@link #offer}, {@link #attach}) is apart from the file
 * system ({@link #poll}), so it is tested without a cluster.
 */
public final class MapReadBook {
  private static final Logger LOG = LoggerFactory.getLogger(MapReadBook.class);
  private final Map<String, Map<Integer, MapReads.Read>> seen = new HashMap<>();
  private final Map<String, Map<Integer, MapReads.Read>> unsent = new LinkedHashMap<>();
  private final Map<String, Long> fileStamps = new HashMap<>();

  /**
   * Takes a reduce attempt's reads as its file lists them now; returns whether any is new. A map already
   * read by this attempt keeps its first read (a reduce copy chooses once per map).
   */
  public boolean offer(String reduceAttemptId, List<MapReads.Read> reads) {
    Map<Integer, MapReads.Read> known = seen.computeIfAbsent(reduceAttemptId, k -> new HashMap<>());
    boolean fresh = false;
    for (MapReads.Read r : reads) {
      if (known.putIfAbsent(r.mapIndex(), r) == null) {
        unsent.computeIfAbsent(reduceAttemptId, k -> new LinkedHashMap<>()).put(r.mapIndex(), r);
        fresh = true;
      }
    }
    return fresh;
  }

  /** Reduce attempts with reads not sent yet: their next report must go out even if nothing else changed. */
  public Set<String> pending() {
    return Collections.unmodifiableSet(new java.util.HashSet<>(unsent.keySet()));
  }

  /** The reports with each reduce attempt's unsent reads added; those reads count as sent from now on. */
  public List<AttemptReport> attach(List<AttemptReport> reports) {
    List<AttemptReport> out = new ArrayList<>(reports.size());
    for (AttemptReport r : reports) {
      Map<Integer, MapReads.Read> reads = unsent.remove(r.getAttemptId());
      if (reads == null) {
        out.add(r);
        continue;
      }
      AttemptReport.Builder b = r.toBuilder();
      reads.values().forEach(x -> b.addMapReads(wire(x)));
      out.add(b.build());
    }
    return out;
  }

  /** Put the reads of reports whose call failed back, to go on the next report of their attempts. */
  public void unreport(List<AttemptReport> reports) {
    for (AttemptReport r : reports) {
      Map<Integer, MapReads.Read> known = seen.getOrDefault(r.getAttemptId(), Collections.emptyMap());
      for (MapRead m : r.getMapReadsList()) {
        int index = indexOf(m.getMapAttemptId());
        MapReads.Read read = known.get(index);
        if (read != null) {
          unsent.computeIfAbsent(r.getAttemptId(), k -> new LinkedHashMap<>()).put(index, read);
        }
      }
    }
  }

  /** Every read goes again (the service lost the job, e.g. it restarted). */
  public void unreportAll() {
    seen.forEach((attempt, reads) -> unsent.computeIfAbsent(attempt, k -> new LinkedHashMap<>()).putAll(reads));
  }

  /**
   * Reads the reads files changed since the last poll ({@code <job dir>/dollymp-reads/}); returns whether
   * any read is new. A file that cannot be read now is read on a later poll.
   */
  public boolean poll(Configuration conf) {
    Path dir = MapReads.dir(conf);
    if (dir == null) {
      return false;
    }
    boolean fresh = false;
    try {
      FileSystem fs = dir.getFileSystem(conf);
      if (fs instanceof ChecksumFileSystem) {
        fs = ((ChecksumFileSystem) fs).getRawFileSystem(); // the data file is renamed into place atomically
      }
      if (!fs.exists(dir)) {
        return false;
      }
      for (FileStatus f : fs.listStatus(dir)) {
        String name = f.getPath().getName();
        if (!name.startsWith("attempt_") || !name.endsWith(".tsv")) {
          continue; // a reduce copy's temporary file, or a stranger
        }
        long stamp = f.getModificationTime() * 31 + f.getLen();
        if (Long.valueOf(stamp).equals(fileStamps.get(name))) {
          continue;
        }
        try (InputStream in = fs.open(f.getPath())) {
          String text = IOUtils.toString(in, StandardCharsets.UTF_8);
          fresh |= offer(name.substring(0, name.length() - ".tsv".length()), MapReads.parse(text));
          fileStamps.put(name, stamp);
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("DollyMP AM helper: could not read the reduce copies' reads in {} now", dir, e);
    }
    return fresh;
  }

  static MapRead wire(MapReads.Read r) {
    return MapRead.newBuilder().setMapTaskId(r.mapTaskId()).setMapAttemptId(r.mapAttemptId())
        .setKind(r.kind() == DelayAssignment.Kind.OWN_COPY ? MapReadKind.MAP_READ_OWN_COPY
            : MapReadKind.MAP_READ_FIRST_COPY)
        .setWaitedS(Math.max(0, r.waitedMs()) / 1000.0).setReason(r.reason()).setTimeMs(Math.max(0, r.timeMs()))
        .build();
  }

  /** The map index of {@code attempt_<job>_m_<index>_<no>}, or -1. */
  private static int indexOf(String mapAttemptId) {
    String[] f = mapAttemptId.split("_");
    try {
      return f.length >= 2 ? Integer.parseInt(f[f.length - 2]) : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
