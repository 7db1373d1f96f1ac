package io.dollymp.yarn.scheduler;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dollymp.yarn.scheduler.client.SessionStateMachine;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.metrics2.MetricsRecord;
import org.apache.hadoop.metrics2.impl.MetricsCollectorImpl;
import org.apache.hadoop.metrics2.sink.PrometheusMetricsSink;
import org.apache.hadoop.metrics2.source.JvmMetrics;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard's ResourceManager panels (docs/grafana/dollymp.json, job="yarn-resourcemanager")
 * query only names that the RM's /prom endpoint (hadoop.prometheus.endpoint.enabled, Hadoop's
 * PrometheusMetricsSink) exports for the shim's DollyMPShim source and the RM's JvmMetrics.
 */
class ShimMetricsPrometheusTest {
  private static final Pattern EXPR = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern NAME = Pattern.compile("[A-Za-z_:][A-Za-z0-9_:]*");
  private static final Set<String> WORDS = Set.of("sum", "rate", "irate", "increase", "by", "le", "job");

  static Set<String> rmMetrics(String dashboard) {
    Set<String> out = new TreeSet<>();
    Matcher m = EXPR.matcher(dashboard);
    while (m.find()) {
      String expr = m.group(1).replace("\\\"", "\"");
      if (!expr.contains("job=\"yarn-resourcemanager\"")) {
        continue;
      }
      String bare = expr.replaceAll("\\{[^}]*\\}", " ").replaceAll("\\[[^\\]]*\\]", " ");
      Matcher n = NAME.matcher(bare);
      while (n.find()) {
        if (!WORDS.contains(n.group()) && !n.group().matches("e\\d+")) {
          out.add(n.group());
        }
      }
    }
    return out;
  }

  @Test
  void everyResourceManagerMetricOfTheDashboardIsExported() throws Exception {
    Path dashboard = Path.of(System.getProperty("user.dir")).resolve("../docs/grafana/dollymp.json");
    Set<String> wanted = rmMetrics(Files.readString(dashboard, StandardCharsets.UTF_8));
    assertTrue(wanted.contains("dolly_mp_shim_containers_committed") && wanted.size() >= 10, wanted.toString());

    ShimMetrics shim = new ShimMetrics(new SessionStateMachine(System::currentTimeMillis), new PlanBook(),
        new LatencyRecorder(), () -> 3, () -> 1, () -> 0);
    MetricsCollectorImpl collector = new MetricsCollectorImpl();
    shim.getMetrics(collector, true);
    JvmMetrics.initSingleton("ResourceManager", "").getMetrics(collector, true);
    PrometheusMetricsSink sink = new PrometheusMetricsSink();
    for (MetricsRecord r : collector.getRecords()) {
      sink.putMetrics(r);
    }
    sink.flush(); // the sink serves what the last flush published
    StringWriter out = new StringWriter();
    sink.writeMetrics(out);
    Set<String> exported = new TreeSet<>();
    for (String line : out.toString().split("\n")) {
      if (!line.isEmpty() && !line.startsWith("#")) {
        exported.add(line.split("[{ ]", 2)[0]);
      }
    }
    Set<String> missing = new TreeSet<>(wanted);
    missing.removeAll(exported);
    assertTrue(missing.isEmpty(), "not exported by /prom: " + missing + "; exported: " + exported);
  }
}
