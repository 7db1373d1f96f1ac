package io.dollymp.yarn.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class StragglerJobTest {
  @Test
  void paretoInverseCdfAndCap() {
    assertEquals(1.0, StragglerJob.paretoFactor(1.5, 20, 0.0), 1e-12);
    // P(X > x) = x^-shape: the 0.75 quantile of Pareto(2) is 2.
    assertEquals(2.0, StragglerJob.paretoFactor(2.0, 20, 0.75), 1e-12);
    assertEquals(20.0, StragglerJob.paretoFactor(1.5, 20, 0.999999), 1e-12);
  }

  @Test
  void drawsAreRepeatablePerAttemptAndIndependentAcrossAttempts() {
    Configuration conf = new Configuration(false);
    conf.setLong(StragglerJob.SEED, 3);
    long a0 = StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_0", 1000, "");
    assertEquals(a0, StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_0", 1000, ""));
    assertNotEquals(a0, StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_1", 1000, ""));
    // E[min(X, 20)] for Pareto(1.5) = 1 + 2 (1 - 20^-0.5) ≈ 2.553.
    double sum = 0;
    int n = 4000;
    for (int i = 0; i < n; i++) {
      sum += StragglerJob.attemptMs(conf, "attempt_1_0001_m_" + i + "_0", 1000, "") / 1000.0;
    }
    double mean = sum / n;
    assertTrue(mean > 2.2 && mean < 2.9, "mean " + mean);
  }

  /** The bench's draws, as replicated in pyscheduler/deploy/draws.py (tests/deploy/test_draws.py). */
  @Test
  void pinnedDrawsMatchThePythonReplica() {
    Configuration conf = new Configuration(false);
    conf.setLong(StragglerJob.SEED, 1);
    conf.set("mapreduce.job.name", "straggler-3");
    assertEquals(140089, StragglerJob.attemptMs(conf, "attempt_1_0004_m_000000_0", 40000, ""));
    assertEquals(54253, StragglerJob.attemptMs(conf, "attempt_1_0004_m_000000_1", 40000, ""));
    conf.set("mapreduce.job.name", "straggler-4");
    assertEquals(602912, StragglerJob.attemptMs(conf, "attempt_1_0005_m_000000_0", 40000, ""));
    conf.set("mapreduce.job.name", "straggler-1");
    assertEquals(25467, StragglerJob.attemptMs(conf, "attempt_1_0002_r_000000_2", 20000, ""));
  }

  @Test
  void slowNodesAndPinnedSlowAttempts() {
    Configuration conf = new Configuration(false);
    conf.setDouble(StragglerJob.CAP, 1.0);
    conf.set(StragglerJob.SLOW_NODES, "h1:42=4");
    conf.set(StragglerJob.SLOW_ATTEMPTS, "m1.1=30");
    assertEquals(4000, StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_0", 1000, "h1:42"));
    assertEquals(1000, StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_0", 1000, "h2:42"));
    assertEquals(30000, StragglerJob.attemptMs(conf, "attempt_1_0001_m_000001_1", 1000, ""));
    conf.set(StragglerJob.SLOW_NODES, "h1:42");
    assertThrows(IllegalArgumentException.class,
        () -> StragglerJob.attemptMs(conf, "attempt_1_0001_m_000000_0", 1000, "h1:42"));
  }
}
