package io.dollymp.yarn.workload;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.NullOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * A MapReduce job whose tasks sleep for heavy-tailed times: each attempt draws its own duration
 * {@code base * X}, X ~ Pareto(shape, scale 1) capped at {@code cap} (the straggler model of Dolly,
 * paper 001 Section 2, and DollyMP, paper 000 Section 3: clones are independent draws). The draw is
 * seeded by (seed, attempt id), so a run is repeatable and a clone's draw differs from its original's.
 * Optionally some NodeManagers are slow: their tasks' durations are multiplied by a factor.
 *
 * <p>Each map emits {@code records} integers keyed over the reducers; reducers count them into the
 * counter group {@code dollymp} so a test can check that clones changed no result.
 *
 * <p>Tasks report progress as real ones do (Hadoop's progress score, which speculation reads): a map
 * reads {@code progress-steps} input records and sleeps its duration in equal parts over them; a
 * reduce sleeps in equal parts over the values it reads.
 */
public class StragglerJob extends Configured implements Tool {
  public static final String MAPS = "dollymp.straggler.maps";
  public static final String REDUCES = "dollymp.straggler.reduces";
  public static final String MAP_BASE_MS = "dollymp.straggler.map.base-ms";
  public static final String REDUCE_BASE_MS = "dollymp.straggler.reduce.base-ms";
  public static final String SHAPE = "dollymp.straggler.pareto-shape";
  public static final String CAP = "dollymp.straggler.cap";
  public static final String SEED = "dollymp.straggler.seed";
  public static final String RECORDS = "dollymp.straggler.records-per-map";
  /** Steps in which a map's sleep advances its progress (input records of the map). */
  public static final String STEPS = "dollymp.straggler.progress-steps";
  /** Comma list of {@code host:port=factor} (NodeManager id as in NM_HOST:NM_PORT). */
  public static final String SLOW_NODES = "dollymp.straggler.slow-nodes";
  /** Comma list of {@code <m|r><task index>.<attempt number>=factor}, e.g. {@code m1.1=30}: pinned slow attempts. */
  public static final String SLOW_ATTEMPTS = "dollymp.straggler.slow-attempts";

  /** Inverse-CDF draw of Pareto(shape, scale 1) capped at {@code cap}: X = U^(-1/shape). */
  public static double paretoFactor(double shape, double cap, double u) {
    double x = Math.pow(1.0 - u, -1.0 / shape); // 1-u in (0, 1]: X >= 1
    return Math.min(x, cap);
  }

  /** The duration an attempt sleeps, ms. */
  public static long attemptMs(Configuration conf, String attemptId, long baseMs, String nodeId) {
    double shape = conf.getDouble(SHAPE, 1.5);
    double cap = conf.getDouble(CAP, 20.0);
    if (!(shape > 0) || !(cap >= 1)) {
      throw new IllegalArgumentException(SHAPE + " must be > 0 and " + CAP + " >= 1, got " + shape + ", " + cap);
    }
    // SplittableRandom mixes its seed (java.util.Random's first draws for seeds one apart are nearly
    // equal, which would make a clone's draw copy its original's).
    // Keyed by job name, task and attempt number (not the application id), so the same job mix draws
    // the same original durations under every scheduler.
    String key = conf.get("mapreduce.job.name", "") + "/" + taskKey(attemptId);
    SplittableRandom rnd = new SplittableRandom(conf.getLong(SEED, 1L) * 1_000_003L + key.hashCode());
    return Math.round(baseMs * paretoFactor(shape, cap, rnd.nextDouble()) * slowdown(conf, nodeId)
        * attemptSlowdown(conf, attemptId));
  }

  /** {@code m1.0} for attempt_<ts>_<job>_m_000001_0; the attempt id itself when it has another form. */
  static String taskKey(String attemptId) {
    String[] f = attemptId.split("_");
    return f.length < 6 ? attemptId : f[3] + Integer.parseInt(f[4]) + "." + Integer.parseInt(f[5]);
  }

  static double attemptSlowdown(Configuration conf, String attemptId) {
    String me = taskKey(attemptId);
    for (String spec : conf.getTrimmedStrings(SLOW_ATTEMPTS)) {
      int eq = spec.lastIndexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(SLOW_ATTEMPTS + ": expected m1.1=factor, got " + spec);
      }
      if (spec.substring(0, eq).equals(me)) {
        return Double.parseDouble(spec.substring(eq + 1));
      }
    }
    return 1.0;
  }

  static double slowdown(Configuration conf, String nodeId) {
    for (String spec : conf.getTrimmedStrings(SLOW_NODES)) {
      int eq = spec.lastIndexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(SLOW_NODES + ": expected host:port=factor, got " + spec);
      }
      if (spec.substring(0, eq).equals(nodeId)) {
        return Double.parseDouble(spec.substring(eq + 1));
      }
    }
    return 1.0;
  }

  static String nodeId() {
    String host = System.getenv("NM_HOST");
    String port = System.getenv("NM_PORT");
    return host == null ? "" : host + ":" + port;
  }

  /** One empty split per map. */
  public static class Split extends InputSplit implements Writable {
    @Override
    public long getLength() {
      return 0;
    }

    @Override
    public String[] getLocations() {
      return new String[0];
    }

    @Override
    public void write(DataOutput out) {}

    @Override
    public void readFields(DataInput in) {}
  }

  public static class Input extends InputFormat<LongWritable, NullWritable> {
    @Override
    public List<InputSplit> getSplits(JobContext ctx) {
      int maps = ctx.getConfiguration().getInt(MAPS, 4);
      List<InputSplit> out = new ArrayList<>();
      for (int i = 0; i < maps; i++) {
        out.add(new Split());
      }
      return out;
    }

    @Override
    public RecordReader<LongWritable, NullWritable> createRecordReader(InputSplit split, TaskAttemptContext ctx) {
      return new RecordReader<LongWritable, NullWritable>() {
        @Override
        public void initialize(InputSplit s, TaskAttemptContext c) {}

        private final int steps = steps(ctx.getConfiguration());
        private int read;

        @Override
        public boolean nextKeyValue() {
          if (read >= steps) {
            return false;
          }
          read++;
          return true;
        }

        @Override
        public LongWritable getCurrentKey() {
          return new LongWritable(read - 1);
        }

        @Override
        public NullWritable getCurrentValue() {
          return NullWritable.get();
        }

        @Override
        public float getProgress() {
          return steps == 0 ? 1f : (float) Math.max(0, read - 1) / steps;
        }

        @Override
        public void close() {}
      };
    }
  }

  static int steps(Configuration conf) {
    int steps = conf.getInt(STEPS, 20);
    if (steps < 1) {
      throw new IllegalArgumentException(STEPS + " must be >= 1, got " + steps);
    }
    return steps;
  }

  static long attemptMs(TaskAttemptContext ctx, String baseKey) {
    return attemptMs(ctx.getConfiguration(), ctx.getTaskAttemptID().toString(),
        ctx.getConfiguration().getLong(baseKey, 1000), nodeId());
  }

  static void sleepFor(TaskAttemptContext ctx, long ms) throws InterruptedException {
    long end = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < end) {
      Thread.sleep(Math.min(500, Math.max(1, end - System.currentTimeMillis())));
      ctx.progress();
    }
  }

  public static class Map extends Mapper<LongWritable, NullWritable, IntWritable, IntWritable> {
    private long stepMs;
    private int steps;

    @Override
    protected void setup(Context ctx) {
      steps = steps(ctx.getConfiguration());
      stepMs = attemptMs(ctx, MAP_BASE_MS) / steps;
    }

    @Override
    protected void map(LongWritable k, NullWritable v, Context ctx) throws IOException, InterruptedException {
      sleepFor(ctx, stepMs);
      if (k.get() < steps - 1) {
        return; // the output once, with the last input record
      }
      int records = ctx.getConfiguration().getInt(RECORDS, 100);
      int reduces = Math.max(1, ctx.getNumReduceTasks());
      for (int i = 0; i < records; i++) {
        ctx.write(new IntWritable(i % reduces), new IntWritable(1));
      }
    }
  }

  public static class Reduce extends Reducer<IntWritable, IntWritable, NullWritable, NullWritable> {
    private long ms;
    private double msPerValue;
    private long slept;
    private long values;

    @Override
    protected void setup(Context ctx) {
      // This reducer's values: every map's records i < records with i % reduces == its partition.
      Configuration conf = ctx.getConfiguration();
      int reduces = Math.max(1, ctx.getNumReduceTasks());
      int records = conf.getInt(RECORDS, 100);
      int part = ctx.getTaskAttemptID().getTaskID().getId();
      long perMap = part < records ? (records - part + reduces - 1) / reduces : 0;
      long total = perMap * conf.getInt(MAPS, 4);
      ms = attemptMs(ctx, REDUCE_BASE_MS);
      msPerValue = total > 0 ? (double) ms / total : 0;
    }

    @Override
    protected void reduce(IntWritable k, Iterable<IntWritable> vs, Context ctx) throws InterruptedException {
      long n = 0;
      for (IntWritable v : vs) {
        n += v.get();
        values++;
        long due = Math.round(values * msPerValue) - slept;
        if (due >= 50) { // sleep in slices of at least 50 ms as the values are read
          sleepFor(ctx, due);
          slept += due;
        }
      }
      ctx.getCounter("dollymp", "records").increment(n);
    }

    @Override
    protected void cleanup(Context ctx) throws InterruptedException {
      sleepFor(ctx, Math.max(0, ms - slept)); // the rest (all of it for a reducer with no input)
    }
  }

  public static Job create(Configuration conf, String name) throws IOException {
    Job job = Job.getInstance(conf, name);
    job.setJarByClass(StragglerJob.class);
    job.setInputFormatClass(Input.class);
    job.setMapperClass(Map.class);
    job.setReducerClass(Reduce.class);
    job.setMapOutputKeyClass(IntWritable.class);
    job.setMapOutputValueClass(IntWritable.class);
    job.setOutputFormatClass(NullOutputFormat.class);
    job.setNumReduceTasks(conf.getInt(REDUCES, 1));
    job.setSpeculativeExecution(true); // the AM creates a speculator (stock or DollyMP's) only when on
    return job;
  }

  @Override
  public int run(String[] args) throws Exception {
    String name = args.length > 0 ? args[0] : "dollymp-straggler";
    return create(getConf(), name).waitForCompletion(true) ? 0 : 1;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new StragglerJob(), args));
  }
}
