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
 * {@code @LimitedPrivate("yarn") @Evolving} and differ between lines ({@link LineApi}): the 3.3 line has a
 * jar of its own ({@code -Phadoop-3.3}); 3.4's source set serves 3.4 and 3.5 (the default build, and
 * {@code -Phadoop-3.5} compiled against 3.5). On any other line's RM a jar refuses to start, before it
 * configures anything.
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
   * Why a jar compiled against Hadoop {@code built}, whose source set runs on the lines {@code runsOn}, must
   * not start on the RM's Hadoop {@code found}; null when it may.
   */
  public static String refusal(String found, String built, List<String> runsOn) {
    String foundLine = line(found);
    if (foundLine != null && runsOn.contains(foundLine)) {
      return null;
    }
    String useInstead = SUPPORTED_LINES.contains(foundLine)
        ? " Use the DollyMP jar built for Hadoop " + foundLine + " (" + buildFor(foundLine) + ")."
        : "";
    return "DollyMP: unsupported Hadoop version " + found + " (VersionInfo of the ResourceManager's Hadoop): "
        + "this jar is built for Hadoop " + lines(runsOn) + " (compiled against " + built + "). Supported "
        + "Hadoop versions: " + lines(SUPPORTED_LINES) + ", the 3.3 line with a jar of its own." + useInstead
        + " The ResourceManager is not started.";
  }

  private static String lines(List<String> lines) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < lines.size(); i++) {
      text.append(i == 0 ? "" : i == lines.size() - 1 ? " and " : ", ").append(lines.get(i)).append(".x");
    }
    return text.toString();
  }

  private static String buildFor(String line) {
    return "3.4".equals(line) ? "mvn package" : "mvn -Phadoop-" + line + " package";
  }

  /** Refuses ({@link YarnRuntimeException}) unless the RM's Hadoop is of a line this jar runs on. */
  public static void requireSupported() {
    String why = refusal(VersionInfo.getVersion(), builtVersion(), LineApi.RUNS_ON);
    if (why != null) {
      throw new YarnRuntimeException(why);
    }
  }
}
