package org.apache.hadoop.mapreduce.task.reduce;

import io.dollymp.yarn.am.AmConfig;
import io.dollymp.yarn.am.DelayAssignment;
import io.dollymp.yarn.am.MapCopies;
import io.dollymp.yarn.am.MapReads;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.util.Progress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's shuffle scheduler with delay assignment on top: a map's SUCCEEDED completion event is not
 * fetched at once but held until {@link DelayAssignment} says which copy this reduce copy reads.
 * Placed in Hadoop's package only because the stock shuffle's EventFetcher is package-private.
 */
public class DollyMPShuffleScheduler<K, V> extends ShuffleSchedulerImpl<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(DollyMPShuffleScheduler.class);

  private static final class Held {
    final TaskCompletionEvent event;
    final long firstSeenMs;

    Held(TaskCompletionEvent event, long firstSeenMs) {
      this.event = event;
      this.firstSeenMs = firstSeenMs;
    }
  }

  private final JobConf job;
  private final TaskAttemptID reduceId;
  private final Path copiesFile;
  private final Map<Integer, Held> held = new LinkedHashMap<>();
  private final Map<Integer, MapReads.Read> fetchRecord = new TreeMap<>();
  private MapCopies copies = new MapCopies(0, Collections.emptyMap(), Collections.emptyMap());
  private long copiesReadMs;

  public DollyMPShuffleScheduler(JobConf job, TaskStatus status, TaskAttemptID reduceId, ExceptionReporter reporter,
      Progress progress, Counters.Counter shuffledMapsCounter, Counters.Counter reduceShuffleBytes,
      Counters.Counter failedShuffleCounter) {
    super(job, status, reduceId, reporter, progress, shuffledMapsCounter, reduceShuffleBytes, failedShuffleCounter);
    this.job = job;
    this.reduceId = reduceId;
    this.copiesFile = MapCopies.path(job);
  }

  @Override
  public void resolve(TaskCompletionEvent event) {
    if (event.getTaskStatus() != TaskCompletionEvent.Status.SUCCEEDED || copiesFile == null) {
      super.resolve(event);
      return;
    }
    synchronized (this) {
      held.putIfAbsent(event.getTaskAttemptId().getTaskID().getId(), new Held(event, System.currentTimeMillis()));
    }
    tick();
  }

  /** Re-reads the AM's copies file (at most every 500 ms) and releases held maps whose choice is made. */
  public void tick() {
    long now = System.currentTimeMillis();
    if (now - copiesReadMs >= 500) {
      MapCopies fresh = MapCopies.readOrNull(job, copiesFile);
      if (fresh != null) { // unreadable this time: decide on what was read last
        copies = fresh;
      }
      copiesReadMs = now;
    }
    synchronized (this) {
      for (Iterator<Map.Entry<Integer, Held>> it = held.entrySet().iterator(); it.hasNext();) {
        Map.Entry<Integer, Held> e = it.next();
        Held h = e.getValue();
        long waited = now - h.firstSeenMs;
        DelayAssignment.Choice c = DelayAssignment.decide(copies, e.getKey(), reduceId.getTaskID().getId(),
            reduceId.getId(), waited);
        if (c.kind() == DelayAssignment.Kind.WAIT) {
          continue;
        }
        it.remove();
        TaskAttemptID chosen = h.event.getTaskAttemptId();
        String url = h.event.getTaskTrackerHttp();
        if (c.kind() == DelayAssignment.Kind.OWN_COPY) {
          chosen = TaskAttemptID.forName(c.attemptId());
          url = c.url();
        }
        fetchRecord.put(e.getKey(),
            new MapReads.Read(e.getKey(), chosen.toString(), c.reason(), waited, c.kind(), now));
        writeFetchRecord(); // at every decision: a reduce copy killed later still leaves its record
        LOG.info("DollyMP delay assignment: map {} -> copy {} ({}, waited {} ms)", e.getKey(), chosen, c.reason(),
            waited);
        URI u = getBaseURI(reduceId, url);
        addKnownMapOutput(u.getHost() + ":" + u.getPort(), u.toString(), chosen);
      }
    }
  }

  /**
   * Writes this reduce copy's reads where its AM reads them ({@link MapReads}: the job's directory) and,
   * when set, as its fetch record in {@code dollymp.am.record.dir/fetch/<attempt>.tsv}.
   */
  public synchronized void writeFetchRecord() {
    String sb = MapReads.render(fetchRecord);
    try {
      MapReads.write(job, reduceId.toString(), sb);
    } catch (IOException e) {
      LOG.warn("DollyMP: could not write the reads of {} for its AM", reduceId, e);
    }
    String dir = job.getTrimmed(AmConfig.RECORD_DIR, "");
    if (dir.isEmpty()) {
      LOG.info("DollyMP fetch record of {}:\n{}", reduceId, sb);
      return;
    }
    try {
      Path d = new Path(dir, "fetch");
      FileSystem fs = d.getFileSystem(job);
      fs.mkdirs(d);
      try (OutputStream out = fs.create(new Path(d, reduceId + ".tsv"), true)) {
        out.write(sb.getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      LOG.warn("DollyMP: could not write the fetch record to {}", dir, e);
    }
  }
}
