package io.dollymp.yarn.testkit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.WordCount;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.yarn.api.records.ContainerId;

/** Hadoop's own example jobs (wordcount, sleep) and the evidence of what they ran. */
public final class ExampleJobs {
  private static final String[] VOCAB =
      {"straggler", "clone", "yarn", "dolly", "flowtime", "knapsack", "pareto", "reduce", "map"};

  private ExampleJobs() {}

  /** Hadoop's WordCount mapper/combiner/reducer over {@code input}, {@code reduces} reducers. */
  public static Job wordcount(Configuration conf, Path input, Path output, int reduces) throws IOException {
    Job wc = Job.getInstance(conf, "dollymp-wordcount");
    wc.setJarByClass(WordCount.class);
    wc.setMapperClass(WordCount.TokenizerMapper.class);
    wc.setCombinerClass(WordCount.IntSumReducer.class);
    wc.setReducerClass(WordCount.IntSumReducer.class);
    wc.setOutputKeyClass(Text.class);
    wc.setOutputValueClass(IntWritable.class);
    wc.setNumReduceTasks(reduces);
    FileInputFormat.addInputPath(wc, new org.apache.hadoop.fs.Path(input.toUri()));
    FileOutputFormat.setOutputPath(wc, new org.apache.hadoop.fs.Path(output.toUri()));
    return wc;
  }

  /** Hadoop's SleepJob (from the jobclient test jar). */
  public static Job sleep(Configuration conf, String name, int maps, int reduces, long mapMs, long reduceMs)
      throws IOException {
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(maps, reduces, mapMs, 1, reduceMs, 1);
    job.setJobName(name);
    return job;
  }

  /** Submits {@code job} and waits (up to {@code timeoutMs}) until its maps report progress. */
  public static void submitAndAwaitMaps(Job job, long timeoutMs) throws Exception {
    job.submit();
    long until = System.currentTimeMillis() + timeoutMs;
    while (job.mapProgress() <= 0f && System.currentTimeMillis() < until) {
      Thread.sleep(100);
    }
  }

  public static String appIdOf(Job job) {
    return job.getJobID().toString().replace("job_", "application_");
  }

  /** Writes {@code files} text files of random words; returns the true count of each word. */
  public static Map<String, Integer> writeText(Path dir, int files, int wordsPerFile, Random rnd) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    Files.createDirectories(dir);
    for (int f = 0; f < files; f++) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < wordsPerFile; i++) {
        String w = VOCAB[rnd.nextInt(VOCAB.length)];
        counts.merge(w, 1, Integer::sum);
        sb.append(w).append(i % 12 == 11 ? '\n' : ' ');
      }
      Files.writeString(dir.resolve("part-" + f + ".txt"), sb.toString(), StandardCharsets.UTF_8);
    }
    return counts;
  }

  /** Reads a wordcount output directory (word TAB count lines in part-r-* files). */
  public static Map<String, Integer> readCounts(Path outDir) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    File[] parts = outDir.toFile().listFiles((d, n) -> n.startsWith("part-r-"));
    if (parts == null) {
      throw new IOException("no output in " + outDir);
    }
    for (File part : parts) {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(Files.newInputStream(part.toPath()),
          StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          String[] kv = line.split("\t");
          counts.put(kv[0], Integer.parseInt(kv[1]));
        }
      }
    }
    return counts;
  }

  /** Containers that actually ran, from the NodeManagers' own container log directories under {@code base}. */
  public static Set<ContainerId> containersThatRan(Path base, Set<String> appIds) throws IOException {
    Set<ContainerId> out = new HashSet<>();
    try (Stream<Path> walk = Files.walk(base, 5)) {
      walk.filter(Files::isDirectory)
          .filter(p -> p.getFileName().toString().startsWith("container_"))
          .filter(p -> p.getParent() != null && appIds.contains(p.getParent().getFileName().toString()))
          .filter(p -> p.toString().contains("logDir"))
          .forEach(p -> out.add(ContainerId.fromString(p.getFileName().toString())));
    }
    return out;
  }
}
