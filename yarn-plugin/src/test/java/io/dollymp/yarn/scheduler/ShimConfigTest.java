package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class ShimConfigTest {
  private static Configuration conf(String... kv) {
    Configuration c = new Configuration(false);
    for (int i = 0; i < kv.length; i += 2) {
      c.set(kv[i], kv[i + 1]);
    }
    return c;
  }

  @Test
  void defaults() {
    ShimConfig c = ShimConfig.from(conf());
    assertEquals("127.0.0.1", c.serviceHost());
    assertEquals(50051, c.servicePort());
    assertEquals(100, c.tickMs());
    assertEquals(ShimConfig.FallbackPolicy.FIFO, c.fallbackPolicy());
  }

  @Test
  void invalidValuesNameTheKey() {
    String[][] bad = {
        {ShimConfig.SERVICE_ADDRESS, "no-port"},
        {ShimConfig.SERVICE_ADDRESS, "host:99999"},
        {ShimConfig.TICK_MS, "fast"},
        {ShimConfig.TICK_MS, "0"},
        {ShimConfig.PLAN_MAX_AGE_MS, "-5"},
        {ShimConfig.FALLBACK_POLICY, "capacity"},
    };
    for (String[] kv : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ShimConfig.from(conf(kv)));
      assertTrue(e.getMessage().contains(kv[0]), e.getMessage() + " should name " + kv[0]);
    }
  }

  @Test
  void everyInvalidKeyIsReportedAtOnce() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ShimConfig.from(conf(ShimConfig.TICK_MS, "x", ShimConfig.RPC_TIMEOUT_MS, "y")));
    assertTrue(e.getMessage().contains(ShimConfig.TICK_MS) && e.getMessage().contains(ShimConfig.RPC_TIMEOUT_MS));
  }
}
