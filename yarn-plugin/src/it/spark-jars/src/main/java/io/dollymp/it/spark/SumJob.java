package io.dollymp.it.spark;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import scala.Tuple2;

/**
 * A Spark application whose answers can be checked: the sum of 1..n over {@code slices} tasks, and a
 * word count through a shuffle. The driver prints {@code SUM=}, {@code WORDS=} and {@code EXECUTORS=}
 * (the executors that ran the sum's tasks) on stdout. With a third argument {@code idleWaitMs > 0}
 * (dynamic allocation), the driver waits between the two jobs, up to that long, until every executor
 * it was given has been released as idle, and prints {@code RELEASED=} (how many were), so the word
 * count needs executors allocated anew.
 */
public final class SumJob {
  private SumJob() {}

  public static void main(String[] args) throws Exception {
    long n = Long.parseLong(args[0]);
    int slices = Integer.parseInt(args[1]);
    long idleWaitMs = args.length > 2 ? Long.parseLong(args[2]) : 0;
    try (JavaSparkContext sc = new JavaSparkContext(new SparkConf())) {
      Set<String> live = ConcurrentHashMap.newKeySet();
      Set<String> released = ConcurrentHashMap.newKeySet();
      sc.sc().addSparkListener(new SparkListener() {
        @Override
        public void onExecutorAdded(SparkListenerExecutorAdded added) {
          live.add(added.executorId());
        }

        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
          live.remove(removed.executorId());
          released.add(removed.executorId());
        }
      });
      List<Integer> blocks = new ArrayList<>();
      for (int i = 0; i < slices; i++) {
        blocks.add(i);
      }
      List<String> parts = sc.parallelize(blocks, slices).map(i -> {
        long lo = i * n / slices + 1;
        long hi = (i + 1) * n / slices;
        long sum = 0;
        for (long k = lo; k <= hi; k++) {
          sum += k;
        }
        return sum + " " + SparkEnv.get().executorId() + "@" + InetAddress.getLocalHost().getHostName();
      }).collect();
      long total = 0;
      TreeSet<String> executors = new TreeSet<>();
      for (String p : parts) {
        String[] f = p.split(" ");
        total += Long.parseLong(f[0]);
        executors.add(f[1]);
      }
      if (idleWaitMs > 0) {
        long until = System.currentTimeMillis() + idleWaitMs;
        while ((released.isEmpty() || !live.isEmpty()) && System.currentTimeMillis() < until) {
          Thread.sleep(100);
        }
        System.out.println("RELEASED=" + released.size());
      }
      List<String> words = new ArrayList<>();
      for (int i = 0; i < 3000; i++) {
        words.add(i % 3 == 0 ? "clone" : i % 3 == 1 ? "yarn" : i % 2 == 0 ? "dolly" : "spark");
      }
      Map<String, Integer> counts = new TreeMap<>(sc.parallelize(words, slices)
          .mapToPair(w -> new Tuple2<>(w, 1)).reduceByKey(Integer::sum, 3).collectAsMap());
      System.out.println("SUM=" + total);
      System.out.println("WORDS=" + counts);
      System.out.println("EXECUTORS=" + executors);
    }
  }
}
