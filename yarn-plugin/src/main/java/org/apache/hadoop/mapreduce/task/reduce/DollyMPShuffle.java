package org.apache.hadoop.mapreduce.task.reduce;

import java.io.IOException;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.Task;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskAttemptID;

/**
 * The reduce side of DollyMP's delay assignment, set with
 * {@code mapreduce.job.reduce.shuffle.consumer.plugin.class}: Hadoop's fetchers and merger, driven by
 * {@link DollyMPShuffleScheduler}, which picks the map copy each reduce copy reads. It lives in
 * Hadoop's package because Hadoop's EventFetcher is package-private; the rest is Hadoop's public API.
 */
public class DollyMPShuffle<K, V> implements ShuffleConsumerPlugin<K, V>, ExceptionReporter {
  private static final int WAIT_SLICE_MS = 200;
  private ShuffleConsumerPlugin.Context<K, V> context;
  private TaskAttemptID reduceId;
  private JobConf jobConf;
  private DollyMPShuffleScheduler<K, V> scheduler;
  private MergeManager<K, V> merger;
  private ShuffleClientMetrics metrics;
  private Throwable failure;
  private String failingThread;

  @Override
  public void init(ShuffleConsumerPlugin.Context<K, V> ctx) {
    this.context = ctx;
    this.reduceId = ctx.getReduceId();
    this.jobConf = ctx.getJobConf();
    this.metrics = ShuffleClientMetrics.create(reduceId, jobConf);
    this.scheduler = new DollyMPShuffleScheduler<>(jobConf, ctx.getStatus(), reduceId, this, ctx.getCopyPhase(),
        ctx.getShuffledMapsCounter(), ctx.getReduceShuffleBytes(), ctx.getFailedShuffleCounter());
    this.merger = new MergeManagerImpl<>(reduceId, jobConf, ctx.getLocalFS(), ctx.getLocalDirAllocator(),
        ctx.getReporter(), ctx.getCodec(), ctx.getCombinerClass(), ctx.getCombineCollector(),
        ctx.getSpilledRecordsCounter(), ctx.getReduceCombineInputCounter(), ctx.getMergedMapOutputsCounter(), this,
        ctx.getMergePhase(), ctx.getMapOutputFile());
  }

  @Override
  public RawKeyValueIterator run() throws IOException, InterruptedException {
    int reduces = Math.max(1, jobConf.getNumReduceTasks());
    EventFetcher<K, V> events = new EventFetcher<>(reduceId, context.getUmbilical(), scheduler, this,
        Math.min(10_000, Math.max(100, 3_000_000 / reduces)));
    events.start();
    Task task = context.getReduceTask();
    Fetcher<?, ?>[] fetchers = new Fetcher<?, ?>[jobConf.getInt(MRJobConfig.SHUFFLE_PARALLEL_COPIES, 5)];
    for (int i = 0; i < fetchers.length; i++) {
      fetchers[i] = new Fetcher<>(jobConf, reduceId, scheduler, merger, context.getReporter(), metrics, this,
          task.getShuffleSecret());
      fetchers[i].start();
    }
    while (!scheduler.waitUntilDone(WAIT_SLICE_MS)) {
      scheduler.tick();
      context.getReporter().progress();
      rethrow();
    }
    events.shutDown();
    for (Fetcher<?, ?> f : fetchers) {
      f.shutDown();
    }
    scheduler.close();
    scheduler.writeFetchRecord();
    context.getCopyPhase().complete();
    TaskStatus status = context.getStatus();
    status.setPhase(TaskStatus.Phase.SORT);
    task.statusUpdate(context.getUmbilical());
    RawKeyValueIterator out;
    try {
      out = merger.close();
    } catch (Throwable t) {
      throw new IOException("DollyMP shuffle: final merge failed", t);
    }
    rethrow();
    return out;
  }

  private synchronized void rethrow() throws IOException {
    if (failure != null) {
      throw new IOException("DollyMP shuffle: error in " + failingThread, failure);
    }
  }

  @Override
  public synchronized void reportException(Throwable t) {
    if (failure == null) {
      failure = t;
      failingThread = Thread.currentThread().getName();
      synchronized (scheduler) {
        scheduler.notifyAll();
      }
    }
  }

  @Override
  public void close() {}
}
