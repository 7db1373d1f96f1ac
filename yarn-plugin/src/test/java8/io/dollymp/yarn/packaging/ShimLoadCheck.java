package io.dollymp.yarn.packaging;

import java.lang.reflect.Method;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Run by ShadedJarIT on an older Java runtime (compiled there with --release 8, not by Maven): loads and
 * initialises every class of the plugin in the shaded jar, creates the scheduler the ResourceManager
 * would create, and builds (then shuts down) a channel of the relocated gRPC, which loads shaded Netty.
 * Prints one line: the runtime's version and how many classes loaded.
 */
public final class ShimLoadCheck {
  private ShimLoadCheck() {}

  public static void main(String[] args) throws Exception {
    ClassLoader cl = ShimLoadCheck.class.getClassLoader();
    int loaded = 0;
    try (JarFile jar = new JarFile(args[0])) {
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
        String n = e.nextElement().getName();
        boolean ours = n.startsWith("io/dollymp/yarn/") || n.startsWith("org/apache/hadoop/");
        if (ours && n.endsWith(".class")) {
          Class.forName(n.substring(0, n.length() - ".class".length()).replace('/', '.'), true, cl);
          loaded++;
        }
      }
    }
    Object shim = Class.forName("io.dollymp.yarn.scheduler.DollyMPScheduler", true, cl).getDeclaredConstructor()
        .newInstance();
    Class<?> builders = Class.forName("io.dollymp.shaded.io.grpc.ManagedChannelBuilder", true, cl);
    Object builder = builders.getMethod("forAddress", String.class, int.class).invoke(null, "127.0.0.1", 1);
    builder = builders.getMethod("usePlaintext").invoke(builder);
    Object channel = builders.getMethod("build").invoke(builder);
    Method shutdown = channel.getClass().getMethod("shutdownNow");
    shutdown.setAccessible(true);
    shutdown.invoke(channel);
    System.out.println("java " + System.getProperty("java.specification.version") + " loaded " + loaded
        + " classes; " + shim.getClass().getName() + "; channel " + channel.getClass().getName());
  }
}
