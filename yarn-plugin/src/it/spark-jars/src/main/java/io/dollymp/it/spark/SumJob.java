package io.dollymp.it.spark;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * A Spark application whose answers can be checked: the sum of 1..n over {@code slices} tasks, and a
 * word count through a shuffle. The driver prints {@code SUM=}, {@code WORDS=} and {@code EXECUTORS=}
 * (the executors that ran the sum's tasks) on stdout.
 */
public final class SumJob {
  private SumJob() {}

  public static void main(String[] args) throws Exception {
    long n = Long.parseLong(args[0]);
    int slices = Integer.parseInt(args[1]);
    try (JavaSparkContext sc = new JavaSparkContext(new SparkConf())) {
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
