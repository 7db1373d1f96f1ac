package io.dollymp.yarn.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start-up check of the RM's Hadoop line (issue 59): the versions it accepts and refuses, the jar's
 * record of what it was compiled against, and a real ResourceManager with the shim on a Hadoop that says it
 * is 3.2.4 (Hadoop's own common-version-info.properties shadowed on the class path of a JVM of its own):
 * init fails naming 3.2.4 and the supported versions, the RM is left STOPPED, the shim installed nothing into
 * its configuration and never called the decision service. Beside it the same RM on the build's own Hadoop
 * initialises, the shim's web hooks installed.
 */
class HadoopVersionCheckTest {
  @TempDir
  Path tmp;

  @Test
  void theLineIsMajorDotMinorOfReleasesAndVendorBuilds() {
    assertEquals("3.3", HadoopVersionCheck.line("3.3.6"));
    assertEquals("3.4", HadoopVersionCheck.line("3.4.3"));
    assertEquals("3.5", HadoopVersionCheck.line("3.5.0-SNAPSHOT"));
    assertEquals("3.3", HadoopVersionCheck.line("3.3.6-amzn-1"));
    assertNull(HadoopVersionCheck.line("Unknown"));
    assertNull(HadoopVersionCheck.line(null));
  }

  @Test
  void aJarStartsOnTheLinesOfItsSourceSetOnly() {
    List<String> line33 = List.of("3.3");
    List<String> line34 = List.of("3.4", "3.5");
    assertNull(HadoopVersionCheck.refusal("3.3.6", "3.3.6", line33));
    assertNull(HadoopVersionCheck.refusal("3.3.4", "3.3.6", line33));
    assertNull(HadoopVersionCheck.refusal("3.4.1", "3.4.3", line34));
    assertNull(HadoopVersionCheck.refusal("3.5.0", "3.4.3", line34));
    assertNull(HadoopVersionCheck.refusal("3.4.3", "3.5.0", line34));
    String other = HadoopVersionCheck.refusal("3.4.3", "3.3.6", line33);
    assertTrue(other.startsWith("DollyMP: unsupported Hadoop version 3.4.3"), other);
    assertTrue(other.contains("this jar is built for Hadoop 3.3.x (compiled against 3.3.6)"), other);
    assertTrue(other.contains("Supported Hadoop versions: 3.3.x, 3.4.x and 3.5.x"), other);
    assertTrue(other.contains("Use the DollyMP jar built for Hadoop 3.4 (mvn package)"), other);
    String back = HadoopVersionCheck.refusal("3.3.6", "3.4.3", line34);
    assertTrue(back.contains("built for Hadoop 3.4.x and 3.5.x (compiled against 3.4.3)"), back);
    assertTrue(back.contains("Use the DollyMP jar built for Hadoop 3.3 (mvn -Phadoop-3.3 package)"), back);
    String old = HadoopVersionCheck.refusal("3.2.4", "3.4.3", line34);
    assertTrue(old.contains("unsupported Hadoop version 3.2.4"), old);
    assertTrue(old.contains("own. The ResourceManager is not started."), old);
    assertTrue(HadoopVersionCheck.refusal("3.6.0", "3.5.0", line34).contains("version 3.6.0"));
    assertTrue(HadoopVersionCheck.refusal("Unknown", "3.4.3", line34).contains("version Unknown"));
  }

  @Test
  void theJarRecordsTheHadoopItWasCompiledAgainst() {
    assertEquals(VersionInfo.getVersion(), HadoopVersionCheck.builtVersion(),
        "dollymp-build.properties names the build's Hadoop, which is the test class path's");
    assertNull(HadoopVersionCheck.refusal(VersionInfo.getVersion(), HadoopVersionCheck.builtVersion(),
        LineApi.RUNS_ON));
    assertTrue(LineApi.RUNS_ON.contains(LineApi.LINE));
    HadoopVersionCheck.requireSupported();
    assertTrue(HadoopVersionCheck.SUPPORTED_LINES.contains(HadoopVersionCheck.line(VersionInfo.getVersion())));
  }

  @Test
  void anRmOnAnUnsupportedHadoopRefusesToStartAndConfiguresNothing() throws Exception {
    Path fake = Files.createDirectories(tmp.resolve("hadoop-3.2.4"));
    // What Hadoop's own build writes into hadoop-common's jar; first on the class path, VersionInfo reads it.
    Files.write(fake.resolve("common-version-info.properties"), List.of("version=3.2.4", "revision=unknown",
        "branch=branch-3.2.4", "user=test", "date=2022-07-12T11:58Z", "url=test", "srcChecksum=none",
        "protocVersion=2.5.0"), StandardCharsets.UTF_8);
    try (ServerSocket service = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Map<String, String> probe = probe(fake, service.getLocalPort());
      assertEquals("3.2.4", probe.get("version"), "the RM's JVM sees Hadoop 3.2.4: " + probe);
      String init = probe.get("init");
      System.out.println("RM on Hadoop 3.2.4: " + init);
      assertTrue(init.startsWith("refused"), "init of an RM on Hadoop 3.2.4: " + probe);
      assertTrue(init.contains("unsupported Hadoop version 3.2.4"), init);
      assertTrue(init.contains("Supported Hadoop versions: 3.3.x, 3.4.x and 3.5.x"), init);
      assertTrue(init.contains("compiled against " + VersionInfo.getVersion()), init);
      assertEquals("STOPPED", probe.get("state"), "the RM is stopped, not half initialised: " + probe);
      assertEquals("null", probe.get("webhook"), "the shim put nothing into the RM's configuration: " + probe);
      service.setSoTimeout(200);
      assertThrows(SocketTimeoutException.class, service::accept, "the shim never called the decision service");
    }
  }

  @Test
  void theSameRmOnTheBuildsOwnHadoopInitialises() throws Exception {
    try (ServerSocket service = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Map<String, String> probe = probe(null, service.getLocalPort());
      assertEquals(VersionInfo.getVersion(), probe.get("version"), probe.toString());
      assertEquals("ok", probe.get("init"), probe.toString());
      assertEquals("INITED", probe.get("state"), probe.toString());
      assertEquals("io.dollymp.yarn.scheduler.web.DollyMPSchedulerPage", probe.get("webhook"), probe.toString());
    }
  }

  /** RmInitProbe in a JVM of its own on the test class path, {@code first} (if any) ahead of it. */
  private Map<String, String> probe(Path first, int servicePort) throws IOException, InterruptedException {
    String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    if (first != null) {
      cp = first + File.pathSeparator + cp;
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of(System.getProperty("dollymp.jdk17.opens", "--add-opens=java.base/java.lang=ALL-UNNAMED")
        .split(" ")));
    cmd.addAll(List.of("-Xmx512m", "-cp", cp, RmInitProbe.class.getName(), Integer.toString(servicePort)));
    Path out = tmp.resolve("probe-" + (first == null ? "own" : "fake") + ".out");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the probe did not end");
    String text = Files.readString(out, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), text);
    Map<String, String> found = new HashMap<>();
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0 && line.substring(0, eq).matches("version|init|state|webhook")) {
        found.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    assertEquals(4, found.size(), text);
    return found;
  }
}
