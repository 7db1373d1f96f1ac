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
    assertEquals(ShimConfig.Commit.PLAN, c.commit());
    assertEquals(ShimConfig.Commit.HEARTBEAT, ShimConfig.from(conf(ShimConfig.COMMIT, " Heartbeat ")).commit());
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
        {ShimConfig.COMMIT, "asap"},
        {ShimConfig.AUTH_SECRET_FILE, "/no/such/secret"},
        {ShimConfig.TLS_CA_FILE, "/no/such/ca.pem"},
    };
    for (String[] kv : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ShimConfig.from(conf(kv)));
      assertTrue(e.getMessage().contains(kv[0]), e.getMessage() + " should name " + kv[0]);
    }
  }

  @Test
  void theSecretIsReadAndCheckedAtStartUp(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws java.io.IOException {
    java.nio.file.Path good = java.nio.file.Files.writeString(dir.resolve("s"), "  0123456789abcdef-xyz\n");
    assertEquals("0123456789abcdef-xyz", ShimConfig.from(conf(ShimConfig.AUTH_SECRET_FILE, good.toString())).secret());
    assertEquals("", ShimConfig.from(conf()).secret());
    java.nio.file.Path shortOne = java.nio.file.Files.writeString(dir.resolve("t"), "abc");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ShimConfig.from(conf(ShimConfig.AUTH_SECRET_FILE, shortOne.toString())));
    assertTrue(e.getMessage().contains(ShimConfig.AUTH_SECRET_FILE) && e.getMessage().contains("16"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ShimConfig.from(conf(ShimConfig.TLS_CERT_FILE, good.toString())));
    assertTrue(e.getMessage().contains(ShimConfig.TLS_KEY_FILE), e.getMessage());
  }

  @Test
  void aKerberosRmNeedsTheSecretOrAClientCertificate(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws java.io.IOException {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ShimConfig.from(conf(ShimConfig.HADOOP_AUTHENTICATION, "kerberos")));
    assertTrue(e.getMessage().contains(ShimConfig.AUTH_SECRET_FILE + ": required when "
        + ShimConfig.HADOOP_AUTHENTICATION + "=kerberos"), e.getMessage());
    java.nio.file.Path secret = java.nio.file.Files.writeString(dir.resolve("s"), "0123456789abcdef-xyz\n");
    assertEquals("0123456789abcdef-xyz", ShimConfig.from(conf(ShimConfig.HADOOP_AUTHENTICATION, "kerberos",
        ShimConfig.AUTH_SECRET_FILE, secret.toString())).secret());
    assertEquals("", ShimConfig.from(conf(ShimConfig.HADOOP_AUTHENTICATION, "kerberos",
        ShimConfig.AUTH_INSECURE, "true")).secret());
    assertEquals("", ShimConfig.from(conf(ShimConfig.HADOOP_AUTHENTICATION, "simple")).secret());
  }

  @Test
  void everyInvalidKeyIsReportedAtOnce() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ShimConfig.from(conf(ShimConfig.TICK_MS, "x", ShimConfig.RPC_TIMEOUT_MS, "y")));
    assertTrue(e.getMessage().contains(ShimConfig.TICK_MS) && e.getMessage().contains(ShimConfig.RPC_TIMEOUT_MS));
  }
}
