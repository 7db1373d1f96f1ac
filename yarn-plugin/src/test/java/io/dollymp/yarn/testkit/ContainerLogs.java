package io.dollymp.yarn.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;

/**
 * What each NodeManager of a mini cluster ran for an application, read from the NodeManagers' own
 * container log directories ({@code <log-dir>/<application>/<container>/stdout|stderr}); they outlive
 * the application (the mini cluster does not aggregate logs and keeps them for hours).
 */
public final class ContainerLogs {
  private ContainerLogs() {}

  /** One container's log directory and the node whose NodeManager launched it. */
  public record Entry(ContainerId container, NodeId node, Path dir) {
    public String read(String file) throws IOException {
      Path p = dir.resolve(file);
      return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
    }
  }

  /** Every container of {@code app} the first {@code nodeManagers} NodeManagers launched, in container id order. */
  public static List<Entry> of(MiniYARNCluster cluster, int nodeManagers, ApplicationId app) throws IOException {
    List<Entry> out = new ArrayList<>();
    for (int i = 0; i < nodeManagers; i++) {
      NodeManager nm = cluster.getNodeManager(i);
      NodeId node = nm.getNMContext().getNodeId();
      for (String logDir : nm.getConfig().getTrimmedStrings(YarnConfiguration.NM_LOG_DIRS)) {
        Path appDir = Paths.get(logDir.startsWith("file:") ? logDir.substring("file:".length()) : logDir)
            .resolve(app.toString());
        if (!Files.isDirectory(appDir)) {
          continue;
        }
        try (Stream<Path> dirs = Files.list(appDir)) {
          for (Path d : (Iterable<Path>) dirs.filter(Files::isDirectory)::iterator) {
            if (isEmpty(d)) {
              continue; // the NodeManager makes the container's directory in every log dir, and uses one
            }
            out.add(new Entry(ContainerId.fromString(d.getFileName().toString()), node, d));
          }
        }
      }
    }
    out.sort(Comparator.comparing(Entry::container));
    return out;
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.findAny().isEmpty();
    }
  }
}
