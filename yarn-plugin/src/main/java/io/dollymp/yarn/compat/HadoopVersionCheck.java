package io.dollymp.yarn.compat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;

/**
 * The ResourceManager's Hadoop against the line this jar was compiled for. The RM's scheduler APIs are
 * {@code @LimitedPrivate("yarn") @Evolving} and differ between lines ({@link LineApi}), so each line has
 * its own jar (the default build for 3.4, {@code -Phadoop-3.3}, {@code -Phadoop-3.5}), and a jar on another
 * line's RM, or on a line none is built for, refuses to start before it configures anything.
 */
public final class HadoopVersionCheck {
  private HadoopVersionCheck() {}

  /** The Hadoop lines a jar of this project is built and tested for, each by its own build. */
  public static final List<String> SUPPORTED_LINES =
      Collections.unmodifiableList(Arrays.asList("3.3", "3.4", "3.5"));

  private static final Pattern VERSION = Pattern.compile("^(\\d+)\\.(\\d+)(?:[.\\-].*)?$");
  private static final String BUILD_PROPERTIES = "/io/dollymp/yarn/dollymp-build.properties";

  /** The Hadoop release this jar was compiled against (dollymp-build.properties, written by the build). */
  public static String builtVersion() {
    Properties p = new Properties();
    try (InputStream in = HadoopVersionCheck.class.getResourceAsStream(BUILD_PROPERTIES)) {
      if (in == null) {
        throw new IllegalStateException("DollyMP: " + BUILD_PROPERTIES + " is missing from the jar");
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.getProperty("hadoop.version");
  }

  /** "3.3" for "3.3.6" (and for vendor builds such as "3.3.6-amzn-1"); null if it is no Hadoop version. */
  public static String line(String version) {
    if (version == null) {
      return null;
    }
    Matcher m = VERSION.matcher(version.trim());
    return m.matches() ? m.group(1) + "." + m.group(2) : null;
  }

  /**
   * Why a jar compiled against Hadoop {@code built} must not run on the RM's Hadoop {@code found}, or null
   * when both are of the same line.
   */
  public static String refusal(String found, String built) {
    String builtLine = line(built);
    String foundLine = line(found);
    if (foundLine != null && foundLine.equals(builtLine)) {
      return null;
    }
    StringBuilder supported = new StringBuilder();
    for (int i = 0; i < SUPPORTED_LINES.size(); i++) {
      supported.append(i == 0 ? "" : i == SUPPORTED_LINES.size() - 1 ? " and " : ", ")
          .append(SUPPORTED_LINES.get(i)).append(".x");
    }
    String useInstead = SUPPORTED_LINES.contains(foundLine)
        ? " Use the DollyMP jar built for Hadoop " + foundLine + " (" + buildFor(foundLine) + ")."
        : "";
    return "DollyMP: unsupported Hadoop version " + found + " (VersionInfo of the ResourceManager's Hadoop): "
        + "this jar is built for Hadoop " + builtLine + ".x (compiled against " + built + "). Supported Hadoop "
        + "versions: " + supported + ", each with its own jar." + useInstead
        + " The ResourceManager is not started.";
  }

  private static String buildFor(String line) {
    return "3.4".equals(line) ? "mvn package" : "mvn -Phadoop-" + line + " package";
  }

  /** Refuses ({@link YarnRuntimeException}) unless the RM's Hadoop is of this jar's line. */
  public static void requireSupported() {
    String why = refusal(VersionInfo.getVersion(), builtVersion());
    if (why != null) {
      throw new YarnRuntimeException(why);
    }
  }
}
